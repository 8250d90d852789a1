// MockKafkaTortureTest: the fixture of the torture tests on the mock cluster (kafka_torture_test,
// schema_evolution_torture_test, routing_torture_test, upsert_torture_test). Its SetUp part,
// StartTorture(), makes a fresh temp dir and starts `ferry mock-kafka` (three brokers) with the
// test's topics, watched by a Watchdog so that a mock cluster that dies fails the test naming
// it; TearDown stops both and removes the dir unless FERRY_TORTURE_KEEP=1 (then prints it).
// Each test's own SetUp sets settings_ (TortureSettings::FromEnv and its adjustments) first.
// REQUIRES: FERRY_SOURCE_DIR and FERRY_BINARY_DIR defined (the tests' CMake does).
//
// Thread-safety: a GoogleTest fixture, used on the test's thread.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kafka_child_process.h"
#include "pipeline_e2e_support.h"
#include "torture_support.h"

namespace ferry::fault {

struct TortureNeeds {
  // DuckDB reads the tables back (tests/duckdb, `make setup-npm`): skipped, saying so, without.
  bool duckdb = false;
};

class MockKafkaTortureTest : public ::testing::Test {
 protected:
  // dir_: a fresh test dir named after `dir_prefix`; the mock cluster with `topics` (each
  // "NAME:PARTITIONS"), brokers_ its bootstrap servers. A failure to start is fatal to the test
  // (GoogleTest then runs no test body), a missing DuckDB skips it.
  void StartTorture(const std::string& dir_prefix, const std::vector<std::string>& topics,
                    TortureNeeds needs = {}) {
    if (needs.duckdb && !std::filesystem::exists(std::string(FERRY_SOURCE_DIR) +
                                                 "/tests/duckdb/node_modules/@duckdb")) {
      GTEST_SKIP() << "DuckDB is not installed (make setup-npm): " << dir_prefix << " needs it";
    }
    dir_ = e2e::FreshTestDir(dir_prefix);
    auto mock = source::kafka::testing::StartMockKafka(kFerry, 3, topics);
    ASSERT_TRUE(mock.ok()) << mock.status().ToString();
    mock_ = std::move(mock->child);
    brokers_ = mock->bootstrap;
    watchdog_ = std::make_unique<Watchdog>("ferry mock-kafka",
                                           [mock = mock_.get()] { return mock->ExitReport(); });
  }

  void TearDown() override {
    watchdog_.reset();
    mock_.reset();
    if (dir_.empty()) {
      return;  // skipped before it was made
    }
    if (settings_.keep) {
      fmt::print("kept {}\n", dir_.string());
    } else {
      std::filesystem::remove_all(dir_);
    }
  }

  TortureSettings settings_;
  std::filesystem::path dir_;
  std::unique_ptr<source::kafka::testing::ChildProcess> mock_;
  std::string brokers_;
  std::unique_ptr<Watchdog> watchdog_;  // after mock_: stops watching before it goes
};

}  // namespace ferry::fault

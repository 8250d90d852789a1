#include "torture_scenario.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include "config_toml.h"
#include "pipeline_e2e_support.h"

#include "ferry/testing/nats_server.h"

// Kafka consumer groups: each ferry incarnation of the scenario joins its own group. ferry never
// reads a group's offsets once the table holds a position (DESIGN.md), so this changes nothing
// for correctness; it sidesteps the mock coordinator of librdkafka 2.0.2, which was seen to
// livelock a group for minutes after a member was SIGKILLed in the middle of a JoinGroup (the
// next member's JoinGroup timing out and being retried every 11 s). Kills inside one shared
// group are the job of ThreeProcessesInOneGroupWithKillsAndRebalances.
namespace ferry::fault {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Ids published per failpoint step: several batches of the step config's max_rows, so that a
// failpoint armed on its 1st..3rd hit and a checkpoint (interval 5) are reached.
constexpr int64_t kStepChunk = 240;
constexpr int64_t kStepMaxRows = 40;
constexpr int64_t kBadPerDeadLetterStep = 3;

// One config per ferry incarnation (`run`), in dir/configs.
// `extra`: more top-level sections ([metrics]).
std::string WriteConfig(TortureSource* source, const std::string& dir, const std::string& run,
                        const std::string& table, const std::string& dead, int64_t max_rows,
                        const std::string& extra = "") {
  std::filesystem::create_directories(dir + "/configs");
  return e2e::WriteConfig(
      dir + "/configs/" + run + ".toml",
      {{.id = "torture",
        .table = table,
        .schema = "id BIGINT NOT NULL, payload STRING",
        .metadata_columns = source->MetadataColumns(),
        .keys = fmt::format("table_properties = {{ \"delta.checkpointInterval\" = \"5\" }}\n"
                            "on_bad_record = \"dead_letter\"\ndead_letter_table = \"{}\"",
                            dead),
        .source = source->SourceSection(run),
        .max_rows = max_rows,
        .after = extra}});
}

int64_t Uniform(std::mt19937_64* rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(*rng);
}

}  // namespace

TortureTables LocalTortureTables(const std::string& dir) {
  return TortureTables{.table = TableLocation::Local(dir + "/table"),
                       .dead = TableLocation::Local(dir + "/dead")};
}

void RunTortureScenario(TortureSource* source, const TortureSettings& settings,
                        const std::string& dir, const TortureTables& tables, Figures* out) {
  const auto start = Clock::now();
  Figures& figures = *out;
  figures = Figures{.source = source->name() + tables.suffix,
                    .messages = settings.messages,
                    .seed = settings.seed};
  std::mt19937_64 rng(settings.seed);
  const TableLocation& table = tables.table;
  const std::string logs = dir + "/logs";
  std::filesystem::create_directories(logs);
  // Large batches while ingesting beside the kills, small ones in the failpoint steps.
  auto stream_config = [&](const std::string& run, const std::string& extra = "") {
    return WriteConfig(source, dir, run, table.uri(), tables.dead.uri(), /*max_rows=*/5000, extra);
  };
  auto step_config = [&](const std::string& run) {
    return WriteConfig(source, dir, run, table.uri(), tables.dead.uri(), kStepMaxRows);
  };
  // `ferry run` with the table's storage options; the environment that reaches its store is
  // given to every child started with table.env().
  auto run_argv = [&](const std::string& config, bool until_caught_up) {
    std::vector<std::string> argv = table.WithFlags({kFerry, "run", "--config", config});
    if (until_caught_up) {
      argv.push_back("--until-caught-up");
    }
    return argv;
  };
  auto with_env = [&](std::vector<std::string> extra) {
    std::vector<std::string> env = table.env();
    env.insert(env.end(), extra.begin(), extra.end());
    return env;
  };

  const std::vector<FailpointStep> plan =
      settings.failpoint_steps ? FailpointPlan(settings.full_matrix, table.local(), &rng)
                               : std::vector<FailpointStep>();
  const int64_t broker_chunk =
      std::max<int64_t>(200, std::min<int64_t>(5000, settings.messages / 20));
  const int64_t store_chunk = tables.store_faults != nullptr ? 2 * broker_chunk : 0;
  const int64_t kill_messages = settings.messages - static_cast<int64_t>(plan.size()) * kStepChunk -
                                2 * broker_chunk - store_chunk;
  if (kill_messages < settings.kills * 100) {
    ADD_FAILURE() << "FERRY_TORTURE_MESSAGES=" << settings.messages << " is too small for "
                  << plan.size() << " failpoint steps of " << kStepChunk << " ids and "
                  << settings.kills << " kills";
    return;
  }
  fmt::print(
      "torture {}: {}; {} ids in the kill loop, {} around broker faults, {} around store "
      "faults, {} failpoint steps of {}\n",
      figures.source, settings.Describe(), kill_messages, 2 * broker_chunk, store_chunk,
      plan.size(), kStepChunk);
  std::fflush(stdout);
  OptimizeLoop optimize(table, logs + "/optimize.log", milliseconds(1500));

  // 1. Kill loop: the producer's rate spreads the ids over about 2 s per incarnation; once it is
  // done, kills land anywhere (the restarts still have the backlog to commit).
  {
    const int64_t rate = std::max<int64_t>(100, kill_messages / (std::max(1, settings.kills) * 2));
    auto producers = source->StartProducers(1, kill_messages, rate, logs + "/producer.log");
    for (int k = 0; k < settings.kills; ++k) {
      const std::string log = fmt::format("{}/kill-{}.log", logs, k);
      auto ferry = Process::Start(run_argv(stream_config(fmt::format("kill-{}", k)), false),
                                  table.env(), log);
      ASSERT_TRUE(ferry.ok()) << ferry.status().ToString();
      bool producing = false;
      for (auto& producer : producers) {
        producing = producer->Running() || producing;
      }
      if (!producing || Uniform(&rng, 0, 3) == 0) {
        // Anywhere, start-up and group join included.
        std::this_thread::sleep_for(milliseconds(Uniform(&rng, 0, 1500)));
      } else {
        // In the middle of ingestion: after a commit of this incarnation, at a random delay.
        WaitForNewVersion(table, ferry->get(), milliseconds(30000));
        std::this_thread::sleep_for(milliseconds(Uniform(&rng, 0, 1000)));
      }
      ASSERT_TRUE((*ferry)->Running()) << "ferry exited before kill " << k << ":\n" << Tail(log);
      (*ferry)->Signal(SIGKILL);
      EXPECT_EQ((*ferry)->Wait(), 128 + SIGKILL);
      ++figures.kills;
      source->AfterKill(k);
    }
    for (auto& producer : producers) {
      EXPECT_EQ(producer->Wait(), 0) << Tail(logs + "/producer.log");
    }
  }
  int64_t next_id = kill_messages + 1;

  // 2. Broker faults while ferry runs.
  {
    const std::string log = logs + "/broker-faults.log";
    auto ferry = Process::Start(run_argv(stream_config("faults"), false), table.env(), log);
    EXPECT_TRUE(ferry.ok());
    if (ferry.ok()) {
      figures.broker_faults =
          source->BrokerFaults(ferry->get(), table, next_id, 2 * broker_chunk, log);
      (*ferry)->Signal(SIGTERM);
      EXPECT_EQ((*ferry)->Wait(), 0) << "a drained stop after broker faults:\n" << Tail(log);
    }
    next_id += 2 * broker_chunk;
  }

  // 2b. Store faults while ferry runs (tables in an object store).
  if (tables.store_faults != nullptr) {
    const std::string log = logs + "/store-faults.log";
    Result<int> port = testing::PickFreePort();
    EXPECT_TRUE(port.ok()) << port.status().ToString();
    const int metrics_port = port.value_or(0);
    auto ferry = Process::Start(
        run_argv(stream_config("store-faults",
                               fmt::format("\n[metrics]\nlisten = \"127.0.0.1:{}\"", metrics_port)),
                 false),
        table.env(), log);
    EXPECT_TRUE(ferry.ok());
    if (ferry.ok()) {
      int64_t published = 0;
      figures.store_faults = tables.store_faults->Inject(
          ferry->get(), table, metrics_port, store_chunk,
          [&](int64_t n) {
            n = std::min(n, store_chunk - published);
            if (n > 0) {
              EXPECT_TRUE(source->Produce(next_id + published, n, log)) << Tail(log);
              published += n;
            }
          },
          log);
      EXPECT_EQ(published, store_chunk) << "the store-fault phase published only part of its ids";
      (*ferry)->Signal(SIGTERM);
      EXPECT_EQ((*ferry)->Wait(), 0) << "a drained stop after store faults:\n" << Tail(log);
    }
    next_id += store_chunk;
  }

  // The kill loop leaves a backlog (each Kafka incarnation spends seconds joining its group):
  // commit it in large batches here rather than 40 rows at a time in the first failpoint step.
  {
    const std::string log = logs + "/catch-up.log";
    EXPECT_EQ(RunToExit(run_argv(stream_config("catch-up"), true), table.env(), log), 0)
        << Tail(log);
  }

  // 3. Each failpoint in turn.
  int64_t bad_published = 0;
  for (size_t i = 0; i < plan.size(); ++i) {
    const FailpointStep& step = plan[i];
    const std::string log = fmt::format("{}/step-{}.log", logs, i);
    if (step.needs_bad_records) {
      // Before the good ids, so that no partition's last message is a bad one (verify checks
      // that each partition's txn position is the largest position among its rows).
      EXPECT_TRUE(source->ProduceBad(kBadPerDeadLetterStep, log)) << Tail(log);
      bad_published += kBadPerDeadLetterStep;
    }
    EXPECT_TRUE(source->Produce(next_id, kStepChunk, log)) << step.spec << ":\n" << Tail(log);
    next_id += kStepChunk;
    const std::string run = fmt::format("step-{}", i);
    const bool checkpoint_armed =
        std::any_of(step.armed.begin(), step.armed.end(), [](const ArmedFailpoint& a) {
          return a.must_fire && a.name.find("checkpoint") != std::string::npos;
        });
    optimize.Pause(checkpoint_armed);
    int code = RunToExit(run_argv(step_config(run), true),
                         with_env({"FERRY_FAILPOINTS=" + step.spec}), log);
    optimize.Pause(false);
    const std::string text = ReadFile(log);
    std::string missed;
    for (const ArmedFailpoint& armed : step.armed) {
      if (!Fired(text, armed.name)) {
        missed += (missed.empty() ? "" : ", ") + armed.name;
        EXPECT_FALSE(armed.must_fire)
            << armed.name << " (" << armed.action << ") was never reached:\n"
            << Tail(log);
      }
    }
    if (step.crash && missed.empty()) {
      EXPECT_EQ(code, 128 + SIGKILL) << step.spec << ":\n" << Tail(log);
    } else {
      EXPECT_EQ(code, 0) << step.spec << " (errors and stalls are retried inside ferry):\n"
                         << Tail(log);
    }
    fmt::print("torture {}: step {}/{} {} -> exit {}{}\n", figures.source, i + 1, plan.size(),
               step.spec, code, missed.empty() ? "" : " (not reached: " + missed + ")");
    std::fflush(stdout);
    source->CheckBrokerPositions(table, run, step.spec);
    ++figures.failpoint_runs;
  }
  EXPECT_EQ(next_id - 1, settings.messages);

  // 4. A clean catch-up, then verify.
  figures.optimize_runs = optimize.Stop();
  const std::string final_log = logs + "/final.log";
  int code = RunToExit(run_argv(step_config("final"), true), table.env(), final_log);
  EXPECT_EQ(code, 0) << Tail(final_log);
  figures.verify = Verify(table, settings.messages);
  const VerifyResult& v = figures.verify;
  EXPECT_EQ(v.exit_code, 0) << v.output;
  EXPECT_EQ(v.rows, settings.messages) << v.output;
  EXPECT_EQ(v.distinct, settings.messages) << v.output;
  EXPECT_EQ(v.duplicates, 0) << v.output;
  EXPECT_EQ(v.missing, 0) << v.output;
  EXPECT_EQ(v.position_mismatches, 0) << v.output;
  // Every bad record in the dead-letter table once (by source partition and position).
  const std::vector<std::string> dead_rows = TableRows(tables.dead);
  std::set<std::string> positions;
  for (const std::string& row : dead_rows) {
    EXPECT_TRUE(
        positions.insert(e2e::Field(row, "source_partition") + "@" + e2e::Field(row, "position"))
            .second)
        << "dead-lettered twice: " << row;
  }
  EXPECT_EQ(static_cast<int64_t>(dead_rows.size()), bad_published);
  figures.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace ferry::fault

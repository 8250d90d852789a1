#pragma once

// The PipelineTest fixture: a fake broker, a store whose commits a test can hold, and a pipeline
// made over them (pipeline_test.cc, pipeline_source_test.cc, pipeline_bad_input_test.cc).

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "ferry/base/failpoint.h"
#include "ferry/pipeline/pipeline.h"
#include "ferry/pipeline/table_setup.h"
#include "ferry/storage/memory_store.h"
#include "ferry/testing/fake_source.h"
#include "ferry/testing/fault_injecting_store.h"
#include "ferry/testing/forwarding_store.h"
#include "ferry/testing/table_verifier.h"
#include "ferry/transform/json_decoder.h"

namespace ferry::pipeline {

using testing::FakeSource;
using testing::FaultInjectingStore;
using testing::SharedSource;

inline std::string Message(int64_t id) {
  return fmt::format(R"({{"id": {}, "payload": "test #{}"}})", id, id);
}

// A broker for the tests: each partition holds messages with ids partition * 1'000'000 + n. Every
// source the pipeline asks for sees the same messages (a restarted consumer).
struct Broker {
  int partitions = 1;
  int64_t per_partition = 0;
  std::map<std::pair<int, int64_t>, std::string> overrides;  // (partition, position) -> payload
  std::vector<std::shared_ptr<FakeSource>> sources;          // every source made, in order
  std::atomic<FakeSource*> latest = nullptr;
  // false: a broker that never assigns a partition (an unreachable cluster, to the pipeline).
  bool assign_at_start = true;

  SourceFactory Factory() {
    return [this]() -> Result<std::unique_ptr<source::Source>> {
      auto s =
          std::make_shared<FakeSource>(FakeSource::Options{.prefix = "kafka/events",
                                                           .partitions = partitions,
                                                           .assign_all_at_start = assign_at_start});
      for (int p = 0; p < partitions; ++p) {
        for (int64_t n = 0; n < per_partition; ++n) {
          auto it = overrides.find({p, n});
          s->Produce(p, it != overrides.end() ? it->second : Message(p * 1'000'000 + n),
                     fmt::format("k{}", n));
        }
      }
      sources.push_back(s);
      latest = s.get();
      return std::unique_ptr<source::Source>(std::make_unique<SharedSource>(std::move(s)));
    };
  }
};

// Holds the next commit of table `events` (its put-if-absent of a log entry) until Open(): the
// tests see what the pipeline thread does while a batch is in the writer thread.
class GatedStore final : public testing::ForwardingStore {
 public:
  explicit GatedStore(std::shared_ptr<storage::ObjectStore> base)
      : ForwardingStore(std::move(base)) {}

  // The next commit waits at the gate.
  void Arm() {
    std::lock_guard lock(mu_);
    armed_ = true;
    open_ = false;
  }
  void Open() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  // A commit is waiting at the gate.
  bool Holding() const {
    std::lock_guard lock(mu_);
    return holding_;
  }

  Status PutIfAbsent(std::string_view key, std::string_view data) override {
    if (key.starts_with("events/_delta_log/") && key.ends_with(".json")) {
      std::unique_lock lock(mu_);
      if (armed_) {
        armed_ = false;
        holding_ = true;
        cv_.wait(lock, [this] { return open_; });
        holding_ = false;
      }
    }
    return ForwardingStore::PutIfAbsent(key, data);
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false;
  bool open_ = false;
  bool holding_ = false;
};

template <typename Pred>
void WaitUntil(Pred pred) {
  while (!pred()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

class PipelineTest : public ::testing::Test {
 protected:
  std::shared_ptr<storage::ObjectStore> store_ = std::make_shared<storage::InMemoryStore>();
  metrics::Registry registry_;
  std::map<std::string, std::string> metadata_ = {
      {"offset", "_offset"}, {"partition", "_partition"}, {"key", "_key"}};
  // Wraps the source factory Make passes, when set.
  std::function<SourceFactory(SourceFactory)> wrap_source_;
  // Wraps the JSON decoder Make builds, when set.
  std::function<std::unique_ptr<transform::Decoder>(std::unique_ptr<transform::Decoder>)>
      wrap_decoder_;

  Result<std::unique_ptr<Pipeline>> Make(Broker* broker, PipelineOptions options = {},
                                         std::shared_ptr<storage::ObjectStore> store = nullptr) {
    FERRY_ASSIGN_OR_RETURN(OpenedTable opened,
                           OpenOrCreateTable(store ? store : store_, "events",
                                             {.schema_ddl = "id BIGINT NOT NULL, payload STRING",
                                              .metadata_columns = metadata_,
                                              .transform = options.transform}));
    FERRY_ASSIGN_OR_RETURN(auto decoder,
                           transform::JsonDecoder::Create(
                               InputSchema(*opened.snapshot.schema(), options.transform.columns),
                               {.columns = {"id", "payload"}}));
    std::unique_ptr<transform::Decoder> wrapped = std::move(decoder);
    if (wrap_decoder_) {
      wrapped = wrap_decoder_(std::move(wrapped));
    }
    if (options.id.empty()) {
      options.id = "events";
    }
    options.metadata_columns = metadata_;
    options.commit.checkpoint = true;
    bool dead_letter = options.on_bad_record == OnBadRecord::kDeadLetter;
    FERRY_ASSIGN_OR_RETURN(
        auto pipeline,
        Pipeline::Create(std::move(options), std::move(opened.table), std::move(opened.snapshot),
                         wrap_source_ ? wrap_source_(broker->Factory()) : broker->Factory(),
                         std::move(wrapped), &registry_));
    if (dead_letter) {
      FERRY_ASSIGN_OR_RETURN(OpenedTable dead,
                             OpenOrCreateTable(store_, "dead", {.schema_ddl = kDeadLetterSchema}));
      FERRY_RETURN_IF_ERROR(
          pipeline->SetDeadLetterTable(std::move(dead.table), std::move(dead.snapshot)));
    }
    return pipeline;
  }

  // A pipeline running on a thread whose next commit waits in a GatedStore until Release().
  struct HeldRun {
    std::shared_ptr<GatedStore> gated;
    std::unique_ptr<Pipeline> pipeline;
    StopSignal stop;
    Status result;
    std::thread thread;
    // Opens the gate and waits for Run() to return.
    void Release() {
      gated->Open();
      thread.join();
    }
  };
  // Starts the pipeline and returns once its first commit is held (nullptr if Make failed).
  std::unique_ptr<HeldRun> StartHeld(Broker* broker, PipelineOptions options) {
    auto run = std::make_unique<HeldRun>();
    run->gated = std::make_shared<GatedStore>(store_);
    auto p = Make(broker, std::move(options), run->gated);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    if (!p.ok()) {
      return nullptr;
    }
    run->pipeline = std::move(*p);
    run->gated->Arm();
    HeldRun* r = run.get();
    run->thread = std::thread([r] { r->result = r->pipeline->Run(&r->stop); });
    WaitUntil([r] { return r->gated->Holding(); });
    return run;
  }

  // The dead-letter table's rows (sorted).
  std::vector<std::string> DeadRows() {
    auto table = delta::Table::Open(store_, "dead");
    auto snap = (*table)->LoadSnapshot();
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
    auto rows = testing::ReadTableRows(**table, *snap);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return *rows;
  }

  // Every row's id, from ferry's own reader.
  std::vector<int64_t> Ids() {
    auto table = delta::Table::Open(store_, "events");
    EXPECT_TRUE(table.ok());
    auto snap = (*table)->LoadSnapshot();
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
    auto rows = testing::ReadTableRows(**table, *snap);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    std::vector<int64_t> ids;
    for (const std::string& row : *rows) {
      ids.push_back(std::stoll(row.substr(3, row.find('|') - 3)));
    }
    std::sort(ids.begin(), ids.end());
    return ids;
  }
  delta::Snapshot Latest() {
    auto table = delta::Table::Open(store_, "events");
    auto snap = (*table)->LoadSnapshot();
    EXPECT_TRUE(snap.ok());
    return *snap;
  }
  static std::vector<int64_t> Expected(int partitions, int64_t per_partition) {
    std::vector<int64_t> ids;
    for (int p = 0; p < partitions; ++p) {
      for (int64_t n = 0; n < per_partition; ++n) {
        ids.push_back(p * 1'000'000 + n);
      }
    }
    std::sort(ids.begin(), ids.end());
    return ids;
  }
  double Metric(std::string_view name, metrics::Labels labels = {{"pipeline", "events"}}) {
    return registry_.Value(name, labels);
  }
};
}  // namespace ferry::pipeline

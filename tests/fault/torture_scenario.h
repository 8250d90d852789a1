// The torture scenario, the same for every source (docs/RELIABILITY.md, "Harness"):
//   1. Kill loop: a producer publishes ids 1..K while `ferry run` is started, SIGKILLed at a
//      random moment (seeded), and started again, `kills` times; `ferry optimize` runs in a loop
//      beside it for the whole scenario.
//   2. Broker faults while ferry runs (TortureSource::BrokerFaults); for a table in an object
//      store, store faults while another ferry runs (StoreFaults::Inject: the network between
//      ferry and the store broken, the store stopped and restarted); then a clean
//      `ferry run --until-caught-up` commits the backlog in large batches.
//   3. Failpoints: for each step of the plan, a chunk of ids is published (plus a few bad
//      records for the dead-letter step), then `ferry run --until-caught-up` runs with
//      FERRY_FAILPOINTS armed; a crash must end it with SIGKILL, an error or a stall must be
//      retried inside the process (exit 0), and the log must show the failpoint fired. After
//      each step the source checks that the broker heard of nothing the table does not hold.
//   4. A clean `ferry run --until-caught-up`, then `ferry verify --expect N`: exit 0, N rows,
//      N distinct ids, 0 duplicates, 0 missing, positions agree with the data; every bad
//      record in the dead-letter table once.
// The tables are named by location (torture_table.h): a local directory, or s3://... with the
// environment and storage options ferry's children reach it with; the harness reads the same
// table through the store the location names.
// Assertions are gtest EXPECTs (an ASSERT ends the scenario early); the figures go to *out.
//
// Thread-safety: one thread (the optimize loop runs its own).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "torture_support.h"

namespace ferry::fault {

// What the scenario needs from a source. Ids are the `id` column; every message is JSON
// {"id": N, "payload": "..."} except the bad records.
class TortureSource {
 public:
  virtual ~TortureSource() = default;
  virtual std::string name() const = 0;
  // The source part of the pipeline config: the inside of its metadata_columns inline table,
  // and [pipeline.kafka] or [pipeline.jetstream] (config_toml.h); the scenario writes the rest.
  // `run` names one ferry incarnation
  // ("kill-3", "step-7"); Kafka gives each its own consumer group (torture_scenario.cc says
  // why), JetStream ignores it.
  virtual std::string MetadataColumns() const = 0;
  virtual std::string SourceSection(const std::string& run) const = 0;
  // Publishes ids first..first+count-1 in the background at about `rate` per second (one
  // process or several, e.g. one per subject).
  virtual std::vector<std::unique_ptr<Process>> StartProducers(int64_t first, int64_t count,
                                                               int64_t rate,
                                                               const std::string& log) = 0;
  // Publishes ids first..first+count-1 and waits for the broker's acks. False on failure.
  virtual bool Produce(int64_t first, int64_t count, const std::string& log) = 0;
  // Publishes `count` messages that do not decode (they go to the dead-letter table).
  virtual bool ProduceBad(int64_t count, const std::string& log) = 0;
  // Injects broker faults while `ferry` runs and publishes ids first..first+count-1 around
  // them; returns the number of faults injected.
  virtual int BrokerFaults(Process* ferry, const TableLocation& table, int64_t first, int64_t count,
                           const std::string& log) = 0;
  // In the kill loop, after the `kill`-th SIGKILL of ferry (0-based): a source may fail its
  // brokers there too (the Kafka cluster kills and restarts partition leaders). Default: nothing.
  virtual void AfterKill(int kill) { (void)kill; }
  // After a failpoint step (ferry stopped): EXPECTs that the broker was told of no position
  // the table does not hold (Kafka: the offsets run `run` committed to its group); `what`
  // names the step.
  virtual void CheckBrokerPositions(const TableLocation& table, const std::string& run,
                                    const std::string& what) = 0;
};

// Faults between ferry and the store its tables live in (an object store; none for local
// directories).
class StoreFaults {
 public:
  virtual ~StoreFaults() = default;
  // Breaks the way to the store while `ferry` runs (its metrics served on 127.0.0.1:
  // `metrics_port`), calling `publish(n)` to publish the next n of the phase's `ids` ids at the
  // moments the faults need them (all `ids` in the end); EXPECTs that ferry kept running and
  // said so (log, metrics) and that the table moved on after the faults. Returns the number of
  // faults injected.
  virtual int Inject(Process* ferry, const TableLocation& table, int metrics_port, int64_t ids,
                     const std::function<void(int64_t n)>& publish, const std::string& log) = 0;
};

// The scenario's tables: the ingested table and its dead-letter table, and the faults of their
// store (null for local directories).
struct TortureTables {
  TableLocation table;
  TableLocation dead;
  StoreFaults* store_faults = nullptr;
  // Figures label: "kafka" + suffix ("-s3").
  std::string suffix;
};
// Local directories DIR/table and DIR/dead, no store faults.
TortureTables LocalTortureTables(const std::string& dir);

void RunTortureScenario(TortureSource* source, const TortureSettings& settings,
                        const std::string& dir, const TortureTables& tables, Figures* out);

// The scenario at settings.ForObjectStore() into `store`'s tables "table" and "dead", with its
// store-fault phase (proxied_torture_store.h); prints the figures line. Store: one of the
// *TortureStore classes (s3_torture_store.h, gcs_torture_store.h, azure_torture_store.h).
template <typename Store>
void RunTortureScenarioOnStore(TortureSource* source, const TortureSettings& settings,
                               const std::filesystem::path& dir, Store* store,
                               const std::string& suffix) {
  Figures figures;
  RunTortureScenario(source, settings.ForObjectStore(), dir.string(),
                     {.table = store->Table("table"),
                      .dead = store->Table("dead"),
                      .store_faults = store,
                      .suffix = suffix},
                     &figures);
  fmt::print("{}\n", FiguresLine(figures));
}

}  // namespace ferry::fault

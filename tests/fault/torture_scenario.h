// The torture scenario, the same for every source (docs/RELIABILITY.md, "Harness"):
//   1. Kill loop: a producer publishes ids 1..K while `ferry run` is started, SIGKILLed at a
//      random moment (seeded), and started again, `kills` times; `ferry optimize` runs in a loop
//      beside it for the whole scenario.
//   2. Broker faults while ferry runs (TortureSource::BrokerFaults), then a clean
//      `ferry run --until-caught-up` commits the backlog in large batches.
//   3. Failpoints: for each step of the plan, a chunk of ids is published (plus a few bad
//      records for the dead-letter step), then `ferry run --until-caught-up` runs with
//      FERRY_FAILPOINTS armed; a crash must end it with SIGKILL, an error or a stall must be
//      retried inside the process (exit 0), and the log must show the failpoint fired. After
//      each step the source checks that the broker heard of nothing the table does not hold.
//   4. A clean `ferry run --until-caught-up`, then `ferry verify --expect N`: exit 0, N rows,
//      N distinct ids, 0 duplicates, 0 missing, positions agree with the data; every bad
//      record in the dead-letter table once.
// Assertions are gtest EXPECTs (an ASSERT ends the scenario early); the figures go to *out.
//
// Thread-safety: one thread (the optimize loop runs its own).
#pragma once

#include <cstdint>
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
  // The source part of the pipeline config ([pipeline.kafka] or [pipeline.jetstream] and the
  // metadata columns line); the scenario writes the rest. `run` names one ferry incarnation
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
  virtual int BrokerFaults(Process* ferry, const std::string& table, int64_t first, int64_t count,
                           const std::string& log) = 0;
  // After a failpoint step (ferry stopped): EXPECTs that the broker was told of no position
  // the table does not hold (Kafka: the offsets run `run` committed to its group); `what`
  // names the step.
  virtual void CheckBrokerPositions(const std::string& table, const std::string& run,
                                    const std::string& what) = 0;
};

void RunTortureScenario(TortureSource* source, const TortureSettings& settings,
                        const std::string& dir, Figures* out);

}  // namespace ferry::fault

// The Kafka side of the torture scenario (torture_scenario.h), whatever serves the topic:
// librdkafka's mock cluster (kafka_torture_test.cc) or a three-node Apache Kafka cluster
// (kafka_failover_torture_test.cc). KafkaTortureSource writes the [pipeline.kafka] section,
// produces ids with `ferry produce kafka` (keyed, so they spread over the partitions) and checks
// a group's committed offsets against the table's positions; a subclass injects the faults of
// its brokers (BrokerFaults, and optionally something between the kill loop's kills).
// RunGroupOfProcesses is the group phase: N processes in one group killed and restarted at
// random.
//
// Thread-safety: one thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "torture_scenario.h"
#include "torture_support.h"

#include "ferry/base/result.h"

namespace ferry::fault {

inline constexpr char kKafkaTortureTopic[] = "events";
// What the producers send: {"id": N, "payload": "test #N"}.
inline constexpr char kKafkaTortureTemplate[] = R"({"id": {{seq}}, "payload": "test #{{seq}}"})";

// The group's committed offsets of partitions 0..partitions-1 of `topic`
// (RD_KAFKA_OFFSET_INVALID when none), read by a consumer that never joins the group.
Result<std::map<int32_t, int64_t>> GroupOffsets(const std::string& brokers,
                                                const std::string& group, const std::string& topic,
                                                int partitions);

class KafkaTortureSource : public TortureSource {
 public:
  struct Options {
    std::string brokers;
    int partitions = 0;
    std::string group;
    // The consumers' session.timeout.ms (a real broker refuses less than its
    // group.min.session.timeout.ms, 6 s by default).
    int session_ms = 3000;
    // More arguments of `ferry produce kafka` (-X settings).
    std::vector<std::string> producer_extra;
  };
  explicit KafkaTortureSource(Options options) : options_(std::move(options)) {}

  std::string name() const override { return "kafka"; }
  std::string MetadataColumns() const override;
  std::string SourceSection(const std::string& run) const override;
  std::string Group(const std::string& run) const;
  std::vector<std::unique_ptr<Process>> StartProducers(int64_t first, int64_t count, int64_t rate,
                                                       const std::string& log) override;
  bool Produce(int64_t first, int64_t count, const std::string& log) override;
  bool ProduceBad(int64_t count, const std::string& log) override;
  void CheckBrokerPositions(const TableLocation& table, const std::string& run,
                            const std::string& what) override;

 protected:
  std::vector<std::string> ProducerArgs(int64_t first, int64_t count, int64_t rate,
                                        const std::string& templ) const;
  const Options& options() const { return options_; }

 private:
  const Options options_;
  int64_t bad_ = 0;
};

// N processes in one group writing `table`: each incarnation killed (SIGKILL: its partitions
// move after the session timeout) or stopped (SIGTERM: it leaves the group at once) at random,
// then started again, so the group rebalances all the time; an optimize loop commits beside
// them. Each process runs in a directory of its own (its working directory, TMPDIR and
// configuration), as on hosts of their own. Each id once, by `ferry verify` and by DuckDB
// reading the live files.
void RunGroupOfProcesses(const TortureSettings& settings, const std::filesystem::path& dir,
                         KafkaTortureSource* source, const TableLocation& table, size_t processes,
                         const std::string& label);

}  // namespace ferry::fault

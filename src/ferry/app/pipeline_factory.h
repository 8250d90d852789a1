// PipelineFactory: a `[[pipeline]]` of the configuration -> a running pipeline::Pipeline with
// its table, decoder and source (the only place that names the Kafka and JetStream sources).
//
// Thread-safety: stateless functions.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "ferry/base/result.h"
#include "ferry/config/config.h"
#include "ferry/metrics/metrics.h"
#include "ferry/pipeline/pipeline.h"
#include "ferry/source/jetstream/jetstream_options.h"
#include "ferry/source/jetstream/partition_leases.h"
#include "ferry/source/kafka/kafka_source_options.h"

namespace ferry::app {

struct BuildOptions {
  bool until_caught_up = false;
  // With until_caught_up: how long to go without contact with the broker (`--max-wait`).
  std::chrono::milliseconds max_wait{0};
  // `ferry config check`: validate everything, create nothing (the table is only read).
  bool check_only = false;
  // With check_only: what schema evolution will do to the table, when it exists
  // (evolution_report.h).
  std::string* report = nullptr;
  // A routed table's pipeline (routed_pipeline.h): the source to read instead of the
  // configuration's, and what the router sets in its options (seal hook, dead-letter appIds).
  pipeline::SourceFactory source;
  std::function<void(pipeline::PipelineOptions*)> adjust;
  // How long a table's store that does not answer is tried again while the tables are opened
  // (table_setup.h), and what ends the waiting early (a stop signal pending).
  std::chrono::milliseconds store_patience{0};
  std::function<bool()> cancelled;
};

// Opens or creates the table, builds the decoder and the source factory. Errors name the
// configuration file, line and key where one is to blame.
Result<std::unique_ptr<pipeline::Pipeline>> BuildPipeline(const config::PipelineConfig& config,
                                                          metrics::Registry* registry,
                                                          const BuildOptions& options = {});

// The configuration's source (Kafka or JetStream), as a factory of started-anew sources. An
// elastic JetStream pipeline's lease keeper writes each listing of the leases to `journal`
// (SetLeases under the pipeline's own key) when one is given.
Result<pipeline::SourceFactory> SourceFactoryFor(const config::PipelineConfig& config,
                                                 metrics::Journal* journal = nullptr);

// The source options of a pipeline, as BuildPipeline passes them (for `ferry status`, which
// asks the broker for heads without joining a group or creating consumers).
Result<source::kafka::KafkaSourceOptions> KafkaSourceOptionsFor(const config::PipelineConfig& c);
Result<source::jetstream::JetStreamOptions> JetStreamOptionsFor(const config::PipelineConfig& c);
// Elastic JetStream (`partitions = {...}`): the leases' options. REQUIRES: c.jetstream, and `o`
// is JetStreamOptionsFor(c).
source::jetstream::LeaseOptions LeaseOptionsFor(const config::PipelineConfig& c,
                                                const source::jetstream::JetStreamOptions& o);

}  // namespace ferry::app

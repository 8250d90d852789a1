// PipelineMetrics: the metrics one pipeline publishes (labelled `pipeline`, and `partition` for
// positions and lag), and the journal the status page reads. Built once per pipeline; the
// per-partition series are looked up by name when first needed. The inner pipelines of a routed
// pipeline (router.h) add a `table` label (the table's location), so that each table has series
// of its own (a gauge such as ferry_table_version is the table's, counters add up by `pipeline`).
//
// Thread-safety: the counters and gauges are thread-safe (metrics.h); the writer thread uses
// only `committer`.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <string_view>

#include "ferry/metrics/metrics.h"
#include "ferry/pipeline/batch_committer.h"
#include "ferry/pipeline/key_index.h"

namespace ferry::pipeline {

struct PipelineMetrics {
  // `table`: the `table` label of every series; empty: none (a one-table pipeline).
  PipelineMetrics(metrics::Registry* registry, const std::string& id,
                  const std::string& table = "");

  // {pipeline, [table,] extra...}: the labels of one of this pipeline's series.
  metrics::Labels With(metrics::Labels extra = {}) const;

  metrics::Gauge* Position(const std::string& name, const std::string& help,
                           const std::string& partition);
  metrics::Counter* PartitionCounter(const std::string& name, const std::string& help,
                                     const std::string& partition);
  // Bad records by what became of them (skipped, dead_letter) and why (BadRecordReason).
  metrics::Counter* Bad(const char* action, std::string_view reason);
  // ferry_dropped_fields_total{pipeline, field}: writer fields (Avro, Protobuf) whose values were
  // dropped because the table has no place for them, one per message taken and field its writer
  // schema holds (transform/decoder.h, "Dropped fields"). `field` is the path ("loc.alt"); past
  // kMaxDroppedFieldSeries distinct paths, the rest count under kOtherDroppedField. Pipeline
  // thread only.
  metrics::Counter* DroppedField(const std::string& field);
  static constexpr size_t kMaxDroppedFieldSeries = 100;
  static constexpr const char* kOtherDroppedField = "(other)";  // no Avro or Protobuf name

  metrics::Registry* registry;
  metrics::Journal* journal;  // what the status page lists: commits, state, bad records, fences
  // This pipeline's record in `journal`: {pipeline, table}, so each table of a routed pipeline
  // has its own.
  metrics::JournalKey journal_key;
  std::string pipeline;
  std::string table;  // the `table` label; empty: none
  metrics::Gauge* up;
  metrics::Counter* rows;
  metrics::Counter* bytes;
  metrics::Counter* files;
  metrics::Counter* messages;
  metrics::Counter* redeliveries;
  metrics::Counter* succeeded;
  metrics::Counter* lost;
  metrics::Counter* abandoned;
  metrics::Counter* unavailable;
  metrics::Counter* decode_unavailable;
  metrics::Counter* gaps;
  metrics::Counter* gap_messages;
  metrics::Gauge* version;
  metrics::Counter* filtered;
  metrics::Counter* dedup_hits;
  metrics::Counter* rate_limited;
  metrics::Counter* schema_rewinds;
  metrics::Histogram* batch_seconds;
  // The writer thread's (BatchCommitter).
  BatchCommitter::Metrics committer;

 private:
  std::set<std::string, std::less<>> dropped_field_labels_;  // the pipeline thread's
};

// The upsert key index's series of pipeline `id` (key_index.h), labelled like PipelineMetrics':
// ferry_upsert_index_keys, _tombstones, _bytes (gauges), ferry_upsert_index_loads_total{source},
// ferry_upsert_index_writes_total{outcome}, ferry_upsert_index_tombstones_dropped_total.
KeyIndexMetrics KeyIndexSeries(metrics::Registry* registry, const std::string& id,
                               const std::string& table = "");

// The `reason` label of a bad record, from the decoder's message (transform/json_decoder.h):
// schema, framing, unknown_schema, malformed, invalid_utf8, missing_required, overflow,
// wrong_type or other.
std::string_view BadRecordReason(std::string_view error);

}  // namespace ferry::pipeline

#include "ferry/pipeline/pipeline_metrics.h"

#include <iterator>
#include <utility>

namespace ferry::pipeline {

using metrics::Labels;

PipelineMetrics::PipelineMetrics(metrics::Registry* r, const std::string& id,
                                 const std::string& table_label)
    : registry(r),
      journal(r->journal()),
      journal_key{id, table_label},
      pipeline(id),
      table(table_label) {
  const Labels l = With();
  up = r->GetGauge("ferry_pipeline_up", "1 while the pipeline runs", l);
  rows = r->GetCounter("ferry_rows_written_total", "Rows committed to the table", l);
  bytes = r->GetCounter("ferry_bytes_written_total", "Bytes of data files committed", l);
  files = r->GetCounter("ferry_files_written_total", "Data files committed", l);
  messages = r->GetCounter("ferry_messages_received_total",
                           "Messages taken from the source into a batch", l);
  redeliveries = r->GetCounter("ferry_redeliveries_dropped_total",
                               "Messages at or below a delivered position, dropped", l);
  const char* commits_help = "Commits by outcome (succeeded, failed, lost to another writer)";
  succeeded = r->GetCounter("ferry_commits_total", commits_help, With({{"outcome", "succeeded"}}));
  committer.failed =
      r->GetCounter("ferry_commits_total", commits_help, With({{"outcome", "failed"}}));
  lost = r->GetCounter("ferry_commits_total", commits_help, With({{"outcome", "lost"}}));
  abandoned = r->GetCounter("ferry_batches_abandoned_total",
                            "Batches dropped because another writer owns a partition", l);
  unavailable =
      r->GetCounter("ferry_source_unavailable_total", "Polls that found the broker unreachable", l);
  decode_unavailable =
      r->GetCounter("ferry_decode_unavailable_total",
                    "Decode attempts that found the schema registry unreachable (retried)", l);
  gaps = r->GetCounter("ferry_source_gaps_total",
                       "Ranges the broker no longer held, skipped (on_gap = continue)", l);
  gap_messages =
      r->GetCounter("ferry_source_gap_messages_total", "Positions in the skipped ranges", l);
  version = r->GetGauge("ferry_table_version", "Latest table version this pipeline knows", l);
  filtered = r->GetCounter("ferry_rows_filtered_total", "Rows dropped by the `where` filter", l);
  dedup_hits = r->GetCounter("ferry_dedup_hits_total",
                             "Rows not written because their dedup key was committed already", l);
  committer.checkpoint_seconds = r->GetHistogram("ferry_checkpoint_duration_seconds",
                                                 "Writing a Delta checkpoint after a commit", l);
  rate_limited = r->GetCounter("ferry_rate_limited_seconds_total",
                               "Time partitions were held back by max_rate_per_partition", l);
  committer.dead_rows = r->GetCounter("ferry_dead_letter_rows_written_total",
                                      "Rows committed to the dead-letter table", l);
  batch_seconds = r->GetHistogram("ferry_batch_duration_seconds",
                                  "From a batch's first row to its durable commit", l);
  committer.commit_seconds = r->GetHistogram("ferry_commit_duration_seconds",
                                             "Writing a batch's files and committing them", l);
  committer.journal = journal;
  committer.journal_key = journal_key;
  committer.schema_changes =
      r->GetCounter("ferry_schema_changes_total",
                    "Commits that changed the table's schema (schema_evolution)", l);
  committer.schema_replans = r->GetCounter(
      "ferry_schema_replans_total",
      "Batches merged again with the table's schema after another writer changed its metaData", l);
  schema_rewinds = r->GetCounter(
      "ferry_schema_rewinds_total",
      "Batches read again because the table's new schema could not take their values", l);
}

KeyIndexMetrics KeyIndexSeries(metrics::Registry* r, const std::string& id,
                               const std::string& table) {
  auto with = [&](Labels extra) {
    Labels out = {{"pipeline", id}};
    if (!table.empty()) {
      out.emplace_back("table", table);
    }
    out.insert(out.end(), extra.begin(), extra.end());
    return out;
  };
  const Labels l = with({});
  const char* loads = "Starts of the upsert key index: from its file, or rebuilt from the table";
  const char* writes = "Writes of the upsert key index's file beside the table";
  return KeyIndexMetrics{
      .keys = r->GetGauge("ferry_upsert_index_keys", "Live keys in the upsert key index", l),
      .tombstones = r->GetGauge("ferry_upsert_index_tombstones",
                                "Deleted keys the upsert key index keeps for their sequence", l),
      .bytes = r->GetGauge("ferry_upsert_index_bytes", "Heap bytes of the upsert key index", l),
      .loaded = r->GetCounter("ferry_upsert_index_loads_total", loads, with({{"source", "file"}})),
      .rebuilt =
          r->GetCounter("ferry_upsert_index_loads_total", loads, with({{"source", "rebuilt"}})),
      .written =
          r->GetCounter("ferry_upsert_index_writes_total", writes, with({{"outcome", "written"}})),
      .write_failed =
          r->GetCounter("ferry_upsert_index_writes_total", writes, with({{"outcome", "failed"}})),
      .write_skipped =
          r->GetCounter("ferry_upsert_index_writes_total", writes, with({{"outcome", "skipped"}})),
      .tombstones_dropped =
          r->GetCounter("ferry_upsert_index_tombstones_dropped_total",
                        "Tombstones the upsert key index dropped (tombstone_retention, "
                        "max_tombstones)",
                        l)};
}

Labels PipelineMetrics::With(Labels extra) const {
  Labels out = {{"pipeline", pipeline}};
  if (!table.empty()) {
    out.emplace_back("table", table);
  }
  out.insert(out.end(), std::make_move_iterator(extra.begin()),
             std::make_move_iterator(extra.end()));
  return out;
}

metrics::Gauge* PipelineMetrics::Position(const std::string& name, const std::string& help,
                                          const std::string& partition) {
  return registry->GetGauge(name, help, With({{"partition", partition}}));
}

metrics::Counter* PipelineMetrics::PartitionCounter(const std::string& name,
                                                    const std::string& help,
                                                    const std::string& partition) {
  return registry->GetCounter(name, help, With({{"partition", partition}}));
}

metrics::Counter* PipelineMetrics::Bad(const char* action, std::string_view reason) {
  return registry->GetCounter(
      "ferry_bad_records_total",
      "Messages that did not decode or fit the schema, by action and reason",
      With({{"action", action}, {"reason", std::string(reason)}}));
}

metrics::Counter* PipelineMetrics::DroppedField(const std::string& field) {
  if (dropped_field_labels_.size() < kMaxDroppedFieldSeries) {
    dropped_field_labels_.insert(field);
  }
  const bool own = dropped_field_labels_.count(field) > 0;
  return registry->GetCounter(
      "ferry_dropped_fields_total",
      "Writer fields (Avro, Protobuf) dropped because the table has no column for them: one per "
      "message taken and field of its writer schema",
      With({{"field", own ? field : std::string(kOtherDroppedField)}}));
}

std::string_view BadRecordReason(std::string_view error) {
  auto has = [&](std::string_view text) { return error.find(text) != std::string_view::npos; };
  // A Protobuf writer schema that does not parse, is not Protobuf or has no message at the
  // frame's indexes (transform/protobuf_decoder.h) is a schema problem too.
  if (has("schema evolution") || has("cannot be read into") || has("Protobuf schema") ||
      has("not Protobuf")) {
    return "schema";
  }
  // The Avro and Protobuf decoders' (transform/avro_decoder.h, protobuf_decoder.h).
  if (has("schema registry framing")) {
    return "framing";
  }
  if (has("unknown to the schema registry")) {
    return "unknown_schema";
  }
  if (has("malformed")) {
    return "malformed";
  }
  if (has("UTF-8")) {
    return "invalid_utf8";
  }
  if (has("missing required field") || has("null in a NOT NULL field")) {
    return "missing_required";
  }
  if (has("out of range") || has("does not fit")) {
    return "overflow";
  }
  if (has("expected")) {
    return "wrong_type";
  }
  if (has("Avro datum") || has("Protobuf message")) {
    return "malformed";
  }
  return "other";
}

}  // namespace ferry::pipeline

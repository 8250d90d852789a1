// PipelineOptions: what one pipeline is told (batch triggers, metadata and derived columns,
// bad records, dedup, schema evolution, the writer's and the commit's settings). app/ builds them
// from the configuration (app/pipeline_factory.cc); Pipeline::Create checks them.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"
#include "ferry/delta/schema_evolution.h"
#include "ferry/delta/table_writer.h"
#include "ferry/delta/transaction.h"
#include "ferry/pipeline/dedup_index.h"
#include "ferry/pipeline/shared_batch_budget.h"
#include "ferry/pipeline/transform_stage.h"
#include "ferry/pipeline/upsert_commit.h"
#include "ferry/source/source.h"
#include "ferry/transform/decoder.h"

namespace ferry::pipeline {

struct SealedBatch;  // batch_committer.h

// What happens to a message that does not decode or fit the schema (`on_bad_record`).
enum class OnBadRecord {
  kFail,        // stop; the rows before it are committed, nothing after it
  kSkip,        // drop it, count it (ferry_bad_records_total), consume its position
  kDeadLetter,  // write it to the dead-letter table, exactly once (SetDeadLetterTable)
};

// The dead-letter table's schema (Spark DDL): one row per bad record.
inline constexpr char kDeadLetterSchema[] =
    "pipeline STRING NOT NULL, source_partition STRING NOT NULL, position BIGINT NOT NULL, "
    "key BINARY, payload BINARY, error STRING NOT NULL, time TIMESTAMP NOT NULL";

struct PipelineOptions {
  // Prefix of every txn appId ("<id>/<partition key>") and the `pipeline` metrics label.
  std::string id;
  // Batch triggers (BatchConfig).
  int64_t max_rows = 100000;
  int64_t max_bytes = 64LL << 20;
  std::chrono::milliseconds max_latency{1000};
  // Sealed batches that may wait for or be in the writer thread while the next batch is read.
  // 0: no overlap (the batch is committed before polling resumes, as in a serial loop).
  int max_in_flight = 1;
  // Metadata kind -> column name (metadata_columns.h).
  std::map<std::string, std::string> metadata_columns;
  // Derived columns and `where` (transform_stage.h). The table schema is the decoder's columns,
  // then the metadata columns, then the derived ones.
  TransformSpec transform;
  OnBadRecord on_bad_record = OnBadRecord::kFail;
  // Key-based dedup (dedup_index.h), applied after the transform.
  std::optional<DedupSpec> dedup;
  // mode = "upsert" (upsert_commit.h, docs/cdc.md): each row upserts or deletes the row of its
  // key (the decoder's last_op()). A message with an empty value (a tombstone) deletes: its key
  // columns come from the message key, decoded by the value's decoder as a value holding only
  // the key columns (a JSON key {"id": 5}), or, with tombstone_key_from_metadata, from the
  // metadata columns and the key's decoder alone (the Kafka key is itself a key column).
  // Exclusive with dedup and `where`.
  std::optional<UpsertSpec> upsert;
  bool tombstone_key_from_metadata = false;
  delta::TableWriterOptions writer;
  delta::CommitOptions commit;
  // Longest wait inside one Poll (bounds how fast a stop or a latency trigger is noticed).
  std::chrono::milliseconds poll_timeout{200};
  // Backoff between retries of a failed batch write or commit: doubles up to the maximum.
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{10000};
  // Schema evolution (schema_evolver.h). Anything but kNone needs decoder_factory and a decoder
  // that observes (JsonDecoderOptions::observe and observe_misfits).
  delta::SchemaEvolution schema_evolution = delta::SchemaEvolution::kNone;
  delta::SchemaEvolutionLimits evolution_limits;
  // The decoder for another input schema. With it the pipeline follows the table's schema (its
  // own changes and other writers'); without it the input schema stays the one it started with.
  std::function<Result<std::unique_ptr<transform::Decoder>>(const columnar::SchemaPtr&)>
      decoder_factory;
  // The decoder of the Kafka key into its column (`key_format = "avro"`), for an input schema:
  // each message's key is decoded after its value, into one column the value's decoder and the
  // metadata columns leave alone; an empty key is null. Unset: the key, if asked for, is a
  // metadata column.
  std::function<Result<std::unique_ptr<transform::Decoder>>(const columnar::SchemaPtr&)>
      key_decoder_factory;
  // The JSON decoder's unknown_fields_column (a column, never a field to add).
  std::string unknown_fields_column;
  // Prefix of the dead-letter table's appIds ("<dead_letter_id>/<partition key>"); empty: `id`.
  // The inner pipelines of a routed pipeline (router.h) share one dead-letter table, each with
  // its own positions there.
  std::string dead_letter_id;
  // The `table` label of this pipeline's metrics (pipeline_metrics.h): a router sets it to its
  // table's location for each inner pipeline, so that their series are per table; empty for a
  // one-table pipeline (labelled by `pipeline` only).
  std::string metrics_table;
  // Called on the pipeline thread for each batch as it is sealed (after its partitions' positions
  // are stamped), before it goes to the writer thread: a routed pipeline adds its resume
  // positions to SealedBatch::extra_txns (router.h).
  std::function<void(SealedBatch*)> seal_hook;
  // Asked when a poll found nothing: true seals the open batch now instead of at max_latency. A
  // routed pipeline's router answers true once `--until-caught-up` has polled everything, so
  // the tables commit at once rather than max_latency later (router.h, step 9).
  std::function<bool()> seal_now;
  // Shared with other pipelines (a routed pipeline's tables): their open batches together stay
  // near its limit (shared_batch_budget.h). Null: this pipeline's max_bytes alone.
  std::shared_ptr<SharedBatchBudget> shared_batch_budget;
  // How often broker heads are asked for (lag metrics).
  std::chrono::milliseconds heads_interval{5000};
  // Stop (returning OK after committing) once every assigned partition has reached the head
  // the broker reported when it was first seen (`ferry run --until-caught-up`).
  bool until_caught_up = false;
  // With until_caught_up: fail (Unavailable) after this long without contact with the broker
  // (no partition assigned, no broker head read, no message received). 0: wait forever.
  std::chrono::milliseconds max_wait{0};
};

using SourceFactory = std::function<Result<std::unique_ptr<source::Source>>()>;

}  // namespace ferry::pipeline

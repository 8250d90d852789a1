// Pipeline: the micro-batch loop of DESIGN.md ("A batch"): source -> decoder -> record batch ->
// Parquet files -> one Delta commit holding the files and every partition's position -> acks.
//
//   FERRY_ASSIGN_OR_RETURN(auto p, Pipeline::Create(options, std::move(opened.table),
//                                                   opened.snapshot, source_factory, decoder,
//                                                   &registry));
//   Status st = p->Run(&stop);   // until `stop` says so, or a fatal error
//
// The loop, numbered as Run() runs it (failpoints in brackets):
//   1. Start the source. For every partition it assigns, the position comes from the latest
//      snapshot (appId "<id>/<partition key>"); delivery resumes after it.
//   2. Poll; drop messages at or below the partition's last delivered position (redeliveries);
//      decode each into the open batch and add the metadata columns. [pipeline.after_poll]
//      A message that does not decode stops the pipeline: the rows before it are committed,
//      the error names topic/stream, partition and position, nothing after it is committed.
//      A decoder that cannot tell yet (Unavailable: a schema registry that does not answer) is
//      no bad message: the poll's remaining messages wait, with no poll in between, and are
//      offered again with backoff (the journal says waiting_for_registry); nothing is skipped.
//   3. When a trigger fires (max_rows, max_bytes of the open batch in memory, max_latency since
//      the batch's first row; with until_caught_up also the end of the backlog, TailSealDue) or
//      a drain is requested, the batch is sealed (a SealedBatch) and
//      handed to the writer thread (CommitQueue), and the pipeline thread goes back to step 2
//      with a new open batch. On the writer thread a BatchCommitter (batch_committer.h, which
//      numbers these steps) commits the dead letters (they have their own txn, before the main
//      commit that covers the same positions [pipeline.after_dead_letter_commit]), applies the
//      derived columns and `where`, and has the commit strategy chosen here (commit_strategy.h:
//      append with its dedup keys filtered, or upsert) write the Parquet files
//      [pipeline.before_write], and commits them with one txn per partition in the batch, each
//      expecting the position the batch before it commits [pipeline.before_commit,
//      pipeline.after_commit]. The pipeline thread takes the outcome back and acknowledges to
//      the source [pipeline.before_ack, pipeline.after_ack].
//   4. A commit that lost to another writer's txn for one of our partitions (Aborted): the
//      batch, any sealed batch behind it and the open batch are abandoned (their files are
//      orphans for vacuum), the source is closed and made anew from the factory, and every
//      partition resumes from the table (fencing).
//      Any other failure (I/O, store unavailable, an unknown outcome): the BatchCommitter backs
//      off and reloads the snapshot; if it holds the batch's positions the commit landed, if it
//      holds the old ones the batch is written again, otherwise another writer owns a partition
//      (as above).
//   5. A revoked partition's rows leave the open batch before anything else is delivered.
//   6. Schema evolution (schema_evolver.h): a message the decoder finds fields or values in that
//      the open batch's schema cannot hold is planned into a wider input schema; the open batch
//      is conformed to it (earlier rows read the new fields as null), the decoder rebuilt and
//      the message decoded again. The batch carries the schema to the writer thread, which merges
//      it into the table's in the same commit as the data (batch_committer.h, step 3a). A batch
//      that reaches max_new_columns_per_batch is sealed early and the message starts the next
//      one. When a commit comes back with a table schema the decoder does not know yet (another
//      writer's, or an operator's `ferry table add-columns`), the next batch decodes into it; a
//      batch the table's schema cannot take is read again after the table's positions (as
//      fencing does) and decoded against the table's schema.
//
// Overlap of steps 2 and 3, and what keeps it exactly-once (pipeline_test.cc checks each):
//   - Commits are made strictly in batch order, one at a time (CommitQueue invariant 1); a
//     batch's txns expect the positions of the batch sealed before it (PartitionState::sealed),
//     so a batch behind a failed one can never commit: the queue does not run it (invariant 3)
//     and its expected positions would not match anyway.
//   - A batch's acks and offset commits happen on the pipeline thread after its outcome is taken
//     back, so only after its Delta commit is durable.
//   - At most max_in_flight sealed batches (default 1) wait for or are in the writer thread;
//     when the queue is full, sealing waits for the oldest outcome. Memory stays within
//     (1 + max_in_flight) times the batch limits.
//   - The BatchCommitter holds the table handle, the snapshot, the dead-letter table, the
//     transform stage and the commit strategy (with its index); while a batch is in flight only the
//     writer thread uses them. The pipeline thread calls the committer only when the queue is idle:
//     partition assignment and revocation (inside Poll) first wait for the batch in flight, so
//     positions are read after its commit and a revoked partition's sealed rows are committed
//     before the partition is given up; fencing, stop and return wait for every outcome.
//   - Dedup: batch N+1 is filtered on the writer thread after batch N's keys were remembered
//     (after its durable commit), so it sees them; a fenced batch never reaches Remember.
//   - An error on the writer thread (a fatal status, or a stop that abandons the batch) comes
//     back as the batch's outcome and stops the pipeline exactly as the same error in step 3 of
//     a serial loop would; nothing behind it runs.
//
// Exactly-once holds at every step: nothing is acknowledged before its commit is durable, and a
// stop or crash anywhere leaves positions and data together in the log.
//
// The parts, each on the thread the steps above name: Intake (intake.h) takes each message into
// the OpenBatch (open_batch.h), steps 2 and 6; the PartitionBook (partition_book.h) keeps every
// partition's positions and the broker's heads; the BatchCommitter (batch_committer.h) is the
// writer thread's step 3; PipelineMetrics (pipeline_metrics.h) the series they publish. Pipeline
// itself runs the loop, the queue of sealed batches and fencing (pipeline.cc), and the source:
// its start and close, assignment, the poll and the messages waiting for the decoder
// (pipeline_source.cc).
//
// Status page: besides its metrics, the pipeline tells the registry's Journal (metrics/journal.h)
// its state changes (running, waiting for the broker when a poll or a head query finds it
// unreachable, retrying a failed commit, failed with the error, stopped), every commit with the
// positions it moved, bad-record samples and fencing events: per batch or rarer, never per
// message.
//
// Thread-safety: Run() is called once, on one thread; it runs the writer thread (the CommitQueue,
// whose jobs call the BatchCommitter) inside. The StopSignal and the metrics registry may be used
// from other threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/delta/schema_evolution.h"
#include "ferry/delta/snapshot.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_writer.h"
#include "ferry/delta/transaction.h"
#include "ferry/metrics/metrics.h"
#include "ferry/pipeline/batch_committer.h"
#include "ferry/pipeline/commit_queue.h"
#include "ferry/pipeline/commit_strategy.h"
#include "ferry/pipeline/intake.h"
#include "ferry/pipeline/metadata_columns.h"
#include "ferry/pipeline/open_batch.h"
#include "ferry/pipeline/partition_book.h"
#include "ferry/pipeline/pipeline_metrics.h"
#include "ferry/pipeline/pipeline_options.h"
#include "ferry/pipeline/schema_evolver.h"
#include "ferry/pipeline/seal_lead.h"
#include "ferry/pipeline/stop_signal.h"
#include "ferry/pipeline/transform_stage.h"
#include "ferry/source/source.h"
#include "ferry/transform/decoder.h"

namespace ferry::pipeline {

class Pipeline final : private source::PartitionListener {
 public:
  // `decoder` fills the columns of the input schema (InputSchema(table schema, derived columns))
  // that are not metadata columns. InvalidArgument when the metadata or derived columns do not
  // fit the table.
  static Result<std::unique_ptr<Pipeline>> Create(PipelineOptions options,
                                                  std::unique_ptr<delta::Table> table,
                                                  delta::Snapshot snapshot,
                                                  SourceFactory source_factory,
                                                  std::unique_ptr<transform::Decoder> decoder,
                                                  metrics::Registry* registry);
  ~Pipeline() override;

  // The dead-letter table (kDeadLetter), with the schema kDeadLetterSchema. Bad records are
  // committed there before the batch that consumes them is committed to the table, with a txn
  // per source partition, so a replay after a crash neither loses nor repeats them. Call before
  // Run().
  Status SetDeadLetterTable(std::unique_ptr<delta::Table> table, delta::Snapshot snapshot);

  // Runs the loop until a stop request (OK after a drain; Cancelled after an abort or a drain
  // that ran out of time, with the open batch not committed) or a fatal error: a message that
  // does not decode (InvalidArgument), lost data (DataLoss), a table ferry cannot write.
  Status Run(StopSignal* stop);

  // REQUIRES: no batch in flight (before or after Run()).
  const delta::Snapshot& snapshot() const { return committer_->snapshot(); }
  const std::string& id() const { return options_.id; }

 private:
  // TailSealDue: smaller batches are not worth a commit of their own.
  static constexpr int64_t kMinTailSealRows = 1000;

  using Clock = std::chrono::steady_clock;

  Pipeline(PipelineOptions options, std::unique_ptr<delta::Table> table, delta::Snapshot snapshot,
           SourceFactory source_factory, std::unique_ptr<transform::Decoder> decoder,
           MetadataWriter metadata, std::unique_ptr<TransformStage> stage,
           std::unique_ptr<CommitStrategy> strategy, std::unique_ptr<SchemaEvolver> evolver,
           metrics::Registry* registry);

  // PartitionListener (pipeline thread, inside Poll; both wait for the writer to be idle;
  // pipeline_source.cc).
  Result<std::optional<int64_t>> OnAssigned(const source::PartitionInfo& partition) override;
  void OnRevoked(const source::PartitionInfo& partition) override;

  // ---- Pipeline thread: the loop, sealing, outcomes, fencing (pipeline.cc) ----
  // Step 3: seals the open batch (if any) and hands it to the writer thread, first taking back
  // the oldest outcome when max_in_flight batches are out. OK also when that outcome fenced
  // (the open batch was dropped).
  Status SubmitBatch();
  // Tells options_.shared_batch_budget the open batch's bytes now.
  void ReportBatchBytes();
  // Takes back outcomes in order and acts on them: every one (wait) or the finished ones.
  // An error stops the pipeline (the batches behind it are discarded); fencing is OK.
  Status Settle(bool wait);
  // SubmitBatch, then Settle(wait): the open batch is committed (or fenced, or the error).
  Status Flush();
  Status HandleOutcome(const Status& outcome);
  // Drops every sealed batch still out, ignoring their outcomes (they follow a failure).
  void DiscardInFlight();
  // Step 4: drops the batches and restarts the source from the table. `rewind`: a batch whose
  // values the table's new schema cannot take (step 6), not another writer's partition.
  Status Fence(const Status& why, bool rewind = false);
  // Step 3's end for a committed batch: positions, acks, metrics.
  void AfterCommit(const SealedBatch& batch);
  // The end of an --until-caught-up run is near: the writer thread is idle and the open batch
  // holds at least as many rows as are left to read, and a quarter of max_rows or max_bytes
  // (and kMinTailSealRows). Sealing it now lets
  // the writer write it while the rest arrives, so that what is written after the last message
  // (the run's tail, when nothing else overlaps) is the rest rather than a whole batch.
  bool TailSealDue() const;
  // Run() without its last word to the journal (stopped or failed).
  Status RunLoop(StopSignal* stop);

  // ---- Pipeline thread: the source (pipeline_source.cc) ----
  // Makes and starts the source. Unavailable (the broker, or the store while the partitions'
  // positions are read) is retried with backoff; OK without a source when a stop came first.
  Status StartSource();
  void CloseSource();
  // The longest a poll (or a wait for the decoder) may take: poll_timeout, or less when the open
  // batch's max_latency comes sooner.
  std::chrono::milliseconds PollTimeout() const;
  // Step 2's poll into polled_. An error stops the pipeline (an unreachable broker does not).
  Status PollSource();
  // Step 2 for the messages of polled_ not taken yet. When the decoder cannot tell yet
  // (Unavailable: a schema registry that does not answer), the rest wait in polled_ and are
  // offered again after a backoff, before the next poll; nothing is skipped or acknowledged.
  Status TakePolled();
  void WaitForDecoder(const Status& why);
  void UpdateHeads();
  // Unavailable once until_caught_up has gone max_wait without contact with the broker.
  Status CheckMaxWait() const;
  // Tells the journal when the broker stops or starts answering polls and head queries.
  void SetBrokerReachable(bool reachable, const Status& why);

  PipelineOptions options_;
  StopSignal* stop_ = nullptr;  // Run()'s

  // Pipeline thread.
  SourceFactory source_factory_;
  std::unique_ptr<source::Source> source_;
  std::unique_ptr<PipelineMetrics> metrics_;
  columnar::SchemaPtr known_table_;  // the table's schema as the last outcome or reload told
  int64_t fences_ = 0;               // Fence() calls, so a caller sees that one happened

  PartitionBook book_;
  OpenBatch open_;
  // Steps 2 and 6: messages into open_, with the decoder and the schema it decodes into.
  Intake intake_;
  // limits_.max_latency is options_.max_latency less seal_lead_'s lead (seal_lead.h), updated
  // after each commit.
  BatchLimits limits_;
  SealLead seal_lead_;
  int64_t rate_limited_us_ = 0;       // the source's RateLimitedMicros() already counted
  int64_t reported_batch_bytes_ = 0;  // to options_.shared_batch_budget
  // The logs were read for the partitions assigned since the last poll began: the other
  // partitions of one assignment (a rebalance hands out up to hundreds) need no read of their
  // own, which on an object store is a listing each.
  bool positions_fresh_ = false;
  // The last error a poll reported: what max_wait's error names.
  std::string last_source_error_;
  bool broker_unreachable_ = false;
  // The last poll's messages; those from next_polled_ on wait for the decoder (TakePolled).
  std::vector<source::Message> polled_;
  size_t next_polled_ = 0;
  std::chrono::milliseconds decode_backoff_{0};  // 0: not waiting for the decoder
  Clock::time_point retry_decode_at_;
  Clock::time_point decode_waiting_since_;

  // Sealed batches out to the writer thread, oldest first, in step with queue_'s jobs.
  std::deque<std::unique_ptr<SealedBatch>> in_flight_;
  // The writer thread's work; it owns the table, snapshots, stage and commit strategy (see the
  // header comment). Built after metrics_ (it takes metrics_->committer); declared before queue_,
  // so it outlives the writer thread whose jobs call it.
  std::unique_ptr<BatchCommitter> committer_;
  // Last: destroyed first, so the writer thread is joined before anything its jobs use.
  std::unique_ptr<CommitQueue> queue_;
};

}  // namespace ferry::pipeline

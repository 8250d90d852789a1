// FilterCursor: what the JetStream source knows about one subject filter's deliveries, and the
// rules that turn skipped stream sequences into "lost" or "fine". Pure logic, no nats.c, so every
// rule has a unit test.
//
// Why the source needs its own checks on top of the ordered consumer's (DESIGN.md, JetStream):
//   - nats-server 2.9 clips a consumer's start sequence silently: below the stream's first
//     sequence it starts at the first. A position the stream no longer holds must be caught by
//     comparing it with the stream's first sequence (CheckStart), at the first start and at every
//     restart of the consumer.
//   - A push consumer never tells it skipped messages the stream's limits removed before they were
//     sent. Consumer sequences stay contiguous; only the stream sequence jumps. So:
//       1. Observe() records every jump past the last delivered sequence that may hide lost
//          messages of this filter: always when the filter covers the whole stream (any skipped
//          sequence was a deleted message), otherwise when the server said, with the previous
//          message, that more messages of the filter were pending (the consumer was behind) or
//          when nothing is known about the previous message (first after a (re)start).
//       2. The source then reads the stream's first sequence (after the jump was received, so the
//          value is at least what it was when the server skipped) and calls Resolve(): the part of
//          each jump below the first sequence was removed by retention (lost); for a whole-stream
//          filter the rest was deleted one by one (explicit delete: reported, not an error).
//   A jump of a filter that was caught up (pending 0) is ordinary: other subjects' messages.
//
// Thread-safety: a value type used by the source's thread.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"

namespace ferry::source::jetstream {

// Stream sequences first..last, inclusive.
struct SequenceRange {
  uint64_t first = 0;
  uint64_t last = 0;
  bool operator==(const SequenceRange&) const = default;
};

// The stream's state when a consumer is about to start at `next`.
struct StartCheck {
  std::optional<SequenceRange> lost;  // messages before `next`'s reach that the stream dropped
};

// Compares a start sequence with the stream's bounds (jsStreamState.FirstSeq/LastSeq; both 0 for
// a stream that never held a message).
//   - `from_table`: `next` is a committed position + 1. A position past the stream's last
//     sequence means the stream was deleted and recreated (sequences restarted) or the table
//     belongs to another stream: DataLoss, whatever the gap option says, because the server
//     would clip the start to last + 1 and every new message would look like a redelivery.
//   - first_seq > next: messages next..first_seq-1 are gone (returned in `lost`).
Result<StartCheck> CheckStart(uint64_t next, uint64_t first_seq, uint64_t last_seq,
                              bool from_table);

class FilterCursor {
 public:
  // `covers_stream`: the filter matches every subject of the stream.
  explicit FilterCursor(bool covers_stream) : covers_stream_(covers_stream) {}

  enum class Verdict { kDeliver, kDuplicate };

  // Positions the cursor before `next`, or before an unknown first message (next == 0: start
  // policy `all` or a time; the first delivery then sets the floor). `confirmed`: next - 1 is a
  // committed position from the table (as opposed to a start policy's choice). Unverified jumps
  // survive a restart; only Resolve() forgets them.
  void Restart(uint64_t next, bool confirmed);

  // One delivered message. kDuplicate for a sequence at or below the last delivered one (the
  // caller drops it); otherwise the message advances the cursor, and a jump is recorded per the
  // rules above. `pending` is the server's count of messages of the filter after this one.
  Verdict Observe(uint64_t stream_sequence, uint64_t pending);

  bool has_unverified_jumps() const { return !jumps_.empty(); }

  // Splits the recorded jumps with the stream's first sequence read after they were observed.
  // Appends removed-by-retention ranges to *lost and (whole-stream filters only) individually
  // deleted ranges to *deleted, then forgets the jumps.
  void Resolve(uint64_t first_seq, std::vector<SequenceRange>* lost,
               std::vector<SequenceRange>* deleted);

  // The last stream sequence delivered, or the known position before the first delivery; 0 when
  // neither is known.
  uint64_t floor() const { return floor_; }
  // Where a new consumer must start to continue without loss: floor() + 1, or 0 when unknown.
  uint64_t resume_sequence() const { return floor_known_ ? floor_ + 1 : 0; }
  // True when floor() is a position the table committed or a sequence the stream delivered, so
  // it can never legitimately be past the stream's last sequence.
  bool floor_confirmed() const { return floor_confirmed_; }
  bool covers_stream() const { return covers_stream_; }

 private:
  bool covers_stream_;
  bool floor_known_ = false;
  bool floor_confirmed_ = false;
  uint64_t floor_ = 0;
  // Pending count the server sent with the last delivered message; nullopt after a (re)start.
  std::optional<uint64_t> last_pending_;
  std::vector<SequenceRange> jumps_;
};

}  // namespace ferry::source::jetstream

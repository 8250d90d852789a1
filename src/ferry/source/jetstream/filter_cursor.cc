#include "ferry/source/jetstream/filter_cursor.h"

#include <algorithm>

namespace ferry::source::jetstream {

Result<StartCheck> CheckStart(uint64_t next, uint64_t first_seq, uint64_t last_seq,
                              bool from_table) {
  StartCheck check;
  if (next == 0) {
    return check;
  }
  if (from_table && next > last_seq + 1) {
    return DataLoss(
        "committed position {} is past the stream's last sequence {}: the stream was deleted and "
        "recreated (sequences restarted) or the table was written from another stream; refusing "
        "to start, because every new message would look like one already committed",
        next - 1, last_seq);
  }
  if (first_seq > next) {
    check.lost = SequenceRange{next, first_seq - 1};
  }
  return check;
}

void FilterCursor::Restart(uint64_t next, bool confirmed) {
  if (next != 0) {
    floor_known_ = true;
    floor_confirmed_ = confirmed;
    floor_ = next - 1;
  }
  last_pending_.reset();
}

FilterCursor::Verdict FilterCursor::Observe(uint64_t stream_sequence, uint64_t pending) {
  if (floor_known_ && stream_sequence <= floor_) {
    return Verdict::kDuplicate;
  }
  if (floor_known_ && stream_sequence > floor_ + 1) {
    bool may_hide_loss = covers_stream_ || !last_pending_.has_value() || *last_pending_ > 0;
    if (may_hide_loss) {
      jumps_.push_back(SequenceRange{floor_ + 1, stream_sequence - 1});
    }
  }
  floor_known_ = true;
  floor_confirmed_ = true;
  floor_ = stream_sequence;
  last_pending_ = pending;
  return Verdict::kDeliver;
}

void FilterCursor::Resolve(uint64_t first_seq, std::vector<SequenceRange>* lost,
                           std::vector<SequenceRange>* deleted) {
  for (const SequenceRange& jump : jumps_) {
    uint64_t deleted_from = jump.first;
    if (first_seq > jump.first) {
      uint64_t lost_last = std::min(jump.last, first_seq - 1);
      lost->push_back(SequenceRange{jump.first, lost_last});
      deleted_from = lost_last + 1;
    }
    if (covers_stream_ && deleted_from <= jump.last) {
      deleted->push_back(SequenceRange{deleted_from, jump.last});
    }
  }
  jumps_.clear();
}

}  // namespace ferry::source::jetstream

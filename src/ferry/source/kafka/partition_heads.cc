#include "ferry/source/kafka/partition_heads.h"

#include <algorithm>
#include <utility>

#include "ferry/base/clock.h"

namespace ferry::source::kafka {

std::vector<PartitionHeads::Mark> PartitionHeads::Cached(std::vector<size_t>* no_low) const {
  std::vector<Mark> marks;
  for (size_t i = 0; i < table_->size(); ++i) {
    const PartitionState& s = table_->at(static_cast<int32_t>(i));
    if (!s.assigned) {
      continue;
    }
    Mark m{.state = &s};
    rd_kafka_resp_err_t err =
        rd_kafka_get_watermark_offsets(rk_, s.topic.c_str(), s.partition, &m.low, &m.cached_high);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR || m.low < 0) {
      m.low = -1;
      no_low->push_back(marks.size());
    }
    marks.push_back(m);
  }
  return marks;
}

void PartitionHeads::ReadThrough(std::vector<Mark>* marks) const {
  PartitionListPtr positions = NewPartitionList(marks->size());
  for (const Mark& m : *marks) {
    AddToList(positions.get(), *m.state);
  }
  if (rd_kafka_position(rk_, positions.get()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return;
  }
  for (size_t j = 0; j < marks->size(); ++j) {
    const rd_kafka_topic_partition_t& e = positions->elems[j];
    Mark& m = (*marks)[j];
    if (e.err == RD_KAFKA_RESP_ERR_NO_ERROR && e.offset >= 0 && m.state->held.empty()) {
      m.read_through = e.offset - 1;
    }
  }
}

void PartitionHeads::Ask(int64_t which, const std::vector<size_t>& ask, int64_t timeout_ms,
                         std::vector<Mark>* marks) const {
  if (ask.empty() || timeout_ms <= 0) {
    return;
  }
  PartitionListPtr list = NewPartitionList(ask.size());
  for (size_t k : ask) {
    AddToList(list.get(), *(*marks)[k].state)->offset = which;  // the timestamp asked for
  }
  if (rd_kafka_offsets_for_times(rk_, list.get(), static_cast<int>(timeout_ms)) !=
      RD_KAFKA_RESP_ERR_NO_ERROR) {
    return;  // unknown: the cached high watermark, or no positions
  }
  for (size_t j = 0; j < ask.size(); ++j) {
    const rd_kafka_topic_partition_t& e = list->elems[j];
    if (e.err == RD_KAFKA_RESP_ERR_NO_ERROR && e.offset >= 0) {
      Mark& m = (*marks)[ask[j]];
      (which == RD_KAFKA_OFFSET_END ? m.high : m.low) = e.offset;
    }
  }
}

std::vector<PartitionHead> PartitionHeads::Query() const {
  std::vector<size_t> no_low;  // into marks
  std::vector<Mark> marks = Cached(&no_low);
  if (!marks.empty()) {
    ReadThrough(&marks);
  }
  std::vector<size_t> no_end;  // into marks
  bool all_cached = true;
  for (size_t j = 0; j < marks.size(); ++j) {
    Mark& m = marks[j];
    if (m.cached_high >= 0 && m.low >= 0 && m.read_through >= m.cached_high - 1) {
      m.high = m.cached_high;  // read through the high watermark: no open transaction holds it
    } else {
      all_cached = all_cached && m.cached_high >= 0;
      no_end.push_back(j);
    }
  }
  const int64_t deadline_us = MonotonicMicros() + request_timeout_.count() * 1000;
  int64_t end_ms = (deadline_us - MonotonicMicros()) / 1000;
  if (all_cached) {
    end_ms = std::min<int64_t>(end_ms, 1000);
  }
  Ask(RD_KAFKA_OFFSET_END, no_end, end_ms, &marks);
  Ask(RD_KAFKA_OFFSET_BEGINNING, no_low, (deadline_us - MonotonicMicros()) / 1000, &marks);
  std::vector<PartitionHead> heads;
  heads.reserve(marks.size());
  for (Mark& m : marks) {
    if (m.high < 0 && m.cached_high >= 0 && m.low >= 0) {
      m.high = m.cached_high;
    }
    PartitionHead head;
    head.key = m.state->info.key;
    if (m.low >= 0 && m.high >= 0) {
      head.first_position = m.low;
      head.last_position = m.high - 1;
    }
    if (m.read_through >= 0) {
      head.read_through = m.read_through;
    }
    heads.push_back(std::move(head));
  }
  return heads;
}

}  // namespace ferry::source::kafka

#include "ferry/pipeline/routed_source.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <thread>

namespace ferry::pipeline {

void MessageChunk::Fill(std::span<const source::Message> polled, std::span<const uint32_t> rows,
                        std::span<const std::string> bad_reasons) {
  size_t need_bytes = 0;
  size_t need_headers = 0;
  for (uint32_t row : rows) {
    const source::Message& m = polled[row];
    need_bytes += m.payload.size() + m.key.size() + m.topic.size() + m.subject.size() +
                  m.msg_id.size() + bad_reasons[row].size();
    for (const source::Header& h : m.headers) {
      need_bytes += h.name.size() + h.value.size();
    }
    need_headers += m.headers.size();
  }
  if (need_bytes > bytes_capacity || bytes_capacity == 0) {
    // A quarter more than this poll needs, so that a table's next polls, about as large, fit.
    bytes_capacity = std::max<size_t>(need_bytes + need_bytes / 4, 1);
    bytes = std::make_unique_for_overwrite<char[]>(bytes_capacity);
  }
  char* at = bytes.get();
  auto copy = [&at](std::string_view bytes_of) {
    if (bytes_of.empty()) {
      return std::string_view();  // its data() may be null, which memcpy must not see
    }
    std::memcpy(at, bytes_of.data(), bytes_of.size());
    std::string_view view(at, bytes_of.size());
    at += bytes_of.size();
    return view;
  };
  headers.clear();
  headers.reserve(need_headers);  // never reallocated below: the messages' spans point in
  messages.clear();
  messages.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const source::Message& m = polled[rows[i]];
    const size_t first = headers.size();
    for (const source::Header& h : m.headers) {
      std::string_view name = copy(h.name);
      headers.push_back({.name = name, .value = copy(h.value)});
    }
    // Built in place, each field written once (a braced list copies in order).
    messages.push_back(OwnedMessage{
        .partition = m.partition,
        .position = m.position,
        .payload = copy(m.payload),
        .key = copy(m.key),
        .topic = copy(m.topic),
        .kafka_partition = m.kafka_partition,
        .subject = copy(m.subject),
        .msg_id = copy(m.msg_id),
        .timestamp_us = m.timestamp_us,
        .headers = std::span<const source::Header>(headers).subspan(first, m.headers.size()),
        .bad_reason = copy(bad_reasons[rows[i]])});
  }
}

source::Message OwnedMessage::View() const {
  return source::Message{.partition = partition,
                         .position = position,
                         .payload = payload,
                         .key = key,
                         .topic = topic,
                         .kafka_partition = kafka_partition,
                         .subject = subject,
                         .msg_id = msg_id,
                         .timestamp_us = timestamp_us,
                         .headers = headers,
                         .bad_reason = bad_reason};
}

void RouteQueue::UnlockThenNotify(std::unique_lock<std::mutex>* lock, std::condition_variable* cv,
                                  bool wake) {
  lock->unlock();
  if (wake) {
    cv->notify_one();
  }
}

bool RouteQueue::PushMessages(MessageChunk* chunk, const std::function<bool()>& give_up) {
  if (chunk->messages.empty()) {
    return true;
  }
  std::unique_lock lock(mu_);
  while (messages_ >= capacity_) {
    if (give_up()) {
      return false;
    }
    writer_waiting_ = true;
    not_full_.wait_for(lock, std::chrono::milliseconds(5));
    writer_waiting_ = false;
  }
  messages_ += chunk->messages.size();
  items_.push_back({.kind = RouteItem::Kind::kMessages, .chunk = std::move(*chunk)});
  if (spares_.empty()) {
    *chunk = MessageChunk();
  } else {
    *chunk = std::move(spares_.back());
    spares_.pop_back();
  }
  UnlockThenNotify(&lock, &not_empty_, reader_waiting_);
  return true;
}

void RouteQueue::PushEvent(RouteItem item) {
  std::unique_lock lock(mu_);
  items_.push_back(std::move(item));
  UnlockThenNotify(&lock, &not_empty_, reader_waiting_);
}

void RouteQueue::Pop(size_t max_messages, std::chrono::milliseconds timeout,
                     std::vector<RouteItem>* out) {
  // Spent chunks worth keeping; those the queue has no room for are freed after the lock.
  std::array<MessageChunk, kSpares> spent;
  size_t kept = 0;
  for (RouteItem& item : *out) {
    MessageChunk& chunk = item.chunk;
    if (kept < spent.size() && item.kind == RouteItem::Kind::kMessages && chunk.bytes != nullptr &&
        chunk.footprint() <= kSpareBytes) {
      chunk.messages.clear();
      chunk.headers.clear();
      spent[kept++] = std::move(chunk);
    }
  }
  out->clear();
  std::unique_lock lock(mu_);
  for (size_t i = 0; i < kept && spares_.size() < kSpares; ++i) {
    spares_.push_back(std::move(spent[i]));
  }
  auto ready = [this] { return head_ < items_.size() || wake_ || (seal_hint_ && took_); };
  if (!ready() && timeout.count() > 0) {
    reader_waiting_ = true;
    not_empty_.wait_for(lock, timeout, ready);
    reader_waiting_ = false;
  }
  wake_ = false;
  size_t end = head_;
  size_t taken = 0;
  while (end < items_.size() && (taken < max_messages || end == head_)) {
    taken += items_[end].chunk.messages.size();
    ++end;
  }
  if (head_ == 0 && end == items_.size()) {
    std::swap(items_, *out);  // everything: the reader's spent buffer becomes ours
  } else {
    out->insert(out->end(), std::make_move_iterator(items_.begin() + static_cast<ptrdiff_t>(head_)),
                std::make_move_iterator(items_.begin() + static_cast<ptrdiff_t>(end)));
    head_ = end;
  }
  if (head_ == items_.size()) {
    items_.clear();
    head_ = 0;
  } else if (head_ > items_.size() / 2) {
    // The moved-from front outgrew the waiting rest: drop it (amortized, each item moves once).
    items_.erase(items_.begin(), items_.begin() + static_cast<ptrdiff_t>(head_));
    head_ = 0;
  }
  messages_ -= taken;
  took_ = taken > 0;
  UnlockThenNotify(&lock, &not_full_, taken > 0 && writer_waiting_);
}

void RouteQueue::Wake() {
  std::unique_lock lock(mu_);
  wake_ = true;
  UnlockThenNotify(&lock, &not_empty_, reader_waiting_);
}

void RouteQueue::SetSealHint() {
  std::unique_lock lock(mu_);
  seal_hint_ = true;
  wake_ = true;
  UnlockThenNotify(&lock, &not_empty_, reader_waiting_);
}

size_t RouteQueue::DropPartition(int32_t partition) {
  std::unique_lock lock(mu_);
  size_t dropped = 0;
  for (size_t i = head_; i < items_.size(); ++i) {
    dropped += std::erase_if(items_[i].chunk.messages,
                             [&](const OwnedMessage& m) { return m.partition == partition; });
  }
  messages_ -= dropped;
  UnlockThenNotify(&lock, &not_full_, dropped > 0 && writer_waiting_);
  return dropped;
}

size_t RouteQueue::messages() const {
  std::lock_guard lock(mu_);
  return messages_;
}

Status RoutedSource::Start(source::PartitionListener* listener) {
  listener_ = listener;
  return Status::OK();
}

Status RoutedSource::Poll(size_t max_messages, std::chrono::milliseconds timeout,
                          std::vector<source::Message>* out) {
  out->clear();
  if (closed_) {
    return Internal("the routed source is closed");
  }
  if (inert_) {
    std::this_thread::sleep_for(timeout);
    return Status::OK();
  }
  if (taken_next_ == taken_.size()) {
    // What the last poll delivered is no longer needed: its items go.
    queue_->Pop(max_messages, timeout, &taken_);
    taken_next_ = 0;
    chunk_next_ = 0;
  }
  while (taken_next_ < taken_.size() && out->size() < max_messages) {
    RouteItem& item = taken_[taken_next_];
    switch (item.kind) {
      case RouteItem::Kind::kAssign: {
        ++taken_next_;
        Result<std::optional<int64_t>> position = listener_->OnAssigned(item.partition);
        if (!position.ok()) {
          return position.status();
        }
        table_positions_[item.partition.index] = *position;
        break;
      }
      case RouteItem::Kind::kRevoke: {
        ++taken_next_;
        // Nothing of a revoked partition is delivered after its OnRevoked.
        std::erase_if(
            *out, [&](const source::Message& m) { return m.partition == item.partition.index; });
        if (table_positions_.erase(item.partition.index) > 0) {
          listener_->OnRevoked(item.partition);
        }
        break;
      }
      case RouteItem::Kind::kMessages: {
        // A chunk holds runs of one partition: its table position is looked up once per run.
        int32_t run_partition = -1;
        const std::optional<int64_t>* run_position = nullptr;
        std::vector<OwnedMessage>& messages = item.chunk.messages;
        for (; chunk_next_ < messages.size() && out->size() < max_messages; ++chunk_next_) {
          const OwnedMessage& m = messages[chunk_next_];
          if (m.partition != run_partition) {
            auto it = table_positions_.find(m.partition);
            run_partition = m.partition;
            run_position = it == table_positions_.end() ? nullptr : &it->second;
          }
          if (run_position == nullptr) {
            continue;  // revoked before it was delivered
          }
          if (*run_position && m.position <= **run_position) {
            // The table holds it already (a re-read after a restart).
            positions_->Skipped(m.partition, route_, m.position);
            continue;
          }
          out->push_back(m.View());
        }
        if (chunk_next_ == messages.size()) {
          ++taken_next_;
          chunk_next_ = 0;
        }
        break;
      }
    }
  }
  return Status::OK();
}

void RoutedSource::Acknowledge(std::span<const source::CommittedPosition> positions) {
  for (const source::CommittedPosition& p : positions) {
    positions_->Committed(p.partition, route_, p.position);
  }
}

Status RoutedSource::Close() {
  closed_ = true;
  return Status::OK();
}

}  // namespace ferry::pipeline

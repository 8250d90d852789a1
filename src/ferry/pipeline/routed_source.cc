#include "ferry/pipeline/routed_source.h"

#include <algorithm>
#include <thread>

namespace ferry::pipeline {

void OwnedMessage::CopyAll(std::span<const source::Message* const> messages,
                           std::span<std::string> bad_reasons, std::vector<OwnedMessage>* out) {
  size_t bytes = 0;
  for (const source::Message* m : messages) {
    bytes +=
        m->payload.size() + m->key.size() + m->topic.size() + m->subject.size() + m->msg_id.size();
    for (const source::Header& h : m->headers) {
      bytes += h.name.size() + h.value.size();
    }
  }
  auto block = std::make_shared<std::string>();
  block->reserve(bytes);  // no reallocation below: the views stay valid
  auto copy = [&block](std::string_view bytes_of) {
    const size_t at = block->size();
    block->append(bytes_of);
    return std::string_view(block->data() + at, bytes_of.size());
  };
  out->reserve(out->size() + messages.size());
  for (size_t i = 0; i < messages.size(); ++i) {
    const source::Message& m = *messages[i];
    OwnedMessage& o = out->emplace_back();
    o.partition = m.partition;
    o.position = m.position;
    o.payload = copy(m.payload);
    o.key = copy(m.key);
    o.topic = copy(m.topic);
    o.kafka_partition = m.kafka_partition;
    o.subject = copy(m.subject);
    o.msg_id = copy(m.msg_id);
    o.timestamp_us = m.timestamp_us;
    for (const source::Header& h : m.headers) {
      std::string_view name = copy(h.name);
      o.headers.emplace_back(name, copy(h.value));
    }
    o.bad_reason = std::move(bad_reasons[i]);
    o.block = block;
  }
}

source::Message OwnedMessage::View(std::vector<source::Header>* header_views) const {
  header_views->clear();
  for (const auto& [name, value] : headers) {
    header_views->push_back({.name = name, .value = value});
  }
  return source::Message{.partition = partition,
                         .position = position,
                         .payload = payload,
                         .key = key,
                         .topic = topic,
                         .kafka_partition = kafka_partition,
                         .subject = subject,
                         .msg_id = msg_id,
                         .timestamp_us = timestamp_us,
                         .headers = *header_views,
                         .bad_reason = bad_reason};
}

bool RouteQueue::PushMessages(std::vector<OwnedMessage>* messages,
                              const std::function<bool()>& give_up) {
  std::unique_lock lock(mu_);
  size_t next = 0;
  bool queued_any = false;
  while (next < messages->size()) {
    while (messages_ >= capacity_) {
      if (queued_any && reader_waiting_) {
        not_empty_.notify_one();
        queued_any = false;
      }
      if (give_up()) {
        messages->erase(messages->begin(), messages->begin() + static_cast<ptrdiff_t>(next));
        return false;
      }
      writer_waiting_ = true;
      not_full_.wait_for(lock, std::chrono::milliseconds(5));
      writer_waiting_ = false;
    }
    for (; next < messages->size() && messages_ < capacity_; ++next) {
      items_.push_back(
          {.kind = RouteItem::Kind::kMessage, .message = std::move((*messages)[next])});
      ++messages_;
      queued_any = true;
    }
  }
  if (queued_any && reader_waiting_) {
    not_empty_.notify_one();
  }
  messages->clear();
  return true;
}

void RouteQueue::PushEvent(RouteItem item) {
  std::lock_guard lock(mu_);
  items_.push_back(std::move(item));
  if (reader_waiting_) {
    not_empty_.notify_one();
  }
}

void RouteQueue::Pop(size_t max_messages, std::chrono::milliseconds timeout,
                     std::vector<RouteItem>* out) {
  out->clear();
  std::unique_lock lock(mu_);
  auto ready = [this] { return head_ < items_.size() || wake_ || (seal_hint_ && took_); };
  if (!ready() && timeout.count() > 0) {
    reader_waiting_ = true;
    not_empty_.wait_for(lock, timeout, ready);
    reader_waiting_ = false;
  }
  wake_ = false;
  size_t end = head_;
  size_t taken = 0;
  while (end < items_.size() && taken < max_messages) {
    taken += items_[end].kind == RouteItem::Kind::kMessage ? 1 : 0;
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
  if (taken > 0 && writer_waiting_) {
    not_full_.notify_one();
  }
}

void RouteQueue::Wake() {
  std::lock_guard lock(mu_);
  wake_ = true;
  if (reader_waiting_) {
    not_empty_.notify_one();
  }
}

void RouteQueue::SetSealHint() {
  std::lock_guard lock(mu_);
  seal_hint_ = true;
  wake_ = true;
  if (reader_waiting_) {
    not_empty_.notify_one();
  }
}

size_t RouteQueue::DropPartition(int32_t partition) {
  std::lock_guard lock(mu_);
  auto first = items_.begin() + static_cast<ptrdiff_t>(head_);
  auto kept = std::remove_if(first, items_.end(), [&](const RouteItem& i) {
    return i.kind == RouteItem::Kind::kMessage && i.message.partition == partition;
  });
  const size_t dropped = static_cast<size_t>(items_.end() - kept);
  items_.erase(kept, items_.end());
  messages_ -= dropped;
  if (dropped > 0 && writer_waiting_) {
    not_full_.notify_one();
  }
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
  delivered_.clear();
  if (closed_) {
    return Internal("the routed source is closed");
  }
  if (inert_) {
    std::this_thread::sleep_for(timeout);
    return Status::OK();
  }
  if (taken_next_ == taken_.size()) {
    queue_->Pop(max_messages, timeout, &taken_);
    taken_next_ = 0;
  }
  // The partition of the last message delivered and the table's position for it: a poll holds
  // runs of one partition, looked up once per run.
  int32_t run_partition = -1;
  const std::optional<int64_t>* run_position = nullptr;
  while (taken_next_ < taken_.size() && delivered_.size() < max_messages) {
    RouteItem& item = taken_[taken_next_++];
    if (item.kind != RouteItem::Kind::kMessage) {
      run_partition = -1;  // an assignment or revocation changes table_positions_
    }
    switch (item.kind) {
      case RouteItem::Kind::kAssign: {
        Result<std::optional<int64_t>> position = listener_->OnAssigned(item.partition);
        if (!position.ok()) {
          return position.status();
        }
        table_positions_[item.partition.index] = *position;
        break;
      }
      case RouteItem::Kind::kRevoke: {
        // Nothing of a revoked partition is delivered after its OnRevoked.
        delivered_.erase(std::remove_if(delivered_.begin(), delivered_.end(),
                                        [&](const OwnedMessage& m) {
                                          return m.partition == item.partition.index;
                                        }),
                         delivered_.end());
        if (table_positions_.erase(item.partition.index) > 0) {
          listener_->OnRevoked(item.partition);
        }
        break;
      }
      case RouteItem::Kind::kMessage: {
        if (item.message.partition != run_partition) {
          auto it = table_positions_.find(item.message.partition);
          if (it == table_positions_.end()) {
            break;  // revoked before it was delivered
          }
          run_partition = item.message.partition;
          run_position = &it->second;
        }
        if (*run_position && item.message.position <= **run_position) {
          // The table holds it already (a re-read after a restart).
          positions_->Skipped(item.message.partition, route_, item.message.position);
          break;
        }
        delivered_.push_back(std::move(item.message));
        break;
      }
    }
  }
  header_views_.resize(delivered_.size());
  for (size_t i = 0; i < delivered_.size(); ++i) {
    out->push_back(delivered_[i].View(&header_views_[i]));
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

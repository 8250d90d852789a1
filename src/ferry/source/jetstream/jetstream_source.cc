#include "ferry/source/jetstream/jetstream_source.h"

#include <algorithm>
#include <string_view>
#include <thread>
#include <utility>

#include "ferry/base/log.h"
#include "ferry/source/jetstream/ack_subject.h"
#include "ferry/source/jetstream/nats_connect.h"
#include "ferry/source/jetstream/nats_error.h"
#include "ferry/source/jetstream/ordered_consumer.h"
#include "ferry/source/jetstream/subject_filter.h"

namespace ferry::source::jetstream {
namespace {

// While waiting for the first message of a Poll across several filters, each filter's
// subscription is waited on for at most this long before the next one's turn.
constexpr int64_t kMultiFilterWaitSliceMs = 2;
// How long a Poll() of an elastic source that holds no partition waits before it returns.
constexpr std::chrono::milliseconds kIdleLeaseWait(100);

uint64_t ReconnectCount(natsConnection* connection, natsStatistics* stats) {
  uint64_t reconnects = 0;
  if (natsConnection_GetStats(connection, stats) == NATS_OK) {
    natsStatistics_GetCounts(stats, nullptr, nullptr, nullptr, nullptr, &reconnects);
  }
  return reconnects;
}

}  // namespace

Result<std::unique_ptr<JetStreamSource>> JetStreamSource::Create(
    JetStreamOptions options, std::shared_ptr<PartitionLeases> leases) {
  FERRY_RETURN_IF_ERROR(options.Validate());
  return std::unique_ptr<JetStreamSource>(
      new JetStreamSource(std::move(options), std::move(leases)));
}

JetStreamSource::JetStreamSource(JetStreamOptions options, std::shared_ptr<PartitionLeases> leases)
    : options_(std::move(options)),
      // The follower reaches the filters through the private Partitions base (cast here, where
      // it is accessible).
      info_client_(options_.connection, options_.stream),
      follower_(leases == nullptr
                    ? nullptr
                    : std::make_unique<LeaseFollower>(
                          std::move(leases), static_cast<LeaseFollower::Partitions*>(this))) {}

JetStreamSource::~JetStreamSource() {
  if (state_ != State::kClosed) {
    Close().IgnoreError();
  }
}

Status JetStreamSource::Connect() {
  if (nats_stats_ == nullptr) {
    natsStatistics* raw = nullptr;
    natsStatus status = natsStatistics_Create(&raw);
    if (status != NATS_OK) {
      return NatsError(status, "nats statistics");
    }
    nats_stats_.reset(raw);
  }
  FERRY_ASSIGN_OR_RETURN(connection_, ConnectNats(options_.connection));
  FERRY_ASSIGN_OR_RETURN(js_, OpenJetStream(connection_.get(), options_.connection.api_timeout_ms));
  reconnects_seen_ = ReconnectCount(connection_.get(), nats_stats_.get());
  return info_client_.Connect();
}

Status JetStreamSource::Start(PartitionListener* listener) {
  if (state_ != State::kCreated) {
    return Internal("jetstream source: Start() called twice or after Close()");
  }
  listener_ = listener;
  sticky_error_ = Status::OK();
  Status status = [&]() -> Status {
    std::vector<bool> held(options_.filters.size(), follower_ == nullptr);
    if (follower_ != nullptr) {
      FERRY_RETURN_IF_ERROR(follower_->StartLeases());
      held = follower_->Held(options_.filters.size());
    }
    FERRY_RETURN_IF_ERROR(Connect());
    FERRY_ASSIGN_OR_RETURN(JsStreamInfoPtr info, info_client_.Info());
    FERRY_RETURN_IF_ERROR(
        CheckStream(*info, options_.stream, options_.filters, /*elastic=*/follower_ != nullptr));
    std::vector<std::string> subjects(info->Config->Subjects,
                                      info->Config->Subjects + info->Config->SubjectsLen);
    filters_.reserve(options_.filters.size());
    for (size_t i = 0; i < options_.filters.size(); ++i) {
      bool covers = FilterCoversAll(options_.filters[i], subjects);
      filters_.push_back(Filter{
          .info = PartitionInfo{static_cast<int32_t>(i),
                                PartitionKey(options_.stream, options_.filters[i])},
          .cursor = FilterCursor(covers),
          .poll_start = FilterCursor(covers),
          .subscription = nullptr,
      });
    }
    for (Filter& filter : filters_) {
      if (!held[static_cast<size_t>(filter.info.index)]) {
        continue;  // another process's (elastic mode)
      }
      FERRY_ASSIGN_OR_RETURN(std::optional<int64_t> position, listener_->OnAssigned(filter.info));
      filter.active = true;
      if (position.has_value()) {
        if (*position < 0) {
          return Internal("{}: the table returned negative position {}", filter.info.key,
                          *position);
        }
        filter.cursor.Restart(static_cast<uint64_t>(*position) + 1, /*confirmed=*/true);
      }
      FERRY_RETURN_IF_ERROR(StartFilter(&filter, info->State));
    }
    return Status::OK();
  }();
  if (!status.ok()) {
    for (Filter& filter : filters_) {
      Unsubscribe(&filter);
      if (filter.active) {
        listener_->OnRevoked(filter.info);
      }
    }
    filters_.clear();
    info_client_.Close();
    js_.reset();
    connection_.reset();
    ConfirmReading();
    return status;
  }
  ConfirmReading();
  state_ = State::kStarted;
  return Status::OK();
}

bool JetStreamSource::AnyActive() const {
  return std::any_of(filters_.begin(), filters_.end(), [](const Filter& f) { return f.active; });
}

void JetStreamSource::ConfirmReading() {
  if (follower_ != nullptr) {
    follower_->Confirm();
  }
}

void JetStreamSource::StopReading(size_t index) {
  Filter& filter = filters_[index];
  Unsubscribe(&filter);
  filter.active = false;
  filter.needs_restart = false;
  filter.restart_when_drained = false;
  filter.cursor = FilterCursor(filter.cursor.covers_stream());
  filter.poll_start = filter.cursor;
}

Status JetStreamSource::PrepareReading(size_t index, std::optional<int64_t> position) {
  Filter& filter = filters_[index];
  filter.active = true;
  filter.restart_when_drained = false;
  filter.needs_restart = true;  // until StartReading subscribes it (or the next Poll)
  if (position.has_value()) {
    if (*position < 0) {
      return Internal("{}: the table returned negative position {}", filter.info.key, *position);
    }
    filter.cursor.Restart(static_cast<uint64_t>(*position) + 1, /*confirmed=*/true);
  }
  return Status::OK();
}

Status JetStreamSource::StartReading(const std::vector<size_t>& indexes) {
  FERRY_ASSIGN_OR_RETURN(JsStreamInfoPtr info, info_client_.Info());
  for (size_t index : indexes) {
    FERRY_RETURN_IF_ERROR(StartFilter(&filters_[index], info->State));
  }
  return Status::OK();
}

Status JetStreamSource::StartFilter(Filter* filter, const jsStreamState& state) {
  // A resume sequence comes from the table, from what this source delivered, or from an earlier
  // start of this filter by policy. Without one, the start policy decides.
  uint64_t next = filter->cursor.resume_sequence();
  bool confirmed = next != 0 && filter->cursor.floor_confirmed();
  if (next == 0) {
    switch (options_.start.kind) {
      case StartPolicy::Kind::kAll:
      case StartPolicy::Kind::kTime:
        break;  // the first delivery sets the cursor
      case StartPolicy::Kind::kNew:
        // Pin "new" to a sequence now, so a later restart does not skip what arrived meanwhile.
        next = state.LastSeq + 1;
        break;
      case StartPolicy::Kind::kSequence:
        next = options_.start.sequence;
        break;
    }
  }
  Result<StartCheck> check = CheckStart(next, state.FirstSeq, state.LastSeq, confirmed);
  if (!check.ok()) {
    return check.status().WithContext("{} (stream '{}', filter '{}')", filter->info.key,
                                      options_.stream, options_.filters[filter->info.index]);
  }
  if (check->lost.has_value()) {
    FERRY_RETURN_IF_ERROR(
        ReportLost(*filter, *check->lost,
                   fmt::format("the stream's first sequence is now {}", state.FirstSeq)));
    next = check->lost->last + 1;
  }
  if (next != 0) {
    filter->cursor.Restart(next, confirmed);
  }
  return Subscribe(filter, next);
}

Status JetStreamSource::Subscribe(Filter* filter, uint64_t next) {
  Unsubscribe(filter);
  FERRY_ASSIGN_OR_RETURN(
      filter->subscription,
      SubscribeOrdered(js_.get(), options_.stream, options_.filters[filter->info.index], next,
                       options_.start, options_.heartbeat_ms, filter->info.key));
  filter->needs_restart = false;
  FERRY_LOG_DEBUG("{}: ordered consumer started at {}", filter->info.key,
                  next != 0 ? std::to_string(next) : options_.start.ToString());
  return Status::OK();
}

Status JetStreamSource::ReportLost(const Filter& filter, const SequenceRange& range,
                                   std::string_view why) {
  const std::string& subject = options_.filters[filter.info.index];
  std::string what = fmt::format(
      "stream '{}' no longer holds sequences {}..{} ({} messages, {}), which filter '{}' had not "
      "read yet: the stream's limits (max age, messages or bytes) removed them before ferry "
      "ingested them{}",
      options_.stream, range.first, range.last, range.last - range.first + 1, why, subject,
      filter.cursor.covers_stream() ? ""
                                    : "; messages of other subjects in that range, if any, are "
                                      "not lost for this filter");
  if (options_.on_gap == OnGap::kFail) {
    sticky_error_ =
        DataLoss("{}: {}. Set on_gap = \"continue\" to skip them", filter.info.key, what);
    FERRY_LOG_ERROR("{}", sticky_error_.message());
    return sticky_error_;
  }
  FERRY_LOG_WARN("{}: skipping: {}", filter.info.key, what);
  gaps_.push_back(Gap{.partition = filter.info.index,
                      .key = filter.info.key,
                      .first_position = static_cast<int64_t>(range.first),
                      .last_position = static_cast<int64_t>(range.last),
                      .reason = "removed by the stream's retention limits before ingestion"});
  ++stats_.gaps;
  stats_.lost_sequences += range.last - range.first + 1;
  return Status::OK();
}

void JetStreamSource::Unsubscribe(Filter* filter) {
  if (filter->subscription == nullptr) {
    return;
  }
  // Unsubscribe also deletes the ephemeral consumer on the server: one request, which would wait
  // for the API timeout while disconnected. Then Destroy alone is enough: the server drops an
  // ordered consumer without interest after its inactivity threshold.
  if (connection_ != nullptr &&
      natsConnection_Status(connection_.get()) == NATS_CONN_STATUS_CONNECTED) {
    natsSubscription_Unsubscribe(filter->subscription.get());
  }
  filter->subscription.reset();
}

Status JetStreamSource::CheckConnection() {
  if (natsConnection_IsClosed(connection_.get())) {
    // Reconnect attempts ran out (max_reconnect): start over with a new connection.
    for (Filter& filter : filters_) {
      filter.subscription.reset();
      filter.needs_restart = true;
    }
    info_client_.Close();
    js_.reset();
    connection_.reset();
    FERRY_RETURN_IF_ERROR(Connect());
    return Status::OK();
  }
  if (info_client_.closed()) {
    // The control connection ran out of reconnect attempts on its own (or a reopen failed).
    FERRY_RETURN_IF_ERROR(info_client_.Connect());
  }
  uint64_t reconnects = ReconnectCount(connection_.get(), nats_stats_.get());
  if (reconnects != reconnects_seen_) {
    reconnects_seen_ = reconnects;
    for (Filter& filter : filters_) {
      filter.restart_when_drained = true;
    }
  }
  return Status::OK();
}

Status JetStreamSource::RestartFlaggedFilters() {
  bool any = std::any_of(filters_.begin(), filters_.end(),
                         [](const Filter& f) { return f.needs_restart; });
  if (!any) {
    return Status::OK();
  }
  if (natsConnection_Status(connection_.get()) != NATS_CONN_STATUS_CONNECTED) {
    return Unavailable("jetstream stream '{}': not connected to nats (reconnecting)",
                       options_.stream);
  }
  FERRY_ASSIGN_OR_RETURN(JsStreamInfoPtr info, info_client_.Info());
  for (Filter& filter : filters_) {
    if (filter.needs_restart) {
      filter.restart_when_drained = false;
      ++stats_.consumer_restarts;
      FERRY_RETURN_IF_ERROR(StartFilter(&filter, info->State));
    }
  }
  return Status::OK();
}

Status JetStreamSource::Poll(size_t max_messages, std::chrono::milliseconds timeout,
                             std::vector<Message>* out) {
  if (state_ != State::kStarted) {
    return state_ == State::kClosed ? Cancelled("jetstream source is closed")
                                    : Internal("jetstream source: Poll() before Start()");
  }
  out->clear();
  held_.clear();
  headers_.clear();
  header_slots_.clear();
  FERRY_RETURN_IF_ERROR(sticky_error_);
  FERRY_RETURN_IF_ERROR(CheckConnection());
  if (follower_ != nullptr) {
    FERRY_RETURN_IF_ERROR(follower_->Follow(listener_));
  }
  FERRY_RETURN_IF_ERROR(RestartFlaggedFilters());
  FERRY_RETURN_IF_ERROR(sticky_error_);  // a restart may have found lost data
  for (Filter& filter : filters_) {
    filter.poll_start = filter.cursor;
    filter.delivered_this_poll = false;
  }
  size_t limit = std::min(max_messages, options_.batch_size);
  if (limit == 0) {
    return Status::OK();
  }
  held_.reserve(limit);
  out->reserve(limit);
  header_slots_.reserve(limit);

  Status status = Sweep(limit, out);
  if (status.ok() && out->empty()) {
    // The sweep may have found drained subscriptions to restart before waiting.
    status = RestartFlaggedFilters();
    if (status.ok() && timeout.count() > 0) {
      status = WaitForOne(timeout, out);
      if (status.ok() && !out->empty()) {
        status = Sweep(limit, out);
      }
    }
  }
  if (status.ok()) {
    status = ResolveJumps();
  }
  if (!status.ok()) {
    AbandonPoll(out);
    return status;
  }
  if (!out->empty()) {
    // Restarts found during this Poll start from what it delivers. Errors wait for the next Poll
    // (a DataLoss is sticky); these messages precede any gap.
    RestartFlaggedFilters().IgnoreError();
  }
  for (size_t i = 0; i < out->size(); ++i) {
    auto [first, count] = header_slots_[i];
    (*out)[i].headers = std::span<const Header>(headers_.data() + first, count);
  }
  stats_.messages += out->size();
  if (out->empty() && natsConnection_Status(connection_.get()) != NATS_CONN_STATUS_CONNECTED) {
    return Unavailable("jetstream stream '{}': not connected to nats (reconnecting)",
                       options_.stream);
  }
  return Status::OK();
}

void JetStreamSource::AbandonPoll(std::vector<Message>* out) {
  // Nothing of this Poll reaches the pipeline: put the cursors back and re-read from there.
  for (Filter& filter : filters_) {
    if (filter.delivered_this_poll) {
      filter.cursor = filter.poll_start;
      filter.needs_restart = true;
    }
  }
  out->clear();
  held_.clear();
  headers_.clear();
  header_slots_.clear();
}

Status JetStreamSource::Sweep(size_t limit, std::vector<Message>* out) {
  const size_t n = filters_.size();
  const size_t quota = std::max<size_t>(1, limit / n);
  bool progress = true;
  while (progress && out->size() < limit) {
    progress = false;
    for (size_t k = 0; k < n && out->size() < limit; ++k) {
      Filter& filter = filters_[(next_filter_ + k) % n];
      size_t taken = 0;
      while (filter.subscription != nullptr && taken < quota && out->size() < limit) {
        natsMsg* raw = nullptr;
        natsStatus status = natsSubscription_NextMsg(&raw, filter.subscription.get(), 0);
        FERRY_ASSIGN_OR_RETURN(bool took, Take(&filter, status, raw, out));
        if (status != NATS_OK) {
          break;
        }
        taken += took ? 1 : 0;
        progress = true;
      }
    }
  }
  next_filter_ = (next_filter_ + 1) % n;
  return Status::OK();
}

Status JetStreamSource::WaitForOne(std::chrono::milliseconds timeout, std::vector<Message>* out) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const size_t n = filters_.size();
  for (size_t k = 0;; ++k) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return Status::OK();
    }
    Filter& filter = filters_[(next_filter_ + k) % n];
    if (filter.subscription == nullptr || filter.needs_restart) {
      if (std::all_of(filters_.begin(), filters_.end(), [](const Filter& f) {
            return f.subscription == nullptr || f.needs_restart;
          })) {
        if (follower_ != nullptr && !AnyActive()) {
          // Elastic mode with no partition held: wait a little for a lease, not a busy loop.
          std::this_thread::sleep_for(std::min(left, kIdleLeaseWait));
        }
        return Status::OK();  // every filter waits for a restart in the next Poll()
      }
      continue;
    }
    if (n > 1 && k > 0) {
      // A message may have come to any filter during the last slice: look at each without
      // waiting before the next slice, so one is noticed within a slice, not within n.
      for (size_t j = 0; j < n; ++j) {
        Filter& other = filters_[(next_filter_ + k + j) % n];
        if (other.subscription == nullptr || other.needs_restart) {
          continue;
        }
        natsMsg* raw = nullptr;
        natsStatus status = natsSubscription_NextMsg(&raw, other.subscription.get(), 0);
        FERRY_ASSIGN_OR_RETURN(bool took, Take(&other, status, raw, out));
        if (took) {
          return Status::OK();
        }
      }
    }
    int64_t wait_ms =
        n == 1 ? left.count() : std::min<int64_t>(left.count(), kMultiFilterWaitSliceMs);
    natsMsg* raw = nullptr;
    natsStatus status = natsSubscription_NextMsg(&raw, filter.subscription.get(), wait_ms);
    FERRY_ASSIGN_OR_RETURN(bool took, Take(&filter, status, raw, out));
    if (took) {
      return Status::OK();
    }
  }
}

Result<bool> JetStreamSource::Take(Filter* filter, natsStatus status, natsMsg* raw,
                                   std::vector<Message>* out) {
  if (status == NATS_TIMEOUT) {
    if (filter->restart_when_drained) {
      filter->restart_when_drained = false;
      filter->needs_restart = true;
    }
    return false;
  }
  if (status != NATS_OK) {
    // NATS_SLOW_CONSUMER (should not happen with unlimited pending limits), a closed or replaced
    // subscription, a closed connection: read again from the last delivered sequence + 1.
    FERRY_LOG_WARN("{}: {}; restarting its consumer at sequence {}", filter->info.key,
                   NatsError(status, "next message").message(), filter->cursor.resume_sequence());
    Unsubscribe(filter);
    filter->needs_restart = true;
    return false;
  }
  DeliveredMsgPtr msg(raw);
  const char* reply = natsMsg_GetReply(raw);
  AckMetadata meta;
  if (reply == nullptr || !ParseAckSubject(reply, &meta)) {
    return Internal("{}: message on subject '{}' has no JetStream metadata (reply '{}')",
                    filter->info.key, natsMsg_GetSubject(raw), reply != nullptr ? reply : "");
  }
  if (filter->cursor.resume_sequence() == 0 && options_.start.kind == StartPolicy::Kind::kTime &&
      meta.timestamp_ns < options_.start.time_ns) {
    return false;  // before the start time (see Subscribe)
  }
  if (filter->cursor.Observe(meta.stream_sequence, meta.pending) ==
      FilterCursor::Verdict::kDuplicate) {
    ++stats_.duplicates_dropped;
    return false;
  }
  filter->delivered_this_poll = true;
  Message& message = out->emplace_back();
  message.partition = filter->info.index;
  message.position = static_cast<int64_t>(meta.stream_sequence);
  message.payload =
      std::string_view(natsMsg_GetData(raw), static_cast<size_t>(natsMsg_GetDataLength(raw)));
  message.topic = options_.stream;
  message.subject = natsMsg_GetSubject(raw);
  message.timestamp_us = meta.timestamp_ns / 1000;
  // On an error the message is freed here while out->back() and headers_ still point into it;
  // Poll() then discards both (AbandonPoll) before anything reads them.
  FERRY_RETURN_IF_ERROR(AddHeaders(raw, &message, message.position)
                            .WithContext("{} sequence {}", filter->info.key, message.position));
  held_.push_back(std::move(msg));
  return true;
}

Status JetStreamSource::AddHeaders(natsMsg* msg, Message* message, int64_t sequence) {
  const size_t first = headers_.size();
  Status status =
      options_.read_headers ? ReadHeaders(msg, &headers_, &message->msg_id) : Status::OK();
  header_slots_.emplace_back(first, headers_.size() - first);
  return status.WithContext("message {}", sequence);
}

Status JetStreamSource::ResolveJumps() {
  bool any = std::any_of(filters_.begin(), filters_.end(),
                         [](const Filter& f) { return f.cursor.has_unverified_jumps(); });
  if (!any) {
    return Status::OK();
  }
  ++stats_.stream_checks;
  FERRY_ASSIGN_OR_RETURN(JsStreamInfoPtr info, info_client_.Info());
  std::vector<SequenceRange> lost;
  std::vector<SequenceRange> deleted;
  for (Filter& filter : filters_) {
    lost.clear();
    deleted.clear();
    filter.cursor.Resolve(info->State.FirstSeq, &lost, &deleted);
    for (const SequenceRange& range : deleted) {
      stats_.deleted_sequences += range.last - range.first + 1;
      FERRY_LOG_INFO(
          "{}: sequences {}..{} were deleted from stream '{}' one by one (not by its "
          "limits); skipping them",
          filter.info.key, range.first, range.last, options_.stream);
    }
    for (const SequenceRange& range : lost) {
      FERRY_RETURN_IF_ERROR(
          ReportLost(filter, range,
                     fmt::format("found while reading: the stream's first sequence is now {}",
                                 info->State.FirstSeq)));
    }
  }
  return Status::OK();
}

void JetStreamSource::Acknowledge(std::span<const CommittedPosition> positions) {
  // The consumers are AckNone: the table is the position (step 6 in the header).
  (void)positions;
  ++stats_.acknowledge_calls;
}

Result<std::vector<PartitionHead>> JetStreamSource::Heads() {
  if (state_ != State::kStarted) {
    return Internal("jetstream source: Heads() needs a started source");
  }
  FERRY_ASSIGN_OR_RETURN(JsStreamInfoPtr info, info_client_.Info());
  std::vector<PartitionHead> heads;
  for (const Filter& filter : filters_) {
    if (!filter.active) {
      continue;
    }
    FERRY_ASSIGN_OR_RETURN(PartitionHead head,
                           info_client_.Head(info->State, options_.filters[filter.info.index],
                                             filter.cursor.covers_stream(), filter.info.key));
    heads.push_back(std::move(head));
  }
  return heads;
}

std::vector<Gap> JetStreamSource::TakeGaps() {
  return std::exchange(gaps_, {});
}

Status JetStreamSource::Close() {
  if (state_ == State::kClosed) {
    return Status::OK();
  }
  state_ = State::kClosed;
  held_.clear();
  headers_.clear();
  for (Filter& filter : filters_) {
    Unsubscribe(&filter);
    filter.active = false;
  }
  ConfirmReading();  // leases being handed over may go now
  info_client_.Close();
  js_.reset();
  if (connection_ != nullptr) {
    natsConnection_Close(connection_.get());
    connection_.reset();
  }
  return Status::OK();
}

}  // namespace ferry::source::jetstream

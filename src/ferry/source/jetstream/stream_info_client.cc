#include "ferry/source/jetstream/stream_info_client.h"

#include <fmt/format.h>

#include <utility>

#include "ferry/base/log.h"
#include "ferry/source/jetstream/nats_connect.h"
#include "ferry/source/jetstream/nats_error.h"
#include "ferry/source/jetstream/subject_filter.h"

namespace ferry::source::jetstream {
namespace {

Status CheckRetention(const jsStreamInfo& info, const std::string& stream) {
  switch (info.Config->Retention) {
    case js_LimitsPolicy:
      return Status::OK();
    case js_WorkQueuePolicy:
      return InvalidArgument(
          "jetstream stream '{}' uses WorkQueue retention: the server deletes each message once a "
          "consumer acknowledges it, so after a restart nothing could be re-read from the "
          "position committed in the table. Exactly-once ingestion needs a stream with Limits "
          "retention (the default: messages stay until the stream's age, count or size limits "
          "remove them)",
          stream);
    case js_InterestPolicy:
      return InvalidArgument(
          "jetstream stream '{}' uses Interest retention: the server deletes a message once "
          "every consumer has acknowledged it (or, for consumers without acks, received it), so "
          "after a restart nothing could be re-read from the position committed in the table. "
          "Exactly-once ingestion needs a stream with Limits retention (the default: messages "
          "stay until the stream's age, count or size limits remove them)",
          stream);
  }
  return InvalidArgument("jetstream stream '{}' has an unknown retention policy", stream);
}

// nats-server 2.9 refuses a consumer whose filter matches none of the stream's subjects; 2.10
// and later accept it (for streams fed through sources or subject transforms) and the consumer
// then waits forever for messages that can never come. So ferry refuses such a filter itself, on
// every server, for a stream whose own subjects are all its messages' subjects: no mirror and no
// sources (whose messages keep their origin's subjects).
Status CheckFilterInStream(const jsStreamConfig& config, const std::string& stream,
                           const std::string& filter) {
  if (config.SubjectsLen == 0 || config.Mirror != nullptr || config.SourcesLen > 0) {
    return Status::OK();
  }
  std::string subjects;
  for (int i = 0; i < config.SubjectsLen; ++i) {
    if (SubjectFiltersOverlap(filter, config.Subjects[i])) {
      return Status::OK();
    }
    subjects += fmt::format("{}'{}'", i == 0 ? "" : ", ", config.Subjects[i]);
  }
  return InvalidArgument(
      "{}: filter '{}' matches none of stream '{}''s subjects ({}): it would never receive a "
      "message; name a subject of the stream in `subjects`",
      PartitionKey(stream, filter), filter, stream, subjects);
}

}  // namespace

StreamInfoClient::StreamInfoClient(NatsConnectionOptions connection, std::string stream)
    : options_(std::move(connection)), stream_(std::move(stream)) {}

Status StreamInfoClient::Connect() {
  Close();
  FERRY_ASSIGN_OR_RETURN(connection_, ConnectNats(options_));
  FERRY_ASSIGN_OR_RETURN(js_, OpenJetStream(connection_.get(), options_.api_timeout_ms));
  return Status::OK();
}

void StreamInfoClient::Close() {
  js_.reset();
  if (connection_ != nullptr) {
    natsConnection_Close(connection_.get());
    connection_.reset();
  }
}

bool StreamInfoClient::closed() const {
  return connection_ == nullptr || natsConnection_IsClosed(connection_.get());
}

Result<JsStreamInfoPtr> StreamInfoClient::Info() {
  jsStreamInfo* raw = nullptr;
  jsErrCode js_error = jsErrCode(0);
  natsStatus status = js_GetStreamInfo(&raw, js_.get(), stream_.c_str(), nullptr, &js_error);
  if (status != NATS_OK) {
    return NatsError(status, fmt::format("get info of jetstream stream '{}'", stream_), js_error);
  }
  return JsStreamInfoPtr(raw);
}

Result<std::optional<uint64_t>> StreamInfoClient::LastSequence(const std::string& subject,
                                                               std::string_view what) {
  natsMsg* raw = nullptr;
  jsErrCode js_error = jsErrCode(0);
  natsStatus status =
      js_GetLastMsg(&raw, js_.get(), stream_.c_str(), subject.c_str(), nullptr, &js_error);
  NatsMsgPtr last(raw);
  if (status == NATS_OK) {
    return std::optional<uint64_t>(natsMsg_GetSequence(raw));
  }
  if (status == NATS_NOT_FOUND || js_error == JSNoMessageFoundErr) {
    return std::optional<uint64_t>();
  }
  return NatsError(status, fmt::format("{}: last message", what), js_error);
}

Result<PartitionHead> StreamInfoClient::Head(const jsStreamState& state, const std::string& subject,
                                             bool covers_stream, const std::string& key) {
  PartitionHead head;
  head.key = key;
  head.first_position = static_cast<int64_t>(state.FirstSeq);  // answered (source.h)
  if (state.Msgs == 0) {
    return head;
  }
  if (covers_stream) {
    head.last_position = static_cast<int64_t>(state.LastSeq);
    return head;
  }
  FERRY_ASSIGN_OR_RETURN(std::optional<uint64_t> last, LastSequence(subject, key));
  if (last.has_value()) {
    head.last_position = static_cast<int64_t>(*last);
  }
  return head;
}

Status CheckStream(const jsStreamInfo& info, const std::string& stream,
                   const std::vector<std::string>& filters, bool elastic) {
  FERRY_RETURN_IF_ERROR(CheckRetention(info, stream));
  for (const std::string& filter : filters) {
    Status in_stream = CheckFilterInStream(*info.Config, stream, filter);
    if (!in_stream.ok() && elastic) {
      // Elastic partitions are often made by the stream's subject transform (2.10+:
      // "orders.*" stored as "orders.{{partition(16,1)}}.{{wildcard(1)}}"), which nats.c 3.4.1
      // does not read from the stream info: say so once, do not refuse.
      FERRY_LOG_WARN(
          "{}; reading it anyway: elastic partitions may come from a subject transform of the "
          "stream, which this client cannot see",
          in_stream.message());
      break;
    }
    FERRY_RETURN_IF_ERROR(in_stream);
  }
  return Status::OK();
}

}  // namespace ferry::source::jetstream

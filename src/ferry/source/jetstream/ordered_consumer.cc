#include "ferry/source/jetstream/ordered_consumer.h"

#include <fmt/format.h>

#include <cstdlib>

#include "ferry/source/jetstream/nats_error.h"

namespace ferry::source::jetstream {
namespace {

constexpr std::string_view kMsgIdHeader = "Nats-Msg-Id";
constexpr int64_t kNanosPerSecond = 1'000'000'000;

}  // namespace

Result<NatsSubscriptionPtr> SubscribeOrdered(jsCtx* js, const std::string& stream,
                                             const std::string& subject, uint64_t next,
                                             const StartPolicy& start, int64_t heartbeat_ms,
                                             std::string_view key) {
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = stream.c_str();
  so.Ordered = true;
  so.Config.Heartbeat = heartbeat_ms * 1'000'000;
  if (next != 0) {
    so.Config.DeliverPolicy = js_DeliverByStartSequence;
    so.Config.OptStartSeq = next;
  } else if (start.kind == StartPolicy::Kind::kTime && start.time_ns >= kNanosPerSecond) {
    // nats.c 3.4.1 encodes the fraction of a second without its leading zeros (5 ms becomes
    // ".5"), which would start up to a second late. Ask for the whole second; the caller drops
    // the earlier messages.
    so.Config.DeliverPolicy = js_DeliverByStartTime;
    so.Config.OptStartTime = start.time_ns / kNanosPerSecond * kNanosPerSecond;
  } else {
    so.Config.DeliverPolicy = js_DeliverAll;
  }
  natsSubscription* raw = nullptr;
  jsErrCode js_error = jsErrCode(0);
  natsStatus status = js_SubscribeSync(&raw, js, subject.c_str(), nullptr, &so, &js_error);
  if (status != NATS_OK) {
    return NatsError(status,
                     fmt::format("{}: create ordered consumer on stream '{}' for filter '{}'", key,
                                 stream, subject),
                     js_error);
  }
  NatsSubscriptionPtr subscription(raw);
  // Unlimited: nats.c 3.4.1 would drop messages over the limits after its gap check (FIELD-NOTES).
  status = natsSubscription_SetPendingLimits(raw, -1, -1);
  if (status != NATS_OK) {
    return NatsError(status, fmt::format("{}: set pending limits", key));
  }
  return subscription;
}

Status ReadHeaders(natsMsg* msg, std::vector<Header>* headers, std::string_view* msg_id) {
  const char** keys = nullptr;
  int key_count = 0;
  natsStatus status = natsMsgHeader_Keys(msg, &keys, &key_count);
  if (status == NATS_OK) {
    // The key and value strings belong to the message; the arrays are ours.
    for (int k = 0; k < key_count && status == NATS_OK; ++k) {
      const char** values = nullptr;
      int value_count = 0;
      status = natsMsgHeader_Values(msg, keys[k], &values, &value_count);
      for (int v = 0; status == NATS_OK && v < value_count; ++v) {
        headers->push_back(Header{keys[k], values[v]});
        if (v == 0 && kMsgIdHeader == keys[k]) {
          *msg_id = values[v];
        }
      }
      free(static_cast<void*>(values));
    }
    free(static_cast<void*>(keys));
  }
  if (status != NATS_OK && status != NATS_NOT_FOUND) {
    return NatsError(status, "read headers");
  }
  return Status::OK();
}

}  // namespace ferry::source::jetstream

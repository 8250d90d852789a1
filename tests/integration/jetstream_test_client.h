// JetStreamTestClient: the broker side of the JetStream integration tests, written directly on
// nats.c (not on ferry's code under test): create and delete streams, publish numbered messages
// and wait for every PubAck, read stream state and the consumers that exist.
//
// Thread-safety: one thread.
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"
#include "ferry/source/jetstream/nats_handles.h"

namespace ferry::testing {

struct StreamSpec {
  std::string name;
  std::vector<std::string> subjects;
  jsRetentionPolicy retention = js_LimitsPolicy;
  int64_t max_msgs = -1;
};

struct StreamState {
  uint64_t first_seq = 0;
  uint64_t last_seq = 0;
  uint64_t msgs = 0;
};

class JetStreamTestClient {
 public:
  static Result<std::unique_ptr<JetStreamTestClient>> Connect(const std::string& url);

  Status AddStream(const StreamSpec& spec);
  Status DeleteStream(const std::string& name);
  // Publishes `count` messages "<prefix><i>" for i = first_index .. first_index + count - 1 with
  // headers Nats-Msg-Id "<prefix><i>" and X-Index "<i>", and waits for every PubAck. Returns the
  // stream sequences in publish order.
  Result<std::vector<uint64_t>> Publish(const std::string& subject, int count,
                                        const std::string& prefix, int first_index = 1);
  Result<StreamState> State(const std::string& stream);
  // Ack policies of the consumers that currently exist on the stream.
  Result<std::vector<jsAckPolicy>> ConsumerAckPolicies(const std::string& stream);

  jsCtx* js() { return js_.get(); }

 private:
  // Destruction order: the context before the connection.
  source::jetstream::NatsConnectionPtr connection_;
  source::jetstream::JsCtxPtr js_;
};

}  // namespace ferry::testing

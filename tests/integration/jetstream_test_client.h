// JetStreamTestClient: the broker side of the JetStream integration tests, written directly on
// nats.c (not on ferry's code under test): create and delete streams, publish numbered messages
// and wait for every PubAck, read stream state and the consumers that exist; on a cluster
// (ferry/testing/nats_cluster.h), wait for JetStream to elect its meta leader, create replicated
// streams, publish through a leader change, and name a stream's leader.
//
// Thread-safety: one thread.
#pragma once

#include <nats/nats.h>

#include <chrono>
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
  int replicas = 1;  // R3 needs a cluster of three
};

struct StreamState {
  uint64_t first_seq = 0;
  uint64_t last_seq = 0;
  uint64_t msgs = 0;
};

class JetStreamTestClient {
 public:
  // `url`: one server or a comma-separated list (a cluster's NatsCluster::urls()).
  static Result<std::unique_ptr<JetStreamTestClient>> Connect(const std::string& url);

  // Asks for the account's JetStream info until it answers (a cluster answers once its nodes
  // elected a meta leader) or `timeout` passes (Unavailable with the last error).
  Status WaitForJetStream(std::chrono::milliseconds timeout);

  Status AddStream(const StreamSpec& spec);
  Status DeleteStream(const std::string& name);
  // Publishes `count` messages "<prefix><i>" for i = first_index .. first_index + count - 1 with
  // headers Nats-Msg-Id "<prefix><i>" and X-Index "<i>", and waits for every PubAck. Returns the
  // stream sequences in publish order.
  Result<std::vector<uint64_t>> Publish(const std::string& subject, int count,
                                        const std::string& prefix, int first_index = 1);
  // Publish, but a message whose publish fails (no stream leader yet, the connected node down, a
  // reconnect) is sent again with the same Nats-Msg-Id until it is acknowledged or `retry_for`
  // passes since its first attempt; the stream's duplicate window drops a repeat of a message
  // that had been stored, and its PubAck names the first copy's sequence. `*retries` counts the
  // repeated sends.
  Result<std::vector<uint64_t>> PublishRetrying(const std::string& subject, int count,
                                                const std::string& prefix, int first_index,
                                                std::chrono::milliseconds retry_for, int* retries);
  // The server name of the stream's leader (stream info's cluster leader); NotFound when the
  // stream has no leader right now.
  Result<std::string> StreamLeader(const std::string& stream);
  Result<StreamState> State(const std::string& stream);
  // Ack policies of the consumers that currently exist on the stream.
  Result<std::vector<jsAckPolicy>> ConsumerAckPolicies(const std::string& stream);

  jsCtx* js() { return js_.get(); }

 private:
  Result<std::vector<uint64_t>> PublishImpl(const std::string& subject, int count,
                                            const std::string& prefix, int first_index,
                                            std::chrono::milliseconds retry_for, int* retries);

  // Destruction order: the context before the connection.
  source::jetstream::NatsConnectionPtr connection_;
  source::jetstream::JsCtxPtr js_;
};

}  // namespace ferry::testing

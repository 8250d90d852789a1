#include "jetstream_test_client.h"

#include <fmt/format.h>

#include <thread>

namespace ferry::testing {
namespace {

Status Check(natsStatus status, jsErrCode js_error, const std::string& what) {
  if (status == NATS_OK) {
    return Status::OK();
  }
  return Internal("{}: {} ({}) [js {}]", what, natsStatus_GetText(status),
                  nats_GetLastError(nullptr) ? nats_GetLastError(nullptr) : "",
                  static_cast<int>(js_error));
}

}  // namespace

Result<std::unique_ptr<JetStreamTestClient>> JetStreamTestClient::Connect(const std::string& url) {
  auto client = std::make_unique<JetStreamTestClient>();
  natsConnection* nc = nullptr;
  FERRY_RETURN_IF_ERROR(Check(natsConnection_ConnectTo(&nc, url.c_str()), jsErrCode(0), url));
  client->connection_.reset(nc);
  jsCtx* js = nullptr;
  FERRY_RETURN_IF_ERROR(Check(natsConnection_JetStream(&js, nc, nullptr), jsErrCode(0), "js"));
  client->js_.reset(js);
  return client;
}

Status JetStreamTestClient::AddStream(const StreamSpec& spec) {
  std::vector<const char*> subjects;
  for (const std::string& s : spec.subjects) {
    subjects.push_back(s.c_str());
  }
  jsStreamConfig cfg;
  jsStreamConfig_Init(&cfg);
  cfg.Name = spec.name.c_str();
  cfg.Subjects = subjects.data();
  cfg.SubjectsLen = static_cast<int>(subjects.size());
  cfg.Retention = spec.retention;
  cfg.MaxMsgs = spec.max_msgs;
  cfg.Storage = js_FileStorage;
  cfg.Replicas = spec.replicas;
  jsStreamInfo* info = nullptr;
  jsErrCode js_error = jsErrCode(0);
  natsStatus status = js_AddStream(&info, js_.get(), &cfg, nullptr, &js_error);
  jsStreamInfo_Destroy(info);
  return Check(status, js_error, "add stream " + spec.name);
}

Status JetStreamTestClient::DeleteStream(const std::string& name) {
  jsErrCode js_error = jsErrCode(0);
  return Check(js_DeleteStream(js_.get(), name.c_str(), nullptr, &js_error), js_error,
               "delete stream " + name);
}

Status JetStreamTestClient::WaitForJetStream(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  Status last;
  while (true) {
    jsAccountInfo* info = nullptr;
    jsErrCode js_error = jsErrCode(0);
    natsStatus status = js_GetAccountInfo(&info, js_.get(), nullptr, &js_error);
    jsAccountInfo_Destroy(info);
    last = Check(status, js_error, "jetstream account info");
    if (last.ok()) {
      return last;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return Unavailable("jetstream did not answer within {} ms: {}", timeout.count(),
                         last.ToString());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

Result<std::string> JetStreamTestClient::StreamLeader(const std::string& stream) {
  jsStreamInfo* info = nullptr;
  jsErrCode js_error = jsErrCode(0);
  FERRY_RETURN_IF_ERROR(
      Check(js_GetStreamInfo(&info, js_.get(), stream.c_str(), nullptr, &js_error), js_error,
            "stream info " + stream));
  std::string leader =
      info->Cluster != nullptr && info->Cluster->Leader != nullptr ? info->Cluster->Leader : "";
  jsStreamInfo_Destroy(info);
  if (leader.empty()) {
    return NotFound("stream {} has no leader", stream);
  }
  return leader;
}

Result<std::vector<uint64_t>> JetStreamTestClient::Publish(const std::string& subject, int count,
                                                           const std::string& prefix,
                                                           int first_index) {
  return PublishImpl(subject, count, prefix, first_index, std::chrono::milliseconds(0), nullptr);
}

Result<std::vector<uint64_t>> JetStreamTestClient::PublishRetrying(
    const std::string& subject, int count, const std::string& prefix, int first_index,
    std::chrono::milliseconds retry_for, int* retries) {
  return PublishImpl(subject, count, prefix, first_index, retry_for, retries);
}

Result<std::vector<uint64_t>> JetStreamTestClient::PublishImpl(const std::string& subject,
                                                               int count, const std::string& prefix,
                                                               int first_index,
                                                               std::chrono::milliseconds retry_for,
                                                               int* retries) {
  std::vector<uint64_t> sequences;
  sequences.reserve(static_cast<size_t>(count));
  for (int i = first_index; i < first_index + count; ++i) {
    std::string body = prefix + std::to_string(i);
    natsMsg* raw = nullptr;
    FERRY_RETURN_IF_ERROR(Check(
        natsMsg_Create(&raw, subject.c_str(), nullptr, body.data(), static_cast<int>(body.size())),
        jsErrCode(0), "msg"));
    source::jetstream::NatsMsgPtr msg(raw);
    natsMsgHeader_Set(raw, "Nats-Msg-Id", body.c_str());
    natsMsgHeader_Set(raw, "X-Index", std::to_string(i).c_str());
    const auto give_up = std::chrono::steady_clock::now() + retry_for;
    while (true) {
      jsPubAck* ack = nullptr;
      jsErrCode js_error = jsErrCode(0);
      // Synchronous: the tests need the sequences, and a few thousand round trips on loopback
      // are quick.
      natsStatus status = js_PublishMsg(&ack, js_.get(), raw, nullptr, &js_error);
      source::jetstream::JsPubAckPtr ack_owner(ack);
      if (status == NATS_OK) {
        sequences.push_back(ack->Sequence);
        break;
      }
      if (std::chrono::steady_clock::now() >= give_up) {
        FERRY_RETURN_IF_ERROR(Check(status, js_error, "publish " + body));
      }
      if (retries != nullptr) {
        ++*retries;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  return sequences;
}

Result<StreamState> JetStreamTestClient::State(const std::string& stream) {
  jsStreamInfo* info = nullptr;
  jsErrCode js_error = jsErrCode(0);
  FERRY_RETURN_IF_ERROR(
      Check(js_GetStreamInfo(&info, js_.get(), stream.c_str(), nullptr, &js_error), js_error,
            "stream info " + stream));
  StreamState state{info->State.FirstSeq, info->State.LastSeq, info->State.Msgs};
  jsStreamInfo_Destroy(info);
  return state;
}

Result<std::vector<jsAckPolicy>> JetStreamTestClient::ConsumerAckPolicies(
    const std::string& stream) {
  jsConsumerInfoList* list = nullptr;
  jsErrCode js_error = jsErrCode(0);
  natsStatus status = js_Consumers(&list, js_.get(), stream.c_str(), nullptr, &js_error);
  std::vector<jsAckPolicy> policies;
  if (status == NATS_NOT_FOUND) {
    return policies;  // no consumers
  }
  FERRY_RETURN_IF_ERROR(Check(status, js_error, "consumers of " + stream));
  for (int i = 0; i < list->Count; ++i) {
    policies.push_back(list->List[i]->Config->AckPolicy);
  }
  jsConsumerInfoList_Destroy(list);
  return policies;
}

}  // namespace ferry::testing

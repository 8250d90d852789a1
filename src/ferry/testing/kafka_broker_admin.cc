// KafkaBroker's admin requests (CreateTopic, AllowRead, RevokeRead, AddPartitions, DeleteTopic,
// DeleteRecords, SetTopicConfigs), which share one request-and-wait (CheckedAdminCall), and the
// librdkafka client they and the start-up check share (kafka_broker_internal.h).
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "ferry/testing/kafka_broker.h"
#include "ferry/testing/kafka_broker_internal.h"

namespace ferry::testing {
namespace kafka_internal {

Result<RdKafkaPtr> NewClient(const std::string& bootstrap) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char err[512];
  for (const auto& [key, value] :
       std::vector<std::pair<const char*, std::string>>{{"bootstrap.servers", bootstrap},
                                                        {"client.id", "ferry-test-kafka-broker"},
                                                        {"log_level", "0"},
                                                        {"reconnect.backoff.max.ms", "200"}}) {
    if (rd_kafka_conf_set(conf, key, value.c_str(), err, sizeof(err)) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return Internal("librdkafka {}: {}", key, err);
    }
  }
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    return Internal("rd_kafka_new: {}", err);
  }
  return RdKafkaPtr(rk);
}

bool MetadataAnswers(rd_kafka_t* rk, const char* topic, int partitions) {
  const rd_kafka_metadata_t* md = nullptr;
  if (rd_kafka_metadata(rk, 1, nullptr, &md, 2000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return false;
  }
  bool ok = md->broker_cnt > 0;
  if (topic != nullptr) {
    ok = false;
    for (int t = 0; t < md->topic_cnt; ++t) {
      const rd_kafka_metadata_topic_t& mt = md->topics[t];
      if (strcmp(mt.topic, topic) != 0 || mt.err != RD_KAFKA_RESP_ERR_NO_ERROR ||
          mt.partition_cnt != partitions) {
        continue;
      }
      ok = true;
      for (int p = 0; p < mt.partition_cnt; ++p) {
        ok = ok && mt.partitions[p].leader >= 0 &&
             mt.partitions[p].err == RD_KAFKA_RESP_ERR_NO_ERROR;
      }
    }
  }
  rd_kafka_metadata_destroy(md);
  return ok;
}

}  // namespace kafka_internal

namespace {

using kafka_internal::MetadataAnswers;
using kafka_internal::NewClient;
using kafka_internal::RdKafkaPtr;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

// Runs one admin request on `client` and waits for its result event (nullptr after 60 s).
struct EventDeleter {
  void operator()(rd_kafka_event_t* event) const { rd_kafka_event_destroy(event); }
};
using EventPtr = std::unique_ptr<rd_kafka_event_t, EventDeleter>;

template <typename Send>
EventPtr AdminCall(rd_kafka_t* client, rd_kafka_admin_op_t op, const Send& send) {
  rd_kafka_queue_t* queue = rd_kafka_queue_new(client);
  rd_kafka_AdminOptions_t* options = rd_kafka_AdminOptions_new(client, op);
  char err[512];
  rd_kafka_AdminOptions_set_request_timeout(options, 30000, err, sizeof(err));
  send(options, queue);
  EventPtr event(rd_kafka_queue_poll(queue, 60000));
  rd_kafka_AdminOptions_destroy(options);
  rd_kafka_queue_destroy(queue);
  return event;
}

// AdminCall, with a missing answer or a request-level error as a status naming `what`.
template <typename Send>
Result<EventPtr> CheckedAdminCall(rd_kafka_t* client, rd_kafka_admin_op_t op,
                                  const std::string& what, const std::string& bootstrap,
                                  const Send& send) {
  EventPtr event = AdminCall(client, op, send);
  if (event == nullptr) {
    return Unavailable("{} on {}: no answer within 60 s", what, bootstrap);
  }
  if (rd_kafka_event_error(event.get()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Unavailable("{} on {}: {}", what, bootstrap, rd_kafka_event_error_string(event.get()));
  }
  return event;
}

// How many ALLOW READ ACLs on the literal resource for `principal` the broker lists
// (DescribeAcls); -1 when it does not answer.
int64_t ReadAcls(rd_kafka_t* client, rd_kafka_ResourceType_t type, const std::string& name,
                 const std::string& principal) {
  char err[512] = {};
  rd_kafka_AclBindingFilter_t* filter = rd_kafka_AclBindingFilter_new(
      type, name.c_str(), RD_KAFKA_RESOURCE_PATTERN_LITERAL, principal.c_str(), nullptr,
      RD_KAFKA_ACL_OPERATION_READ, RD_KAFKA_ACL_PERMISSION_TYPE_ALLOW, err, sizeof(err));
  EventPtr described = AdminCall(client, RD_KAFKA_ADMIN_OP_DESCRIBEACLS,
                                 [&](rd_kafka_AdminOptions_t* options, rd_kafka_queue_t* queue) {
                                   rd_kafka_DescribeAcls(client, filter, options, queue);
                                 });
  rd_kafka_AclBinding_destroy(filter);
  if (described == nullptr || rd_kafka_event_error(described.get()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return -1;
  }
  size_t found = 0;
  rd_kafka_DescribeAcls_result_acls(rd_kafka_event_DescribeAcls_result(described.get()), &found);
  return static_cast<int64_t>(found);
}

// The first per-topic error of a CreatePartitions or DeleteTopics result.
Status TopicResults(const rd_kafka_topic_result_t** results, size_t n, const std::string& what,
                    const std::string& bootstrap) {
  for (size_t i = 0; i < n; ++i) {
    rd_kafka_resp_err_t code = rd_kafka_topic_result_error(results[i]);
    if (code != RD_KAFKA_RESP_ERR_NO_ERROR) {
      const char* message = rd_kafka_topic_result_error_string(results[i]);
      return Unavailable("{} on {}: {}", what, bootstrap,
                         message != nullptr ? message : rd_kafka_err2str(code));
    }
  }
  return Status::OK();
}

// Whether metadata for all topics names `topic`.
bool TopicListed(rd_kafka_t* rk, const std::string& topic) {
  const rd_kafka_metadata_t* md = nullptr;
  if (rd_kafka_metadata(rk, 1, nullptr, &md, 2000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return true;  // unknown: ask again
  }
  bool listed = false;
  for (int t = 0; t < md->topic_cnt; ++t) {
    listed = listed || (topic == md->topics[t].topic &&
                        md->topics[t].err != RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
  }
  rd_kafka_metadata_destroy(md);
  return listed;
}

}  // namespace

Status KafkaBroker::CreateTopic(const std::string& name, int partitions,
                                const std::map<std::string, std::string>& configs,
                                int replication_factor) const {
  FERRY_ASSIGN_OR_RETURN(RdKafkaPtr client, NewClient(bootstrap()));
  char err[512];
  rd_kafka_NewTopic_t* topic =
      rd_kafka_NewTopic_new(name.c_str(), partitions, replication_factor, err, sizeof(err));
  if (topic == nullptr) {
    return InvalidArgument("topic {}: {}", name, err);
  }
  for (const auto& [key, value] : configs) {
    rd_kafka_NewTopic_set_config(topic, key.c_str(), value.c_str());
  }
  const std::string what = "CreateTopics " + name;
  auto send = [&](rd_kafka_AdminOptions_t* options, rd_kafka_queue_t* queue) {
    // How long the controller may take to create the topic, within the request's 30 s.
    rd_kafka_AdminOptions_set_operation_timeout(options, 30000, err, sizeof(err));
    rd_kafka_CreateTopics(client.get(), &topic, 1, options, queue);
  };
  Result<EventPtr> event =
      CheckedAdminCall(client.get(), RD_KAFKA_ADMIN_OP_CREATETOPICS, what, bootstrap(), send);
  rd_kafka_NewTopic_destroy(topic);
  FERRY_RETURN_IF_ERROR(event.status());
  size_t n = 0;
  const rd_kafka_topic_result_t** results =
      rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event->get()), &n);
  for (size_t i = 0; i < n; ++i) {
    if (rd_kafka_topic_result_error(results[i]) == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
      return AlreadyExists("topic {} exists on {}", name, bootstrap());
    }
  }
  FERRY_RETURN_IF_ERROR(TopicResults(results, n, what, bootstrap()));
  // The controller has committed the topic; the broker learns its leadership a moment later.
  const auto deadline = steady_clock::now() + milliseconds(30000);
  while (!MetadataAnswers(client.get(), name.c_str(), partitions)) {
    if (steady_clock::now() > deadline) {
      return Unavailable("topic {} on {}: partitions without a leader after 30 s", name,
                         bootstrap());
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  return Status::OK();
}

Status KafkaBroker::AllowRead(const std::string& principal, AclResource resource,
                              const std::string& name) const {
  if (!options_.security) {
    return Internal("AllowRead on a Kafka broker started without Options::security");
  }
  const rd_kafka_ResourceType_t type =
      resource == AclResource::kTopic ? RD_KAFKA_RESOURCE_TOPIC : RD_KAFKA_RESOURCE_GROUP;
  const std::string what = fmt::format("ACL READ on {} '{}' for {} on {}",
                                       resource == AclResource::kTopic ? "topic" : "group", name,
                                       principal, bootstrap());
  FERRY_ASSIGN_OR_RETURN(RdKafkaPtr client, NewClient(bootstrap()));
  char err[512] = {};
  rd_kafka_AclBinding_t* acl = rd_kafka_AclBinding_new(
      type, name.c_str(), RD_KAFKA_RESOURCE_PATTERN_LITERAL, principal.c_str(), "*",
      RD_KAFKA_ACL_OPERATION_READ, RD_KAFKA_ACL_PERMISSION_TYPE_ALLOW, err, sizeof(err));
  if (acl == nullptr) {
    return InvalidArgument("{}: {}", what, err);
  }
  EventPtr created = AdminCall(client.get(), RD_KAFKA_ADMIN_OP_CREATEACLS,
                               [&](rd_kafka_AdminOptions_t* options, rd_kafka_queue_t* queue) {
                                 rd_kafka_CreateAcls(client.get(), &acl, 1, options, queue);
                               });
  rd_kafka_AclBinding_destroy(acl);
  if (created == nullptr) {
    return Unavailable("{}: CreateAcls had no answer within 60 s", what);
  }
  if (rd_kafka_event_error(created.get()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Unavailable("{}: {}", what, rd_kafka_event_error_string(created.get()));
  }
  size_t n = 0;
  const rd_kafka_acl_result_t** results =
      rd_kafka_CreateAcls_result_acls(rd_kafka_event_CreateAcls_result(created.get()), &n);
  for (size_t i = 0; i < n; ++i) {
    if (const rd_kafka_error_t* e = rd_kafka_acl_result_error(results[i]); e != nullptr) {
      return Unavailable("{}: {}", what, rd_kafka_error_string(e));
    }
  }
  // The controller has the ACL; the broker's authorizer applies it when it replays the record.
  const auto deadline = steady_clock::now() + milliseconds(30000);
  while (steady_clock::now() < deadline) {
    if (ReadAcls(client.get(), type, name, principal) > 0) {
      return Status::OK();
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  return Unavailable("{}: created, but DescribeAcls did not list it within 30 s", what);
}

Status KafkaBroker::RevokeRead(const std::string& principal, AclResource resource,
                               const std::string& name) const {
  if (!options_.security) {
    return Internal("RevokeRead on a Kafka broker started without Options::security");
  }
  const rd_kafka_ResourceType_t type =
      resource == AclResource::kTopic ? RD_KAFKA_RESOURCE_TOPIC : RD_KAFKA_RESOURCE_GROUP;
  const std::string what =
      fmt::format("removing ACL READ on {} '{}' for {}",
                  resource == AclResource::kTopic ? "topic" : "group", name, principal);
  FERRY_ASSIGN_OR_RETURN(RdKafkaPtr client, NewClient(bootstrap()));
  char err[512] = {};
  rd_kafka_AclBindingFilter_t* filter = rd_kafka_AclBindingFilter_new(
      type, name.c_str(), RD_KAFKA_RESOURCE_PATTERN_LITERAL, principal.c_str(), nullptr,
      RD_KAFKA_ACL_OPERATION_READ, RD_KAFKA_ACL_PERMISSION_TYPE_ALLOW, err, sizeof(err));
  if (filter == nullptr) {
    return InvalidArgument("{}: {}", what, err);
  }
  Result<EventPtr> deleted =
      CheckedAdminCall(client.get(), RD_KAFKA_ADMIN_OP_DELETEACLS, what, bootstrap(),
                       [&](rd_kafka_AdminOptions_t* options, rd_kafka_queue_t* queue) {
                         rd_kafka_DeleteAcls(client.get(), &filter, 1, options, queue);
                       });
  rd_kafka_AclBinding_destroy(filter);
  FERRY_RETURN_IF_ERROR(deleted.status());
  size_t n = 0;
  const rd_kafka_DeleteAcls_result_response_t** responses =
      rd_kafka_DeleteAcls_result_responses(rd_kafka_event_DeleteAcls_result(deleted->get()), &n);
  for (size_t i = 0; i < n; ++i) {
    if (const rd_kafka_error_t* e = rd_kafka_DeleteAcls_result_response_error(responses[i]);
        e != nullptr) {
      return Unavailable("{} on {}: {}", what, bootstrap(), rd_kafka_error_string(e));
    }
  }
  // Gone from the controller; the broker's authorizer drops it when it replays the record.
  const auto deadline = steady_clock::now() + milliseconds(30000);
  while (steady_clock::now() < deadline) {
    if (ReadAcls(client.get(), type, name, principal) == 0) {
      return Status::OK();
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  return Unavailable("{} on {}: deleted, but DescribeAcls still lists it after 30 s", what,
                     bootstrap());
}

Status KafkaBroker::AddPartitions(const std::string& topic, int total) const {
  FERRY_ASSIGN_OR_RETURN(RdKafkaPtr client, NewClient(bootstrap()));
  char err[512];
  rd_kafka_NewPartitions_t* request =
      rd_kafka_NewPartitions_new(topic.c_str(), static_cast<size_t>(total), err, sizeof(err));
  if (request == nullptr) {
    return InvalidArgument("partitions of {}: {}", topic, err);
  }
  const std::string what = fmt::format("CreatePartitions {} to {}", topic, total);
  Result<EventPtr> event =
      CheckedAdminCall(client.get(), RD_KAFKA_ADMIN_OP_CREATEPARTITIONS, what, bootstrap(),
                       [&](rd_kafka_AdminOptions_t* options, rd_kafka_queue_t* queue) {
                         rd_kafka_CreatePartitions(client.get(), &request, 1, options, queue);
                       });
  rd_kafka_NewPartitions_destroy(request);
  FERRY_RETURN_IF_ERROR(event.status());
  size_t n = 0;
  const rd_kafka_topic_result_t** results = rd_kafka_CreatePartitions_result_topics(
      rd_kafka_event_CreatePartitions_result(event->get()), &n);
  Status status = TopicResults(results, n, what, bootstrap());
  FERRY_RETURN_IF_ERROR(status);
  const auto deadline = steady_clock::now() + milliseconds(30000);
  while (!MetadataAnswers(client.get(), topic.c_str(), total)) {
    if (steady_clock::now() > deadline) {
      return Unavailable("topic {} on {}: not {} partitions with leaders after 30 s", topic,
                         bootstrap(), total);
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  return Status::OK();
}

Status KafkaBroker::DeleteTopic(const std::string& topic) const {
  FERRY_ASSIGN_OR_RETURN(RdKafkaPtr client, NewClient(bootstrap()));
  rd_kafka_DeleteTopic_t* request = rd_kafka_DeleteTopic_new(topic.c_str());
  const std::string what = "DeleteTopics " + topic;
  Result<EventPtr> event =
      CheckedAdminCall(client.get(), RD_KAFKA_ADMIN_OP_DELETETOPICS, what, bootstrap(),
                       [&](rd_kafka_AdminOptions_t* options, rd_kafka_queue_t* queue) {
                         rd_kafka_DeleteTopics(client.get(), &request, 1, options, queue);
                       });
  rd_kafka_DeleteTopic_destroy(request);
  FERRY_RETURN_IF_ERROR(event.status());
  size_t n = 0;
  const rd_kafka_topic_result_t** results =
      rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(event->get()), &n);
  Status status = TopicResults(results, n, what, bootstrap());
  FERRY_RETURN_IF_ERROR(status);
  const auto deadline = steady_clock::now() + milliseconds(30000);
  while (TopicListed(client.get(), topic)) {
    if (steady_clock::now() > deadline) {
      return Unavailable("topic {} on {}: still listed 30 s after its deletion", topic,
                         bootstrap());
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  return Status::OK();
}

Status KafkaBroker::SetTopicConfigs(const std::string& topic,
                                    const std::map<std::string, std::string>& configs) const {
  FERRY_ASSIGN_OR_RETURN(RdKafkaPtr client, NewClient(bootstrap()));
  rd_kafka_ConfigResource_t* resource =
      rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic.c_str());
  for (const auto& [key, value] : configs) {
    rd_kafka_ConfigResource_set_config(resource, key.c_str(), value.c_str());
  }
  const std::string what = "AlterConfigs of topic " + topic;
  Result<EventPtr> event =
      CheckedAdminCall(client.get(), RD_KAFKA_ADMIN_OP_ALTERCONFIGS, what, bootstrap(),
                       [&](rd_kafka_AdminOptions_t* options, rd_kafka_queue_t* queue) {
                         rd_kafka_AlterConfigs(client.get(), &resource, 1, options, queue);
                       });
  rd_kafka_ConfigResource_destroy(resource);
  FERRY_RETURN_IF_ERROR(event.status());
  size_t n = 0;
  const rd_kafka_ConfigResource_t** results =
      rd_kafka_AlterConfigs_result_resources(rd_kafka_event_AlterConfigs_result(event->get()), &n);
  for (size_t i = 0; i < n; ++i) {
    if (rd_kafka_ConfigResource_error(results[i]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      const char* message = rd_kafka_ConfigResource_error_string(results[i]);
      return Unavailable("{} on {}: {}", what, bootstrap(),
                         message != nullptr
                             ? message
                             : rd_kafka_err2str(rd_kafka_ConfigResource_error(results[i])));
    }
  }
  return Status::OK();
}

Result<int64_t> KafkaBroker::DeleteRecords(const std::string& topic, int32_t partition,
                                           int64_t before_offset) const {
  FERRY_ASSIGN_OR_RETURN(RdKafkaPtr client, NewClient(bootstrap()));
  rd_kafka_topic_partition_list_t* offsets = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(offsets, topic.c_str(), partition)->offset = before_offset;
  rd_kafka_DeleteRecords_t* request = rd_kafka_DeleteRecords_new(offsets);
  rd_kafka_topic_partition_list_destroy(offsets);
  const std::string what =
      fmt::format("DeleteRecords {}/{} before {}", topic, partition, before_offset);
  Result<EventPtr> event =
      CheckedAdminCall(client.get(), RD_KAFKA_ADMIN_OP_DELETERECORDS, what, bootstrap(),
                       [&](rd_kafka_AdminOptions_t* options, rd_kafka_queue_t* queue) {
                         rd_kafka_DeleteRecords(client.get(), &request, 1, options, queue);
                       });
  rd_kafka_DeleteRecords_destroy(request);
  FERRY_RETURN_IF_ERROR(event.status());
  const rd_kafka_topic_partition_list_t* result =
      rd_kafka_DeleteRecords_result_offsets(rd_kafka_event_DeleteRecords_result(event->get()));
  Result<int64_t> low = Unavailable("{} on {}: no partition in the answer", what, bootstrap());
  if (result != nullptr && result->cnt == 1) {
    const rd_kafka_topic_partition_t& e = result->elems[0];
    low = e.err == RD_KAFKA_RESP_ERR_NO_ERROR
              ? Result<int64_t>(e.offset)
              : Result<int64_t>(
                    Unavailable("{} on {}: {}", what, bootstrap(), rd_kafka_err2str(e.err)));
  }
  return low;
}

}  // namespace ferry::testing

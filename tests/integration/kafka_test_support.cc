#include "kafka_test_support.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "ferry/base/clock.h"
#include "ferry/source/kafka/kafka_conf.h"
#include "ferry/source/kafka/kafka_source_options.h"

namespace ferry::source::kafka::testing {
namespace {

void CountDelivery(rd_kafka_t* /*rk*/, const rd_kafka_message_t* m, void* opaque) {
  auto* failures = static_cast<std::atomic<int>*>(opaque);
  if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    failures->fetch_add(1);
  }
}

Result<KafkaPtr> NewConsumer(const std::string& brokers, const std::string& group) {
  FERRY_ASSIGN_OR_RETURN(ConfPtr conf, NewConf({{"bootstrap.servers", brokers},
                                                {"group.id", group},
                                                {"enable.auto.commit", "false"}}));
  return NewClient(RD_KAFKA_CONSUMER, std::move(conf));
}

}  // namespace

std::string DefaultPayload(int32_t partition, int i) {
  return "p" + std::to_string(partition) + "-m" + std::to_string(i);
}

Status Produce(const std::string& brokers, const std::string& topic, int32_t partition, int count,
               const std::function<std::string(int)>& payload) {
  return Produce(brokers, topic, partition, count, payload,
                 [](int i) { return "k" + std::to_string(i); });
}

Status Produce(const std::string& brokers, const std::string& topic, int32_t partition, int count,
               const std::function<std::string(int)>& payload,
               const std::function<std::string(int)>& key_of) {
  std::atomic<int> failures{0};
  FERRY_ASSIGN_OR_RETURN(ConfPtr conf, NewConf({{"bootstrap.servers", brokers},
                                                {"enable.idempotence", "true"},
                                                {"linger.ms", "2"}}));
  rd_kafka_conf_set_dr_msg_cb(conf.get(), &CountDelivery);
  rd_kafka_conf_set_opaque(conf.get(), &failures);
  FERRY_ASSIGN_OR_RETURN(KafkaPtr rk, NewClient(RD_KAFKA_PRODUCER, std::move(conf)));
  for (int i = 0; i < count; ++i) {
    std::string value = payload(i);
    std::string key = key_of(i);
    std::string seq = std::to_string(i);
    // rd_kafka_produceva: the rd_kafka_producev macros are GNU statement expressions.
    rd_kafka_vu_t vus[6] = {};
    vus[0].vtype = RD_KAFKA_VTYPE_TOPIC;
    vus[0].u.cstr = topic.c_str();
    vus[1].vtype = RD_KAFKA_VTYPE_PARTITION;
    vus[1].u.i32 = partition;
    vus[2].vtype = RD_KAFKA_VTYPE_VALUE;
    vus[2].u.mem = {value.data(), value.size()};
    vus[3].vtype = RD_KAFKA_VTYPE_KEY;
    vus[3].u.mem = {key.data(), key.size()};
    vus[4].vtype = RD_KAFKA_VTYPE_HEADER;
    vus[4].u.header = {"seq", seq.data(), static_cast<ssize_t>(seq.size())};
    vus[5].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
    vus[5].u.i = RD_KAFKA_MSG_F_COPY;
    rd_kafka_resp_err_t err;
    do {
      ErrorPtr error(rd_kafka_produceva(rk.get(), vus, 6));
      err = error == nullptr ? RD_KAFKA_RESP_ERR_NO_ERROR : rd_kafka_error_code(error.get());
      if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        rd_kafka_poll(rk.get(), 10);
      }
    } while (err == RD_KAFKA_RESP_ERR__QUEUE_FULL);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return KafkaErrorStatus(err, "test produce");
    }
    rd_kafka_poll(rk.get(), 0);
  }
  rd_kafka_resp_err_t err = rd_kafka_flush(rk.get(), 60000);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaErrorStatus(err, "test produce flush");
  }
  if (failures.load() != 0) {
    return Internal("test produce: {} deliveries failed", failures.load());
  }
  return Status::OK();
}

Result<std::optional<int64_t>> TestListener::OnAssigned(const PartitionInfo& partition) {
  auto fail = fail_once.find(partition.key);
  if (fail != fail_once.end()) {
    Status st = fail->second;
    fail_once.erase(fail);
    return st;
  }
  EXPECT_EQ(current.count(partition.key), 0u) << "assigned twice: " << partition.key;
  assigned.push_back(partition.key);
  current[partition.key] = partition.index;
  auto it = positions.find(partition.key);
  if (it == positions.end()) {
    return std::optional<int64_t>();
  }
  return std::optional<int64_t>(it->second);
}

void TestListener::OnRevoked(const PartitionInfo& partition) {
  EXPECT_EQ(current.count(partition.key), 1u) << "revoked but not assigned: " << partition.key;
  revoked.push_back(partition.key);
  current.erase(partition.key);
}

PollResult PollUntil(Source* source, TestListener* listener,
                     const std::function<bool(const PollResult&)>& done,
                     std::chrono::milliseconds limit, size_t max_messages) {
  PollResult result;
  const int64_t deadline = MonotonicMicros() + limit.count() * 1000;
  while (!done(result) && MonotonicMicros() < deadline) {
    PollOnce(source, listener, &result, max_messages);
  }
  return result;
}

void PollOnce(Source* source, TestListener* listener, PollResult* result, size_t max_messages) {
  std::vector<Message> batch;
  Status st = source->Poll(max_messages, std::chrono::milliseconds(100), &batch);
  if (!st.ok()) {
    result->errors.push_back(st);
    return;
  }
  for (const Message& m : batch) {
    Received r;
    r.index = m.partition;
    r.topic = std::string(m.topic);
    r.partition = m.kafka_partition;
    r.offset = m.position;
    r.payload = std::string(m.payload);
    r.key = std::string(m.key);
    r.timestamp_us = m.timestamp_us;
    for (const Header& h : m.headers) {
      r.headers.emplace_back(std::string(h.name), std::string(h.value));
    }
    if (listener != nullptr) {
      listener->positions[KafkaPartitionKey(r.topic, r.partition)] = r.offset;
    }
    result->messages.push_back(std::move(r));
  }
}

std::map<int32_t, std::vector<int64_t>> OffsetsByPartition(const std::vector<Received>& messages) {
  std::map<int32_t, std::vector<int64_t>> out;
  for (const Received& r : messages) {
    out[r.partition].push_back(r.offset);
  }
  return out;
}

std::vector<int64_t> Range(int64_t first, int64_t last) {
  std::vector<int64_t> out;
  for (int64_t i = first; i <= last; ++i) {
    out.push_back(i);
  }
  return out;
}

Result<int64_t> CommittedOffset(const std::string& brokers, const std::string& group,
                                const std::string& topic, int32_t partition) {
  FERRY_ASSIGN_OR_RETURN(KafkaPtr rk, NewConsumer(brokers, group));
  PartitionListPtr list(rd_kafka_topic_partition_list_new(1));
  rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), partition);
  rd_kafka_resp_err_t err = rd_kafka_committed(rk.get(), list.get(), 10000);
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    err = list->elems[0].err;
  }
  int64_t offset = list->elems[0].offset;
  rd_kafka_consumer_close(rk.get());
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaErrorStatus(err, "test committed()");
  }
  return offset;
}

Status CommitOffset(const std::string& brokers, const std::string& group, const std::string& topic,
                    int32_t partition, int64_t offset) {
  FERRY_ASSIGN_OR_RETURN(KafkaPtr rk, NewConsumer(brokers, group));
  PartitionListPtr list(rd_kafka_topic_partition_list_new(1));
  rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), partition)->offset = offset;
  rd_kafka_resp_err_t err = rd_kafka_commit(rk.get(), list.get(), /*async=*/0);
  rd_kafka_consumer_close(rk.get());
  return KafkaErrorStatus(err, "test commit");
}

}  // namespace ferry::source::kafka::testing

// Owning wrappers for librdkafka's C handles: each handle type gets a std::unique_ptr with the
// matching destroy function, so every exit path releases it. Used by the Kafka source, the mock
// cluster and the `ferry produce kafka` tool.
//
// Destruction order matters between handles, not inside one: anything borrowed from an
// rd_kafka_t (queues, topic handles, messages, the mock cluster) must be destroyed before the
// rd_kafka_t itself. Classes holding several of these declare the rd_kafka_t first so that it is
// destroyed last, and say so beside the members.
//
// Thread-safety: as the underlying handles (rd_kafka_t is thread-safe; the others are not).
#pragma once

#include <librdkafka/rdkafka.h>

#include <memory>

namespace ferry::source::kafka {

struct KafkaHandleDeleter {
  // rd_kafka_destroy() on a consumer that was not closed runs rd_kafka_consumer_close() and may
  // block; owners close explicitly first (KafkaSource::Close bounds that time).
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
  void operator()(rd_kafka_conf_t* conf) const { rd_kafka_conf_destroy(conf); }
  void operator()(rd_kafka_topic_partition_list_t* list) const {
    rd_kafka_topic_partition_list_destroy(list);
  }
  void operator()(rd_kafka_message_t* message) const { rd_kafka_message_destroy(message); }
  void operator()(rd_kafka_queue_t* queue) const { rd_kafka_queue_destroy(queue); }
  void operator()(rd_kafka_event_t* event) const { rd_kafka_event_destroy(event); }
  void operator()(rd_kafka_error_t* error) const { rd_kafka_error_destroy(error); }
  void operator()(rd_kafka_topic_t* topic) const { rd_kafka_topic_destroy(topic); }
  void operator()(const rd_kafka_metadata_t* metadata) const {
    rd_kafka_metadata_destroy(metadata);
  }
};

using KafkaPtr = std::unique_ptr<rd_kafka_t, KafkaHandleDeleter>;
using ConfPtr = std::unique_ptr<rd_kafka_conf_t, KafkaHandleDeleter>;
using PartitionListPtr = std::unique_ptr<rd_kafka_topic_partition_list_t, KafkaHandleDeleter>;
using MessagePtr = std::unique_ptr<rd_kafka_message_t, KafkaHandleDeleter>;
using QueuePtr = std::unique_ptr<rd_kafka_queue_t, KafkaHandleDeleter>;
using EventPtr = std::unique_ptr<rd_kafka_event_t, KafkaHandleDeleter>;
using ErrorPtr = std::unique_ptr<rd_kafka_error_t, KafkaHandleDeleter>;
using TopicPtr = std::unique_ptr<rd_kafka_topic_t, KafkaHandleDeleter>;
using MetadataPtr = std::unique_ptr<const rd_kafka_metadata_t, KafkaHandleDeleter>;

}  // namespace ferry::source::kafka

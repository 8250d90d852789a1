#include "ferry/app/broker_heads.h"

#include <fmt/format.h>
#include <librdkafka/rdkafka.h>
#include <nats/nats.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ferry/app/pipeline_factory.h"
#include "ferry/source/jetstream/nats_connect.h"
#include "ferry/source/jetstream/nats_error.h"
#include "ferry/source/jetstream/nats_handles.h"
#include "ferry/source/jetstream/partition_leases.h"
#include "ferry/source/jetstream/subject_filter.h"
#include "ferry/source/kafka/kafka_conf.h"
#include "ferry/source/kafka/kafka_handles.h"
#include "ferry/source/kafka/topic_matcher.h"

namespace ferry::app {
namespace {

namespace kafka = source::kafka;
namespace jetstream = source::jetstream;
using source::PartitionHead;

constexpr int kTimeoutMs = 10000;

Result<std::vector<PartitionHead>> KafkaHeads(const config::PipelineConfig& c) {
  FERRY_ASSIGN_OR_RETURN(kafka::KafkaSourceOptions o, KafkaSourceOptionsFor(c));
  // Watermarks asked with read_uncommitted: the high watermark, not the last stable offset (what
  // a read_committed client gets), so the records of an open transaction, which hold ferry at
  // the last stable offset, show as lag (docs/kafka.md).
  std::vector<std::pair<std::string, std::string>> properties = kafka::ConsumerProperties(o);
  properties.emplace_back("isolation.level", "read_uncommitted");
  FERRY_ASSIGN_OR_RETURN(kafka::ConfPtr conf, kafka::NewConf(properties));
  // A consumer that never subscribes: it does not join the group, so a running `ferry run` of
  // the same group is not rebalanced.
  FERRY_ASSIGN_OR_RETURN(kafka::KafkaPtr client,
                         kafka::NewClient(RD_KAFKA_CONSUMER, std::move(conf)));
  const rd_kafka_metadata_t* raw = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(client.get(), 1, nullptr, &raw, kTimeoutMs);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return kafka::KafkaErrorStatus(err, "cluster metadata");
  }
  kafka::MetadataPtr md(raw);
  FERRY_ASSIGN_OR_RETURN(kafka::TopicMatcher wanted, kafka::TopicMatcher::Create(o.topics));
  std::vector<PartitionHead> heads;
  std::set<std::string> found;
  for (int i = 0; i < md->topic_cnt; ++i) {
    const rd_kafka_metadata_topic_t& topic = md->topics[i];
    std::string name = topic.topic;
    if (!wanted.Matches(name) || topic.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      continue;
    }
    found.insert(name);
    for (int p = 0; p < topic.partition_cnt; ++p) {
      int32_t partition = topic.partitions[p].id;
      int64_t low = 0;
      int64_t high = 0;
      err = rd_kafka_query_watermark_offsets(client.get(), name.c_str(), partition, &low, &high,
                                             kTimeoutMs);
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        return kafka::KafkaErrorStatus(err, fmt::format("watermarks of {}/{}", name, partition));
      }
      PartitionHead head{.key = kafka::KafkaPartitionKey(name, partition)};
      if (high > low) {
        head.first_position = low;
        head.last_position = high - 1;
      }
      heads.push_back(std::move(head));
    }
  }
  for (const std::string& n : wanted.names()) {
    if (found.count(n) == 0) {
      return NotFound("topic '{}' not found on {}", n, o.brokers);
    }
  }
  return heads;
}

Result<std::vector<PartitionHead>> JetStreamHeads(const config::PipelineConfig& c) {
  FERRY_ASSIGN_OR_RETURN(jetstream::JetStreamOptions o, JetStreamOptionsFor(c));
  FERRY_ASSIGN_OR_RETURN(jetstream::NatsConnectionPtr connection,
                         jetstream::ConnectNats(o.connection));
  FERRY_ASSIGN_OR_RETURN(jetstream::JsCtxPtr js,
                         jetstream::OpenJetStream(connection.get(), o.connection.api_timeout_ms));
  jsStreamInfo* raw = nullptr;
  jsErrCode js_error = jsErrCode(0);
  natsStatus status = js_GetStreamInfo(&raw, js.get(), o.stream.c_str(), nullptr, &js_error);
  if (status != NATS_OK) {
    return jetstream::NatsError(status, fmt::format("info of jetstream stream '{}'", o.stream),
                                js_error);
  }
  jetstream::JsStreamInfoPtr info(raw);
  std::vector<std::string> stream_subjects;
  if (info->Config != nullptr) {
    for (int i = 0; i < info->Config->SubjectsLen; ++i) {
      stream_subjects.emplace_back(info->Config->Subjects[i]);
    }
  }
  const jsStreamState& state = info->State;
  std::vector<PartitionHead> heads;
  std::vector<std::string> filters = o.filters;
  if (filters.empty()) {
    filters.emplace_back(">");
  }
  for (const std::string& filter : filters) {
    PartitionHead head{.key = jetstream::PartitionKey(o.stream, filter)};
    if (state.Msgs > 0) {
      head.first_position = static_cast<int64_t>(state.FirstSeq);
      if (filter == ">" || jetstream::FilterCoversAll(filter, stream_subjects)) {
        head.last_position = static_cast<int64_t>(state.LastSeq);
      } else {
        natsMsg* msg = nullptr;
        js_error = jsErrCode(0);
        status =
            js_GetLastMsg(&msg, js.get(), o.stream.c_str(), filter.c_str(), nullptr, &js_error);
        jetstream::NatsMsgPtr last(msg);
        if (status == NATS_OK) {
          head.last_position = static_cast<int64_t>(natsMsg_GetSequence(msg));
        } else if (status != NATS_NOT_FOUND && js_error != JSNoMessageFoundErr) {
          return jetstream::NatsError(status, fmt::format("{}: last message", head.key), js_error);
        }
      }
    }
    heads.push_back(std::move(head));
  }
  js.reset();
  natsConnection_Close(connection.get());
  return heads;
}

}  // namespace

Result<std::vector<PartitionHead>> QueryBrokerHeads(const config::PipelineConfig& config) {
  if (config.kafka) {
    return KafkaHeads(config);
  }
  if (config.jetstream) {
    return JetStreamHeads(config);
  }
  return InvalidArgument("pipeline {} has no source", config.id);
}

Result<std::map<std::string, PartitionLease>> QueryLeases(const config::PipelineConfig& c) {
  std::map<std::string, PartitionLease> out;
  if (!c.jetstream || c.jetstream->partition_count == 0) {
    return out;
  }
  FERRY_ASSIGN_OR_RETURN(jetstream::JetStreamOptions o, JetStreamOptionsFor(c));
  jetstream::LeaseOptions lo = LeaseOptionsFor(c, o);
  FERRY_ASSIGN_OR_RETURN(jetstream::NatsConnectionPtr connection,
                         jetstream::ConnectNats(o.connection));
  FERRY_ASSIGN_OR_RETURN(jetstream::JsCtxPtr js,
                         jetstream::OpenJetStream(connection.get(), o.connection.api_timeout_ms));
  FERRY_ASSIGN_OR_RETURN(
      jetstream::LeaseListing listing,
      jetstream::ReadLeases(js.get(), lo.bucket, jetstream::LeaseScope(lo.pipeline, lo.stream),
                            lo.partitions));
  for (const jetstream::LeaseView& v : listing.leases) {
    out[jetstream::PartitionKey(o.stream, o.filters[static_cast<size_t>(v.partition)])] =
        PartitionLease{.owner = v.owner,
                       .taken_unix_ms = v.taken_unix_ms,
                       .renewed_unix_ms = v.renewed_unix_ms};
  }
  return out;
}

}  // namespace ferry::app

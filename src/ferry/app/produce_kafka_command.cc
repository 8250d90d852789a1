#include "ferry/app/produce_kafka_command.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "ferry/app/logging.h"
#include "ferry/app/message_template.h"
#include "ferry/base/clock.h"
#include "ferry/base/log.h"
#include "ferry/source/kafka/kafka_conf.h"
#include "ferry/source/kafka/kafka_handles.h"

namespace ferry::app {
namespace {

using source::kafka::ConfPtr;
using source::kafka::ErrorPtr;
using source::kafka::KafkaProperties;
using source::kafka::KafkaPtr;
using source::kafka::TopicPtr;

struct ProduceKafkaOptions {
  std::string brokers;
  std::string topic;
  std::string value_template;
  std::string key_template;
  // Messages from a file instead of templates, one a line: KEY<TAB>VALUE ("" for stdin).
  std::string lines;
  bool template_given = false;  // --template "" is a valid template (empty messages)
  int64_t count = 1;
  int64_t start = 1;
  double rate = 0;
  int32_t partition = -1;
  std::vector<std::string> properties;  // key=value
  int timeout_s = 120;
};

struct Deliveries {
  int64_t delivered = 0;
  int64_t failed = 0;
  std::string first_error;
};

void OnDelivery(rd_kafka_t* /*rk*/, const rd_kafka_message_t* m, void* opaque) {
  auto* d = static_cast<Deliveries*>(opaque);
  if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    ++d->delivered;
    return;
  }
  if (d->failed++ == 0) {
    d->first_error = rd_kafka_err2str(m->err);
  }
}

Result<KafkaProperties> Properties(const ProduceKafkaOptions& o) {
  KafkaProperties p = {{"bootstrap.servers", o.brokers},
                       {"client.id", "ferry-produce"},
                       {"enable.idempotence", "true"},
                       {"linger.ms", "5"}};
  for (const std::string& kv : o.properties) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgument("-X {}: expected key=value", kv);
    }
    p.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return p;
}

// The topic's partition count from metadata; retried until `deadline_us` because a topic the
// broker auto-creates on this request may briefly have no leader.
Result<int32_t> PartitionCount(rd_kafka_t* rk, const std::string& topic, int64_t deadline_us) {
  TopicPtr handle(rd_kafka_topic_new(rk, topic.c_str(), nullptr));
  Status last = Unavailable("no metadata for topic '{}'", topic);
  while (MonotonicMicros() < deadline_us) {
    const rd_kafka_metadata_t* md = nullptr;
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, handle.get(), &md, 5000);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      int32_t count = 0;
      rd_kafka_resp_err_t topic_err = RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
      if (md->topic_cnt == 1) {
        count = md->topics[0].partition_cnt;
        topic_err = md->topics[0].err;
      }
      rd_kafka_metadata_destroy(md);
      if (topic_err == RD_KAFKA_RESP_ERR_NO_ERROR && count > 0) {
        return count;
      }
      err = topic_err;
    }
    last = source::kafka::KafkaErrorStatus(err, fmt::format("metadata of topic '{}'", topic));
    rd_kafka_poll(rk, 200);
  }
  return last;
}

// Sends one message, waiting while librdkafka's queue is full. rd_kafka_produceva rather than
// the rd_kafka_producev macros, which expand to GNU statement expressions.
rd_kafka_resp_err_t Send(rd_kafka_t* rk, const std::string& topic, int32_t partition,
                         const std::string& value, const std::string* key) {
  rd_kafka_vu_t vus[5] = {};
  vus[0].vtype = RD_KAFKA_VTYPE_TOPIC;
  vus[0].u.cstr = topic.c_str();
  vus[1].vtype = RD_KAFKA_VTYPE_PARTITION;
  vus[1].u.i32 = partition;
  vus[2].vtype = RD_KAFKA_VTYPE_VALUE;
  vus[2].u.mem.ptr = const_cast<char*>(value.data());
  vus[2].u.mem.size = value.size();
  vus[3].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
  vus[3].u.i = RD_KAFKA_MSG_F_COPY;
  size_t count = 4;
  if (key != nullptr) {
    vus[4].vtype = RD_KAFKA_VTYPE_KEY;
    vus[4].u.mem.ptr = const_cast<char*>(key->data());
    vus[4].u.mem.size = key->size();
    count = 5;
  }
  while (true) {
    ErrorPtr error(rd_kafka_produceva(rk, vus, count));
    rd_kafka_resp_err_t err =
        error == nullptr ? RD_KAFKA_RESP_ERR_NO_ERROR : rd_kafka_error_code(error.get());
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      return err;
    }
    rd_kafka_poll(rk, 10);
  }
}

// Values of -X properties that hold credentials, redacted from every log line.
std::vector<std::string> SecretValues(const std::vector<std::string>& properties) {
  std::vector<std::string> secrets;
  for (const std::string& kv : properties) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq + 1 == kv.size()) {
      continue;
    }
    std::string_view key(kv.data(), eq);
    if (key.find("password") != std::string_view::npos ||
        key.find("secret") != std::string_view::npos ||
        key.find("oauthbearer.config") != std::string_view::npos ||
        key.find("key.pem") != std::string_view::npos) {
      secrets.push_back(kv.substr(eq + 1));
    }
  }
  return secrets;
}

int Fail(const Status& st) {
  std::fprintf(stderr, "ferry produce kafka: %s\n", st.ToString().c_str());
  return st.code() == StatusCode::kInvalidArgument ? 2 : 1;
}

// The messages of --lines: "KEY<TAB>VALUE" per line; a line without a tab is a key alone, and an
// empty VALUE is an empty message (a tombstone to a compacted topic and to an upsert pipeline).
// An empty KEY sends no key.
struct LineMessages {
  std::vector<std::string> keys;
  std::vector<std::string> values;
};

Result<LineMessages> ReadLines(const std::string& path) {
  std::ifstream file;
  if (path != "-") {
    file.open(path);
    if (!file) {
      return InvalidArgument("--lines {}: cannot open", path);
    }
  }
  std::istream& in = path == "-" ? std::cin : file;
  LineMessages out;
  std::string line;
  while (std::getline(in, line)) {
    size_t tab = line.find('\t');
    out.keys.push_back(line.substr(0, tab));
    out.values.push_back(tab == std::string::npos ? std::string() : line.substr(tab + 1));
  }
  return out;
}

int RunProduceKafka(ProduceKafkaOptions o) {
  if (Status st = SetupLogging(LogOptions{.secrets = SecretValues(o.properties)}); !st.ok()) {
    return Fail(st);
  }
  std::optional<LineMessages> lines;
  if (!o.lines.empty()) {
    if (o.template_given || !o.key_template.empty()) {
      return Fail(InvalidArgument("--lines goes without --template and --key"));
    }
    Result<LineMessages> read = ReadLines(o.lines);
    if (!read.ok()) {
      return Fail(read.status());
    }
    lines = std::move(*read);
    o.count = static_cast<int64_t>(lines->keys.size());
  } else if (!o.template_given) {
    return Fail(InvalidArgument("--template (or --lines FILE) is required"));
  }
  Result<MessageTemplate> value = MessageTemplate::Parse(o.value_template);
  if (!value.ok()) {
    return Fail(value.status().WithContext("--template"));
  }
  std::optional<MessageTemplate> key;
  if (!o.key_template.empty()) {
    Result<MessageTemplate> k = MessageTemplate::Parse(o.key_template);
    if (!k.ok()) {
      return Fail(k.status().WithContext("--key"));
    }
    key = std::move(k).value();
  }
  Deliveries deliveries;
  Result<KafkaProperties> props = Properties(o);
  if (!props.ok()) {
    return Fail(props.status());
  }
  Result<ConfPtr> conf = source::kafka::NewConf(*props);
  if (!conf.ok()) {
    return Fail(conf.status());
  }
  rd_kafka_conf_set_dr_msg_cb(conf->get(), &OnDelivery);
  rd_kafka_conf_set_opaque(conf->get(), &deliveries);
  Result<KafkaPtr> rk = source::kafka::NewClient(RD_KAFKA_PRODUCER, std::move(conf).value());
  if (!rk.ok()) {
    return Fail(rk.status());
  }
  const int64_t t0 = MonotonicMicros();
  const int64_t deadline_us = t0 + int64_t{o.timeout_s} * 1'000'000;
  // Without a key, librdkafka's sticky partitioner would fill one partition at a time: spread
  // the messages round-robin ourselves (FIELD-NOTES.md).
  int32_t partitions = 0;
  if (o.partition < 0 && !key && !lines) {
    Result<int32_t> n = PartitionCount(rk->get(), o.topic, deadline_us);
    if (!n.ok()) {
      return Fail(n.status());
    }
    partitions = *n;
  }
  std::string value_buf;
  std::string key_buf;
  int64_t refused = 0;
  for (int64_t i = 0; i < o.count; ++i) {
    if (o.rate > 0) {
      const int64_t due = t0 + static_cast<int64_t>(static_cast<double>(i) * 1e6 / o.rate);
      const int64_t wait_us = due - MonotonicMicros();
      if (wait_us >= 1000) {
        rd_kafka_poll(rk->get(), static_cast<int>(wait_us / 1000));
      }
    }
    const int64_t seq = o.start + i;
    bool keyed = key.has_value();
    if (lines) {
      value_buf = lines->values[static_cast<size_t>(i)];
      key_buf = lines->keys[static_cast<size_t>(i)];
      keyed = !key_buf.empty();
    } else {
      value->Render(seq, &value_buf);
      if (key) {
        key->Render(seq, &key_buf);
      }
    }
    const int32_t partition =
        o.partition >= 0
            ? o.partition
            : (partitions > 0 ? static_cast<int32_t>(i % partitions) : RD_KAFKA_PARTITION_UA);
    rd_kafka_resp_err_t err =
        Send(rk->get(), o.topic, partition, value_buf, keyed ? &key_buf : nullptr);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (refused++ == 0) {
        FERRY_LOG_ERROR("produce: message {} refused: {}", seq, rd_kafka_err2str(err));
      }
    }
    if ((i & 255) == 0) {
      rd_kafka_poll(rk->get(), 0);
    }
  }
  // --timeout bounds the wait for deliveries after the last send: a rate-limited run may last
  // longer than the timeout (it once left the last messages of a 200 s run unsent).
  const int64_t flush_deadline_us = MonotonicMicros() + int64_t{o.timeout_s} * 1'000'000;
  while (rd_kafka_outq_len(rk->get()) > 0 && MonotonicMicros() < flush_deadline_us) {
    rd_kafka_flush(rk->get(), 1000);
  }
  const int64_t undelivered = o.count - deliveries.delivered - deliveries.failed - refused;
  const double seconds = static_cast<double>(MonotonicMicros() - t0) / 1e6;
  std::fprintf(stderr,
               "ferry produce kafka: %lld of %lld messages delivered to '%s' in %.2f s "
               "(%.0f msg/s); %lld failed, %lld refused, %lld undelivered%s%s\n",
               static_cast<long long>(deliveries.delivered), static_cast<long long>(o.count),
               o.topic.c_str(), seconds,
               seconds > 0 ? static_cast<double>(deliveries.delivered) / seconds : 0.0,
               static_cast<long long>(deliveries.failed), static_cast<long long>(refused),
               static_cast<long long>(undelivered), deliveries.failed > 0 ? "; first error: " : "",
               deliveries.first_error.c_str());
  return deliveries.delivered == o.count ? 0 : 1;
}

CLI::App* ProduceCommand(CLI::App& app) {
  for (CLI::App* sub :
       app.get_subcommands([](CLI::App* s) { return s->get_name() == "produce"; })) {
    return sub;
  }
  CLI::App* produce = app.add_subcommand("produce", "Publish generated messages (demos, tests)");
  produce->require_subcommand(1);
  return produce;
}

}  // namespace

void RegisterProduceKafkaCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<ProduceKafkaOptions>();
  CLI::App* cmd = ProduceCommand(app)->add_subcommand(
      "kafka", "Publish generated messages to a Kafka topic (idempotent producer)");
  cmd->footer(
      "Template placeholders: {{seq}} or {{Count}} (the sequence number), {{now:PATTERN}} (UTC "
      "time, Spark/Java DateTimeFormatter letters y M d H h m s S a E Z X z; {{now}} is "
      "ISO-8601), {{rand:N}} (N random letters), {{uuid}}, {{cycle:A,B,...}} (the values in "
      "turn).\nExample: --template "
      "'{\"id\": {{seq}}, \"dateTime\": \"{{now:MM/dd/yyyy - HH:mm:ss Z}}\", \"payload\": "
      "\"test #{{seq}}\"}'\nWithout --key or --partition, messages go round-robin over the "
      "topic's partitions. Exit status: 0 when every message was delivered, 1 otherwise, 2 for "
      "bad arguments.");
  cmd->add_option("--brokers", o->brokers, "bootstrap.servers")->required();
  cmd->add_option("--topic", o->topic, "Topic")->required();
  cmd->add_option("--template", o->value_template, "Message value template");
  cmd->add_option("--lines", o->lines,
                  "Send the messages of FILE ('-' for stdin) instead, one a line: KEY<TAB>VALUE "
                  "(keyed by KEY; an empty VALUE is an empty message, a tombstone; no tab: an "
                  "empty message); --count and --start do not apply");
  cmd->add_option("--count", o->count, "Number of messages")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--start", o->start, "First sequence number")->capture_default_str();
  cmd->add_option("--rate", o->rate, "Messages per second (0 = as fast as possible)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--key", o->key_template, "Message key template (partitions by key hash)");
  cmd->add_option("--partition", o->partition, "Send every message to this partition")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-X,--property", o->properties,
                  "librdkafka producer property key=value (repeatable)");
  cmd->add_option("--timeout", o->timeout_s, "Seconds to wait for deliveries")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->callback([o, exit_code, cmd] {
    ProduceKafkaOptions run = *o;  // a copy: --lines sets the count
    run.template_given = cmd->get_option("--template")->count() > 0;
    *exit_code = RunProduceKafka(run);
  });
}

}  // namespace ferry::app

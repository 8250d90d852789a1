// The source readers of config_internal.h: [pipeline.kafka] and [pipeline.jetstream].
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

#include "ferry/config/config_internal.h"
#include "ferry/config/time_parse.h"

namespace ferry::config::internal {

namespace {

bool IsSecretProperty(std::string_view name) {
  for (std::string_view marker :
       {"password", "secret", "jaas", "token", "key.pem", "credentials"}) {
    if (name.find(marker) != std::string_view::npos) {
      return true;
    }
  }
  return false;
}

// The secret part of a URL's userinfo: the password of "scheme://user:password@host", the
// token of "scheme://token@host" (how nats.c reads it); empty when the URL has none.
std::string UrlSecret(std::string_view url) {
  size_t scheme = url.find("://");
  size_t start = scheme == std::string_view::npos ? 0 : scheme + 3;
  size_t end = url.find_first_of("/?#", start);
  std::string_view authority = url.substr(start, end == std::string_view::npos ? end : end - start);
  size_t at = authority.rfind('@');
  if (at == std::string_view::npos) {
    return "";
  }
  std::string_view userinfo = authority.substr(0, at);
  size_t colon = userinfo.find(':');
  return std::string(colon == std::string_view::npos ? userinfo : userinfo.substr(colon + 1));
}

}  // namespace

Status ReadKafka(TomlTable& t, const std::string& pipeline_id, KafkaConfig* k) {
  k->location = t.Location("");
  FERRY_ASSIGN_OR_RETURN(
      k->brokers,
      t.RequiredString("brokers", "missing key 'brokers' (e.g. brokers = \"localhost:9092\")"));
  FERRY_ASSIGN_OR_RETURN(auto topics, t.StringList("topics"));
  FERRY_ASSIGN_OR_RETURN(auto pattern, t.String("topic_pattern"));
  if (topics) {
    for (std::string& topic : *topics) {
      if (!topic.empty() && topic[0] == '^') {
        k->topic_pattern = topic;  // librdkafka's convention: a leading ^ is a regex
      } else {
        k->topics.push_back(topic);
      }
    }
  }
  if (pattern) {
    if (!k->topic_pattern.empty()) {
      return t.Error("topic_pattern", "give one regex, in topics or in topic_pattern");
    }
    k->topic_pattern = (*pattern)[0] == '^' ? *pattern : "^" + *pattern;
  }
  if (k->topics.empty() && k->topic_pattern.empty()) {
    return t.Error("", "missing key 'topics' (a list of names, or a regex starting with ^)");
  }
  if (!k->topics.empty() && !k->topic_pattern.empty()) {
    return t.Error("topics", "give either topic names or one regex, not both");
  }
  FERRY_ASSIGN_OR_RETURN(auto group, t.String("group_id"));
  k->group_id = group.value_or("ferry-" + pipeline_id);
  FERRY_ASSIGN_OR_RETURN(auto assignment,
                         t.OneOf("assignment", {"group", "manual"}, "expected group or manual"));
  k->manual_assignment = assignment.value_or("group") == "manual";

  FERRY_ASSIGN_OR_RETURN(auto start_offsets, t.StringMap("start_offsets"));
  if (start_offsets) {
    for (const auto& [key, value] : *start_offsets) {
      int64_t offset = 0;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), offset);
      size_t slash = key.rfind('/');
      if (ec != std::errc() || ptr != value.data() + value.size() || offset < 0 ||
          slash == std::string::npos || slash == 0 || slash + 1 == key.size()) {
        return t.Error(
            "start_offsets",
            fmt::format("entry \"{}\" = {}: expected \"topic/partition\" = offset", key, value));
      }
      k->start_offsets[key] = offset;
    }
  }
  FERRY_ASSIGN_OR_RETURN(auto start, t.String("start"));
  FERRY_ASSIGN_OR_RETURN(auto start_ts, t.String("start_timestamp"));
  std::string s = start.value_or(start_offsets ? "offsets" : start_ts ? "timestamp" : "earliest");
  if (s == "earliest") {
    k->start = KafkaConfig::Start::kEarliest;
  } else if (s == "latest") {
    k->start = KafkaConfig::Start::kLatest;
  } else if (s == "group") {
    k->start = KafkaConfig::Start::kGroup;
  } else if (s == "offsets") {
    k->start = KafkaConfig::Start::kOffsets;
    if (!start_offsets) {
      return t.Error("start", "start = \"offsets\" needs a start_offsets table");
    }
  } else if (s == "timestamp") {
    k->start = KafkaConfig::Start::kTimestamp;
    if (!start_ts) {
      return t.Error("start",
                     "start = \"timestamp\" needs start_timestamp = \"2026-11-30T00:00:00Z\"");
    }
    Result<int64_t> ms = ParseTimestampMillis(*start_ts);
    if (!ms.ok()) {
      return t.Error("start_timestamp", ms.status().message());
    }
    k->start_timestamp_ms = *ms;
  } else {
    return t.Error("start", fmt::format("unknown start policy \"{}\" (earliest, latest, group, "
                                        "offsets, timestamp)",
                                        s));
  }
  FERRY_ASSIGN_OR_RETURN(auto fallback, t.OneOf("group_fallback", {"earliest", "latest"},
                                                "expected \"earliest\" or \"latest\""));
  if (fallback) {
    k->group_fallback =
        *fallback == "latest" ? KafkaConfig::Start::kLatest : KafkaConfig::Start::kEarliest;
  }
  FERRY_ASSIGN_OR_RETURN(auto rate, t.Number("max_rate_per_partition"));
  if (rate) {
    if (*rate < 0) {
      return t.Error("max_rate_per_partition", "must be >= 0 (0 = unlimited)");
    }
    k->max_rate_per_partition = *rate;
  }
  FERRY_ASSIGN_OR_RETURN(auto wakeup, t.Bool("fetch_wakeup"));
  if (wakeup) {
    k->fetch_wakeup = *wakeup;
  }
  FERRY_ASSIGN_OR_RETURN(auto props, t.StringMap("properties", &IsSecretProperty));
  if (props) {
    for (const auto& [name, value] : *props) {
      // isolation.level passes (only "read_uncommitted" differs from ferry's value, and the
      // source options check it): docs/kafka.md says what it costs.
      if (name == "enable.auto.commit" || name == "enable.auto.offset.store" ||
          name == "group.id" || name == "bootstrap.servers") {
        return t.Error("properties", fmt::format("'{}' is set by ferry (exactly-once needs its "
                                                 "value); remove it",
                                                 name));
      }
    }
    k->properties = std::move(*props);
  }
  return t.Finish();
}

namespace {

constexpr std::string_view kPartitionToken = "{partition}";
constexpr int64_t kMaxPartitions = 4096;

// `partitions = { subject = "orders.{partition}.>", count = 16 }`, `lease_ttl`, `lease_bucket`.
Status ReadPartitions(TomlTable& t, bool has_subjects, JetStreamConfig* j) {
  FERRY_ASSIGN_OR_RETURN(auto ttl, t.DurationValue("lease_ttl"));
  FERRY_ASSIGN_OR_RETURN(auto bucket, t.String("lease_bucket"));
  FERRY_ASSIGN_OR_RETURN(std::optional<TomlTable> p, t.Table("partitions"));
  if (!p) {
    if (ttl || bucket) {
      return t.Error(ttl ? "lease_ttl" : "lease_bucket",
                     "leases are for elastic mode only: add partitions = { subject = "
                     "\"orders.{partition}.>\", count = N }");
    }
    return Status::OK();
  }
  if (has_subjects) {
    return t.Error(
        "partitions",
        "give either 'subjects' (fixed filters) or 'partitions' (elastic mode), not both");
  }
  FERRY_ASSIGN_OR_RETURN(
      std::string subject,
      p->RequiredString("subject", "missing key 'subject' (e.g. \"orders.{partition}.>\")"));
  FERRY_ASSIGN_OR_RETURN(auto count, p->Int("count"));
  if (!count) {
    return p->Error("", "missing key 'count' (the number of partitions, e.g. count = 16)");
  }
  if (*count < 1 || *count > kMaxPartitions) {
    return p->Error("count", fmt::format("must be between 1 and {}", kMaxPartitions));
  }
  size_t at = subject.find(kPartitionToken);
  bool whole_token = at != std::string::npos && (at == 0 || subject[at - 1] == '.') &&
                     (at + kPartitionToken.size() == subject.size() ||
                      subject[at + kPartitionToken.size()] == '.');
  if (!whole_token || subject.find(kPartitionToken, at + 1) != std::string::npos) {
    return p->Error("subject",
                    fmt::format("\"{}\" must hold the token {} exactly once, as a whole subject "
                                "token (e.g. \"orders.{}.>\")",
                                subject, kPartitionToken, kPartitionToken));
  }
  FERRY_RETURN_IF_ERROR(p->Finish());
  if (ttl) {
    if (ttl->count() < 1000) {
      return t.Error("lease_ttl", "must be at least 1s");
    }
    j->lease_ttl = *ttl;
  }
  if (bucket) {
    bool valid = !bucket->empty() && std::all_of(bucket->begin(), bucket->end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
    });
    if (!valid) {
      return t.Error("lease_bucket", fmt::format("\"{}\" is not a key-value bucket name "
                                                 "(letters, digits, '_' and '-')",
                                                 *bucket));
    }
    j->lease_bucket = *bucket;
  }
  j->partition_subject = subject;
  j->partition_count = *count;
  j->subjects.clear();
  for (int64_t i = 0; i < *count; ++i) {
    std::string filter = subject;
    filter.replace(at, kPartitionToken.size(), std::to_string(i));
    j->subjects.push_back(std::move(filter));
  }
  return Status::OK();
}

}  // namespace

Status ReadJetStream(TomlTable& t, JetStreamConfig* j) {
  j->location = t.Location("");
  FERRY_ASSIGN_OR_RETURN(auto servers, t.StringList("servers"));
  if (!servers || servers->empty()) {
    return t.Error("", "missing key 'servers' (e.g. servers = \"nats://127.0.0.1:4222\")");
  }
  for (const std::string& s : *servers) {
    // Accept "nats://a:1,nats://b:2" like the NATS CLI.
    size_t start = 0;
    while (start <= s.size()) {
      size_t comma = s.find(',', start);
      std::string one =
          s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!one.empty()) {
        // Credentials in a URL are secrets like `password` and `token` (redacted in logs).
        t.AddSecret(UrlSecret(one));
        j->servers.push_back(one);
      }
      if (comma == std::string::npos) {
        break;
      }
      start = comma + 1;
    }
  }
  FERRY_ASSIGN_OR_RETURN(j->stream, t.RequiredString("stream", "missing key 'stream'"));
  FERRY_ASSIGN_OR_RETURN(auto subjects, t.StringList("subjects"));
  FERRY_RETURN_IF_ERROR(ReadPartitions(t, subjects.has_value(), j));
  if (j->partition_count > 0) {
    subjects = j->subjects;
  }
  if (!subjects || subjects->empty()) {
    return t.Error("", "missing key 'subjects' (one or more subject filters) or 'partitions'");
  }
  std::set<std::string> seen;
  for (const std::string& s : *subjects) {
    if (s.empty() || !seen.insert(s).second) {
      return t.Error("subjects", fmt::format("subject filter \"{}\" is empty or repeated", s));
    }
  }
  j->subjects = *subjects;

  FERRY_ASSIGN_OR_RETURN(auto start_seq, t.Int("start_sequence"));
  FERRY_ASSIGN_OR_RETURN(auto start_time, t.String("start_time"));
  FERRY_ASSIGN_OR_RETURN(auto start, t.String("start"));
  std::string s = start.value_or(start_seq ? "sequence" : start_time ? "time" : "all");
  if (s == "all") {
    j->start = JetStreamConfig::Start::kAll;
  } else if (s == "new") {
    j->start = JetStreamConfig::Start::kNew;
  } else if (s == "sequence") {
    if (!start_seq || *start_seq < 1) {
      return t.Error("start", "start = \"sequence\" needs start_sequence = N (N >= 1)");
    }
    j->start = JetStreamConfig::Start::kSequence;
    j->start_sequence = *start_seq;
  } else if (s == "time") {
    if (!start_time) {
      return t.Error("start", "start = \"time\" needs start_time = \"2026-11-30T00:00:00Z\"");
    }
    Result<int64_t> ms = ParseTimestampMillis(*start_time);
    if (!ms.ok()) {
      return t.Error("start_time", ms.status().message());
    }
    j->start = JetStreamConfig::Start::kTime;
    j->start_time_ms = *ms;
  } else {
    return t.Error("start",
                   fmt::format("unknown start policy \"{}\" (all, new, sequence, time)", s));
  }
  FERRY_ASSIGN_OR_RETURN(auto user, t.String("user"));
  FERRY_ASSIGN_OR_RETURN(auto password, t.String("password", /*secret=*/true));
  FERRY_ASSIGN_OR_RETURN(auto token, t.String("token", /*secret=*/true));
  FERRY_ASSIGN_OR_RETURN(auto nkey_public, t.String("nkey"));
  FERRY_ASSIGN_OR_RETURN(auto nkey, t.String("nkey_seed_file"));
  FERRY_ASSIGN_OR_RETURN(auto tls_hostname, t.String("tls_hostname"));
  FERRY_ASSIGN_OR_RETURN(auto creds, t.String("creds_file"));
  FERRY_ASSIGN_OR_RETURN(auto ca, t.String("tls_ca"));
  FERRY_ASSIGN_OR_RETURN(auto cert, t.String("tls_cert"));
  FERRY_ASSIGN_OR_RETURN(auto key, t.String("tls_key"));
  Set(user, &j->user);
  Set(password, &j->password);
  Set(token, &j->token);
  Set(nkey_public, &j->nkey);
  Set(nkey, &j->nkey_seed_file);
  Set(tls_hostname, &j->tls_hostname);
  if (j->nkey.empty() != j->nkey_seed_file.empty()) {
    return t.Error(j->nkey.empty() ? "nkey_seed_file" : "nkey",
                   "nkey (the public key) and nkey_seed_file go together");
  }
  Set(creds, &j->creds_file);
  Set(ca, &j->tls_ca);
  Set(cert, &j->tls_cert);
  Set(key, &j->tls_key);
  if (!j->password.empty() && j->user.empty()) {
    return t.Error("password", "a password needs a user");
  }
  if (j->tls_cert.empty() != j->tls_key.empty()) {
    return t.Error(j->tls_cert.empty() ? "tls_key" : "tls_cert",
                   "tls_cert and tls_key go together");
  }
  FERRY_ASSIGN_OR_RETURN(auto batch, t.Int("batch_size"));
  if (batch) {
    if (*batch < 1 || *batch > 1'000'000) {
      return t.Error("batch_size", "must be between 1 and 1000000");
    }
    j->batch_size = *batch;
  }
  FERRY_ASSIGN_OR_RETURN(auto connect_timeout, t.DurationValue("connect_timeout"));
  FERRY_ASSIGN_OR_RETURN(auto reconnect_wait, t.DurationValue("reconnect_wait"));
  FERRY_ASSIGN_OR_RETURN(auto max_reconnects, t.Int("max_reconnects"));
  FERRY_ASSIGN_OR_RETURN(auto heartbeat, t.DurationValue("heartbeat"));
  Set(heartbeat, &j->heartbeat);
  Set(connect_timeout, &j->connect_timeout);
  Set(reconnect_wait, &j->reconnect_wait);
  Set(max_reconnects, &j->max_reconnects);
  return t.Finish();
}

}  // namespace ferry::config::internal

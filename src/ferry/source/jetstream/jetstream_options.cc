#include "ferry/source/jetstream/jetstream_options.h"

#include <charconv>
#include <ctime>

#include "ferry/source/jetstream/subject_filter.h"

namespace ferry::source::jetstream {
namespace {

bool ParseDigits(std::string_view text, int64_t* out) {
  if (text.empty()) {
    return false;
  }
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

bool ParseFixed(std::string_view text, size_t pos, size_t len, int64_t* out) {
  return pos + len <= text.size() && ParseDigits(text.substr(pos, len), out);
}

// RFC 3339: YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM). Returns nanoseconds since epoch.
Result<int64_t> ParseRfc3339(std::string_view text) {
  auto bad = [&] {
    return InvalidArgument("start time '{}' is not RFC 3339 (e.g. 2024-05-01T12:00:00Z)", text);
  };
  int64_t year, month, day, hour, minute, second;
  if (text.size() < 20 || text[4] != '-' || text[7] != '-' ||
      (text[10] != 'T' && text[10] != 't' && text[10] != ' ') || text[13] != ':' ||
      text[16] != ':' || !ParseFixed(text, 0, 4, &year) || !ParseFixed(text, 5, 2, &month) ||
      !ParseFixed(text, 8, 2, &day) || !ParseFixed(text, 11, 2, &hour) ||
      !ParseFixed(text, 14, 2, &minute) || !ParseFixed(text, 17, 2, &second)) {
    return bad();
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return bad();
  }
  size_t pos = 19;
  int64_t fraction_ns = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    int64_t scale = 100'000'000;
    size_t digits = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      fraction_ns += (text[pos] - '0') * scale;
      scale /= 10;
      ++pos;
      ++digits;
    }
    if (digits == 0) {
      return bad();
    }
  }
  int64_t offset_s = 0;
  std::string_view zone = text.substr(pos);
  if (zone == "Z" || zone == "z") {
    offset_s = 0;
  } else if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':') {
    int64_t oh, om;
    if (!ParseFixed(zone, 1, 2, &oh) || !ParseFixed(zone, 4, 2, &om) || oh > 23 || om > 59) {
      return bad();
    }
    offset_s = (oh * 3600 + om * 60) * (zone[0] == '+' ? 1 : -1);
  } else {
    return bad();
  }
  std::tm tm{};
  tm.tm_year = static_cast<int>(year - 1900);
  tm.tm_mon = static_cast<int>(month - 1);
  tm.tm_mday = static_cast<int>(day);
  tm.tm_hour = static_cast<int>(hour);
  tm.tm_min = static_cast<int>(minute);
  tm.tm_sec = static_cast<int>(second);
  int64_t seconds = static_cast<int64_t>(timegm(&tm)) - offset_s;
  if (seconds < 0) {
    return InvalidArgument("start time '{}' is before 1970", text);
  }
  return seconds * 1'000'000'000 + fraction_ns;
}

}  // namespace

Result<StartPolicy> StartPolicy::Parse(std::string_view text) {
  StartPolicy policy;
  if (text == "all") {
    policy.kind = Kind::kAll;
    return policy;
  }
  if (text == "new") {
    policy.kind = Kind::kNew;
    return policy;
  }
  std::string_view digits = text.starts_with("seq:") ? text.substr(4) : text;
  int64_t sequence = 0;
  if (ParseDigits(digits, &sequence)) {
    if (sequence < 1) {
      return InvalidArgument("start sequence must be >= 1, got '{}'", text);
    }
    policy.kind = Kind::kSequence;
    policy.sequence = static_cast<uint64_t>(sequence);
    return policy;
  }
  if (text.starts_with("seq:")) {
    return InvalidArgument("start '{}': expected seq:<stream sequence>", text);
  }
  std::string_view when = text.starts_with("time:") ? text.substr(5) : text;
  if (when.size() >= 4 && when[0] >= '0' && when[0] <= '9') {
    FERRY_ASSIGN_OR_RETURN(policy.time_ns, ParseRfc3339(when));
    policy.kind = Kind::kTime;
    return policy;
  }
  return InvalidArgument("start '{}' is not one of: all, new, seq:<N>, time:<RFC 3339 timestamp>",
                         text);
}

std::string StartPolicy::ToString() const {
  switch (kind) {
    case Kind::kAll:
      return "all";
    case Kind::kNew:
      return "new";
    case Kind::kSequence:
      return fmt::format("seq:{}", sequence);
    case Kind::kTime:
      return fmt::format("time:{}ns", time_ns);
  }
  return "?";
}

Status NatsConnectionOptions::Validate() const {
  if (servers.empty()) {
    return InvalidArgument("nats: no server URL given");
  }
  for (const std::string& url : servers) {
    if (url.empty() || url.find(' ') != std::string::npos) {
      return InvalidArgument("nats: bad server URL '{}'", url);
    }
  }
  int methods = (!auth.user.empty() ? 1 : 0) + (!auth.token.empty() ? 1 : 0) +
                (!auth.nkey_seed_file.empty() ? 1 : 0) + (!auth.creds_file.empty() ? 1 : 0);
  if (methods > 1) {
    return InvalidArgument(
        "nats: choose one of user/password, token, nkey_seed_file and creds_file");
  }
  if (auth.user.empty() && !auth.password.empty()) {
    return InvalidArgument("nats: password given without user");
  }
  if (auth.nkey_seed_file.empty() != auth.nkey.empty()) {
    return InvalidArgument(
        "nats: nkey (the public user key) and nkey_seed_file must be given together");
  }
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    return InvalidArgument("nats: tls cert_file and key_file must be given together");
  }
  if (connect_timeout_ms <= 0 || reconnect_wait_ms < 0 || ping_interval_ms <= 0 ||
      api_timeout_ms <= 0 || max_pings_out <= 0 || max_reconnect < -1) {
    return InvalidArgument("nats: timeouts and intervals must be positive");
  }
  return Status::OK();
}

Status JetStreamOptions::Validate() const {
  FERRY_RETURN_IF_ERROR(connection.Validate());
  if (stream.empty() || stream.find_first_of(" \t.*>") != std::string::npos) {
    return InvalidArgument("jetstream: bad stream name '{}'", stream);
  }
  if (filters.empty()) {
    return InvalidArgument("jetstream: stream '{}': no subject filter given", stream);
  }
  for (size_t i = 0; i < filters.size(); ++i) {
    FERRY_RETURN_IF_ERROR(
        ValidateSubjectFilter(filters[i]).WithContext("jetstream stream '{}'", stream));
    for (size_t j = 0; j < i; ++j) {
      if (SubjectFiltersOverlap(filters[i], filters[j])) {
        return InvalidArgument(
            "jetstream: stream '{}': subject filters '{}' and '{}' overlap (a message matching "
            "both would be ingested twice)",
            stream, filters[j], filters[i]);
      }
    }
  }
  if (batch_size == 0) {
    return InvalidArgument("jetstream: batch_size must be at least 1");
  }
  if (heartbeat_ms <= 0) {
    return InvalidArgument("jetstream: heartbeat must be positive");
  }
  return Status::OK();
}

std::string PartitionKey(std::string_view stream, std::string_view filter) {
  return fmt::format("jetstream/{}/{}", stream, filter);
}

}  // namespace ferry::source::jetstream

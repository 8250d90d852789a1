#include "ferry/delta/log_files.h"

#include <fmt/format.h>

#include <charconv>

namespace ferry::delta {
namespace {

bool ParseDigits(std::string_view s, size_t width, int64_t* out) {
  if (s.size() != width) {
    return false;
  }
  for (char c : s) {
    if (c < '0' || c > '9') {
      return false;
    }
  }
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc();
}

bool LooksLikeUuid(std::string_view s) {
  if (s.size() != 36) {
    return false;
  }
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (dash ? c != '-' : !hex) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<LogFileName> ParseLogFileName(std::string_view name) {
  size_t slash = name.rfind('/');
  if (slash != std::string_view::npos) {
    name = name.substr(slash + 1);
  }
  LogFileName out;
  if (name.size() < 21 || !ParseDigits(name.substr(0, 20), 20, &out.version) || name[20] != '.') {
    return std::nullopt;
  }
  std::string_view rest = name.substr(21);
  if (rest == "json") {
    out.kind = LogFileKind::kCommit;
    return out;
  }
  constexpr std::string_view kCheckpoint = "checkpoint.";
  if (rest.substr(0, kCheckpoint.size()) != kCheckpoint) {
    return std::nullopt;
  }
  rest = rest.substr(kCheckpoint.size());
  if (rest == "parquet") {
    out.kind = LogFileKind::kClassicCheckpoint;
    return out;
  }
  // "0000000001.0000000003.parquet"
  int64_t part;
  int64_t parts;
  if (rest.size() == 10 + 1 + 10 + 8 && ParseDigits(rest.substr(0, 10), 10, &part) &&
      rest[10] == '.' && ParseDigits(rest.substr(11, 10), 10, &parts) &&
      rest.substr(21) == ".parquet") {
    if (part < 1 || part > parts || parts > 1000000) {
      return std::nullopt;
    }
    out.kind = LogFileKind::kMultiPartCheckpoint;
    out.part = static_cast<int32_t>(part);
    out.num_parts = static_cast<int32_t>(parts);
    return out;
  }
  // "<uuid>.json" / "<uuid>.parquet"
  size_t dot = rest.rfind('.');
  if (dot != std::string_view::npos && LooksLikeUuid(rest.substr(0, dot))) {
    std::string_view ext = rest.substr(dot + 1);
    if (ext == "json") {
      out.kind = LogFileKind::kV2CheckpointJson;
      return out;
    }
    if (ext == "parquet") {
      out.kind = LogFileKind::kV2CheckpointParquet;
      return out;
    }
  }
  return std::nullopt;
}

std::string PaddedVersion(int64_t version) {
  return fmt::format("{:020}", version);
}

std::string CommitFileName(int64_t version) {
  return PaddedVersion(version) + ".json";
}

std::string ClassicCheckpointFileName(int64_t version) {
  return PaddedVersion(version) + ".checkpoint.parquet";
}

}  // namespace ferry::delta

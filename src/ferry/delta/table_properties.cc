#include "ferry/delta/table_properties.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace ferry::delta {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) {
    s.remove_prefix(1);
  }
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
    s.remove_suffix(1);
  }
  return s;
}

Result<int64_t> ParseInt(const std::string& key, std::string_view text) {
  text = Trim(text);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    return InvalidArgument("table property {}: '{}' is not an integer", key, text);
  }
  return v;
}

Result<bool> ParseBool(const std::string& key, std::string_view text) {
  std::string v = Lower(Trim(text));
  if (v == "true") {
    return true;
  }
  if (v == "false") {
    return false;
  }
  return InvalidArgument("table property {}: '{}' is not true or false", key, text);
}

}  // namespace

Result<int64_t> ParseIntervalMillis(std::string_view text) {
  std::string s = Lower(Trim(text));
  if (s.rfind("interval", 0) == 0) {
    s = std::string(Trim(std::string_view(s).substr(8)));
  }
  size_t space = s.find(' ');
  if (space == std::string::npos) {
    return InvalidArgument("'{}' is not an interval like 'interval 7 days'", text);
  }
  int64_t n = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + space, n);
  if (ec != std::errc() || ptr != s.data() + space || n < 0) {
    return InvalidArgument("'{}' is not an interval like 'interval 7 days'", text);
  }
  std::string unit(Trim(std::string_view(s).substr(space + 1)));
  if (!unit.empty() && unit.back() == 's') {
    unit.pop_back();
  }
  static const std::pair<const char*, int64_t> kUnits[] = {
      {"millisecond", 1}, {"second", 1000},  {"minute", 60000},
      {"hour", 3600000},  {"day", 86400000}, {"week", 7 * 86400000LL},
  };
  for (const auto& [name, millis] : kUnits) {
    if (unit == name) {
      return n * millis;
    }
  }
  return InvalidArgument("'{}': unknown interval unit '{}'", text, unit);
}

Result<TableProperties> ParseTableProperties(const StringMap& configuration) {
  TableProperties p;
  for (const auto& [key, value] : configuration) {
    if (key == "delta.appendOnly") {
      FERRY_ASSIGN_OR_RETURN(p.append_only, ParseBool(key, value));
    } else if (key == "delta.enableChangeDataFeed") {
      FERRY_ASSIGN_OR_RETURN(p.change_data_feed, ParseBool(key, value));
    } else if (key == "delta.checkpointInterval") {
      FERRY_ASSIGN_OR_RETURN(p.checkpoint_interval, ParseInt(key, value));
      if (p.checkpoint_interval <= 0) {
        return InvalidArgument("table property {}: must be positive, not {}", key, value);
      }
    } else if (key == "delta.dataSkippingNumIndexedCols") {
      FERRY_ASSIGN_OR_RETURN(p.data_skipping_num_indexed_cols, ParseInt(key, value));
    } else if (key == "delta.dataSkippingStatsColumns") {
      std::vector<std::string> columns;
      std::string_view rest = value;
      while (!rest.empty()) {
        size_t comma = rest.find(',');
        std::string_view name = Trim(rest.substr(0, comma));
        if (!name.empty()) {
          columns.emplace_back(name);
        }
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      }
      p.data_skipping_stats_columns = std::move(columns);
    } else if (key == "delta.checkpoint.writeStatsAsJson") {
      FERRY_ASSIGN_OR_RETURN(p.checkpoint_write_stats_as_json, ParseBool(key, value));
    } else if (key == "delta.checkpoint.writeStatsAsStruct") {
      FERRY_ASSIGN_OR_RETURN(p.checkpoint_write_stats_as_struct, ParseBool(key, value));
    } else if (key == "delta.parquet.compression.codec") {
      p.compression_codec = Lower(Trim(value));
    } else if (key == "delta.deletedFileRetentionDuration") {
      auto ms = ParseIntervalMillis(value);
      if (!ms.ok()) {
        return ms.status().WithContext("table property {}", key);
      }
      p.deleted_file_retention_ms = *ms;
    } else if (key == "delta.setTransactionRetentionDuration") {
      auto ms = ParseIntervalMillis(value);
      if (!ms.ok()) {
        return ms.status().WithContext("table property {}", key);
      }
      p.set_transaction_retention_ms = *ms;
    }
  }
  return p;
}

}  // namespace ferry::delta

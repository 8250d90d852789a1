// The value syntaxes declared in config.h: ${ENV} interpolation, sizes ("64MB") and durations
// ("1m30s"). TomlTable applies them to string values; they know nothing of TOML.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "ferry/config/config.h"

namespace ferry::config {

Result<std::string> Interpolate(std::string_view text, const EnvLookup& env) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 3, "$${") == 0) {
      out += "${";
      i += 3;
      continue;
    }
    if (text.compare(i, 2, "${") != 0) {
      out += text[i++];
      continue;
    }
    size_t close = text.find('}', i + 2);
    if (close == std::string_view::npos) {
      return InvalidArgument("unterminated ${{ in \"{}\" (write $${{ for a literal ${{)", text);
    }
    std::string_view inner = text.substr(i + 2, close - i - 2);
    std::optional<std::string_view> fallback;
    size_t dash = inner.find(":-");
    if (dash != std::string_view::npos) {
      fallback = inner.substr(dash + 2);
      inner = inner.substr(0, dash);
    }
    if (inner.empty() || !std::all_of(inner.begin(), inner.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
        })) {
      return InvalidArgument("bad environment variable name '${{{}}}'", inner);
    }
    std::optional<std::string> value = env(inner);
    if (value) {
      out += *value;
    } else if (fallback) {
      out += *fallback;
    } else {
      return InvalidArgument(
          "environment variable {} is not set (use ${{{}:-default}} for a "
          "default)",
          inner, inner);
    }
    i = close + 1;
  }
  return out;
}

namespace {

// Splits "64MB" into a number and a lowercased unit, skipping blanks between them.
bool SplitNumberUnit(std::string_view text, double* number, std::string* unit) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  size_t end = 0;
  while (end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) {
    end++;
  }
  if (end == 0) {
    return false;
  }
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + end, *number);
  if (ec != std::errc() || ptr != text.data() + end) {
    return false;
  }
  std::string_view rest = text.substr(end);
  while (!rest.empty() && rest.front() == ' ') {
    rest.remove_prefix(1);
  }
  unit->clear();
  for (char c : rest) {
    unit->push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return true;
}

}  // namespace

Result<int64_t> ParseSize(std::string_view text) {
  double number = 0;
  std::string unit;
  if (!SplitNumberUnit(text, &number, &unit)) {
    return InvalidArgument("\"{}\" is not a size (use e.g. 64MB, 512KiB, 1GB)", text);
  }
  static const std::pair<const char*, double> kUnits[] = {{"", 1},
                                                          {"b", 1},
                                                          {"k", 1e3},
                                                          {"kb", 1e3},
                                                          {"kib", 1024.0},
                                                          {"m", 1e6},
                                                          {"mb", 1e6},
                                                          {"mib", 1048576.0},
                                                          {"g", 1e9},
                                                          {"gb", 1e9},
                                                          {"gib", 1073741824.0},
                                                          {"t", 1e12},
                                                          {"tb", 1e12},
                                                          {"tib", 1099511627776.0}};
  for (const auto& [name, factor] : kUnits) {
    if (unit == name) {
      double bytes = number * factor;
      if (bytes > 9.0e18) {
        return InvalidArgument("\"{}\" is too large", text);
      }
      return static_cast<int64_t>(std::llround(bytes));
    }
  }
  return InvalidArgument(
      "\"{}\" is not a size: unknown unit '{}' (use B, KB, MB, GB, KiB, MiB, GiB)", text, unit);
}

Result<Duration> ParseDuration(std::string_view text) {
  std::string_view rest = text;
  double total_ms = 0;
  bool any = false;
  while (!rest.empty()) {
    size_t end = 0;
    while (end < rest.size() &&
           (std::isdigit(static_cast<unsigned char>(rest[end])) || rest[end] == '.')) {
      end++;
    }
    size_t unit_end = end;
    while (unit_end < rest.size() && std::isalpha(static_cast<unsigned char>(rest[unit_end]))) {
      unit_end++;
    }
    double number = 0;
    std::string unit(rest.substr(end, unit_end - end));
    auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + end, number);
    if (end == 0 || ec != std::errc() || ptr != rest.data() + end) {
      return InvalidArgument("\"{}\" is not a duration (use e.g. 500ms, 1s, 5m, 24h, 7d)", text);
    }
    double factor;
    if (unit.empty() || unit == "ms") {
      factor = 1;
    } else if (unit == "us") {
      factor = 0.001;
    } else if (unit == "s") {
      factor = 1000;
    } else if (unit == "m" || unit == "min") {
      factor = 60000;
    } else if (unit == "h") {
      factor = 3600000;
    } else if (unit == "d") {
      factor = 86400000;
    } else {
      return InvalidArgument("\"{}\" is not a duration: unknown unit '{}' (ms, s, m, h, d)", text,
                             unit);
    }
    total_ms += number * factor;
    any = true;
    rest = rest.substr(unit_end);
  }
  if (!any) {
    return InvalidArgument("empty duration");
  }
  return Duration(static_cast<int64_t>(std::llround(total_ms)));
}

}  // namespace ferry::config

#include "ferry/app/byte_rate.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <string_view>

namespace ferry::app {
namespace {

// Three significant digits with trailing zeros dropped: 999, 12.3, 1.5, 0.05.
std::string Significant(double v) {
  double a = std::fabs(v);
  int decimals = a >= 99.95 ? 0 : a >= 9.995 ? 1 : 2;
  std::string text = fmt::format("{:.{}f}", v, decimals);
  if (text.find('.') != std::string::npos) {
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.') {
      text.pop_back();
    }
  }
  return text == "-0" ? "0" : text;
}

}  // namespace

std::string FormatByteRate(double bytes_per_second) {
  static constexpr std::array<std::string_view, 5> kUnits = {"B/s", "kB/s", "MB/s", "GB/s", "TB/s"};
  double v = bytes_per_second;
  size_t unit = 0;
  // 999.5 and above would round to "1000" in this unit: it reads "1 <next unit>".
  while (std::fabs(v) >= 999.5 && unit + 1 < kUnits.size()) {
    v /= 1000;
    ++unit;
  }
  return fmt::format("{} {}", Significant(v), kUnits[unit]);
}

}  // namespace ferry::app

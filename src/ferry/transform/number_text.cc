#include "ferry/transform/number_text.h"

#include <charconv>
#include <cmath>
#include <string>

namespace ferry::transform {

namespace {

using columnar::Int128;
using columnar::UInt128;

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

std::string_view TrimSpace(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && space(s.front())) {
    s.remove_prefix(1);
  }
  while (!s.empty() && space(s.back())) {
    s.remove_suffix(1);
  }
  return s;
}

// The parts of a number: sign, the digits before and after the point, and the exponent.
struct Parts {
  bool negative = false;
  std::string_view int_digits;
  std::string_view frac_digits;
  int64_t exponent = 0;
};

bool Split(std::string_view s, bool lenient, Parts* p) {
  if (lenient) {
    s = TrimSpace(s);
  }
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || (lenient && s[i] == '+'))) {
    p->negative = s[i] == '-';
    i++;
  }
  size_t start = i;
  while (i < s.size() && IsDigit(s[i])) {
    i++;
  }
  p->int_digits = s.substr(start, i - start);
  if (!lenient &&
      (p->int_digits.empty() || (p->int_digits.size() > 1 && p->int_digits[0] == '0'))) {
    return false;
  }
  if (i < s.size() && s[i] == '.') {
    size_t fstart = ++i;
    while (i < s.size() && IsDigit(s[i])) {
      i++;
    }
    p->frac_digits = s.substr(fstart, i - fstart);
    if (!lenient && p->frac_digits.empty()) {
      return false;
    }
  }
  if (p->int_digits.empty() && p->frac_digits.empty()) {
    return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    bool neg_exp = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
      neg_exp = s[i] == '-';
      i++;
    }
    size_t estart = i;
    int64_t e = 0;
    while (i < s.size() && IsDigit(s[i])) {
      e = std::min<int64_t>(e * 10 + (s[i] - '0'), 1'000'000);
      i++;
    }
    if (i == estart) {
      return false;
    }
    p->exponent = neg_exp ? -e : e;
  }
  return i == s.size();
}

constexpr UInt128 kTen38 = [] {
  UInt128 v = 1;
  for (int i = 0; i < 38; i++) {
    v *= 10;
  }
  return v;
}();

// |value| * 10^scale as an integer; `round_half_up` or exact (kFraction when digits are lost).
NumberTextError Scale(const Parts& p, int32_t scale, bool round_half_up, UInt128* out) {
  UInt128 acc = 0;
  auto int_len = static_cast<int64_t>(p.int_digits.size());
  auto total = static_cast<int64_t>(p.int_digits.size() + p.frac_digits.size());
  // Digit k (0-based over int then fraction digits) has weight 10^(int_len - 1 - k + exponent);
  // it is kept when that weight is at least 10^-scale.
  int64_t keep = std::min(total, int_len + p.exponent + scale);
  auto digit = [&](int64_t k) {
    return k < int_len ? p.int_digits[static_cast<size_t>(k)] - '0'
                       : p.frac_digits[static_cast<size_t>(k - int_len)] - '0';
  };
  for (int64_t k = 0; k < keep; k++) {
    acc = acc * 10 + static_cast<UInt128>(digit(k));
    if (acc >= kTen38) {
      return NumberTextError::kOverflow;
    }
  }
  // Trailing zeros implied by a positive exponent.
  for (int64_t z = std::max<int64_t>(keep, 0); z < int_len + p.exponent + scale; z++) {
    if (acc == 0) {
      break;
    }
    acc *= 10;
    if (acc >= kTen38) {
      return NumberTextError::kOverflow;
    }
  }
  bool lost = false;
  for (int64_t k = std::max<int64_t>(keep, 0); k < total; k++) {
    if (digit(k) != 0) {
      lost = true;
      break;
    }
  }
  if (lost) {
    if (!round_half_up) {
      return NumberTextError::kFraction;
    }
    if (keep >= 0 && keep < total && digit(keep) >= 5) {
      acc += 1;
    }
  }
  *out = acc;
  return NumberTextError::kOk;
}

}  // namespace

NumberTextError ParseIntegerText(std::string_view text, bool lenient, Int128 min, Int128 max,
                                 Int128* out) {
  Parts p;
  if (!Split(text, lenient, &p)) {
    return NumberTextError::kSyntax;
  }
  UInt128 mag = 0;
  NumberTextError err = Scale(p, 0, false, &mag);
  if (err != NumberTextError::kOk) {
    return err;
  }
  Int128 v = p.negative ? -static_cast<Int128>(mag) : static_cast<Int128>(mag);
  if (v < min || v > max) {
    return NumberTextError::kOverflow;
  }
  *out = v;
  return NumberTextError::kOk;
}

NumberTextError ParseDecimalText(std::string_view text, bool lenient, int32_t precision,
                                 int32_t scale, Int128* out) {
  Parts p;
  if (!Split(text, lenient, &p)) {
    return NumberTextError::kSyntax;
  }
  UInt128 mag = 0;
  NumberTextError err = Scale(p, scale, true, &mag);
  if (err != NumberTextError::kOk) {
    return err;
  }
  UInt128 limit = 1;
  for (int i = 0; i < precision; i++) {
    limit *= 10;
  }
  if (mag >= limit) {
    return NumberTextError::kOverflow;
  }
  *out = p.negative ? -static_cast<Int128>(mag) : static_cast<Int128>(mag);
  return NumberTextError::kOk;
}

NumberTextError ParseDoubleText(std::string_view text, double* out) {
  std::string_view s = TrimSpace(text);
  if (s == "NaN") {
    *out = std::nan("");
    return NumberTextError::kOk;
  }
  if (s == "Infinity" || s == "+Infinity" || s == "-Infinity") {
    *out = s[0] == '-' ? -HUGE_VAL : HUGE_VAL;
    return NumberTextError::kOk;
  }
  Parts p;
  if (!Split(s, true, &p)) {
    return NumberTextError::kSyntax;
  }
  if (!s.empty() && s[0] == '+') {
    s.remove_prefix(1);
  }
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  if (ec == std::errc::result_out_of_range) {
    return NumberTextError::kOverflow;
  }
  return ec == std::errc() && end == s.data() + s.size() ? NumberTextError::kOk
                                                         : NumberTextError::kSyntax;
}

}  // namespace ferry::transform

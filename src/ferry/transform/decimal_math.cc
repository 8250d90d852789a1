#include "ferry/transform/decimal_math.h"

#include <charconv>
#include <cmath>
#include <cstdint>

namespace ferry::transform {

namespace {

// 256-bit unsigned integer: four 64-bit words, least significant first.
struct U256 {
  uint64_t w[4] = {0, 0, 0, 0};
};

U256 Mul(UInt128 a, UInt128 b) {
  uint64_t x[2] = {static_cast<uint64_t>(a), static_cast<uint64_t>(a >> 64)};
  uint64_t y[2] = {static_cast<uint64_t>(b), static_cast<uint64_t>(b >> 64)};
  U256 r;
  for (int i = 0; i < 2; i++) {
    UInt128 carry = 0;
    for (int j = 0; j < 2; j++) {
      UInt128 cur = static_cast<UInt128>(x[i]) * y[j] + r.w[i + j] + carry;
      r.w[i + j] = static_cast<uint64_t>(cur);
      carry = cur >> 64;
    }
    r.w[i + 2] = static_cast<uint64_t>(carry);
  }
  return r;
}

// Quotient and remainder of n / d by shift-and-subtract; the quotient must fit 128 bits (false
// otherwise).
bool DivMod(const U256& n, UInt128 d, UInt128* q, UInt128* rem) {
  UInt128 r = 0;
  U256 quot;
  for (int bit = 255; bit >= 0; bit--) {
    bool top = (r >> 127) != 0;
    r = (r << 1) | ((n.w[bit / 64] >> (bit % 64)) & 1);
    if (top || r >= d) {
      r -= d;
      quot.w[bit / 64] |= uint64_t{1} << (bit % 64);
    }
  }
  if (quot.w[2] != 0 || quot.w[3] != 0) {
    return false;
  }
  *q = (static_cast<UInt128>(quot.w[1]) << 64) | quot.w[0];
  *rem = r;
  return true;
}

UInt128 Abs(Int128 v) {
  return v < 0 ? -static_cast<UInt128>(v) : static_cast<UInt128>(v);
}

}  // namespace

UInt128 Pow10(int n) {
  UInt128 v = 1;
  for (int i = 0; i < n; i++) {
    v *= 10;
  }
  return v;
}

std::optional<Int128> FromBigEndianBytes(std::string_view bytes) {
  size_t skip = 0;
  while (bytes.size() - skip > 16) {
    const auto b = static_cast<uint8_t>(bytes[skip]);
    const auto next = static_cast<uint8_t>(bytes[skip + 1]);
    if (!((b == 0x00 && (next & 0x80) == 0) || (b == 0xff && (next & 0x80) != 0))) {
      return std::nullopt;
    }
    ++skip;
  }
  UInt128 u = 0;
  if (skip < bytes.size() && (static_cast<uint8_t>(bytes[skip]) & 0x80) != 0) {
    u = ~UInt128{0};
  }
  for (size_t i = skip; i < bytes.size(); ++i) {
    u = (u << 8) | static_cast<uint8_t>(bytes[i]);
  }
  return static_cast<Int128>(u);
}

bool FitsPrecision(Int128 v, int precision) {
  return Abs(v) < Pow10(precision);
}

std::optional<Int128> Rescale(Int128 v, int from_scale, int to_scale, int precision) {
  Int128 r = 0;
  if (to_scale >= from_scale) {
    std::optional<Int128> m = MulDivRound(v, static_cast<Int128>(Pow10(to_scale - from_scale)), 1);
    if (!m) {
      return std::nullopt;
    }
    r = *m;
  } else {
    std::optional<Int128> m = MulDivRound(v, 1, static_cast<Int128>(Pow10(from_scale - to_scale)));
    if (!m) {
      return std::nullopt;
    }
    r = *m;
  }
  if (!FitsPrecision(r, precision)) {
    return std::nullopt;
  }
  return r;
}

std::optional<Int128> MulDivRound(Int128 a, Int128 b, Int128 c) {
  if (c == 0) {
    return std::nullopt;
  }
  bool negative = ((a < 0) != (b < 0)) != (c < 0);
  UInt128 divisor = Abs(c);
  UInt128 q = 0, rem = 0;
  if (!DivMod(Mul(Abs(a), Abs(b)), divisor, &q, &rem)) {
    return std::nullopt;
  }
  if (rem >= divisor - rem) {  // rem * 2 >= divisor, without overflowing
    q += 1;
  }
  if (q >= Pow10(38)) {
    return std::nullopt;
  }
  Int128 r = static_cast<Int128>(q);
  return (negative && a != 0 && b != 0) ? -r : r;
}

std::string DecimalToText(Int128 v, int scale) {
  UInt128 mag = Abs(v);
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(mag % 10)));
    mag /= 10;
  } while (mag > 0);
  while (static_cast<int>(digits.size()) <= scale) {
    digits.insert(digits.begin(), '0');
  }
  if (scale > 0) {
    digits.insert(digits.end() - scale, '.');
  }
  return (v < 0 ? "-" : "") + digits;
}

namespace {

// Java's algorithm on the shortest round-trip digits: plain notation for 1e-3 <= |x| < 1e7
// (with at least one fraction digit), computerized scientific notation otherwise.
template <typename T>
std::string JavaText(T x) {
  if (std::isnan(x)) {
    return "NaN";
  }
  if (std::isinf(x)) {
    return x < 0 ? "-Infinity" : "Infinity";
  }
  if (x == 0) {
    return std::signbit(x) ? "-0.0" : "0.0";
  }
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), x, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(res.ptr - buf));  // "-1.2345e+07"
  bool negative = sci[0] == '-';
  if (negative) {
    sci.remove_prefix(1);
  }
  size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c != '.') {
      digits.push_back(c);
    }
  }
  int exponent = std::stoi(std::string(sci.substr(e + 1)));
  std::string out = negative ? "-" : "";
  if (exponent >= -3 && exponent < 7) {
    if (exponent >= 0) {
      while (static_cast<int>(digits.size()) < exponent + 2) {
        digits.push_back('0');
      }
      out += digits.substr(0, static_cast<size_t>(exponent) + 1) + "." +
             digits.substr(static_cast<size_t>(exponent) + 1);
    } else {
      out += "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    }
    return out;
  }
  out += digits.substr(0, 1) + "." + (digits.size() > 1 ? digits.substr(1) : "0");
  return out + "E" + std::to_string(exponent);
}

}  // namespace

std::string JavaDoubleText(double d) {
  return JavaText(d);
}

std::string JavaFloatText(float f) {
  return JavaText(f);
}

}  // namespace ferry::transform

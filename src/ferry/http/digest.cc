#include "ferry/http/digest.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "ferry/base/check.h"

namespace ferry::http {

namespace {

struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxDeleter>;

template <size_t N>
std::array<uint8_t, N> Digest(const EVP_MD* md, std::string_view data) {
  std::array<uint8_t, N> out{};
  unsigned int len = 0;
  FERRY_CHECK(EVP_Digest(data.data(), data.size(), out.data(), &len, md, nullptr) == 1);
  FERRY_CHECK(len == N);
  return out;
}

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') {
    return c - 'A';
  }
  if (c >= 'a' && c <= 'z') {
    return c - 'a' + 26;
  }
  if (c >= '0' && c <= '9') {
    return c - '0' + 52;
  }
  if (c == '+') {
    return 62;
  }
  if (c == '/') {
    return 63;
  }
  return -1;
}

}  // namespace

Sha256Digest Sha256(std::string_view data) {
  return Digest<32>(EVP_sha256(), data);
}

Md5Digest Md5(std::string_view data) {
  return Digest<16>(EVP_md5(), data);
}

Sha256Digest HmacSha256(std::string_view key, std::string_view data) {
  Sha256Digest out{};
  unsigned int len = 0;
  FERRY_CHECK(HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
                   reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(),
                   &len) != nullptr);
  FERRY_CHECK(len == out.size());
  return out;
}

namespace {

// Slice-by-8 tables of the reflected Castagnoli polynomial 0x82F63B78.
struct Crc32cTables {
  uint32_t t[8][256];
  Crc32cTables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) {
        c = (c & 1) != 0 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      }
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i) {
      for (int s = 1; s < 8; ++s) {
        t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
      }
    }
  }
};

}  // namespace

uint32_t Crc32c(std::string_view data, uint32_t crc) {
  static const Crc32cTables kTables;
  const auto& t = kTables.t;
  auto p = reinterpret_cast<const uint8_t*>(data.data());
  size_t n = data.size();
  crc = ~crc;
  while (n >= 8) {
    const uint32_t lo =
        crc ^ (uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24);
    crc = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
          t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) {
    crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xFF];
  }
  return ~crc;
}

std::string Crc32cBase64(uint32_t crc) {
  const char bytes[4] = {static_cast<char>(crc >> 24), static_cast<char>(crc >> 16),
                         static_cast<char>(crc >> 8), static_cast<char>(crc)};
  return Base64Encode(std::string_view(bytes, 4));
}

std::string HexEncode(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char ch : bytes) {
    auto c = static_cast<unsigned char>(ch);
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 0xF]);
  }
  return out;
}

std::string Base64Encode(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t v = (static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16) |
                 (static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8) |
                 static_cast<unsigned char>(bytes[i + 2]);
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(kAlphabet[(v >> 6) & 63]);
    out.push_back(kAlphabet[v & 63]);
  }
  size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t v = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
    if (rest == 2) {
      v |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    }
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(rest == 2 ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

bool Base64Decode(std::string_view text, std::string* out) {
  while (!text.empty() && text.back() == '=') {
    text.remove_suffix(1);
  }
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    int v = Base64Value(c);
    if (v < 0) {
      return false;
    }
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  // Leftover bits must be zero padding (fewer than 8 of them).
  return bits < 6 && (acc & ((1u << bits) - 1)) == 0;
}

struct Md5Stream::Ctx {
  MdCtx md{EVP_MD_CTX_new()};
};

Md5Stream::Md5Stream() : ctx_(std::make_unique<Ctx>()) {
  FERRY_CHECK(ctx_->md != nullptr);
  FERRY_CHECK(EVP_DigestInit_ex(ctx_->md.get(), EVP_md5(), nullptr) == 1);
}
Md5Stream::~Md5Stream() = default;
Md5Stream::Md5Stream(Md5Stream&&) noexcept = default;
Md5Stream& Md5Stream::operator=(Md5Stream&&) noexcept = default;

void Md5Stream::Update(std::string_view data) {
  FERRY_CHECK(EVP_DigestUpdate(ctx_->md.get(), data.data(), data.size()) == 1);
}

Md5Digest Md5Stream::Finish() {
  Md5Digest out{};
  unsigned int len = 0;
  FERRY_CHECK(EVP_DigestFinal_ex(ctx_->md.get(), out.data(), &len) == 1);
  FERRY_CHECK(len == out.size());
  FERRY_CHECK(EVP_DigestInit_ex(ctx_->md.get(), EVP_md5(), nullptr) == 1);
  return out;
}

}  // namespace ferry::http

// Digests and encodings that request signing and upload integrity need: SHA-256 and
// HMAC-SHA256 (AWS Signature V4, Azure Shared Key), MD5 (Content-MD5 on S3 and Azure uploads),
// CRC32C (GCS uploads),
// lower-case hex and base64 (RFC 4648, standard alphabet, padded). OpenSSL's libcrypto does the
// hashing.
//
// Thread-safety: pure functions; Md5Stream is a value used from one thread at a time.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace ferry::http {

using Sha256Digest = std::array<uint8_t, 32>;
using Md5Digest = std::array<uint8_t, 16>;

Sha256Digest Sha256(std::string_view data);
Sha256Digest HmacSha256(std::string_view key, std::string_view data);
Md5Digest Md5(std::string_view data);

// Lower-case hex of `bytes` ("e3b0c442...").
std::string HexEncode(std::string_view bytes);
template <size_t N>
std::string HexEncode(const std::array<uint8_t, N>& d) {
  return HexEncode(std::string_view(reinterpret_cast<const char*>(d.data()), N));
}
// Hex of the SHA-256 of `data`: SigV4's payload hash.
inline std::string Sha256Hex(std::string_view data) {
  return HexEncode(Sha256(data));
}

std::string Base64Encode(std::string_view bytes);
template <size_t N>
std::string Base64Encode(const std::array<uint8_t, N>& d) {
  return Base64Encode(std::string_view(reinterpret_cast<const char*>(d.data()), N));
}
// Decodes standard base64 (padding required when the length is not a multiple of 4 is not
// enforced; whitespace is not accepted). false on bad input.
bool Base64Decode(std::string_view text, std::string* out);

// The Content-MD5 header value of `data`: base64 of its MD5.
inline std::string ContentMd5(std::string_view data) {
  return Base64Encode(Md5(data));
}

// CRC32C (Castagnoli, as iSCSI and Google Cloud Storage use it) of `data`, continuing from `crc`
// (the value of the bytes before it; 0 to start), so that a stream is checksummed piece by piece.
uint32_t Crc32c(std::string_view data, uint32_t crc = 0);
// The form GCS writes it in (`crc32c` metadata, `x-goog-hash: crc32c=`): base64 of the four
// bytes, most significant first.
std::string Crc32cBase64(uint32_t crc);

// MD5 over data that arrives in pieces (a multipart part streamed from a writer).
class Md5Stream {
 public:
  Md5Stream();
  ~Md5Stream();
  Md5Stream(Md5Stream&&) noexcept;
  Md5Stream& operator=(Md5Stream&&) noexcept;

  void Update(std::string_view data);
  // The digest of everything updated so far; the stream starts over afterwards.
  Md5Digest Finish();

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

}  // namespace ferry::http

#include "ferry/parquet/compression.h"

#include <brotli/decode.h>
#include <brotli/encode.h>
#include <snappy.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <limits>

#include <lz4.h>
#include <lz4frame.h>

namespace ferry::parquet {
namespace {

Status SizeMismatch(std::string_view codec, size_t expected, size_t got) {
  return DataLoss("{}: page decompressed to {} bytes, header says {}", codec, got, expected);
}

class UncompressedCodec final : public Codec {
 public:
  UncompressedCodec() : Codec(CompressionCodec::kUncompressed) {}
  Status Compress(std::string_view input, std::string* out) override {
    out->assign(input);
    return Status::OK();
  }
  Status CompressToBuffer(std::string_view input, ByteBuffer* out) override {
    return out->Assign(input);
  }
  size_t MaxCompressedSize(size_t input_size) const override {
    return std::max<size_t>(input_size, 1);
  }
  Result<size_t> CompressInto(std::string_view input, char* out, size_t /*capacity*/) override {
    if (!input.empty()) {
      std::memcpy(out, input.data(), input.size());
    }
    return input.size();
  }
  Status Decompress(std::string_view input, uint8_t* out, size_t out_size) override {
    if (input.size() != out_size) {
      return SizeMismatch("UNCOMPRESSED", out_size, input.size());
    }
    std::memcpy(out, input.data(), out_size);
    return Status::OK();
  }
};

class SnappyCodec final : public Codec {
 public:
  SnappyCodec() : Codec(CompressionCodec::kSnappy) {}
  Status Compress(std::string_view input, std::string* out) override {
    out->resize(snappy::MaxCompressedLength(input.size()));
    size_t n = 0;
    snappy::RawCompress(input.data(), input.size(), out->data(), &n);
    out->resize(n);
    return Status::OK();
  }
  size_t MaxCompressedSize(size_t input_size) const override {
    return snappy::MaxCompressedLength(input_size);
  }
  Result<size_t> CompressInto(std::string_view input, char* out, size_t /*capacity*/) override {
    size_t n = 0;
    snappy::RawCompress(input.data(), input.size(), out, &n);
    return n;
  }
  Status Decompress(std::string_view input, uint8_t* out, size_t out_size) override {
    size_t n = 0;
    if (!snappy::GetUncompressedLength(input.data(), input.size(), &n)) {
      return DataLoss("SNAPPY: corrupt block header");
    }
    if (n != out_size) {
      return SizeMismatch("SNAPPY", out_size, n);
    }
    if (!snappy::RawUncompress(input.data(), input.size(), reinterpret_cast<char*>(out))) {
      return DataLoss("SNAPPY: corrupt block");
    }
    return Status::OK();
  }
};

class ZstdCodec final : public Codec {
 public:
  explicit ZstdCodec(int level)
      : Codec(CompressionCodec::kZstd), level_(level), cctx_(nullptr), dctx_(nullptr) {}
  ~ZstdCodec() override {
    ZSTD_freeCCtx(cctx_);
    ZSTD_freeDCtx(dctx_);
  }
  ZstdCodec(const ZstdCodec&) = delete;
  ZstdCodec& operator=(const ZstdCodec&) = delete;

  Status Compress(std::string_view input, std::string* out) override {
    out->resize(ZSTD_compressBound(input.size()));
    FERRY_ASSIGN_OR_RETURN(size_t n, CompressInto(input, out->data(), out->size()));
    out->resize(n);
    return Status::OK();
  }
  // Into a block of the bound, shrunk to the frame: no zero-fill, no copy.
  Status CompressToBuffer(std::string_view input, ByteBuffer* out) override {
    FERRY_RETURN_IF_ERROR(out->Allocate(ZSTD_compressBound(input.size())));
    FERRY_ASSIGN_OR_RETURN(size_t n, CompressInto(input, out->data(), out->size()));
    out->Shrink(n);
    return Status::OK();
  }
  size_t MaxCompressedSize(size_t input_size) const override {
    return ZSTD_compressBound(input_size);
  }
  // REQUIRES: capacity >= ZSTD_compressBound(input.size())
  Result<size_t> CompressInto(std::string_view input, char* out, size_t capacity) override {
    if (cctx_ == nullptr && (cctx_ = ZSTD_createCCtx()) == nullptr) {
      return ResourceExhausted("ZSTD: cannot create a context");
    }
    size_t n = ZSTD_compressCCtx(cctx_, out, capacity, input.data(), input.size(), level_);
    if (ZSTD_isError(n)) {
      return Internal("ZSTD: {}", ZSTD_getErrorName(n));
    }
    return n;
  }
  Status Decompress(std::string_view input, uint8_t* out, size_t out_size) override {
    if (dctx_ == nullptr && (dctx_ = ZSTD_createDCtx()) == nullptr) {
      return ResourceExhausted("ZSTD: cannot create a context");
    }
    // Output is bounded by out_size: a frame that wants more fails with dstSize_tooSmall.
    size_t n = ZSTD_decompressDCtx(dctx_, out, out_size, input.data(), input.size());
    if (ZSTD_isError(n)) {
      return DataLoss("ZSTD: {}", ZSTD_getErrorName(n));
    }
    if (n != out_size) {
      return SizeMismatch("ZSTD", out_size, n);
    }
    return Status::OK();
  }

 private:
  int level_;
  ZSTD_CCtx* cctx_;  // created on first use; owned
  ZSTD_DCtx* dctx_;  // created on first use; owned
};

class GzipCodec final : public Codec {
 public:
  explicit GzipCodec(int level) : Codec(CompressionCodec::kGzip), level_(level) {}

  Status Compress(std::string_view input, std::string* out) override {
    z_stream zs{};
    // 15 window bits + 16: write the gzip wrapper.
    if (deflateInit2(&zs, level_, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      return Internal("GZIP: deflateInit2 failed");
    }
    out->resize(deflateBound(&zs, static_cast<uLong>(input.size())) + 32);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
    zs.avail_in = static_cast<uInt>(input.size());
    zs.next_out = reinterpret_cast<Bytef*>(out->data());
    zs.avail_out = static_cast<uInt>(out->size());
    int rc = deflate(&zs, Z_FINISH);
    size_t n = zs.total_out;
    deflateEnd(&zs);
    if (rc != Z_STREAM_END) {
      return Internal("GZIP: deflate failed ({})", rc);
    }
    out->resize(n);
    return Status::OK();
  }

  // Several gzip members may follow each other (some writers emit one per block).
  Status Decompress(std::string_view input, uint8_t* out, size_t out_size) override {
    z_stream zs{};
    // 15 window bits + 32: detect zlib or gzip headers.
    if (inflateInit2(&zs, 15 + 32) != Z_OK) {
      return Internal("GZIP: inflateInit2 failed");
    }
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
    zs.avail_in = static_cast<uInt>(input.size());
    zs.next_out = out;
    zs.avail_out = static_cast<uInt>(out_size);
    Status status;
    while (true) {
      int rc = inflate(&zs, Z_FINISH);
      if (rc == Z_STREAM_END) {
        if (zs.avail_in == 0) {
          break;
        }
        if (inflateReset(&zs) != Z_OK) {
          status = DataLoss("GZIP: cannot start the next member");
          break;
        }
        continue;
      }
      status =
          rc == Z_BUF_ERROR && zs.avail_out == 0
              ? DataLoss("GZIP: page decompresses to more than the {} bytes declared", out_size)
              : DataLoss("GZIP: corrupt stream ({})", zs.msg ? zs.msg : "truncated");
      break;
    }
    size_t produced = out_size - zs.avail_out;
    inflateEnd(&zs);
    FERRY_RETURN_IF_ERROR(status);
    if (produced != out_size) {
      return SizeMismatch("GZIP", out_size, produced);
    }
    return Status::OK();
  }

 private:
  int level_;
};

class BrotliCodec final : public Codec {
 public:
  explicit BrotliCodec(int level) : Codec(CompressionCodec::kBrotli), level_(level) {}

  Status Compress(std::string_view input, std::string* out) override {
    size_t n = BrotliEncoderMaxCompressedSize(input.size());
    if (n == 0) {
      n = input.size() + 1024;
    }
    out->resize(n);
    if (!BrotliEncoderCompress(level_, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC, input.size(),
                               reinterpret_cast<const uint8_t*>(input.data()), &n,
                               reinterpret_cast<uint8_t*>(out->data()))) {
      return Internal("BROTLI: compression failed");
    }
    out->resize(n);
    return Status::OK();
  }

  Status Decompress(std::string_view input, uint8_t* out, size_t out_size) override {
    BrotliDecoderState* s = BrotliDecoderCreateInstance(nullptr, nullptr, nullptr);
    if (s == nullptr) {
      return ResourceExhausted("BROTLI: cannot create a decoder");
    }
    size_t avail_in = input.size();
    const auto* next_in = reinterpret_cast<const uint8_t*>(input.data());
    size_t avail_out = out_size;
    uint8_t* next_out = out;
    BrotliDecoderResult rc =
        BrotliDecoderDecompressStream(s, &avail_in, &next_in, &avail_out, &next_out, nullptr);
    BrotliDecoderDestroyInstance(s);
    if (rc == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT) {
      return DataLoss("BROTLI: page decompresses to more than the {} bytes declared", out_size);
    }
    if (rc != BROTLI_DECODER_RESULT_SUCCESS) {
      return DataLoss("BROTLI: corrupt or truncated stream");
    }
    if (avail_out != 0) {
      return SizeMismatch("BROTLI", out_size, out_size - avail_out);
    }
    return Status::OK();
  }

 private:
  int level_;
};

Status Lz4BlockCompress(std::string_view input, std::string* out, size_t offset) {
  if (input.size() > static_cast<size_t>(LZ4_MAX_INPUT_SIZE)) {
    return InvalidArgument("LZ4: page of {} bytes is too large", input.size());
  }
  int bound = LZ4_compressBound(static_cast<int>(input.size()));
  out->resize(offset + static_cast<size_t>(bound));
  int n = LZ4_compress_default(input.data(), out->data() + offset, static_cast<int>(input.size()),
                               bound);
  if (n <= 0) {
    return Internal("LZ4: compression failed");
  }
  out->resize(offset + static_cast<size_t>(n));
  return Status::OK();
}

bool Lz4BlockDecompress(std::string_view input, uint8_t* out, size_t out_size) {
  if (input.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      out_size > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return false;
  }
  int n = LZ4_decompress_safe(input.data(), reinterpret_cast<char*>(out),
                              static_cast<int>(input.size()), static_cast<int>(out_size));
  return n >= 0 && static_cast<size_t>(n) == out_size;
}

class Lz4RawCodec final : public Codec {
 public:
  Lz4RawCodec() : Codec(CompressionCodec::kLz4Raw) {}
  Status Compress(std::string_view input, std::string* out) override {
    return Lz4BlockCompress(input, out, 0);
  }
  size_t MaxCompressedSize(size_t input_size) const override {
    return input_size > static_cast<size_t>(LZ4_MAX_INPUT_SIZE)
               ? 0
               : static_cast<size_t>(LZ4_compressBound(static_cast<int>(input_size)));
  }
  Result<size_t> CompressInto(std::string_view input, char* out, size_t capacity) override {
    int n = LZ4_compress_default(input.data(), out, static_cast<int>(input.size()),
                                 static_cast<int>(std::min<size_t>(capacity, INT32_MAX)));
    if (n <= 0) {
      return Internal("LZ4: compression failed");
    }
    return static_cast<size_t>(n);
  }
  Status Decompress(std::string_view input, uint8_t* out, size_t out_size) override {
    if (!Lz4BlockDecompress(input, out, out_size)) {
      return DataLoss("LZ4_RAW: corrupt block or not {} bytes", out_size);
    }
    return Status::OK();
  }
};

uint32_t LoadBE32(const char* p) {
  const auto* u = reinterpret_cast<const uint8_t*>(p);
  return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) | (uint32_t{u[2]} << 8) | u[3];
}

void AppendBE32(std::string* out, uint32_t v) {
  char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
               static_cast<char>(v)};
  out->append(b, 4);
}

// The Hadoop framing: blocks of [BE32 block's uncompressed size] followed by chunks of
// [BE32 compressed size][lz4 block] until the block's size is reached.
bool HadoopLz4Decompress(std::string_view input, uint8_t* out, size_t out_size) {
  size_t produced = 0;
  while (!input.empty()) {
    if (input.size() < 4) {
      return false;
    }
    size_t block_size = LoadBE32(input.data());
    input.remove_prefix(4);
    if (block_size > out_size - produced) {
      return false;
    }
    size_t block_end = produced + block_size;
    do {  // at least one chunk per block, even an empty one
      if (input.size() < 4) {
        return false;
      }
      size_t chunk = LoadBE32(input.data());
      input.remove_prefix(4);
      if (chunk > input.size() || chunk > static_cast<size_t>(std::numeric_limits<int>::max())) {
        return false;
      }
      int n = LZ4_decompress_safe(input.data(), reinterpret_cast<char*>(out + produced),
                                  static_cast<int>(chunk), static_cast<int>(block_end - produced));
      if (n < 0 || (n == 0 && produced < block_end)) {
        return false;
      }
      produced += static_cast<size_t>(n);
      input.remove_prefix(chunk);
    } while (produced < block_end);
  }
  return produced == out_size;
}

bool Lz4FrameDecompress(std::string_view input, uint8_t* out, size_t out_size) {
  LZ4F_dctx* dctx = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION))) {
    return false;
  }
  size_t produced = 0;
  bool ok = false;
  while (true) {
    size_t dst = out_size - produced;
    size_t src = input.size();
    size_t hint = LZ4F_decompress(dctx, out + produced, &dst, input.data(), &src, nullptr);
    if (LZ4F_isError(hint)) {
      break;
    }
    produced += dst;
    input.remove_prefix(src);
    if (hint == 0) {  // frame complete
      ok = input.empty() && produced == out_size;
      break;
    }
    if (src == 0 && dst == 0) {  // no progress: truncated input or output full
      break;
    }
  }
  LZ4F_freeDecompressionContext(dctx);
  return ok;
}

class Lz4HadoopCodec final : public Codec {
 public:
  Lz4HadoopCodec() : Codec(CompressionCodec::kLz4) {}
  Status Compress(std::string_view input, std::string* out) override {
    out->clear();
    AppendBE32(out, static_cast<uint32_t>(input.size()));
    AppendBE32(out, 0);  // compressed size, patched below
    FERRY_RETURN_IF_ERROR(Lz4BlockCompress(input, out, 8));
    auto n = static_cast<uint32_t>(out->size() - 8);
    std::string be;
    AppendBE32(&be, n);
    out->replace(4, 4, be);
    return Status::OK();
  }
  Status Decompress(std::string_view input, uint8_t* out, size_t out_size) override {
    if (HadoopLz4Decompress(input, out, out_size) || Lz4FrameDecompress(input, out, out_size) ||
        Lz4BlockDecompress(input, out, out_size)) {
      return Status::OK();
    }
    return DataLoss("LZ4: not a Hadoop-framed, framed or raw lz4 page of {} bytes", out_size);
  }
};

int ClampLevel(int level, int lo, int hi, int fallback) {
  return level < lo || level > hi ? fallback : level;
}

}  // namespace

Result<std::unique_ptr<Codec>> Codec::Create(CompressionCodec codec, int level) {
  switch (codec) {
    case CompressionCodec::kUncompressed:
      return std::unique_ptr<Codec>(new UncompressedCodec());
    case CompressionCodec::kSnappy:
      return std::unique_ptr<Codec>(new SnappyCodec());
    case CompressionCodec::kGzip:
      return std::unique_ptr<Codec>(new GzipCodec(ClampLevel(level, 1, 9, 6)));
    case CompressionCodec::kBrotli:
      return std::unique_ptr<Codec>(new BrotliCodec(ClampLevel(level, 1, 11, 1)));
    case CompressionCodec::kZstd:
      return std::unique_ptr<Codec>(
          new ZstdCodec(level == 0 ? 1 : ClampLevel(level, ZSTD_minCLevel(), ZSTD_maxCLevel(), 1)));
    case CompressionCodec::kLz4Raw:
      return std::unique_ptr<Codec>(new Lz4RawCodec());
    case CompressionCodec::kLz4:
      return std::unique_ptr<Codec>(new Lz4HadoopCodec());
    case CompressionCodec::kLzo:
      break;
  }
  return NotSupported("compression codec {} is not supported", CompressionCodecName(codec));
}

Status Codec::Decompress(std::string_view input, size_t out_size, std::string* out) {
  out->resize(out_size);
  return Decompress(input, reinterpret_cast<uint8_t*>(out->data()), out_size);
}

Status Codec::CompressToBuffer(std::string_view input, ByteBuffer* out) {
  // Reused by the thread: a codec sizes its output for the worst case first, which in a fresh
  // string is a zero-filled compress bound per call.
  thread_local std::string compressed;
  FERRY_RETURN_IF_ERROR(Compress(input, &compressed));
  return out->Assign(compressed);
}

Result<size_t> Codec::CompressInto(std::string_view /*input*/, char* /*out*/, size_t /*capacity*/) {
  return Internal("{} cannot compress into a caller's buffer", CompressionCodecName(codec_));
}

void ByteBuffer::Free::operator()(char* p) const {
  std::free(p);
}

Status ByteBuffer::Allocate(size_t capacity) {
  data_.reset();
  size_ = 0;
  // malloc(0) may return null; a block of one byte keeps data() valid for an empty buffer.
  auto* p = static_cast<char*>(std::malloc(std::max<size_t>(capacity, 1)));
  if (p == nullptr) {
    return ResourceExhausted("cannot allocate a buffer of {} bytes", capacity);
  }
  data_.reset(p);
  size_ = capacity;
  return Status::OK();
}

Status ByteBuffer::Assign(std::string_view bytes) {
  FERRY_RETURN_IF_ERROR(Allocate(bytes.size()));
  if (!bytes.empty()) {
    std::memcpy(data(), bytes.data(), bytes.size());
  }
  return Status::OK();
}

void ByteBuffer::Shrink(size_t n) {
  // realloc to a smaller size keeps the bytes in place (a heap chunk is split, a mapped one
  // shrunk with mremap); if it fails, the larger block is kept.
  if (auto* p = static_cast<char*>(std::realloc(data_.get(), std::max<size_t>(n, 1)));
      p != nullptr) {
    (void)data_.release();
    data_.reset(p);
  }
  size_ = n;
}

Result<CompressionCodec> ParseCompressionCodec(std::string_view name) {
  std::string n(name);
  std::transform(n.begin(), n.end(), n.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (n == "uncompressed" || n == "none") {
    return CompressionCodec::kUncompressed;
  }
  if (n == "snappy") {
    return CompressionCodec::kSnappy;
  }
  if (n == "gzip") {
    return CompressionCodec::kGzip;
  }
  if (n == "brotli") {
    return CompressionCodec::kBrotli;
  }
  if (n == "zstd") {
    return CompressionCodec::kZstd;
  }
  if (n == "lz4_raw" || n == "lz4raw") {
    return CompressionCodec::kLz4Raw;
  }
  if (n == "lz4") {
    return CompressionCodec::kLz4;
  }
  return InvalidArgument(
      "unknown compression codec '{}' (expected uncompressed, snappy, gzip, brotli, zstd, "
      "lz4_raw, lz4)",
      name);
}

}  // namespace ferry::parquet

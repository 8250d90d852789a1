// Page compression codecs of Parquet (parquet-format Compression.md) over the Debian libraries:
//   UNCOMPRESSED  bytes as they are
//   SNAPPY        snappy raw block (no framing)
//   GZIP          zlib with the gzip wrapper; decompression accepts zlib or gzip, and several
//                 gzip members back to back
//   BROTLI        brotli stream
//   ZSTD          zstd frame(s); the level is an option (default 1, as Arrow's Parquet writer)
//   LZ4_RAW       lz4 block
//   LZ4           deprecated: the Hadoop framing (blocks of [4-byte big-endian uncompressed size]
//                 [4-byte big-endian compressed size][lz4 block]...). Decompression tries it,
//                 then an lz4 frame, then a bare lz4 block (writers disagreed); compression writes
//                 the Hadoop framing.
//   LZO           not supported (NotSupported).
//
// Decompression writes exactly the size the page header declared: more or less output is a
// DataLoss error, and no buffer larger than that size is ever allocated, so a decompression bomb
// or a lying header costs nothing.
//
// Thread-safety: a Codec holds library contexts and is not thread-safe; use one per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "ferry/base/result.h"
#include "ferry/parquet/metadata.h"

namespace ferry::parquet {

// Bytes in one malloc'd block: compressed output can be written into a block of the codec's bound
// without zero-filling it first (as std::string::resize does) and then shrunk to its size,
// without a copy. The reader's page buffers are ByteBuffers for the same reason.
class ByteBuffer {
 public:
  std::string_view view() const { return std::string_view(data_.get(), size_); }
  size_t size() const { return size_; }
  char* data() { return data_.get(); }
  // Replaces the content with `capacity` uninitialized bytes.
  Status Allocate(size_t capacity);
  // Replaces the content with a copy of `bytes`.
  Status Assign(std::string_view bytes);
  // Keeps the first n bytes and returns the rest of the block to the allocator.
  // REQUIRES: n <= size()
  void Shrink(size_t n);

 private:
  struct Free {
    void operator()(char* p) const;
  };
  std::unique_ptr<char, Free> data_;
  size_t size_ = 0;
};

class Codec {
 public:
  virtual ~Codec() = default;

  // `level` is used by ZSTD, GZIP and BROTLI; 0 or out of range is the codec's default. In
  // range: ZSTD its negative (fast) levels and 1..22 (default 1: zstd's own default 3 costs
  // about twice the CPU for files ~1 % smaller on ingest data, docs/BENCHMARKS.md), GZIP 1..9
  // (default 6), BROTLI 1..11 (default 1).
  static Result<std::unique_ptr<Codec>> Create(CompressionCodec codec, int level = 0);

  CompressionCodec codec() const { return codec_; }

  // Replaces *out with the compressed form of `input`.
  virtual Status Compress(std::string_view input, std::string* out) = 0;
  // The same into a ByteBuffer of exactly the compressed size. By default through a buffer
  // reused by the thread and a copy; ZSTD and UNCOMPRESSED write the buffer directly.
  virtual Status CompressToBuffer(std::string_view input, ByteBuffer* out);
  // The most bytes CompressInto writes for `input_size` bytes of input, or 0 for a codec that
  // cannot compress into the caller's memory (then use Compress or CompressToBuffer). ZSTD,
  // SNAPPY, LZ4_RAW and UNCOMPRESSED can.
  virtual size_t MaxCompressedSize(size_t /*input_size*/) const { return 0; }
  // Compresses `input` into out[0, capacity) and returns the compressed size.
  // REQUIRES: 0 < MaxCompressedSize(input.size()) <= capacity
  virtual Result<size_t> CompressInto(std::string_view input, char* out, size_t capacity);
  // Decompresses `input` into exactly out_size bytes at `out`.
  // Errors: DataLoss if the input is corrupt or does not decompress to exactly out_size bytes.
  virtual Status Decompress(std::string_view input, uint8_t* out, size_t out_size) = 0;

  // Convenience: replaces *out with out_size decompressed bytes.
  Status Decompress(std::string_view input, size_t out_size, std::string* out);

 protected:
  explicit Codec(CompressionCodec codec) : codec_(codec) {}

 private:
  CompressionCodec codec_;
};

// Parses a codec name as written in configs and on the command line: uncompressed (or none),
// snappy, gzip, brotli, zstd, lz4_raw (or lz4raw), lz4. Case-insensitive.
Result<CompressionCodec> ParseCompressionCodec(std::string_view name);

}  // namespace ferry::parquet

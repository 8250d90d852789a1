#include "ferry/app/parquet_from_json_command.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "ferry/columnar/ddl.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/config/config.h"
#include "ferry/parquet/atomic_file.h"
#include "ferry/parquet/compression.h"
#include "ferry/parquet/writer.h"
#include "ferry/transform/json_decoder.h"

namespace ferry::app {
namespace {

constexpr int kNoLevel = -1000;

// A row group is flushed when its buffered (compressed) pages reach this, as `ferry run` flushes
// at its batch unit with the default max_memory (docs/memory.md): the conversion's memory stays
// flat whatever the input's size (the 1 M-row benchmark's 252 MB of JSON: one row group of 81 MB
// of pages and a peak RSS of 120 MB with the writer's own 128 MiB; six row groups and 57 MB with
// this), and the next row group's pages reuse the memory. DuckDB writes row groups of 122,880
// rows, parquet-mr of 128 MB.
constexpr char kDefaultRowGroupBytes[] = "16MiB";

struct FromJsonOptions {
  std::string schema;
  std::string codec = "zstd";
  int level = kNoLevel;
  bool no_dictionary = false;
  bool page_v2 = false;
  int64_t batch_rows = 16384;
  std::string row_group_bytes = kDefaultRowGroupBytes;
  int64_t row_group_rows = parquet::WriterOptions().row_group_max_rows;
  std::string input;
  std::string output;
};

// The parts of the options that are usage: a bad one exits with 2.
struct Setup {
  columnar::SchemaPtr schema;
  parquet::WriterOptions writer;
};

Result<Setup> MakeSetup(const FromJsonOptions& options) {
  FERRY_ASSIGN_OR_RETURN(columnar::Schema schema,
                         columnar::ParseDdlSchema(options.schema, "--schema"));
  Setup setup{.schema = std::make_shared<const columnar::Schema>(std::move(schema))};
  FERRY_ASSIGN_OR_RETURN(setup.writer.codec, parquet::ParseCompressionCodec(options.codec));
  if (options.level != kNoLevel) {
    int lo = 0;
    int hi = -1;
    switch (setup.writer.codec) {
      case parquet::CompressionCodec::kZstd:
        lo = 1;
        hi = 22;
        break;
      case parquet::CompressionCodec::kGzip:
        lo = 1;
        hi = 9;
        break;
      case parquet::CompressionCodec::kBrotli:
        lo = 1;
        hi = 11;
        break;
      default:
        return InvalidArgument("--level does not apply to codec {}", options.codec);
    }
    if (options.level < lo || options.level > hi) {
      return InvalidArgument("--level {} is out of range for {} ({}..{})", options.level,
                             options.codec, lo, hi);
    }
    setup.writer.compression_level = options.level;
  }
  setup.writer.enable_dictionary = !options.no_dictionary;
  setup.writer.data_page_v2 = options.page_v2;
  if (options.batch_rows <= 0) {
    return InvalidArgument("--batch-rows must be positive, got {}", options.batch_rows);
  }
  Result<int64_t> row_group_bytes = config::ParseSize(options.row_group_bytes);
  if (!row_group_bytes.ok() || *row_group_bytes <= 0) {
    return InvalidArgument("--row-group-bytes must be a positive size such as 16MiB, got '{}'",
                           options.row_group_bytes);
  }
  if (options.row_group_rows <= 0) {
    return InvalidArgument("--row-group-rows must be positive, got {}", options.row_group_rows);
  }
  setup.writer.row_group_max_bytes = *row_group_bytes;
  setup.writer.row_group_max_rows = options.row_group_rows;
  return setup;
}

// Reads lines from a stdio stream in large blocks; a line may be as long as memory allows.
class LineReader {
 public:
  explicit LineReader(std::FILE* file) : file_(file) { buffer_.resize(kBlock); }

  // Sets *line to the next line without its '\n' (and a '\r' before it) and returns true; false
  // at the end of input or on a read error (then status() says which). A plain bool, not a
  // Result<optional>: building that on the stack for each line stalls on store forwarding.
  bool Next(std::string_view* line) {
    while (true) {
      const char* begin = buffer_.data() + pos_;
      const void* nl = std::memchr(begin, '\n', end_ - pos_);
      if (nl != nullptr) {
        size_t len = static_cast<size_t>(static_cast<const char*>(nl) - begin);
        pos_ += len + 1;
        *line = Trim(std::string_view(begin, len));
        return true;
      }
      if (eof_) {
        if (pos_ == end_) {
          return false;
        }
        std::string_view last(begin, end_ - pos_);
        pos_ = end_;
        *line = Trim(last);
        return true;
      }
      status_ = Fill();
      if (!status_.ok()) {
        return false;
      }
    }
  }
  const Status& status() const { return status_; }

 private:
  static constexpr size_t kBlock = size_t{1} << 20;

  static std::string_view Trim(std::string_view line) {
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    return line;
  }

  // Moves the unread tail to the front and reads more behind it.
  Status Fill() {
    size_t tail = end_ - pos_;
    if (pos_ > 0) {
      std::memmove(buffer_.data(), buffer_.data() + pos_, tail);
      pos_ = 0;
      end_ = tail;
    }
    if (buffer_.size() - end_ < kBlock / 2) {
      buffer_.resize(buffer_.size() * 2);
    }
    size_t n = std::fread(buffer_.data() + end_, 1, buffer_.size() - end_, file_);
    end_ += n;
    if (n == 0) {
      if (std::ferror(file_)) {
        return IOError("reading failed: {}", std::strerror(errno));
      }
      eof_ = true;
    }
    return Status::OK();
  }

  std::FILE* file_;
  std::string buffer_;
  size_t pos_ = 0;
  size_t end_ = 0;
  bool eof_ = false;
  Status status_;
};

bool IsBlank(std::string_view line) {
  for (char c : line) {
    if (c != ' ' && c != '\t') {
      return false;
    }
  }
  return true;
}

Status Convert(const FromJsonOptions& options, const Setup& setup, std::FILE* in,
               std::string_view in_name) {
  FERRY_ASSIGN_OR_RETURN(auto decoder, transform::JsonDecoder::Create(setup.schema, {}));
  FERRY_ASSIGN_OR_RETURN(auto sink, parquet::AtomicFileOutputStream::Create(options.output));
  FERRY_ASSIGN_OR_RETURN(auto writer,
                         parquet::FileWriter::Open(std::move(sink), setup.schema, setup.writer));
  columnar::RecordBatch batch = columnar::RecordBatch::MakeEmpty(setup.schema);
  LineReader lines(in);
  int64_t line_number = 0;
  std::string_view line;
  while (lines.Next(&line)) {
    line_number++;
    if (IsBlank(line)) {
      continue;
    }
    Status s = decoder->Append(line, &batch);
    if (!s.ok()) {
      return s.WithContext("{}:{}", in_name, line_number);
    }
    if (batch.num_rows() >= options.batch_rows) {
      FERRY_RETURN_IF_ERROR(writer->Write(batch));
      batch.Clear();
    }
  }
  FERRY_RETURN_IF_ERROR(lines.status());
  if (batch.num_rows() > 0) {
    FERRY_RETURN_IF_ERROR(writer->Write(batch));
  }
  // The commit point: until here, the atomic sink leaves nothing under OUT.
  return writer->Close();
}

int Run(const FromJsonOptions& options) {
  Result<Setup> setup = MakeSetup(options);
  if (!setup.ok()) {
    std::fprintf(stderr, "ferry parquet from-json: %s\n", setup.status().ToString().c_str());
    return 2;
  }
  std::FILE* in = stdin;
  std::string in_name = "stdin";
  if (options.input != "-") {
    in = std::fopen(options.input.c_str(), "rb");
    in_name = options.input;
    if (in == nullptr) {
      std::fprintf(stderr, "ferry parquet from-json: cannot open %s: %s\n", in_name.c_str(),
                   std::strerror(errno));
      return 1;
    }
  }
  Status status = Convert(options, *setup, in, in_name);
  if (in != stdin) {
    std::fclose(in);
  }
  if (!status.ok()) {
    std::fprintf(stderr, "ferry parquet from-json: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}

}  // namespace

void RegisterParquetFromJson(CLI::App* parquet, int* exit_code) {
  auto options = std::make_shared<FromJsonOptions>();
  CLI::App* cmd = parquet->add_subcommand(
      "from-json", "Convert JSON lines (one object per line) to a Parquet file");
  cmd->add_option("--schema", options->schema,
                  "Spark DDL schema, e.g. 'id BIGINT NOT NULL, tags ARRAY<STRING>'")
      ->required();
  cmd->add_option("--codec", options->codec,
                  "zstd (default), snappy, gzip, lz4_raw, lz4, brotli or uncompressed");
  cmd->add_option("--level", options->level,
                  "Compression level (zstd 1..22, default 1; gzip 1..9, default 6; "
                  "brotli 1..11, default 1)");
  cmd->add_flag("--no-dictionary", options->no_dictionary, "Write PLAIN pages only");
  cmd->add_flag("--page-v2", options->page_v2, "Write data pages v2");
  cmd->add_option("--batch-rows", options->batch_rows, "Rows decoded per batch (default 16384)");
  cmd->add_option(
      "--row-group-bytes", options->row_group_bytes,
      fmt::format("A row group ends when its buffered pages reach this size (default {})",
                  kDefaultRowGroupBytes));
  cmd->add_option(
      "--row-group-rows", options->row_group_rows,
      fmt::format("A row group ends at this many rows (default {})", options->row_group_rows));
  cmd->add_option("input", options->input, "JSON lines file, or - for stdin")->required();
  cmd->add_option("output", options->output, "Parquet file to write")->required();
  cmd->callback([options, exit_code] { *exit_code = Run(*options); });
}

}  // namespace ferry::app

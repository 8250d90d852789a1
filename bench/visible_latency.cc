// visible_latency: publish-to-visible latency of a Delta table that `ferry run` is filling
// (docs/BENCHMARKS.md, "Publish-to-visible latency and table health"). Every message carries the
// time it was published in a TIMESTAMP column (`sent`, written by `ferry produce ... --template`
// with {{now:...}}); this tool watches the table's log the way a reader polling for new data does,
// notes the moment each commit becomes visible (listed), reads the data files it adds, and reports,
// over every row, visible time - sent time: p50, p90, p99, max. Any table location ferry accepts (a
// local path, s3://...), with the storage options of `--storage-option` and the environment
// (AWS_ENDPOINT_URL, keys, ...).
//
//   visible_latency TABLE --rows N [--column sent] [--poll-ms 10] [--timeout-s 600]
//                   [--since-us T] [--storage-option KEY=VALUE]...
//
// --since-us T leaves the rows sent before T (µs since the epoch) out of the percentiles (they
// still count towards N): a warm-up, so that a consumer's start-up is not measured as latency
// (tools/bench_spark.sh: Spark's first micro-batches take tens of seconds).
//
// The visible time is when the listing first shows the commit: it includes up to one poll
// interval (plus a listing's round trip) after the commit was written. Commits that add no rows
// of their own (an optimize, which re-adds rows already counted) are skipped: only commits
// whose commitInfo operation is "STREAMING UPDATE" count. Stops after N rows.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferry/columnar/column.h"
#include "ferry/delta/partition_values.h"
#include "ferry/parquet/file_reader.h"
#include "ferry/storage/store_factory.h"
#include "ferry/storage/table_uri.h"

namespace {

using ferry::Result;
using ferry::Status;

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The `column` values (µs since the epoch) of one data file.
Result<std::vector<int64_t>> SentTimes(ferry::storage::ObjectStore& store, const std::string& key,
                                       const std::string& column) {
  FERRY_ASSIGN_OR_RETURN(auto file, store.OpenForRead(key));
  FERRY_ASSIGN_OR_RETURN(auto reader, ferry::parquet::FileReader::Open(file));
  FERRY_ASSIGN_OR_RETURN(std::vector<int> index, reader->FieldIndices({column}));
  FERRY_ASSIGN_OR_RETURN(ferry::columnar::RecordBatch batch, reader->ReadAll(index));
  const auto* values = batch.column(0).As<ferry::columnar::TimestampColumn>();
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(batch.num_rows()));
  for (int64_t row = 0; row < batch.num_rows(); ++row) {
    if (values->IsValid(row)) {
      out.push_back(values->Value(row));
    }
  }
  return out;
}

double Percentile(const std::vector<int64_t>& sorted, double p) {
  if (sorted.empty()) {
    return 0;
  }
  size_t at = static_cast<size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
  return static_cast<double>(sorted[std::min(at, sorted.size() - 1)]) / 1000.0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr,
               "usage: {} TABLE --rows N [--column sent] [--poll-ms 10] [--timeout-s 600] "
               "[--since-us T] [--storage-option KEY=VALUE]...\n",
               argv[0]);
    return 2;
  }
  const std::string location = argv[1];
  int64_t rows_wanted = 0;
  std::string column = "sent";
  int poll_ms = 10;
  int timeout_s = 600;
  int64_t since_us = 0;
  std::vector<std::pair<std::string, std::string>> raw_options;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--rows") {
      rows_wanted = std::strtoll(value.c_str(), nullptr, 10);
    } else if (flag == "--column") {
      column = value;
    } else if (flag == "--poll-ms") {
      poll_ms = std::atoi(value.c_str());
    } else if (flag == "--timeout-s") {
      timeout_s = std::atoi(value.c_str());
    } else if (flag == "--since-us") {
      since_us = std::strtoll(value.c_str(), nullptr, 10);
    } else if (flag == "--storage-option") {
      auto kv = ferry::storage::ParseStorageOptionFlag(value);
      if (!kv.ok()) {
        fmt::print(stderr, "{}\n", kv.status().ToString());
        return 2;
      }
      raw_options.push_back(*kv);
    } else {
      fmt::print(stderr, "unknown flag {}\n", flag);
      return 2;
    }
  }
  auto explicit_options = ferry::storage::NormalizeStorageOptions(raw_options, "--storage-option");
  auto uri = ferry::storage::ParseTableUri(location);
  if (!explicit_options.ok() || !uri.ok() || rows_wanted <= 0) {
    fmt::print(stderr, "bad arguments: {} {}\n", explicit_options.status().ToString(),
               uri.status().ToString());
    return 2;
  }
  const ferry::storage::StorageOptions env = ferry::storage::StorageOptionsFromEnvironment(
      [](std::string_view name) -> std::optional<std::string> {
        const char* v = std::getenv(std::string(name).c_str());
        return v == nullptr ? std::nullopt : std::optional<std::string>(v);
      });
  const ferry::storage::StorageOptions options =
      ferry::storage::MergeStorageOptions({&*explicit_options, &env});

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  std::shared_ptr<ferry::storage::ObjectStore> store;
  std::string last_key;
  std::vector<int64_t> latencies;  // µs
  int64_t rows_seen = 0;
  int64_t commits = 0;
  int64_t skipped = 0;
  while (rows_seen < rows_wanted && std::chrono::steady_clock::now() < deadline) {
    if (store == nullptr) {
      auto opened =
          ferry::storage::OpenTableStore(*uri, options, ferry::storage::OpenMode::kExisting);
      if (!opened.ok()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
        continue;  // a local table's directory does not exist yet
      }
      store = *opened;
    }
    ferry::storage::ListOptions list_options{.start_after = last_key};
    auto listed = store->List("_delta_log/", list_options);
    const int64_t seen_at = NowMicros();
    if (!listed.ok()) {
      fmt::print(stderr, "list: {}\n", listed.status().ToString());
      std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
      continue;
    }
    for (const auto& info : *listed) {
      const std::string_view name = std::string_view(info.key).substr(info.key.rfind('/') + 1);
      if (name.size() != 25 || !name.ends_with(".json")) {
        continue;
      }
      last_key = info.key;
      auto text = store->Read(info.key);
      if (!text.ok()) {
        fmt::print(stderr, "{}: {}\n", info.key, text.status().ToString());
        return 1;
      }
      std::vector<std::string> adds;
      bool streaming = false;
      std::istringstream lines(*text);
      std::string line;
      while (std::getline(lines, line)) {
        nlohmann::json action = nlohmann::json::parse(line, nullptr, false);
        if (action.contains("add")) {
          adds.push_back(action["add"].value("path", ""));
        } else if (action.contains("commitInfo")) {
          streaming = action["commitInfo"].value("operation", "") == "STREAMING UPDATE";
        }
      }
      if (!streaming) {
        ++skipped;
        continue;
      }
      ++commits;
      for (const std::string& path : adds) {
        auto decoded = ferry::delta::DecodeUriPath(path);
        auto sent = decoded.ok() ? SentTimes(*store, *decoded, column)
                                 : Result<std::vector<int64_t>>(decoded.status());
        if (!sent.ok()) {
          fmt::print(stderr, "{}: {}\n", path, sent.status().ToString());
          return 1;
        }
        for (int64_t t : *sent) {
          ++rows_seen;
          if (t >= since_us) {
            latencies.push_back(seen_at - t);
          }
        }
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
  }
  std::sort(latencies.begin(), latencies.end());
  fmt::print(
      "rows {} in {} commits ({} other commits skipped), {} measured: publish-to-visible p50 "
      "{:.0f} ms, p90 {:.0f} ms, p99 {:.0f} ms, max {:.0f} ms\n",
      rows_seen, commits, skipped, latencies.size(), Percentile(latencies, 0.50),
      Percentile(latencies, 0.90), Percentile(latencies, 0.99), Percentile(latencies, 1.0));
  if (rows_seen < rows_wanted) {
    fmt::print(stderr, "timed out with {} of {} rows\n", rows_seen, rows_wanted);
    return 1;
  }
  return 0;
}

// FileSeries: what one Parquet file teaches the next of the same stream of rows (a pipeline's
// files of one table, written one after another), handed to each FileWriter through
// WriterOptions::series.
//
// Today, the dictionary verdict: a leaf column whose dictionary did not pay in a file (it
// outgrew dictionary_max_bytes, or its first page's dictionary was no smaller than PLAIN) is
// written PLAIN from its first value in the next kPlainFiles files, then tried again. Without
// it, every file hashes the first page of a unique column (ids, UUIDs, payloads) into a
// dictionary it then drops: for small files (a routed pipeline's ten tables share one batch
// budget) most of such a column's values.
//
//   auto series = std::make_shared<parquet::FileSeries>();
//   options.series = series;   // every file of the stream
//
// The verdict changes only encodings: every file reads back the same rows.
//
// Thread-safety: thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <string>

namespace ferry::parquet {

class FileSeries {
 public:
  // Files written PLAIN after a file whose dictionary did not pay, before the next try.
  static constexpr int kPlainFiles = 8;

  // Whether a new file writes the leaf column at `path` (path_in_schema joined with '.') PLAIN
  // from its first value; counts the file when it does.
  bool StartPlain(const std::string& path);
  // A closed file that started the column with a dictionary: `fell_back` when the dictionary did
  // not pay.
  void Record(const std::string& path, bool fell_back);

 private:
  std::mutex mu_;
  std::map<std::string, int> plain_left_;  // mu_; files still to write PLAIN, by path
};

}  // namespace ferry::parquet

// Conformance of the reader with apache/parquet-testing (../shared/testdata/parquet-testing):
// every file decodes, reads the same through small read windows and in batches of any size, and
// the files with something particular (LZ4 framings, checksums, PARQUET-816 sizes, 1 GiB strings)
// read as they must. Rows checked against expected values from outside ferry (the data's
// *_expect.csv and .md files, DuckDB's output) are in file_reader_expected_test.cc.
#include "ferry/parquet/file_reader.h"

#include <dirent.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "ferry/columnar/column.h"
#include "ferry/parquet/file_reader_test_util.h"

namespace ferry::parquet {
namespace {

using columnar::BinaryColumn;
using columnar::Column;
using columnar::RecordBatch;
using columnar::TypeId;

using testing::ExpectRows;
using testing::kDir;
using testing::ReadFile;
using testing::ReadStatus;
using testing::RenderRow;

std::vector<std::string> ListParquetFiles() {
  std::vector<std::string> out;
  DIR* dir = opendir(kDir.c_str());
  if (dir == nullptr) {
    return out;
  }
  while (dirent* e = readdir(dir)) {
    std::string name = e->d_name;
    if (name.size() > 8 && name.substr(name.size() - 8) == ".parquet") {
      out.push_back(name);
    }
  }
  closedir(dir);
  std::sort(out.begin(), out.end());
  return out;
}

// Every file except the encrypted ones (*.parquet.encrypted, not listed) and geospatial/ (a
// folder) decodes, row group by row group and whole, to a valid batch of the footer's row count.
// large_string_map.brotli.parquet holds two 1 GiB strings: it is refused by the default
// ReaderOptions (ResourceExhausted), and decodes with raised limits in
// LargeStringMapDecodesWithRaisedLimits.
TEST(ParquetTestingTest, EveryFileDecodes) {
  std::vector<std::string> files = ListParquetFiles();
  ASSERT_GE(files.size(), 65u);
  for (const std::string& name : files) {
    SCOPED_TRACE(name);
    auto reader = FileReader::OpenLocal(kDir + name);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    auto all = (*reader)->ReadAll();
    if (name == "large_string_map.brotli.parquet") {
      EXPECT_EQ(all.status().code(), StatusCode::kResourceExhausted) << all.status().ToString();
      continue;
    }
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    EXPECT_TRUE(all->Validate().ok()) << all->Validate().ToString();
    if (all->num_columns() > 0) {
      EXPECT_EQ(all->num_rows(), (*reader)->num_rows());
    }
    int64_t rows = 0;
    for (int rg = 0; rg < (*reader)->num_row_groups(); rg++) {
      auto batch = (*reader)->ReadRowGroup(rg);
      ASSERT_TRUE(batch.ok()) << batch.status().ToString();
      rows += batch->num_rows();
    }
    if (all->num_columns() > 0) {
      EXPECT_EQ(rows, all->num_rows());
    }
  }
}

// Column chunks are read a window at a time (ReaderOptions::min_read_size): with windows of a
// few bytes, page headers and bodies straddle every window edge, and every file still reads to
// the same rows (or the same error) as with the default windows.
TEST(ParquetTestingTest, EveryFileReadsTheSameThroughSmallReadWindows) {
  for (const std::string& name : ListParquetFiles()) {
    if (name == "large_string_map.brotli.parquet") {
      continue;
    }
    SCOPED_TRACE(name);
    auto reader = FileReader::OpenLocal(kDir + name);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    auto expected = (*reader)->ReadAll();
    ASSERT_TRUE(expected.ok()) << expected.status().ToString();
    for (int64_t min_read : {1, 7, 300}) {
      ReaderOptions options;
      options.min_read_size = min_read;
      RecordBatch got = ReadFile(name, options);
      ASSERT_EQ(got.num_rows(), expected->num_rows()) << "min_read_size " << min_read;
      for (int64_t r = 0; r < got.num_rows(); r++) {
        ASSERT_EQ(RenderRow(got, r), RenderRow(*expected, r))
            << "min_read_size " << min_read << " row " << r;
      }
    }
  }
}

// ReadBatches: every file reads to the same rows in batches of 1, 3 and 1,000 rows as whole; a
// row group of flat fields over max_rows rows comes in batches of exactly max_rows (the last of
// the row group shorter), any other row group as one batch.
TEST(ParquetTestingTest, EveryFileReadsTheSameInBatches) {
  for (const std::string& name : ListParquetFiles()) {
    if (name == "large_string_map.brotli.parquet") {
      continue;
    }
    SCOPED_TRACE(name);
    auto reader = FileReader::OpenLocal(kDir + name);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    auto expected = (*reader)->ReadAll();
    ASSERT_TRUE(expected.ok()) << expected.status().ToString();
    if (expected->num_columns() == 0) {
      continue;
    }
    for (int64_t max_rows : {1, 3, 1000}) {
      int64_t row = 0;
      std::vector<int64_t> sizes;
      Status st = (*reader)->ReadBatches({}, max_rows, [&](const RecordBatch& b) {
        FERRY_RETURN_IF_ERROR(b.Validate());
        sizes.push_back(b.num_rows());
        for (int64_t r = 0; r < b.num_rows(); r++, row++) {
          if (RenderRow(b, r) != RenderRow(*expected, row)) {
            return Internal("row {}: {} vs {}", row, RenderRow(b, r), RenderRow(*expected, row));
          }
        }
        return Status::OK();
      });
      ASSERT_TRUE(st.ok()) << "max_rows " << max_rows << ": " << st.ToString();
      EXPECT_EQ(row, expected->num_rows()) << "max_rows " << max_rows;
      // Batch sizes, row group by row group.
      bool flat = true;
      for (const auto& field : (*reader)->file_schema().fields) {
        flat = flat && field.kind == AssemblyNode::Kind::kLeaf &&
               (*reader)->file_schema().leaves[static_cast<size_t>(field.first_leaf)].max_rep == 0;
      }
      std::vector<int64_t> want;
      for (const auto& rg : (*reader)->metadata().row_groups) {
        if (flat && rg.num_rows > max_rows) {
          for (int64_t left = rg.num_rows; left > 0; left -= max_rows) {
            want.push_back(std::min(left, max_rows));
          }
        } else {
          want.push_back(rg.num_rows);
        }
      }
      EXPECT_EQ(sizes, want) << "max_rows " << max_rows;
    }
  }
}

// An error from the callback ends ReadBatches and comes back as is.
TEST(ParquetTestingTest, ReadBatchesStopsAtTheCallbacksError) {
  auto reader = FileReader::OpenLocal(kDir + "alltypes_tiny_pages.parquet");
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  int calls = 0;
  Status st = (*reader)->ReadBatches(
      {}, 1, [&](const RecordBatch&) { return ++calls == 2 ? Cancelled("enough") : Status::OK(); });
  EXPECT_EQ(st.code(), StatusCode::kCancelled) << st.ToString();
  EXPECT_EQ(calls, 2);
  EXPECT_EQ((*reader)->ReadBatches({}, 0, [](const RecordBatch&) { return Status::OK(); }).code(),
            StatusCode::kInvalidArgument);
}

TEST(ParquetTestingTest, LargeStringMapIsRefusedByDefaultWithAClearError) {
  Status s = ReadStatus("large_string_map.brotli.parquet");
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find(
                "large_string_map.brotli.parquet: row group 0, column arr.key_value.key: page 0"),
            std::string::npos)
      << s.ToString();
  EXPECT_NE(s.message().find("max_page_size"), std::string::npos) << s.ToString();
}

// Reads the file the README describes ([[("a" * 2^30, 1)]] twice): needs about 5 GB of memory,
// so it runs only when FERRY_LARGE_TESTS is set.
TEST(ParquetTestingTest, LargeStringMapDecodesWithRaisedLimits) {
  if (std::getenv("FERRY_LARGE_TESTS") == nullptr) {
    GTEST_SKIP() << "set FERRY_LARGE_TESTS=1 to read two 1 GiB strings";
  }
  ReaderOptions options;
  options.max_page_size = int64_t{2} << 30;
  options.max_batch_bytes = int64_t{8} << 30;
  RecordBatch b = ReadFile("large_string_map.brotli.parquet", options);
  ASSERT_EQ(b.num_rows(), 2);
  const auto& map = *b.column(0).As<columnar::MapColumn>();
  const auto& keys = *map.keys().As<BinaryColumn>();
  ASSERT_EQ(keys.length(), 2);
  for (int64_t i = 0; i < 2; i++) {
    std::string_view k = keys.Value(i);
    EXPECT_EQ(k.size(), size_t{1} << 30);
    EXPECT_EQ(k.find_first_not_of('a'), std::string_view::npos);
    EXPECT_EQ(map.values().As<columnar::Int32Column>()->Value(i), 1);
  }
}

// The legacy Hadoop LZ4 framing, an LZ4 frame in an LZ4 file (non_hadoop), and LZ4_RAW hold the
// same rows (DuckDB reads only the LZ4_RAW ones; their rows are checked below).
TEST(ParquetTestingTest, Lz4FramingsAgreeWithLz4Raw) {
  ExpectRows("lz4_raw_compressed.parquet", {R"({"c0":1593604800,"c1":"abc","v11":42})",
                                            R"({"c0":1593604800,"c1":"def","v11":7.7})",
                                            R"({"c0":1593604801,"c1":"abc","v11":42.125})",
                                            R"({"c0":1593604801,"c1":"def","v11":7.7})"});
  RecordBatch raw = ReadFile("lz4_raw_compressed.parquet");
  for (const char* f : {"hadoop_lz4_compressed.parquet", "non_hadoop_lz4_compressed.parquet"}) {
    RecordBatch b = ReadFile(f);
    ASSERT_EQ(b.num_rows(), raw.num_rows()) << f;
    for (int64_t r = 0; r < b.num_rows(); r++) {
      EXPECT_EQ(RenderRow(b, r), RenderRow(raw, r)) << f;
    }
  }
  RecordBatch larger_raw = ReadFile("lz4_raw_compressed_larger.parquet");
  RecordBatch larger = ReadFile("hadoop_lz4_compressed_larger.parquet");
  ASSERT_EQ(larger.num_rows(), 10000);
  ASSERT_EQ(larger_raw.num_rows(), 10000);
  for (int64_t r = 0; r < 10000; r++) {
    ASSERT_EQ(RenderRow(larger, r), RenderRow(larger_raw, r)) << r;
  }
}

// datapage_v1-corrupt-checksum.parquet differs from the uncompressed one only in two CRCs: with
// checks off (the default) it reads the same rows; with them on it is refused, naming the page.
TEST(ParquetTestingTest, CorruptChecksumsAreIgnoredByDefaultAndCaughtOnRequest) {
  RecordBatch good = ReadFile("datapage_v1-uncompressed-checksum.parquet");
  RecordBatch corrupt = ReadFile("datapage_v1-corrupt-checksum.parquet");
  ASSERT_EQ(good.num_rows(), 5120);
  ASSERT_EQ(corrupt.num_rows(), 5120);
  for (int64_t r = 0; r < good.num_rows(); r += 7) {
    EXPECT_EQ(RenderRow(good, r), RenderRow(corrupt, r));
  }
  ReaderOptions verify;
  verify.verify_checksums = true;
  for (const char* f :
       {"datapage_v1-uncompressed-checksum.parquet",
        "datapage_v1-snappy-compressed-checksum.parquet",
        "plain-dict-uncompressed-checksum.parquet", "rle-dict-snappy-checksum.parquet"}) {
    EXPECT_TRUE(ReadStatus(f, verify).ok()) << f << ": " << ReadStatus(f, verify).ToString();
  }
  Status s = ReadStatus("datapage_v1-corrupt-checksum.parquet", verify);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("column a: page 0 at offset 4: page CRC mismatch"), std::string::npos)
      << s.ToString();
  s = ReadStatus("rle-dict-uncompressed-corrupt-checksum.parquet", verify);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("column long_field: page 0"), std::string::npos) << s.ToString();
}

// nation.dict-malformed.parquet was written by an old parquet-mr whose chunk sizes leave out the
// dictionary page header (PARQUET-816); like Arrow and DuckDB, ferry reads 100 bytes more for
// such writers and gets the data DuckDB prints.
TEST(ParquetTestingTest, NationDictMalformedReadsWithTheParquet816Allowance) {
  RecordBatch b = ReadFile("nation.dict-malformed.parquet");
  ASSERT_EQ(b.num_rows(), 25);
  const auto& names = *b.column(1).As<BinaryColumn>();
  EXPECT_EQ(names.Value(0), "ALGERIA");
  EXPECT_EQ(names.Value(20), "SAUDI ARABIA");
  EXPECT_EQ(names.Value(24), "UNITED STATES");
  EXPECT_EQ(b.column(2).As<columnar::Int32Column>()->Value(4), 4);
}

}  // namespace
}  // namespace ferry::parquet

// FileSeries (file_series.h): the dictionary verdict of one file carried to the next files.

#include "ferry/parquet/file_series.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "ferry/base/io.h"
#include "ferry/columnar/column.h"
#include "ferry/columnar/schema_for_test.h"
#include "ferry/parquet/file_reader.h"
#include "ferry/parquet/writer.h"
#include "ferry/parquet/writer_test_decoder.h"

namespace ferry::parquet {
namespace {

using columnar::BinaryColumn;
using columnar::DataType;
using columnar::F;
using columnar::RecordBatch;
using columnar::Schema;

// Data pages of `column` in `encoding`.
int Pages(const FileMetaData& md, int column, Encoding encoding) {
  const ColumnMetaData& cmd = *md.row_groups[0].columns[static_cast<size_t>(column)].meta_data;
  int n = 0;
  for (const PageEncodingStats& s : *cmd.encoding_stats) {
    n += s.page_type == PageType::kDataPage && s.encoding == encoding ? s.count : 0;
  }
  return n;
}

// A column whose dictionary did not pay in one file is PLAIN from its first value in the next
// kPlainFiles files, then tried again; a column whose dictionary pays keeps it in every file;
// every file reads back the same rows.
TEST(FileSeriesTest, CarriesTheDictionaryVerdictToTheNextFiles) {
  auto schema = std::make_shared<Schema>(std::vector<columnar::Field>{
      F("uuid", DataType::String(), false), F("city", DataType::String(), false)});
  RecordBatch batch = RecordBatch::MakeEmpty(schema);
  for (int64_t i = 0; i < 3000; ++i) {
    batch.mutable_column(0)->As<BinaryColumn>()->Append(fmt::format("{:036}", i * 104729));
    batch.mutable_column(1)->As<BinaryColumn>()->Append(i % 3 == 0 ? "Berlin" : "Lisbon");
  }
  WriterOptions o;
  o.page_max_rows = 1500;
  o.series = std::make_shared<FileSeries>();
  for (int f = 0; f < FileSeries::kPlainFiles + 3; ++f) {
    SCOPED_TRACE(fmt::format("file {}", f));
    std::string file = testing::WriteToString(batch, o);
    FileMetaData md = testing::ReadFooter(file);
    // The first file, and the one after kPlainFiles PLAIN files, try the dictionary.
    const bool tries = f == 0 || f == FileSeries::kPlainFiles + 1;
    EXPECT_EQ(Pages(md, 0, Encoding::kRleDictionary) > 0, tries);
    EXPECT_GE(Pages(md, 0, Encoding::kPlain), 1);
    EXPECT_EQ(md.row_groups[0].columns[0].meta_data->dictionary_page_offset.has_value(), tries);
    EXPECT_GE(Pages(md, 1, Encoding::kRleDictionary), 2);
    EXPECT_EQ(Pages(md, 1, Encoding::kPlain), 0);
    auto reader = FileReader::Open(std::make_shared<StringRandomAccessFile>(file));
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    auto rows = (*reader)->ReadAll();
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    ASSERT_EQ(rows->num_rows(), batch.num_rows());
    for (int c = 0; c < 2; ++c) {
      const auto& got = *rows->column(c).As<BinaryColumn>();
      const auto& want = *batch.column(c).As<BinaryColumn>();
      for (int64_t r = 0; r < batch.num_rows(); r += 499) {
        EXPECT_EQ(got.Value(r), want.Value(r)) << "column " << c << " row " << r;
      }
    }
  }
  // Without a series, each file decides alone.
  o.series = nullptr;
  EXPECT_GE(
      Pages(testing::ReadFooter(testing::WriteToString(batch, o)), 0, Encoding::kRleDictionary), 1);
}

}  // namespace
}  // namespace ferry::parquet

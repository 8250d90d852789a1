// The column chunk reader's fast paths and buffers, through FileReader: pages whose values are
// all present decode straight into the column, the others through a dense page column; chunks
// are read a window at a time into buffers reused from chunk to chunk; columns are reserved from
// the chunk metadata only as far as the read's budget allows, so metadata that lies costs an
// error, not memory.
#include "ferry/parquet/column_chunk_reader.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>

#include "ferry/base/io.h"
#include "ferry/parquet/file_reader.h"
#include "ferry/parquet/writer.h"
#include "ferry/parquet/writer_test_decoder.h"

namespace ferry::parquet {
namespace {

using columnar::BinaryColumn;
using columnar::DataType;
using columnar::Field;
using columnar::Int64Column;
using columnar::RecordBatch;
using columnar::Schema;

// Rows `row` of `n`: nulls in runs, so that some pages (of 4 rows) hold no null, some only nulls.
bool IsNullRow(int64_t row) {
  return (row / 8) % 3 == 1 && row % 5 != 0;
}

RecordBatch MakeBatch(int64_t n) {
  auto schema = std::make_shared<const Schema>(std::vector<Field>{
      {.name = "i", .type = DataType::Int64(), .nullable = true},
      {.name = "s", .type = DataType::String(), .nullable = true},
      {.name = "d", .type = DataType::String(), .nullable = true},  // few values: dictionary
      {.name = "r", .type = DataType::Int64(), .nullable = false},
  });
  RecordBatch batch = RecordBatch::MakeEmpty(schema);
  auto* i = batch.mutable_column(0)->As<Int64Column>();
  auto* s = batch.mutable_column(1)->As<BinaryColumn>();
  auto* d = batch.mutable_column(2)->As<BinaryColumn>();
  auto* r = batch.mutable_column(3)->As<Int64Column>();
  for (int64_t row = 0; row < n; row++) {
    r->Append(row * 7);
    if (IsNullRow(row)) {
      i->AppendNull();
      s->AppendNull();
      d->AppendNull();
      continue;
    }
    i->Append(row * 1000003);
    s->Append(std::string(static_cast<size_t>(row % 37), static_cast<char>('a' + row % 26)));
    d->Append(row % 3 == 0 ? "" : (row % 3 == 1 ? "one" : "two"));
  }
  return batch;
}

void ExpectEqual(const RecordBatch& got, const RecordBatch& want) {
  ASSERT_TRUE(got.Validate().ok()) << got.Validate().ToString();
  ASSERT_EQ(got.num_rows(), want.num_rows());
  for (int c = 0; c < want.num_columns(); c++) {
    const columnar::Column& g = got.column(c);
    const columnar::Column& w = want.column(c);
    EXPECT_EQ(g.null_count(), w.null_count()) << "column " << c;
    for (int64_t row = 0; row < want.num_rows(); row++) {
      ASSERT_EQ(g.IsNull(row), w.IsNull(row)) << "column " << c << " row " << row;
      if (w.IsNull(row)) {
        continue;
      }
      if (c == 1 || c == 2) {
        ASSERT_EQ(g.As<BinaryColumn>()->Value(row), w.As<BinaryColumn>()->Value(row))
            << "column " << c << " row " << row;
      } else {
        ASSERT_EQ(g.As<Int64Column>()->Value(row), w.As<Int64Column>()->Value(row))
            << "column " << c << " row " << row;
      }
    }
  }
}

// Pages without nulls (decoded straight into the column), pages with some nulls and pages of
// nulls only (through the dense column), in one chunk, with every codec path that matters:
// PLAIN and dictionary, v1 and v2 pages; several row groups read into one batch (ReadAll) and
// one by one, through a reader that reuses its buffers across all of them.
TEST(ColumnChunkReaderTest, PagesWithAndWithoutNullsInOneChunk) {
  RecordBatch batch = MakeBatch(1000);
  for (bool dictionary : {false, true}) {
    for (bool v2 : {false, true}) {
      SCOPED_TRACE(std::string(dictionary ? "dictionary" : "plain") + (v2 ? " v2" : " v1"));
      WriterOptions options;
      options.page_max_rows = 4;
      options.row_group_max_rows = 300;
      options.enable_dictionary = dictionary;
      options.data_page_v2 = v2;
      auto file = std::make_shared<StringRandomAccessFile>(testing::WriteToString(batch, options),
                                                           "chunk.parquet");
      auto reader = FileReader::Open(file);
      ASSERT_TRUE(reader.ok()) << reader.status().ToString();
      ASSERT_EQ((*reader)->num_row_groups(), 4);
      auto all = (*reader)->ReadAll();
      ASSERT_TRUE(all.ok()) << all.status().ToString();
      ExpectEqual(*all, batch);
      // Row groups again, last first: the buffers left by larger chunks are reused.
      for (int rg = 3; rg >= 0; rg--) {
        auto part = (*reader)->ReadRowGroup(rg);
        ASSERT_TRUE(part.ok()) << part.status().ToString();
        EXPECT_EQ(part->num_rows(), rg == 3 ? 100 : 300);
      }
    }
  }
}

// A chunk far larger than a read window, in large pages and in many small ones.
TEST(ColumnChunkReaderTest, ChunksLargerThanTheReadWindow) {
  RecordBatch batch = MakeBatch(60000);
  for (int64_t page_rows : {7, 20000}) {
    WriterOptions options;
    options.page_max_rows = page_rows;
    options.codec = CompressionCodec::kUncompressed;
    auto file = std::make_shared<StringRandomAccessFile>(testing::WriteToString(batch, options),
                                                         "chunk.parquet");
    for (int64_t min_read : {int64_t{1}, int64_t{4096}, int64_t{256} << 10}) {
      SCOPED_TRACE("page_max_rows " + std::to_string(page_rows) + ", min_read_size " +
                   std::to_string(min_read));
      ReaderOptions read_options;
      read_options.min_read_size = min_read;
      auto reader = FileReader::Open(file, read_options);
      ASSERT_TRUE(reader.ok()) << reader.status().ToString();
      auto all = (*reader)->ReadAll();
      ASSERT_TRUE(all.ok()) << all.status().ToString();
      ExpectEqual(*all, batch);
    }
  }
}

// Rewrites the footer of `file` after `edit` changed its metadata.
std::string EditFooter(const std::string& file, const std::function<void(FileMetaData*)>& edit) {
  uint32_t len = 0;
  std::memcpy(&len, file.data() + file.size() - 8, 4);
  size_t footer_at = file.size() - 8 - len;
  auto md = ParseFileMetaData(std::string_view(file).substr(footer_at, len));
  EXPECT_TRUE(md.ok()) << md.status().ToString();
  edit(&*md);
  std::string out = file.substr(0, footer_at);
  std::string footer;
  SerializeFileMetaData(*md, &footer);
  out += footer;
  auto n = static_cast<uint32_t>(footer.size());
  out.append(reinterpret_cast<const char*>(&n), 4);
  out += "PAR1";
  return out;
}

// Chunk metadata that claims far more values and bytes than the chunk holds: nothing is reserved
// on its word beyond the budget, and the read fails with DataLoss naming the chunk.
TEST(ColumnChunkReaderTest, LyingChunkMetadataIsAnErrorNotAReservation) {
  RecordBatch batch = MakeBatch(100);
  struct Case {
    bool dictionary;
    int64_t num_values;
    int64_t uncompressed;
  };
  for (Case c : {Case{true, int64_t{1} << 40, int64_t{1} << 50},
                 Case{false, int64_t{1} << 40, int64_t{1} << 50},
                 Case{true, int64_t{1} << 22, 1 << 30}, Case{false, int64_t{1} << 22, 1 << 30},
                 Case{true, INT64_MAX / 2, INT64_MAX}, Case{false, INT64_MAX / 2, INT64_MAX}}) {
    SCOPED_TRACE(std::string(c.dictionary ? "dictionary, " : "plain, ") +
                 std::to_string(c.num_values) + " values, " + std::to_string(c.uncompressed) +
                 " bytes");
    WriterOptions write_options;
    write_options.enable_dictionary = c.dictionary;
    std::string good = testing::WriteToString(batch, write_options);
    std::string bad = EditFooter(good, [&](FileMetaData* md) {
      for (ColumnChunk& chunk : md->row_groups[0].columns) {
        chunk.meta_data->num_values = c.num_values;
        chunk.meta_data->total_uncompressed_size = c.uncompressed;
      }
    });
    ReaderOptions options;
    options.max_batch_bytes = 1 << 20;
    auto reader =
        FileReader::Open(std::make_shared<StringRandomAccessFile>(bad, "lying.parquet"), options);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    // Each column on its own: plain integers, PLAIN strings, dictionary strings, required.
    for (int column = 0; column < 4; column++) {
      auto read = (*reader)->ReadRowGroup(0, std::vector<int>{column});
      ASSERT_FALSE(read.ok());
      EXPECT_EQ(read.status().code(), StatusCode::kDataLoss) << read.status().ToString();
      std::string name = batch.schema().field(column).name;
      EXPECT_NE(read.status().message().find("lying.parquet: row group 0, column " + name),
                std::string::npos)
          << read.status().ToString();
    }
  }
}

TEST(DecodeBudgetTest, ReservationsHaveTheirOwnAllowance) {
  DecodeBudget budget(100);
  EXPECT_TRUE(budget.Reserve(60));
  EXPECT_FALSE(budget.Reserve(41));  // 40 left to reserve
  EXPECT_FALSE(budget.Reserve(0));
  EXPECT_FALSE(budget.Reserve(-1));
  EXPECT_TRUE(budget.Reserve(40));
  // Charges draw on the full limit: reserving did not spend it.
  EXPECT_TRUE(budget.Charge(100).ok());
  EXPECT_EQ(budget.Charge(1).code(), StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace ferry::parquet

#include "ferry/columnar/column.h"

#include <gtest/gtest.h>

#include "ferry/columnar/record_batch.h"

namespace ferry::columnar {
namespace {

TEST(TypesTest, ToStringIsSparkDdl) {
  auto t = DataType::Struct(
      {Field{"id", DataType::Int64(), false, {}},
       Field{"tags", DataType::List(DataType::String()), true, {}},
       Field{"m", DataType::Map(DataType::String(), DataType::Decimal(12, 2)), true, {}},
       Field{"ts", DataType::Timestamp(), true, {}}});
  EXPECT_EQ(t->ToString(),
            "STRUCT<id: BIGINT NOT NULL, tags: ARRAY<STRING>, m: MAP<STRING, DECIMAL(12,2)>, "
            "ts: TIMESTAMP>");
  EXPECT_TRUE(t->Equals(*t));
  EXPECT_FALSE(DataType::Timestamp(TimeUnit::kMicros, true)
                   ->Equals(*DataType::Timestamp(TimeUnit::kMicros, false)));
  EXPECT_EQ(DataType::Timestamp(TimeUnit::kMicros, false)->ToString(), "TIMESTAMP_NTZ");
}

TEST(ColumnTest, PrimitiveAndBinary) {
  auto col = MakeColumn(DataType::Int64());
  auto* ints = col->As<Int64Column>();
  ints->Append(1);
  ints->AppendNull();
  ints->Append(-3);
  EXPECT_EQ(ints->length(), 3);
  EXPECT_EQ(ints->null_count(), 1);
  EXPECT_TRUE(ints->IsNull(1));
  EXPECT_EQ(ints->Value(2), -3);

  auto scol = MakeColumn(DataType::String());
  auto* s = scol->As<BinaryColumn>();
  s->Append("ab");
  s->AppendNull();
  s->Append("");
  s->Append("xyz");
  EXPECT_EQ(s->Value(0), "ab");
  EXPECT_EQ(s->Value(2), "");
  EXPECT_EQ(s->Value(3), "xyz");
  EXPECT_EQ(s->offsets(), (std::vector<int64_t>{0, 2, 2, 2, 5}));
}

TEST(ColumnTest, AppendRangeCopiesRowsValidityAndNullCount) {
  auto from = MakeColumn(DataType::Int64());
  auto* ints = from->As<Int64Column>();
  for (int64_t v : {10, 11, 12, 13}) {
    ints->Append(v);
  }
  ints->AppendNull();
  auto to = MakeColumn(DataType::Int64());
  to->As<Int64Column>()->Append(7);
  to->AppendRange(*from, 2, 5);
  ASSERT_EQ(to->length(), 4);
  EXPECT_EQ(to->null_count(), 1);
  EXPECT_EQ(to->As<Int64Column>()->values(), (std::vector<int64_t>{7, 12, 13, 0}));
  EXPECT_TRUE(to->IsNull(3));
  to->AppendRange(*from, 1, 1);  // empty range
  EXPECT_EQ(to->length(), 4);

  auto sfrom = MakeColumn(DataType::String());
  auto* s = sfrom->As<BinaryColumn>();
  s->Append("ab");
  s->AppendNull();
  s->Append("");
  s->Append("xyz");
  auto sto = MakeColumn(DataType::String());
  sto->As<BinaryColumn>()->Append("q");
  sto->AppendRange(*sfrom, 1, 4);
  const auto* out = sto->As<BinaryColumn>();
  ASSERT_EQ(out->length(), 4);
  EXPECT_EQ(out->null_count(), 1);
  EXPECT_EQ(out->offsets(), (std::vector<int64_t>{0, 1, 1, 1, 4}));
  EXPECT_EQ(out->data(), "qxyz");
  EXPECT_TRUE(out->IsNull(1));

  // Nested columns copy row by row (the base implementation).
  auto type = DataType::List(DataType::String());
  auto lfrom = MakeColumn(type);
  auto* l = lfrom->As<ListColumn>();
  l->mutable_child()->As<BinaryColumn>()->Append("x");
  l->FinishRow();
  l->AppendNull();
  auto lto = MakeColumn(type);
  lto->AppendRange(*lfrom, 0, 2);
  ASSERT_EQ(lto->length(), 2);
  EXPECT_TRUE(lto->IsNull(1));
  EXPECT_EQ(lto->As<ListColumn>()->child().length(), 1);
}

TEST(ColumnTest, NestedBuildTakeAndValidate) {
  // STRUCT<a: INT NOT NULL, l: ARRAY<STRING>>
  auto type = DataType::Struct({Field{"a", DataType::Int32(), false, {}},
                                Field{"l", DataType::List(DataType::String()), true, {}}});
  auto schema = std::make_shared<Schema>(std::vector<Field>{Field{"s", type, true, {}}});
  RecordBatch batch = RecordBatch::MakeEmpty(schema);
  auto* s = batch.mutable_column(0)->As<StructColumn>();
  auto* a = s->mutable_child(0)->As<Int32Column>();
  auto* l = s->mutable_child(1)->As<ListColumn>();
  auto* e = l->mutable_child()->As<BinaryColumn>();
  // row 0: {a: 1, l: ["x", "y"]}
  a->Append(1);
  e->Append("x");
  e->Append("y");
  l->FinishRow();
  s->FinishRow();
  // row 1: null
  s->AppendNull();
  // row 2: {a: 3, l: []}
  a->Append(3);
  l->FinishRow();
  s->FinishRow();
  ASSERT_TRUE(batch.Validate().ok()) << batch.Validate().ToString();
  EXPECT_EQ(batch.num_rows(), 3);

  std::vector<int64_t> idx = {2, 0};
  RecordBatch taken = batch.Take(idx);
  ASSERT_TRUE(taken.Validate().ok());
  const auto& ts = *taken.column(0).As<StructColumn>();
  EXPECT_EQ(ts.child(0).As<Int32Column>()->Value(0), 3);
  const auto& tl = *ts.child(1).As<ListColumn>();
  EXPECT_EQ(tl.ListLength(0), 0);
  EXPECT_EQ(tl.ListLength(1), 2);
  EXPECT_EQ(tl.child().As<BinaryColumn>()->Value(1), "y");
}

TEST(ColumnTest, ValidateRejectsNullInRequiredField) {
  auto schema =
      std::make_shared<Schema>(std::vector<Field>{Field{"id", DataType::Int64(), false, {}}});
  RecordBatch batch = RecordBatch::MakeEmpty(schema);
  batch.mutable_column(0)->As<Int64Column>()->Append(1);
  batch.mutable_column(0)->AppendNull();
  Status st = batch.Validate();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("id"), std::string::npos);
  EXPECT_NE(st.message().find("row 1"), std::string::npos);
}

TEST(ColumnTest, MapColumn) {
  auto col = MakeColumn(DataType::Map(DataType::String(), DataType::Int64()));
  auto* m = col->As<MapColumn>();
  m->mutable_keys()->As<BinaryColumn>()->Append("k");
  m->mutable_values()->As<Int64Column>()->AppendNull();
  m->FinishRow();
  m->AppendNull();
  EXPECT_EQ(m->MapLength(0), 1);
  EXPECT_EQ(m->MapLength(1), 0);
  EXPECT_TRUE(m->values().IsNull(0));
}

TEST(ColumnTest, TruncateRollsBackPartialRows) {
  auto type = DataType::Struct({Field{"n", DataType::Int64(), true, {}},
                                Field{"l", DataType::List(DataType::String()), true, {}}});
  auto col = MakeColumn(type);
  auto* s = col->As<StructColumn>();
  auto* n = s->mutable_child(0)->As<Int64Column>();
  auto* l = s->mutable_child(1)->As<ListColumn>();
  auto* e = l->mutable_child()->As<BinaryColumn>();
  n->Append(1);
  e->Append("keep");
  l->FinishRow();
  s->FinishRow();
  s->AppendNull();
  // A third row, abandoned half-way: the int was appended, the list got one element.
  n->Append(3);
  e->Append("drop");
  l->FinishRow();
  s->Truncate(2);
  EXPECT_EQ(s->length(), 2);
  EXPECT_EQ(s->null_count(), 1);
  EXPECT_EQ(n->length(), 2);
  EXPECT_EQ(l->length(), 2);
  EXPECT_EQ(e->length(), 1);
  EXPECT_EQ(e->data(), "keep");
  EXPECT_TRUE(s->ChildrenAligned());
}

TEST(ColumnTest, BulkBuildersAppendRowsEndingAtChildOffsets) {
  // The Parquet reader fills the child first, then closes the rows.
  auto col = MakeColumn(DataType::List(DataType::Int32()));
  auto* l = col->As<ListColumn>();
  auto* e = l->mutable_child()->As<Int32Column>();
  for (int32_t v : {1, 2, 3}) {
    e->Append(v);
  }
  l->AppendRowEndingAt(2, true);   // [1, 2]
  l->AppendRowEndingAt(2, false);  // null
  l->AppendRowEndingAt(2, true);   // []
  l->AppendRowEndingAt(3, true);   // [3]
  EXPECT_EQ(l->length(), 4);
  EXPECT_EQ(l->offsets(), (std::vector<int64_t>{0, 2, 2, 2, 3}));
  EXPECT_TRUE(l->IsNull(1));
  EXPECT_EQ(l->ListLength(3), 1);

  auto mcol = MakeColumn(DataType::Map(DataType::String(), DataType::Int64()));
  auto* m = mcol->As<MapColumn>();
  m->mutable_keys()->As<BinaryColumn>()->Append("k");
  m->mutable_values()->As<Int64Column>()->Append(5);
  m->AppendRowEndingAt(0, false);
  m->AppendRowEndingAt(1, true);
  EXPECT_EQ(m->MapLength(1), 1);
  EXPECT_TRUE(m->IsNull(0));
}

// Decoders resize the values, then add the validity of many rows at once.
TEST(ColumnTest, BulkValidityKeepsTheNullCount) {
  auto col = MakeColumn(DataType::Int64());
  auto* c = col->As<Int64Column>();
  c->mutable_values()->resize(5);
  c->AppendValidity(3, true);
  c->AppendValidity(2, false);
  c->AppendValidity(0, false);
  EXPECT_EQ(c->length(), 5);
  EXPECT_EQ(c->null_count(), 2);
  EXPECT_TRUE(c->IsValid(2));
  EXPECT_TRUE(c->IsNull(3));
  c->Truncate(3);
  EXPECT_EQ(c->null_count(), 0);
}

// Regression (parquet_reader_fuzzer: parquet-testing's overflow_i16_page_cnt.parquet took 52 s):
// the Parquet reader reserves "rows so far + this page" once per page; an exact reserve copied
// the whole column at every page, quadratic in the number of pages.
TEST(ColumnTest, RepeatedReserveGrowsGeometrically) {
  auto ints = MakeColumn(DataType::Int64());
  auto* col = ints->As<PrimitiveColumn<int64_t>>();
  auto strings = MakeColumn(DataType::String());
  auto* bin = strings->As<BinaryColumn>();
  int int_moves = 0;
  int data_moves = 0;
  const int64_t* last = nullptr;
  const char* last_data = nullptr;
  for (int64_t i = 0; i < 100000; i++) {
    col->Reserve(col->length() + 1);
    col->Append(i);
    int_moves += col->values().data() != last ? 1 : 0;
    last = col->values().data();
    bin->Reserve(bin->length() + 1);
    bin->ReserveData(static_cast<int64_t>(bin->data().size()) + 3);
    bin->Append("abc");
    data_moves += bin->data().data() != last_data ? 1 : 0;
    last_data = bin->data().data();
  }
  EXPECT_LE(int_moves, 20);
  EXPECT_LE(data_moves, 25);
}

}  // namespace
}  // namespace ferry::columnar

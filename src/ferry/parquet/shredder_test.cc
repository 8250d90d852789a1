#include "ferry/parquet/shredder.h"

#include <gtest/gtest.h>

#include "ferry/columnar/column.h"
#include "ferry/columnar/schema_for_test.h"
#include "ferry/parquet/schema_writer.h"

namespace ferry::parquet {
namespace {

using columnar::F;

using columnar::BinaryColumn;
using columnar::DataType;
using columnar::Field;
using columnar::Int32Column;
using columnar::ListColumn;
using columnar::MapColumn;
using columnar::Schema;
using columnar::StructColumn;

struct Levels {
  std::vector<int16_t> def;
  std::vector<int16_t> rep;
  std::vector<int64_t> rows;
};

Levels ShredAll(const Schema& schema, const columnar::Column& top, size_t leaf) {
  auto ps = BuildParquetSchema(schema);
  EXPECT_TRUE(ps.ok()) << ps.status().ToString();
  ShreddedLeaf out;
  Status s = Shredder::Shred(ps->paths[leaf], ps->leaves[leaf], top, 0, top.length(), &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(out.num_levels, static_cast<int64_t>(out.def_levels.size()));
  return Levels{out.def_levels, out.rep_levels, out.value_rows};
}

// a ARRAY<STRUCT<b: INT, c: ARRAY<STRING>>> with rows
//   [{b:1, c:["x","y"]}, {b:null, c:[]}],  null,  [],  [null, {b:2, c:null}]
TEST(ShredderTest, ListOfStructsWithLists) {
  auto inner = DataType::List(DataType::String());
  auto st = DataType::Struct({F("b", DataType::Int32()), F("c", inner)});
  Schema schema({F("a", DataType::List(st))});
  auto col = columnar::MakeColumn(schema.field(0).type);
  auto* a = col->As<ListColumn>();
  auto* s = a->mutable_child()->As<StructColumn>();
  auto* b = s->mutable_child(0)->As<Int32Column>();
  auto* c = s->mutable_child(1)->As<ListColumn>();
  auto* cs = c->mutable_child()->As<BinaryColumn>();
  // row 0
  b->Append(1);
  cs->Append("x");
  cs->Append("y");
  c->FinishRow();
  s->FinishRow();
  b->AppendNull();
  c->FinishRow();
  s->FinishRow();
  a->FinishRow();
  // row 1, row 2
  a->AppendNull();
  a->FinishRow();
  // row 3
  s->AppendNull();
  b->Append(2);
  c->AppendNull();
  s->FinishRow();
  a->FinishRow();

  Levels lb = ShredAll(schema, *col, 0);
  EXPECT_EQ(lb.def, (std::vector<int16_t>{4, 3, 0, 1, 2, 4}));
  EXPECT_EQ(lb.rep, (std::vector<int16_t>{0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(lb.rows, (std::vector<int64_t>{0, 3}));

  Levels lc = ShredAll(schema, *col, 1);
  EXPECT_EQ(lc.def, (std::vector<int16_t>{6, 6, 4, 0, 1, 2, 3}));
  EXPECT_EQ(lc.rep, (std::vector<int16_t>{0, 2, 1, 0, 0, 0, 1}));
  EXPECT_EQ(lc.rows, (std::vector<int64_t>{0, 1}));
}

// m MAP<STRING, INT> with rows {"a":1, "b":null}, null, {}
TEST(ShredderTest, Map) {
  Schema schema({F("m", DataType::Map(DataType::String(), DataType::Int32()))});
  auto col = columnar::MakeColumn(schema.field(0).type);
  auto* m = col->As<MapColumn>();
  auto* k = m->mutable_keys()->As<BinaryColumn>();
  auto* v = m->mutable_values()->As<Int32Column>();
  k->Append("a");
  v->Append(1);
  k->Append("b");
  v->AppendNull();
  m->FinishRow();
  m->AppendNull();
  m->FinishRow();
  Levels keys = ShredAll(schema, *col, 0);
  EXPECT_EQ(keys.def, (std::vector<int16_t>{2, 2, 0, 1}));
  EXPECT_EQ(keys.rep, (std::vector<int16_t>{0, 1, 0, 0}));
  EXPECT_EQ(keys.rows, (std::vector<int64_t>{0, 1}));
  Levels values = ShredAll(schema, *col, 1);
  EXPECT_EQ(values.def, (std::vector<int16_t>{3, 2, 0, 1}));
  EXPECT_EQ(values.rep, (std::vector<int16_t>{0, 1, 0, 0}));
  EXPECT_EQ(values.rows, (std::vector<int64_t>{0}));
}

// s STRUCT<x: INT NOT NULL, y: STRING> (nullable): dense path, placeholders under null rows.
TEST(ShredderTest, StructIsDense) {
  auto st = DataType::Struct({F("x", DataType::Int32(), false), F("y", DataType::String())});
  Schema schema({F("s", st)});
  auto col = columnar::MakeColumn(st);
  auto* s = col->As<StructColumn>();
  s->mutable_child(0)->As<Int32Column>()->Append(1);
  s->mutable_child(1)->As<BinaryColumn>()->AppendNull();
  s->FinishRow();
  s->AppendNull();  // placeholders: x is null there, which is fine under a null parent
  s->mutable_child(0)->As<Int32Column>()->Append(3);
  s->mutable_child(1)->As<BinaryColumn>()->Append("z");
  s->FinishRow();
  auto ps = BuildParquetSchema(schema);
  ASSERT_TRUE(ps.ok());
  ShreddedLeaf out;
  ASSERT_TRUE(Shredder::Shred(ps->paths[0], ps->leaves[0], *col, 0, 3, &out).ok());
  EXPECT_TRUE(out.dense);
  EXPECT_EQ(out.def_levels, (std::vector<int16_t>{1, 0, 1}));
  EXPECT_EQ(out.num_values, 2);
  ASSERT_TRUE(Shredder::Shred(ps->paths[1], ps->leaves[1], *col, 1, 3, &out).ok());
  EXPECT_EQ(out.def_levels, (std::vector<int16_t>{0, 2}));
  EXPECT_EQ(out.num_values, 1);
  EXPECT_EQ(out.begin, 1);
}

TEST(ShredderTest, NullInRequiredColumnIsAnError) {
  Schema schema({F("x", DataType::Int64(), false)});
  auto col = columnar::MakeColumn(DataType::Int64());
  col->As<columnar::Int64Column>()->Append(1);
  col->AppendNull();
  auto ps = BuildParquetSchema(schema);
  ShreddedLeaf out;
  Status s = Shredder::Shred(ps->paths[0], ps->leaves[0], *col, 0, 2, &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'x'"), std::string::npos) << s.ToString();

  // A required list element that is null.
  Schema ls({F("l", DataType::List(DataType::Int32(), false))});
  auto lc = columnar::MakeColumn(ls.field(0).type);
  lc->As<ListColumn>()->mutable_child()->AppendNull();
  lc->As<ListColumn>()->FinishRow();
  auto lps = BuildParquetSchema(ls);
  EXPECT_EQ(Shredder::Shred(lps->paths[0], lps->leaves[0], *lc, 0, 1, &out).code(),
            StatusCode::kInvalidArgument);
}

TEST(ShredderTest, SliceOfRepeatedColumn) {
  Schema schema({F("l", DataType::List(DataType::Int32()))});
  auto col = columnar::MakeColumn(schema.field(0).type);
  auto* l = col->As<ListColumn>();
  for (int r = 0; r < 5; ++r) {
    for (int k = 0; k < r; ++k) {
      l->mutable_child()->As<Int32Column>()->Append(r * 10 + k);
    }
    l->FinishRow();
  }
  Levels all = ShredAll(schema, *col, 0);
  auto ps = BuildParquetSchema(schema);
  ShreddedLeaf out;
  ASSERT_TRUE(Shredder::Shred(ps->paths[0], ps->leaves[0], *col, 3, 5, &out).ok());
  EXPECT_EQ(out.num_rows, 2);
  EXPECT_EQ(out.def_levels, (std::vector<int16_t>{3, 3, 3, 3, 3, 3, 3}));
  EXPECT_EQ(out.rep_levels, (std::vector<int16_t>{0, 1, 1, 0, 1, 1, 1}));
  EXPECT_EQ(out.value_rows, (std::vector<int64_t>{3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(all.def.front(), 1);  // row 0 is an empty list
}

}  // namespace
}  // namespace ferry::parquet

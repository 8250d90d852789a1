// Schema evolution and type widening in the delta layer: merging a writer's schema into a table's
// (schema_evolution.h), the protocol and metaData that commit it (type_widening.h), reading files
// written before a change, and the golden tables Spark wrote with type widening.
#include "ferry/delta/schema_evolution.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ferry/columnar/ddl.h"
#include "ferry/delta/file_scan.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_writer.h"
#include "ferry/delta/transaction.h"
#include "ferry/delta/type_widening.h"
#include "ferry/storage/local_store.h"
#include "ferry/storage/memory_store.h"
#include "ferry/testing/table_verifier.h"

namespace ferry::delta {
namespace {

using columnar::DataType;

columnar::Schema Ddl(std::string_view ddl) {
  auto s = columnar::ParseDdlSchema(ddl);
  EXPECT_TRUE(s.ok()) << ddl << ": " << s.status().ToString();
  return s.ok() ? *s : columnar::Schema();
}

SchemaMergeOptions Mode(SchemaEvolution mode) {
  return SchemaMergeOptions{.mode = mode};
}

TEST(MergeSchemaTest, AddsFieldsAtTheEndOfTheirStructs) {
  auto merge = MergeSchema(Ddl("id BIGINT, loc STRUCT<lat: DOUBLE>, tags ARRAY<STRUCT<k: STRING>>"),
                           Ddl("ID BIGINT, loc STRUCT<lon: DOUBLE, LAT: DOUBLE>, extra STRING, "
                               "tags ARRAY<STRUCT<k: STRING, v: BIGINT>>"),
                           Mode(SchemaEvolution::kAddColumns));
  ASSERT_TRUE(merge.ok()) << merge.status().ToString();
  EXPECT_EQ(merge->schema->ToString(),
            "id BIGINT, loc STRUCT<lat: DOUBLE, lon: DOUBLE>, tags ARRAY<STRUCT<k: STRING, v: "
            "BIGINT>>, extra STRING");
  ASSERT_EQ(merge->changes.size(), 3u);
  EXPECT_EQ(merge->changes[0].Describe(), "add column loc.lon DOUBLE");
  EXPECT_EQ(merge->changes[1].Describe(), "add column extra STRING");
  EXPECT_EQ(merge->changes[2].Describe(), "add column tags.element.v BIGINT");
}

TEST(MergeSchemaTest, TheTableHoldingTheValuesIsNoChange) {
  // Narrower values fit a wider column; columns the batch lacks stay.
  auto merge = MergeSchema(Ddl("id BIGINT, d DOUBLE, day TIMESTAMP_NTZ, x STRING"),
                           Ddl("id INT, d FLOAT, day DATE"), Mode(SchemaEvolution::kNone));
  ASSERT_TRUE(merge.ok()) << merge.status().ToString();
  EXPECT_FALSE(merge->changed());
}

TEST(MergeSchemaTest, WidensOnlyWhenTheModeSaysSo) {
  auto table = Ddl("id INT, amount DECIMAL(10,2), m MAP<STRING, INT>");
  auto wanted = Ddl("id BIGINT, amount DECIMAL(12,3), m MAP<STRING, BIGINT>");
  auto refused = MergeSchema(table, wanted, Mode(SchemaEvolution::kAddColumns));
  ASSERT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("add_columns_and_widen"), std::string::npos);
  auto merge = MergeSchema(table, wanted, Mode(SchemaEvolution::kAddColumnsAndWiden));
  ASSERT_TRUE(merge.ok()) << merge.status().ToString();
  EXPECT_EQ(merge->schema->ToString(), "id BIGINT, amount DECIMAL(12,3), m MAP<STRING, BIGINT>");
  ASSERT_EQ(merge->changes.size(), 3u);
  EXPECT_EQ(merge->changes[2].Path(), "m.value");
  EXPECT_EQ(merge->changes[2].inner, "value");
}

TEST(MergeSchemaTest, RefusesWhatCannotFit) {
  struct Case {
    const char* table;
    const char* wanted;
    const char* says;
  };
  const Case cases[] = {
      {"id INT", "id STRING", "field 'id' is INT in the table"},
      {"loc STRUCT<a: INT>", "loc STRING", "field 'loc'"},
      {"n BIGINT", "n DOUBLE", "field 'n' is BIGINT"},  // not a widening Delta evolution applies
      {"x INT", "`a b` INT", "field 'a b': Delta cannot hold this name"},
      {"x INT", "s STRUCT<`a=b`: INT>", "field 's.a=b'"},
      {"x INT", "y INT", "schema_evolution = \"none\""},
  };
  for (const Case& c : cases) {
    SchemaEvolution mode = std::string_view(c.says).find("none") != std::string_view::npos
                               ? SchemaEvolution::kNone
                               : SchemaEvolution::kAddColumnsAndWiden;
    auto merge = MergeSchema(Ddl(c.table), Ddl(c.wanted), Mode(mode));
    ASSERT_FALSE(merge.ok()) << c.table << " <- " << c.wanted;
    EXPECT_NE(merge.status().message().find(c.says), std::string::npos)
        << merge.status().ToString();
  }
  SchemaMergeOptions partitioned = Mode(SchemaEvolution::kAddColumnsAndWiden);
  partitioned.partition_columns = {"day"};
  auto merge = MergeSchema(Ddl("day INT, x INT"), Ddl("day BIGINT"), partitioned);
  ASSERT_FALSE(merge.ok());
  EXPECT_NE(merge.status().message().find("partition column"), std::string::npos);
}

TEST(MergeSchemaTest, Limits) {
  SchemaMergeOptions options = Mode(SchemaEvolution::kAddColumns);
  options.limits.max_new_fields = 2;
  auto per_batch =
      MergeSchema(Ddl("x INT"), Ddl("a INT, s STRUCT<b: INT, c: INT>"), options);  // 4 fields
  EXPECT_EQ(per_batch.status().code(), StatusCode::kResourceExhausted);
  options.limits = {.max_new_fields = 10, .max_fields = 3};
  auto total = MergeSchema(Ddl("x INT, y INT"), Ddl("a INT, b INT"), options);
  EXPECT_EQ(total.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(total.status().message().find("max_columns"), std::string::npos);
}

// A table at protocol 1/2 with `id INT` gets typeWidening (reader 3, writer 7 with the features
// writer 2 implies), delta.enableTypeWidening and the typeChanges record, exactly as Spark wrote
// the golden table type-widening.
TEST(PlanSchemaChangeTest, WideningUpgradesTheProtocolAndRecordsTheChange) {
  auto store = std::make_shared<storage::InMemoryStore>();
  auto table = *Table::Open(store, "t");
  TableSpec spec{.schema = std::make_shared<const columnar::Schema>(
                     Ddl("id INT, items ARRAY<INT>, s STRUCT<a: INT>"))};
  auto snap = table->Create(spec);
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  auto merge = MergeSchema(*snap->schema(),
                           Ddl("id BIGINT, items ARRAY<BIGINT>, s STRUCT<a: BIGINT>, z DATE"),
                           Mode(SchemaEvolution::kAddColumnsAndWiden));
  ASSERT_TRUE(merge.ok()) << merge.status().ToString();
  auto plan = PlanSchemaChange(*snap, *merge);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_TRUE(plan->protocol.has_value());
  EXPECT_EQ(plan->protocol->min_reader_version, 3);
  EXPECT_EQ(plan->protocol->min_writer_version, 7);
  EXPECT_EQ(*plan->protocol->reader_features, std::vector<std::string>{"typeWidening"});
  EXPECT_EQ(*plan->protocol->writer_features,
            (std::vector<std::string>{"appendOnly", "invariants", "typeWidening"}));
  EXPECT_EQ(plan->metadata.configuration.at("delta.enableTypeWidening"), "true");
  EXPECT_EQ(plan->metadata.id, snap->metadata().id);
  auto json = nlohmann::json::parse(plan->metadata.schema_string);
  EXPECT_EQ(json["fields"][0]["metadata"]["delta.typeChanges"],
            nlohmann::json::parse(R"([{"fromType":"integer","toType":"long"}])"));
  EXPECT_EQ(
      json["fields"][1]["metadata"]["delta.typeChanges"],
      nlohmann::json::parse(R"([{"fromType":"integer","toType":"long","fieldPath":"element"}])"));
  EXPECT_EQ(json["fields"][2]["type"]["fields"][0]["metadata"]["delta.typeChanges"][0]["toType"],
            "long");
  EXPECT_TRUE(json["fields"][3]["metadata"].empty());

  // Committed with data: the files written before read widened, the new column as null.
  Transaction txn(*table, *snap);
  txn.SetProtocol(*plan->protocol);
  txn.SetMetadata(plan->metadata);
  auto committed = txn.Commit();
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  auto reloaded = table->LoadSnapshot();
  ASSERT_TRUE(reloaded.ok()) << reloaded.status().ToString();
  EXPECT_EQ(reloaded->metadata().schema_string, plan->metadata.schema_string);
  EXPECT_TRUE(reloaded->schema()->Equals(*plan->schema));
  // A second widening appends to the record.
  auto again = MergeSchema(*reloaded->schema(), Ddl("items ARRAY<BIGINT>, z TIMESTAMP_NTZ"),
                           Mode(SchemaEvolution::kAddColumnsAndWiden));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  auto plan2 = PlanSchemaChange(*reloaded, *again);
  ASSERT_TRUE(plan2.ok()) << plan2.status().ToString();
  ASSERT_TRUE(plan2->protocol.has_value());  // timestampNtz joins
  EXPECT_EQ(*plan2->protocol->reader_features,
            (std::vector<std::string>{"typeWidening", "timestampNtz"}));
}

TEST(PlanSchemaChangeTest, RespectsATableThatTurnsWideningOff) {
  auto store = std::make_shared<storage::InMemoryStore>();
  auto table = *Table::Open(store, "t");
  auto snap = table->Create({.schema = std::make_shared<const columnar::Schema>(Ddl("id INT")),
                             .configuration = {{"delta.enableTypeWidening", "false"}}});
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  auto merge =
      MergeSchema(*snap->schema(), Ddl("id BIGINT"), Mode(SchemaEvolution::kAddColumnsAndWiden));
  ASSERT_TRUE(merge.ok());
  auto plan = PlanSchemaChange(*snap, *merge);
  ASSERT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(plan.status().message().find("delta.enableTypeWidening = false"), std::string::npos);
}

// Data written before and after a widening and an added nested field reads as the final schema.
TEST(PlanSchemaChangeTest, OldFilesReadWithTheNewSchema) {
  auto store = std::make_shared<storage::InMemoryStore>();
  auto table = *Table::Open(store, "t");
  auto snap = table->Create(
      {.schema = std::make_shared<const columnar::Schema>(Ddl("id INT, loc STRUCT<lat: DOUBLE>"))});
  ASSERT_TRUE(snap.ok());
  auto write = [&](const Snapshot& s, const columnar::SchemaPtr& schema, int64_t id,
                   const std::optional<SchemaChangeCommit>& change) -> Status {
    auto batch = columnar::RecordBatch::MakeEmpty(schema);
    if (schema->field(0).type->id() == columnar::TypeId::kInt32) {
      batch.mutable_column(0)->As<columnar::Int32Column>()->Append(static_cast<int32_t>(id));
    } else {
      batch.mutable_column(0)->As<columnar::Int64Column>()->Append(id);
    }
    auto* loc = batch.mutable_column(1)->As<columnar::StructColumn>();
    for (int c = 0; c < loc->num_children(); ++c) {
      loc->mutable_child(c)->As<columnar::DoubleColumn>()->Append(1.5 + c);
    }
    loc->FinishRow();
    TableWriterOptions options;
    if (change) {
      options.schema = change->schema;
    }
    FERRY_ASSIGN_OR_RETURN(auto writer, TableWriter::Create(*table, s, options));
    FERRY_RETURN_IF_ERROR(writer->Write(batch));
    FERRY_ASSIGN_OR_RETURN(auto adds, writer->Finish());
    Transaction txn(*table, s);
    txn.AddFiles(std::move(adds));
    if (change) {
      txn.SetMetadata(change->metadata);
      if (change->protocol) {
        txn.SetProtocol(*change->protocol);
      }
    }
    return txn.Commit().status();
  };
  ASSERT_TRUE(write(*snap, snap->schema(), 7, std::nullopt).ok());
  auto v1 = table->LoadSnapshot();
  auto merge = MergeSchema(*v1->schema(), Ddl("id BIGINT, loc STRUCT<lat: DOUBLE, alt: DOUBLE>"),
                           Mode(SchemaEvolution::kAddColumnsAndWiden));
  ASSERT_TRUE(merge.ok()) << merge.status().ToString();
  auto plan = PlanSchemaChange(*v1, *merge);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  Status st = write(*v1, plan->schema, 3'000'000'000, *plan);
  ASSERT_TRUE(st.ok()) << st.ToString();
  auto v2 = table->LoadSnapshot();
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  EXPECT_EQ(v2->version(), 2);
  auto rows = testing::ReadTableRows(*table, *v2);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, (std::vector<std::string>{"id=3000000000|loc={lat:1.5,alt:2.5}",
                                             "id=7|loc={lat:1.5,alt:null}"}));
}

// ---- The golden tables Spark wrote with type widening (DTRS = delta-io/delta
// kernel/kernel-defaults/src/test/scala/io/delta/kernel/defaults/DeltaTableReadsSuite.scala) ----

const std::string kGolden = std::string(FERRY_TESTDATA_DIR) + "/delta-golden/";

Result<std::vector<std::string>> GoldenRows(const std::string& name,
                                            const std::vector<std::string>& columns) {
  FERRY_ASSIGN_OR_RETURN(auto store, storage::LocalStore::Create(kGolden + name));
  FERRY_ASSIGN_OR_RETURN(auto table,
                         Table::Open(std::shared_ptr<storage::ObjectStore>(std::move(store)), ""));
  FERRY_ASSIGN_OR_RETURN(Snapshot snap, table->LoadSnapshot());
  std::vector<std::string> out;
  for (const auto& [key, add] : snap.files()) {
    FERRY_ASSIGN_OR_RETURN(columnar::RecordBatch batch, ReadLiveFile(*table, snap, add, columns));
    for (const std::string& row : testing::RenderRows(batch)) {
      out.push_back(row);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// DTRS 'table with type widening on basic types': (1, 2, 3.4f as double, 5.0, 6.0, 7.0,
// 2024-09-09T00:00:00) and (Long.MaxValue, Long.MaxValue, 1.234567890123 x4,
// 2024-09-09T12:34:56.123456).
TEST(GoldenTypeWideningTest, BasicTypes) {
  auto rows = GoldenRows("type-widening", {"byte_long", "int_long", "float_double", "byte_double",
                                           "short_double", "int_double", "date_timestamp_ntz"});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 2u);
  // Doubles render as Java's Double.toString (3.4f widened is 3.4000000953674316), timestamps as
  // micros since the epoch (2024-09-09T00:00:00 = 1725840000000000).
  EXPECT_EQ((*rows)[0],
            "byte_long=1|int_long=2|float_double=3.4000000953674316|byte_double=5.0|"
            "short_double=6.0|int_double=7.0|date_timestamp_ntz=1725840000000000");
  EXPECT_EQ(
      (*rows)[1],
      "byte_long=9223372036854775807|int_long=9223372036854775807|float_double=1.234567890123|"
      "byte_double=1.234567890123|short_double=1.234567890123|int_double=1.234567890123|"
      "date_timestamp_ntz=1725885296123456");
}

// DTRS 'table with type widening to decimal types': (123.45, 67.89000, 1.0, 2.0, 3.0, 4.0) and
// (12345678901234.56, 12345678901.23456, 123.4, 12345.6, 1234567890.1, 123456789012345678.9).
TEST(GoldenTypeWideningTest, Decimals) {
  auto rows =
      GoldenRows("type-widening", {"decimal_decimal_same_scale", "decimal_decimal_greater_scale",
                                   "byte_decimal", "short_decimal", "int_decimal", "long_decimal"});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, (std::vector<std::string>{
                       "decimal_decimal_same_scale=123.45|decimal_decimal_greater_scale=67.89000|"
                       "byte_decimal=1.0|short_decimal=2.0|int_decimal=3.0|long_decimal=4.0",
                       "decimal_decimal_same_scale=12345678901234.56|decimal_decimal_greater_scale="
                       "12345678901.23456|byte_decimal=123.4|short_decimal=12345.6|int_decimal="
                       "1234567890.1|long_decimal=123456789012345678.9"}));
}

// DTRS 'table with type widening to nested types': ({1}, {2 -> 3}, [4, 5]) and
// ({Long.MaxValue}, {Long.MaxValue -> Long.MaxValue}, [Long.MaxValue, Long.MinValue]).
TEST(GoldenTypeWideningTest, NestedTypes) {
  auto rows = GoldenRows("type-widening-nested", {"struct", "map", "array"});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, (std::vector<std::string>{
                       "struct={a:1}|map={2->3}|array=[4,5]",
                       "struct={a:9223372036854775807}|map={9223372036854775807->"
                       "9223372036854775807}|array=[9223372036854775807,-9223372036854775808]"}));
}

// Reader requirement: a recorded type change the protocol does not support fails the load.
TEST(GoldenTypeWideningTest, UnsupportedRecordedChangeIsRefused) {
  columnar::Field field{"x", DataType::String(), true, {}};
  ASSERT_TRUE(AppendTypeChange(&field, {.from_type = "integer", .to_type = "string"}).ok());
  Status st = CheckTypeChangesReadable(columnar::Schema({field}));
  EXPECT_EQ(st.code(), StatusCode::kNotSupported);
  EXPECT_NE(st.message().find("column 'x'"), std::string::npos) << st.ToString();
  columnar::Field ok{"y", DataType::Int64(), true, {}};
  ASSERT_TRUE(AppendTypeChange(&ok, {.from_type = "short", .to_type = "integer"}).ok());
  ASSERT_TRUE(AppendTypeChange(&ok, {.from_type = "integer", .to_type = "long"}).ok());
  EXPECT_TRUE(CheckTypeChangesReadable(columnar::Schema({ok})).ok());
  EXPECT_EQ(ReadTypeChanges(ok)->size(), 2u);
}

}  // namespace
}  // namespace ferry::delta

// Column mapping (column_mapping.h, PROTOCOL.md "Column Mapping") end to end in the delta layer:
// a table ferry creates in name and id mode, the files TableWriter writes (physical names and
// field ids, read with the Parquet reader itself), partitionValues and stats keyed by physical
// name, schema evolution that assigns ids, renames and drops done by another writer, optimize,
// and appends to copies of the golden tables Spark wrote with column mapping.
#include "ferry/delta/column_mapping.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <variant>

#include <nlohmann/json.hpp>

#include "ferry/columnar/ddl.h"
#include "ferry/delta/file_scan.h"
#include "ferry/delta/optimize.h"
#include "ferry/delta/partition_values.h"
#include "ferry/delta/schema_evolution.h"
#include "ferry/delta/schema_json.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_features.h"
#include "ferry/delta/table_writer.h"
#include "ferry/delta/transaction.h"
#include "ferry/parquet/file_reader.h"
#include "ferry/storage/local_store.h"
#include "ferry/storage/memory_store.h"
#include "ferry/testing/table_verifier.h"

namespace ferry::delta {
namespace {

using columnar::Field;
using columnar::RecordBatch;
using Json = nlohmann::json;

columnar::SchemaPtr SchemaOf(std::string_view ddl) {
  auto s = columnar::ParseDdlSchema(ddl);
  EXPECT_TRUE(s.ok()) << ddl << ": " << s.status().ToString();
  return std::make_shared<const columnar::Schema>(s.ok() ? *s : columnar::Schema());
}

constexpr char kSchema[] =
    "id BIGINT, name STRING, loc STRUCT<city: STRING, zip: INT>, tags ARRAY<STRUCT<k: STRING>>, "
    "p STRING";

// Rows `first`..`first + n - 1` of kSchema (or a schema with its fields in that order first).
RecordBatch MakeRows(const columnar::SchemaPtr& schema, int64_t first, int64_t n) {
  RecordBatch batch = RecordBatch::MakeEmpty(schema);
  for (int64_t i = first; i < first + n; ++i) {
    batch.mutable_column(0)->As<columnar::Int64Column>()->Append(i);
    batch.mutable_column(1)->As<columnar::BinaryColumn>()->Append("n" + std::to_string(i));
    auto* loc = batch.mutable_column(2)->As<columnar::StructColumn>();
    loc->mutable_child(0)->As<columnar::BinaryColumn>()->Append("c" + std::to_string(i));
    loc->mutable_child(1)->As<columnar::Int32Column>()->Append(static_cast<int32_t>(i));
    for (int c = 2; c < loc->num_children(); ++c) {
      loc->mutable_child(c)->AppendNull();
    }
    loc->FinishRow();
    auto* tags = batch.mutable_column(3)->As<columnar::ListColumn>();
    auto* tag = tags->mutable_child()->As<columnar::StructColumn>();
    tag->mutable_child(0)->As<columnar::BinaryColumn>()->Append("k" + std::to_string(i));
    tag->FinishRow();
    tags->FinishRow();
    batch.mutable_column(4)->As<columnar::BinaryColumn>()->Append(i % 2 == 0 ? "even" : "odd");
    for (int c = 5; c < batch.num_columns(); ++c) {
      batch.mutable_column(c)->AppendNull();
    }
  }
  return batch;
}

// Writes `batch` and commits it (with `change` when set); the new snapshot.
Result<Snapshot> AppendRows(const Table& table, const Snapshot& snapshot, const RecordBatch& batch,
                            const std::optional<SchemaChangeCommit>& change = std::nullopt) {
  TableWriterOptions options;
  if (change) {
    options.schema = change->schema;
  }
  FERRY_ASSIGN_OR_RETURN(auto writer, TableWriter::Create(table, snapshot, options));
  FERRY_RETURN_IF_ERROR(writer->Write(batch));
  FERRY_ASSIGN_OR_RETURN(auto adds, writer->Finish());
  Transaction txn(table, snapshot);
  txn.AddFiles(std::move(adds));
  if (change) {
    txn.SetMetadata(change->metadata);
    if (change->protocol) {
      txn.SetProtocol(*change->protocol);
    }
  }
  FERRY_ASSIGN_OR_RETURN(CommitResult result, txn.Commit());
  return std::move(result.snapshot);
}

// Every live file read with ferry's table reader (file_scan.h), rendered and sorted.
Result<std::vector<std::string>> TableRows(const Table& table, const Snapshot& snapshot) {
  std::vector<std::string> out;
  for (const auto& [key, add] : snapshot.files()) {
    FERRY_ASSIGN_OR_RETURN(RecordBatch batch, ReadLiveFile(table, snapshot, add));
    for (std::string& row : testing::RenderRows(batch)) {
      out.push_back(std::move(row));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> Sorted(std::vector<std::string> rows) {
  std::sort(rows.begin(), rows.end());
  return rows;
}

const Field& FieldNamed(const std::vector<Field>& fields, std::string_view name) {
  auto it =
      std::find_if(fields.begin(), fields.end(), [&](const Field& f) { return f.name == name; });
  EXPECT_NE(it, fields.end()) << name;
  return *it;
}

std::string FileFieldId(const Field& f) {
  for (const auto& [k, v] : f.metadata) {
    if (k == parquet::kFieldIdMetadataKey) {
      return v;
    }
  }
  return "none";
}

TEST(ColumnMappingTest, ModeFollowsTheProtocol) {
  Metadata metadata;
  metadata.configuration[kColumnMappingModeProperty] = "name";
  EXPECT_EQ(*GetColumnMappingMode(Protocol{2, 5, {}, {}}, metadata), ColumnMappingMode::kName);
  // PROTOCOL.md: without the feature in the protocol the property is not honoured.
  EXPECT_EQ(*GetColumnMappingMode(Protocol{1, 2, {}, {}}, metadata), ColumnMappingMode::kNone);
  metadata.configuration[kColumnMappingModeProperty] = "id";
  Protocol features{3, 7, std::vector<std::string>{"columnMapping"},
                    std::vector<std::string>{"columnMapping"}};
  EXPECT_EQ(*GetColumnMappingMode(features, metadata), ColumnMappingMode::kId);
  metadata.configuration[kColumnMappingModeProperty] = "position";
  EXPECT_EQ(GetColumnMappingMode(features, metadata).status().code(), StatusCode::kNotSupported);
  EXPECT_EQ(CheckWriteSupported(features, metadata, *SchemaOf("a INT")).code(),
            StatusCode::kNotSupported);
}

TEST(ColumnMappingTest, WriterRefusesASchemaWithoutIdsOrNames) {
  Metadata metadata;
  metadata.configuration[kColumnMappingModeProperty] = "name";
  Protocol protocol{2, 5, {}, {}};
  Status st = CheckWriteSupported(protocol, metadata, *SchemaOf("a INT"));
  EXPECT_EQ(st.code(), StatusCode::kNotSupported);
  EXPECT_NE(st.message().find("delta.columnMapping.id"), std::string::npos) << st.ToString();

  std::vector<Field> fields = SchemaOf("a INT, s STRUCT<b: INT>")->fields();
  int64_t max_id = 0;
  EXPECT_EQ(AssignColumnMapping(&fields, &max_id), 3);
  EXPECT_EQ(max_id, 3);
  metadata.configuration[kColumnMappingMaxIdProperty] = "3";
  EXPECT_TRUE(CheckWriteSupported(protocol, metadata, columnar::Schema(fields)).ok());
  std::vector<Field> reused = fields;
  reused[0].metadata = fields[1].metadata;  // two columns with one id (and physical name)
  st = CheckWriteSupported(protocol, metadata, columnar::Schema(reused));
  EXPECT_EQ(st.code(), StatusCode::kNotSupported);
  EXPECT_NE(st.message().find("reuses column id 2"), std::string::npos) << st.ToString();
  // Ids go on above the property or the schema, whichever is higher (a dropped column's id is
  // never given again).
  metadata.configuration[kColumnMappingMaxIdProperty] = "17";
  EXPECT_EQ(MaxColumnId(columnar::Schema(fields), metadata), 17);
  metadata.configuration[kColumnMappingMaxIdProperty] = "1";
  EXPECT_EQ(MaxColumnId(columnar::Schema(fields), metadata), 3);
}

TEST(ColumnMappingTest, PhysicalColumnPathFollowsStructs) {
  std::vector<Field> fields = SchemaOf("a INT, S STRUCT<b: INT, t: STRUCT<c: INT>>")->fields();
  int64_t max_id = 0;
  AssignColumnMapping(&fields, &max_id);
  columnar::Schema schema(fields);
  const Field& s = schema.field(1);
  const Field& b = s.type->fields()[0];
  const Field& t = s.type->fields()[1];
  const Field& c = t.type->fields()[0];
  EXPECT_EQ(PhysicalColumnPath(schema, "s.b"), *PhysicalName(s) + "." + *PhysicalName(b));
  EXPECT_EQ(PhysicalColumnPath(schema, "S.t.c"),
            *PhysicalName(s) + "." + *PhysicalName(t) + "." + *PhysicalName(c));
  EXPECT_EQ(PhysicalColumnPath(schema, "s.nope"), *PhysicalName(s) + ".nope");
}

class ColumnMappingTableTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    store_ = std::make_shared<storage::InMemoryStore>();
    table_ = *Table::Open(store_, "t");
    auto snap = table_->Create({.schema = SchemaOf(kSchema),
                                .partition_columns = {"p"},
                                .configuration = {{kColumnMappingModeProperty, GetParam()}}});
    ASSERT_TRUE(snap.ok()) << snap.status().ToString();
    snapshot_ = std::move(*snap);
  }

  std::shared_ptr<storage::InMemoryStore> store_;
  std::unique_ptr<Table> table_;
  Snapshot snapshot_;
};

// PROTOCOL.md "Writer Requirements for Column Mapping": every column has an id and a physical
// name, maxColumnId is the highest id, and the protocol supports the feature.
TEST_P(ColumnMappingTableTest, CreateAssignsIdsAndPhysicalNames) {
  EXPECT_EQ(snapshot_.protocol().min_reader_version, 2);
  EXPECT_EQ(snapshot_.protocol().min_writer_version, 5);
  EXPECT_EQ(snapshot_.metadata().configuration.at(kColumnMappingModeProperty), GetParam());
  // id, name, loc, loc.city, loc.zip, tags, tags.element.k, p
  EXPECT_EQ(snapshot_.metadata().configuration.at(kColumnMappingMaxIdProperty), "8");
  Json schema = Json::parse(snapshot_.metadata().schema_string);
  std::set<int64_t> ids;
  std::vector<Json> stack = {schema};
  while (!stack.empty()) {
    Json node = stack.back();
    stack.pop_back();
    if (node.is_object() && node.contains("fields")) {
      for (const Json& f : node["fields"]) {
        ASSERT_TRUE(f["metadata"].contains(kColumnMappingIdKey)) << f.dump();
        ids.insert(f["metadata"][kColumnMappingIdKey].get<int64_t>());
        EXPECT_EQ(f["metadata"][kColumnMappingPhysicalNameKey].get<std::string>().rfind("col-", 0),
                  0u);
        stack.push_back(f["type"]);
      }
    } else if (node.is_object() && node.contains("elementType")) {
      stack.push_back(node["elementType"]);
    }
  }
  EXPECT_EQ(ids, (std::set<int64_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_TRUE(GetColumnMappingMode(snapshot_.protocol(), snapshot_.metadata()).ok());
}

// Data files under physical names with field ids; partitionValues, directories and stats keyed
// by physical name; ferry's reader gives the table's names back.
TEST_P(ColumnMappingTableTest, FilesUsePhysicalNamesAndReadBackLogical) {
  RecordBatch rows = MakeRows(snapshot_.schema(), 0, 6);
  auto snap = AppendRows(*table_, snapshot_, rows);
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  const columnar::Schema& schema = *snap->schema();
  const std::string p = *PhysicalName(FieldNamed(schema.fields(), "p"));
  const Field& loc = FieldNamed(schema.fields(), "loc");
  ASSERT_EQ(snap->files().size(), 2u);
  for (const auto& [key, add] : snap->files()) {
    ASSERT_EQ(add.partition_values.size(), 1u);
    EXPECT_EQ(add.partition_values.begin()->first, p);
    EXPECT_EQ(add.path.rfind(p + "=", 0), 0u) << add.path;
    Json stats = Json::parse(*add.stats);
    EXPECT_EQ(stats["numRecords"], 3);
    EXPECT_EQ(stats["minValues"].size(), 3u) << stats.dump();  // id, name, loc
    EXPECT_TRUE(stats["minValues"].contains(*PhysicalName(schema.field(0)))) << stats.dump();
    EXPECT_TRUE(
        stats["minValues"][*PhysicalName(loc)].contains(*PhysicalName(loc.type->fields()[0])))
        << stats.dump();
    EXPECT_FALSE(stats["minValues"].contains("id"));

    // The file itself, read with the Parquet reader: physical names and field ids everywhere.
    auto path = RelativeFilePath(add);
    ASSERT_TRUE(path.ok());
    auto file = store_->OpenForRead(table_->Key(*path));
    ASSERT_TRUE(file.ok());
    auto reader = parquet::FileReader::Open(*file);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    const columnar::Schema& in_file = *(*reader)->schema();
    ASSERT_EQ(in_file.num_fields(), 4);  // no partition column
    for (int i = 0; i < 4; ++i) {
      const Field& table_field = schema.field(i);
      EXPECT_EQ(in_file.field(i).name, *PhysicalName(table_field));
      EXPECT_EQ(FileFieldId(in_file.field(i)), std::to_string(*ColumnMappingId(table_field)));
    }
    const Field& zip = in_file.field(2).type->fields()[1];
    EXPECT_EQ(zip.name, *PhysicalName(loc.type->fields()[1]));
    EXPECT_EQ(FileFieldId(zip), std::to_string(*ColumnMappingId(loc.type->fields()[1])));
    const Field& k = in_file.field(3).type->element().type->fields()[0];
    EXPECT_EQ(FileFieldId(k), "7");
  }
  auto read = TableRows(*table_, *snap);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, Sorted(testing::RenderRows(rows)));
  EXPECT_EQ(read->front(), "id=0|name=n0|loc={city:c0,zip:0}|tags=[{k:k0}]|p=even");
}

// A batch that adds columns (top level and nested) gives them the next ids and fresh physical
// names, and raises maxColumnId in the commit that carries the data.
TEST_P(ColumnMappingTableTest, SchemaEvolutionAssignsNewIds) {
  auto v1 = AppendRows(*table_, snapshot_, MakeRows(snapshot_.schema(), 0, 2));
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  auto merge =
      MergeSchema(*v1->schema(),
                  *SchemaOf("id BIGINT, name STRING, loc STRUCT<city: STRING, zip: INT, "
                            "alt: DOUBLE>, tags ARRAY<STRUCT<k: STRING>>, p STRING, x STRING"),
                  {.mode = SchemaEvolution::kAddColumns});
  ASSERT_TRUE(merge.ok()) << merge.status().ToString();
  auto plan = PlanSchemaChange(*v1, *merge);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_FALSE(plan->protocol.has_value());
  EXPECT_EQ(plan->metadata.configuration.at(kColumnMappingMaxIdProperty), "10");
  const Field& alt = FieldNamed(FieldNamed(plan->schema->fields(), "loc").type->fields(), "alt");
  const Field& x = FieldNamed(plan->schema->fields(), "x");
  EXPECT_EQ(ColumnMappingId(alt), 9);
  EXPECT_EQ(ColumnMappingId(x), 10);
  EXPECT_EQ(PhysicalName(x)->rfind("col-", 0), 0u);
  // Old columns keep theirs.
  EXPECT_EQ(PhysicalName(plan->schema->field(0)), PhysicalName(v1->schema()->field(0)));

  auto v2 = AppendRows(*table_, *v1, MakeRows(plan->schema, 10, 2), *plan);
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  EXPECT_EQ(v2->metadata().configuration.at(kColumnMappingMaxIdProperty), "10");
  // The commit carries data and metaData together.
  auto actions = table_->ReadCommit(2);
  ASSERT_TRUE(actions.ok());
  int adds = 0, metadata = 0;
  for (const Action& a : *actions) {
    adds += std::holds_alternative<AddFile>(a) ? 1 : 0;
    metadata += std::holds_alternative<Metadata>(a) ? 1 : 0;
  }
  EXPECT_EQ(adds, 2);
  EXPECT_EQ(metadata, 1);
  auto read = TableRows(*table_, *v2);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, Sorted({
                       "id=0|name=n0|loc={city:c0,zip:0,alt:null}|tags=[{k:k0}]|p=even|x=null",
                       "id=1|name=n1|loc={city:c1,zip:1,alt:null}|tags=[{k:k1}]|p=odd|x=null",
                       "id=10|name=n10|loc={city:c10,zip:10,alt:null}|tags=[{k:k10}]|p=even|x=null",
                       "id=11|name=n11|loc={city:c11,zip:11,alt:null}|tags=[{k:k11}]|p=odd|x=null",
                   }));
}

// What another writer does with column mapping, without rewriting files: rename a column, drop a
// nested field. Old files read under the new names, without the dropped field; an append after
// it writes under the old physical names (a rename keeps them).
TEST_P(ColumnMappingTableTest, RenamesAndDropsByAnotherWriter) {
  auto v1 = AppendRows(*table_, snapshot_, MakeRows(snapshot_.schema(), 0, 2));
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  Json schema = Json::parse(v1->metadata().schema_string);
  schema["fields"][1]["name"] = "full_name";
  schema["fields"][2]["type"]["fields"].erase(0);  // DROP COLUMN loc.city
  Metadata metadata = v1->metadata();
  metadata.schema_string = schema.dump();
  Transaction alter(*table_, *v1);
  alter.SetMetadata(metadata);
  ASSERT_TRUE(alter.Commit().ok());
  auto v2 = table_->LoadSnapshot();
  ASSERT_TRUE(v2.ok());
  EXPECT_EQ(v2->schema()->ToString(),
            "id BIGINT, full_name STRING, loc STRUCT<zip: INT>, tags ARRAY<STRUCT<k: STRING>>, p "
            "STRING");
  auto read = TableRows(*table_, *v2);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, (std::vector<std::string>{"id=0|full_name=n0|loc={zip:0}|tags=[{k:k0}]|p=even",
                                             "id=1|full_name=n1|loc={zip:1}|tags=[{k:k1}]|p=odd"}));

  RecordBatch more = RecordBatch::MakeEmpty(v2->schema());
  more.mutable_column(0)->As<columnar::Int64Column>()->Append(5);
  more.mutable_column(1)->As<columnar::BinaryColumn>()->Append("n5");
  auto* loc = more.mutable_column(2)->As<columnar::StructColumn>();
  loc->mutable_child(0)->As<columnar::Int32Column>()->Append(5);
  loc->FinishRow();
  more.mutable_column(3)->AppendNull();
  more.mutable_column(4)->As<columnar::BinaryColumn>()->Append("odd");
  auto v3 = AppendRows(*table_, *v2, more);
  ASSERT_TRUE(v3.ok()) << v3.status().ToString();
  read = TableRows(*table_, *v3);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->back(), "id=5|full_name=n5|loc={zip:5}|tags=null|p=odd");
  const std::string name_physical = *PhysicalName(snapshot_.schema()->field(1));
  EXPECT_EQ(*PhysicalName(v3->schema()->field(1)), name_physical);
}

// Optimize rewrites files under the same physical names and field ids, and its predicate names
// partition columns as the table shows them.
TEST_P(ColumnMappingTableTest, OptimizeKeepsPhysicalNamesAndIds) {
  auto snap = AppendRows(*table_, snapshot_, MakeRows(snapshot_.schema(), 0, 4));
  ASSERT_TRUE(snap.ok());
  snap = AppendRows(*table_, *snap, MakeRows(snapshot_.schema(), 4, 4));
  ASSERT_TRUE(snap.ok());
  auto before = TableRows(*table_, *snap);
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  auto where = PartitionPredicate::Parse("p = 'even'");
  ASSERT_TRUE(where.ok());
  OptimizeOptions options;
  options.where = *where;
  auto result = Optimize(*table_, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->files_removed, 2);
  EXPECT_EQ(result->files_added, 1);
  auto after = table_->LoadSnapshot();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->files().size(), 3u);
  auto rows = TableRows(*table_, *after);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, *before);
  const columnar::Schema& schema = *after->schema();
  for (const auto& [key, add] : after->files()) {
    EXPECT_EQ(add.partition_values.begin()->first, *PhysicalName(schema.field(4)));
    auto file = store_->OpenForRead(table_->Key(*RelativeFilePath(add)));
    ASSERT_TRUE(file.ok());
    auto reader = parquet::FileReader::Open(*file);
    ASSERT_TRUE(reader.ok());
    const columnar::Schema& in_file = *(*reader)->schema();
    EXPECT_EQ(in_file.field(1).name, *PhysicalName(schema.field(1)));
    EXPECT_EQ(FileFieldId(in_file.field(2).type->fields()[0]),
              std::to_string(*ColumnMappingId(schema.field(2).type->fields()[0])));
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, ColumnMappingTableTest, ::testing::Values("name", "id"),
                         [](const auto& p) { return std::string(p.param); });

// A table as Databricks creates them: column mapping with row tracking and in-commit
// timestamps. The protocol lists columnMapping for readers and writers next to the others, and an
// append gets both the physical names and the row ids.
TEST(ColumnMappingTest, CreatedWithOtherWriterFeatures) {
  auto store = std::make_shared<storage::InMemoryStore>();
  auto table = *Table::Open(store, "t");
  auto snap = table->Create({.schema = SchemaOf(kSchema),
                             .partition_columns = {"p"},
                             .configuration = {{kColumnMappingModeProperty, "name"},
                                               {"delta.enableRowTracking", "true"},
                                               {"delta.enableInCommitTimestamps", "true"}}});
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  const Protocol& protocol = snap->protocol();
  EXPECT_EQ(protocol.min_reader_version, 3);
  EXPECT_EQ(protocol.min_writer_version, 7);
  EXPECT_TRUE(protocol.ReaderLists("columnMapping"));
  EXPECT_TRUE(protocol.WriterLists("columnMapping"));
  EXPECT_TRUE(protocol.WriterLists("rowTracking"));
  EXPECT_EQ(*GetColumnMappingMode(protocol, snap->metadata()), ColumnMappingMode::kName);
  RecordBatch rows = MakeRows(snap->schema(), 0, 4);
  auto after = AppendRows(*table, *snap, rows);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  for (const auto& [key, add] : after->files()) {
    EXPECT_EQ(add.partition_values.begin()->first, *PhysicalName(after->schema()->field(4)));
    EXPECT_TRUE(add.base_row_id.has_value());
  }
  auto read = TableRows(*table, *after);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, Sorted(testing::RenderRows(rows)));
}

// In id mode, a data file without field ids cannot be read by id: ferry refuses it rather than
// read nulls (PROTOCOL.md allows either).
TEST(ColumnMappingTest, IdModeRefusesAFileWithoutFieldIds) {
  auto store = std::make_shared<storage::InMemoryStore>();
  auto table = *Table::Open(store, "t");
  auto snap = table->Create({.schema = SchemaOf("a BIGINT, b STRING")});
  ASSERT_TRUE(snap.ok());
  RecordBatch rows = RecordBatch::MakeEmpty(snap->schema());
  rows.mutable_column(0)->As<columnar::Int64Column>()->Append(1);
  rows.mutable_column(1)->As<columnar::BinaryColumn>()->Append("x");
  auto v1 = AppendRows(*table, *snap, rows);
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  // Turn id mapping on over the old files, physical names equal to the names.
  std::vector<Field> fields = v1->schema()->fields();
  for (int i = 0; i < 2; ++i) {
    fields[static_cast<size_t>(i)].metadata = {
        {kColumnMappingIdKey, std::to_string(i + 1)},
        {kColumnMappingPhysicalNameKey, Json(fields[static_cast<size_t>(i)].name).dump()}};
  }
  Metadata metadata = v1->metadata();
  metadata.schema_string = *SchemaToJson(columnar::Schema(fields));
  metadata.configuration = {{kColumnMappingModeProperty, "id"}, {kColumnMappingMaxIdProperty, "2"}};
  Transaction upgrade(*table, *v1);
  upgrade.SetProtocol(Protocol{2, 5, {}, {}});
  upgrade.SetMetadata(metadata);
  ASSERT_TRUE(upgrade.Commit().ok());
  auto v2 = table->LoadSnapshot();
  ASSERT_TRUE(v2.ok());
  auto read = ReadLiveFile(*table, *v2, v2->files().begin()->second);
  EXPECT_EQ(read.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(read.status().message().find("no Parquet field ids"), std::string::npos)
      << read.status().ToString();
}

// ---- Appends to copies of the golden tables Spark wrote with column mapping ----

const std::string kGoldenTables = std::string(FERRY_TESTDATA_DIR) + "/delta-golden/";

class GoldenColumnMappingTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ferry-colmap-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    std::filesystem::copy(kGoldenTables + GetParam(), dir_,
                          std::filesystem::copy_options::recursive);
    auto store = storage::LocalStore::Create(dir_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto table = Table::Open(std::shared_ptr<storage::ObjectStore>(std::move(*store)), "");
    ASSERT_TRUE(table.ok());
    table_ = std::move(*table);
  }
  void TearDown() override {
    table_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::string dir_;
  std::unique_ptr<Table> table_;
};

// Every row of Spark's files, read with ferry's reader, appended again by ferry: the table then
// holds each row twice, read the same from Spark's files and from ferry's, whose columns carry
// the same physical names and field ids as Spark's.
TEST_P(GoldenColumnMappingTest, AppendSparksRowsAgain) {
  auto snap = table_->LoadSnapshot();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  ASSERT_TRUE(CheckWriteSupported(snap->protocol(), snap->metadata(), *snap->schema()).ok());
  std::vector<std::string> spark_rows;
  std::vector<RecordBatch> batches;
  std::set<std::string> spark_files;
  for (const auto& [key, add] : snap->files()) {
    spark_files.insert(add.path);
    auto batch = ReadLiveFile(*table_, *snap, add);
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    for (std::string& row : testing::RenderRows(*batch)) {
      spark_rows.push_back(std::move(row));
    }
    batches.push_back(std::move(*batch));
  }
  ASSERT_EQ(spark_rows.size(), 6u);  // DTRS: five rows and a row of nulls
  auto writer = TableWriter::Create(*table_, *snap);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  for (const RecordBatch& batch : batches) {
    Status written = (*writer)->Write(batch);
    ASSERT_TRUE(written.ok()) << written.ToString();
  }
  auto adds = (*writer)->Finish();
  ASSERT_TRUE(adds.ok()) << adds.status().ToString();
  Transaction txn(*table_, *snap);
  txn.AddFiles(std::move(*adds));
  auto committed = txn.Commit();
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();

  auto after = table_->LoadSnapshot();
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  auto rows = TableRows(*table_, *after);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  std::vector<std::string> twice = spark_rows;
  twice.insert(twice.end(), spark_rows.begin(), spark_rows.end());
  EXPECT_EQ(*rows, Sorted(twice));

  // ferry's files name and number their columns as Spark's do.
  auto columns = [&](const AddFile& add) {
    auto file = table_->store().OpenForRead(table_->Key(*RelativeFilePath(add)));
    EXPECT_TRUE(file.ok());
    auto reader = parquet::FileReader::Open(*file);
    EXPECT_TRUE(reader.ok());
    std::vector<std::string> out;
    std::vector<const std::vector<Field>*> stack = {&(*reader)->schema()->fields()};
    while (!stack.empty()) {
      const std::vector<Field>* fields = stack.back();
      stack.pop_back();
      for (const Field& f : *fields) {
        out.push_back(f.name + "#" + FileFieldId(f));
        if (f.type->id() == columnar::TypeId::kStruct) {
          stack.push_back(&f.type->fields());
        }
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  std::optional<std::vector<std::string>> spark_columns;
  int ferry_files = 0;
  for (const auto& [key, add] : after->files()) {
    if (spark_files.count(add.path) > 0) {
      spark_columns = columns(add);
    }
  }
  ASSERT_TRUE(spark_columns.has_value());
  for (const auto& [key, add] : after->files()) {
    if (spark_files.count(add.path) == 0) {
      ++ferry_files;
      EXPECT_EQ(columns(add), *spark_columns) << add.path;
      // Stats keyed like Spark's: by physical name.
      Json stats = Json::parse(*add.stats);
      EXPECT_TRUE(stats["nullCount"].contains(*PhysicalName(after->schema()->field(0))))
          << stats.dump();
    }
  }
  EXPECT_EQ(ferry_files, 1);
}

class GoldenColumnMappingDvTest : public GoldenColumnMappingTest {};

// Spark's partitioned name-mode table with deletion vectors: ferry's file for partition 3 goes
// into the directory Spark made for it (named by the physical name), keyed the same way in
// partitionValues, and reads back; Spark's files keep their deletion vectors untouched.
TEST_P(GoldenColumnMappingDvTest, AppendGoesToSparksPartitionDirectory) {
  auto snap = table_->LoadSnapshot();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  std::string spark_dir;
  PartitionValues spark_values;
  for (const auto& [key, add] : snap->files()) {
    auto it = add.partition_values.begin();
    if (it != add.partition_values.end() && it->second == "3") {
      spark_dir = add.path.substr(0, add.path.find('/') + 1);
      spark_values = add.partition_values;
    }
  }
  ASSERT_EQ(spark_dir, "col-60c949ca-b8bc-4330-b931-b73fb4c60037=3/");
  RecordBatch row = RecordBatch::MakeEmpty(snap->schema());
  row.mutable_column(0)->As<columnar::Int32Column>()->Append(3);
  row.mutable_column(1)->As<columnar::Int32Column>()->Append(99);
  row.mutable_column(2)->As<columnar::BinaryColumn>()->Append("ferry");
  auto after = AppendRows(*table_, *snap, row);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  int mine = 0;
  for (const auto& [key, add] : after->files()) {
    if (snap->files().count(key) > 0) {
      continue;
    }
    ++mine;
    EXPECT_EQ(add.path.rfind(spark_dir, 0), 0u) << add.path;
    EXPECT_EQ(add.partition_values, spark_values);
    auto read = ReadLiveFile(*table_, *after, add);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_EQ(testing::RenderRows(*read), std::vector<std::string>{"part=3|col1=99|col2=ferry"});
  }
  EXPECT_EQ(mine, 1);
}

INSTANTIATE_TEST_SUITE_P(Spark, GoldenColumnMappingTest,
                         ::testing::Values("table-with-columnmapping-mode-name",
                                           "table-with-columnmapping-mode-id"),
                         [](const auto& p) {
                           return std::string(p.param).find("-id") != std::string::npos ? "Id"
                                                                                        : "Name";
                         });

INSTANTIATE_TEST_SUITE_P(Spark, GoldenColumnMappingDvTest,
                         ::testing::Values("dv-with-columnmapping"),
                         [](const auto&) { return std::string("DvName"); });

}  // namespace
}  // namespace ferry::delta

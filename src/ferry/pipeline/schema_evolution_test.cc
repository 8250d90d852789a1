// Schema evolution through the whole pipeline (schema_evolver.h, batch_committer.h step 3a):
// new fields and widened types committed with the data that needs them, bad values to
// on_bad_record, limits, derived columns, another writer changing the table under a running
// pipeline, and two pipelines evolving one table at once.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <thread>

#include "ferry/delta/column_mapping.h"
#include "ferry/delta/partition_values.h"
#include "ferry/parquet/file_reader.h"
#include "ferry/testing/schema_evolution_fixture.h"

namespace ferry::pipeline::evolution_test {
namespace {

// Top-level and nested fields appear mid-stream: one metaData in the commit of the first batch
// that holds them, rows before read them as null, no extra commit.
TEST_F(SchemaEvolutionTest, NewFieldsBecomeColumnsInTheCommitOfTheirData) {
  Messages m;
  for (int i = 0; i < 30; ++i) {
    m.payloads[0].push_back(
        i < 15 ? fmt::format(R"({{"id": {}, "loc": {{"lat": 1.5}}}})", i)
               : fmt::format(R"({{"id": {}, "loc": {{"lat": 1.5, "alt": {}}}, "Tag": "t{}",
                                 "items": [{{"sku": "a"}}], "gone": null}})",
                             i, i * 10, i));
  }
  Setup setup{.ddl = "id BIGINT NOT NULL, loc STRUCT<lat: DOUBLE>", .max_rows = 10};
  ASSERT_TRUE(RunOnce(&m, setup).ok());
  delta::Snapshot snap = Latest();
  EXPECT_EQ(snap.schema()->ToString(),
            "id BIGINT NOT NULL, loc STRUCT<lat: DOUBLE, alt: BIGINT>, _offset BIGINT, Tag STRING, "
            "items ARRAY<STRUCT<sku: STRING>>");
  // Batches of 10: ids 0-9, 10-19 (the first with the new fields), 20-29.
  EXPECT_EQ(snap.version(), 3);
  int64_t actions = 0;
  EXPECT_EQ(MetadataVersions(&actions), std::vector<int64_t>{2});
  EXPECT_EQ(actions, 1);
  EXPECT_EQ(snap.position("events/kafka/events/0"), 29);
  std::vector<std::string> rows = Rows();
  ASSERT_EQ(rows.size(), 30u);
  EXPECT_NE(std::find(rows.begin(), rows.end(),
                      "id=3|loc={lat:1.5,alt:null}|_offset=3|Tag=null|items=null"),
            rows.end());
  EXPECT_NE(std::find(rows.begin(), rows.end(),
                      "id=16|loc={lat:1.5,alt:160}|_offset=16|Tag=t16|items=[{sku:a}]"),
            rows.end());
  EXPECT_EQ(Metric("ferry_schema_changes_total"), 1);
  // The history says which version added what.
  auto table = delta::Table::Open(store_, "events");
  auto history = delta::ReadSchemaHistory(**table);
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), 2u);
  EXPECT_EQ(history->back().version, 2);
  EXPECT_EQ(history->back().changes,
            (std::vector<std::string>{"add column loc.alt BIGINT", "add column Tag STRING",
                                      "add column items ARRAY<STRUCT<sku: STRING>>"}));
}

TEST_F(SchemaEvolutionTest, NoneKeepsTheSchemaAndDropsUnknownFields) {
  Messages m;
  m.payloads[0] = {R"({"id": 1, "extra": 2})", R"({"ID": 2})"};
  ASSERT_TRUE(
      RunOnce(&m, {.mode = SchemaEvolution::kNone, .on_bad_record = OnBadRecord::kSkip}).ok());
  EXPECT_EQ(Latest().schema()->ToString(), "id BIGINT NOT NULL, _offset BIGINT");
  // Without evolution names are exact: {"ID": 2} has no id (NOT NULL), a bad record skipped.
  EXPECT_EQ(Rows(), std::vector<std::string>{"id=1|_offset=0"});
}

// A field the batch added as BIGINT becomes DOUBLE when a later message of the batch has a
// fraction; a value no wider type holds is a bad record, never a null.
TEST_F(SchemaEvolutionTest, InferenceAndBadValues) {
  Messages m;
  m.payloads[0] = {R"({"id": 1, "x": 1, "s": {"a": 1}})",
                   R"({"id": 2, "x": 2.5})",
                   R"({"id": 3, "x": "abc"})",
                   R"({"id": 4, "s": "flat"})",
                   R"({"id": 5, "bad name": 1})",
                   R"({"id": 6, "x": 7})"};
  ASSERT_TRUE(RunOnce(&m, {.on_bad_record = OnBadRecord::kDeadLetter}).ok());
  EXPECT_EQ(Latest().schema()->ToString(),
            "id BIGINT NOT NULL, _offset BIGINT, x DOUBLE, s STRUCT<a: BIGINT>");
  EXPECT_EQ(Rows(),
            (std::vector<std::string>{"id=1|_offset=0|x=1.0|s={a:1}", "id=2|_offset=1|x=2.5|s=null",
                                      "id=6|_offset=5|x=7.0|s=null"}));
  std::vector<std::string> dead = Rows("dead");
  ASSERT_EQ(dead.size(), 3u);
  EXPECT_NE(dead[0].find("field 'x': expected a number, found string \"abc\""), std::string::npos)
      << dead[0];
  EXPECT_NE(dead[1].find("field 's': expected an object"), std::string::npos) << dead[1];
  EXPECT_NE(dead[2].find("schema evolution: field 'bad name': Delta cannot hold this name"),
            std::string::npos)
      << dead[2];
  EXPECT_EQ(
      registry_.Value("ferry_bad_records_total",
                      {{"pipeline", "events"}, {"action", "dead_letter"}, {"reason", "schema"}}),
      1);
}

// An INT column starts receiving values past 2^31: the table ends with BIGINT through the
// typeWidening feature, in the commit of the first such value; earlier files read widened.
TEST_F(SchemaEvolutionTest, IntWidensToBigintThroughTypeWidening) {
  Messages m;
  for (int i = 0; i < 20; ++i) {
    int64_t n = i < 12 ? i : (int64_t{1} << 31) + i;
    m.payloads[0].push_back(fmt::format(R"({{"id": {}, "n": {}}})", i, n));
  }
  Setup setup{.ddl = "id BIGINT NOT NULL, n INT",
              .mode = SchemaEvolution::kAddColumnsAndWiden,
              .max_rows = 5};
  ASSERT_TRUE(RunOnce(&m, setup).ok());
  delta::Snapshot snap = Latest();
  EXPECT_EQ(snap.schema()->ToString(), "id BIGINT NOT NULL, n BIGINT, _offset BIGINT");
  EXPECT_TRUE(delta::SupportsTypeWidening(snap.protocol()));
  EXPECT_EQ(snap.metadata().configuration.at("delta.enableTypeWidening"), "true");
  auto changes = delta::ReadTypeChanges(snap.schema()->field(1));
  ASSERT_TRUE(changes.ok());
  ASSERT_EQ(changes->size(), 1u);
  EXPECT_EQ((*changes)[0].from_type, "integer");
  EXPECT_EQ((*changes)[0].to_type, "long");
  EXPECT_EQ(MetadataVersions(), std::vector<int64_t>{3});  // batches 0-4, 5-9, 10-14, ...
  std::vector<std::string> rows = Rows();
  ASSERT_EQ(rows.size(), 20u);
  EXPECT_NE(std::find(rows.begin(), rows.end(), "id=3|n=3|_offset=3"), rows.end());
  EXPECT_NE(std::find(rows.begin(), rows.end(), "id=19|n=2147483667|_offset=19"), rows.end());

  // add_columns does not widen: such a value is a bad record.
  Messages more;
  more.payloads[0] = {R"({"id": 1, "n": 3000000000})"};
  store_ = std::make_shared<storage::InMemoryStore>();
  Status st = RunOnce(&more, {.ddl = "id BIGINT NOT NULL, n INT"});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("add_columns_and_widen"), std::string::npos) << st.ToString();
}

TEST_F(SchemaEvolutionTest, LimitsPerBatchAndInAll) {
  Messages m;
  m.payloads[0] = {R"({"id": 1, "a": 1, "b": 1})", R"({"id": 2, "c": 1, "d": 1})",
                   R"({"id": 3, "e": 1, "f": 1, "g": 1})"};
  Setup setup{.on_bad_record = OnBadRecord::kSkip,
              .limits = {.max_new_fields = 2, .max_fields = 100}};
  ASSERT_TRUE(RunOnce(&m, setup).ok());
  // Message 2 did not fit batch 1's limit: batch 1 was committed first. Message 3 alone exceeds
  // it: skipped.
  EXPECT_EQ(Latest().schema()->ToString(),
            "id BIGINT NOT NULL, _offset BIGINT, a BIGINT, b BIGINT, c BIGINT, d BIGINT");
  EXPECT_EQ(Rows().size(), 2u);
  EXPECT_EQ(MetadataVersions(), (std::vector<int64_t>{1, 2}));

  store_ = std::make_shared<storage::InMemoryStore>();
  Messages total;
  total.payloads[0] = {R"({"id": 1, "a": 1, "b": 1})"};
  Status st = RunOnce(&total, {.limits = {.max_new_fields = 10, .max_fields = 3}});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("max_columns"), std::string::npos) << st.ToString();
}

// Derived columns and `where` follow the input's changes; a derived partition column whose input
// widened cannot widen with it: the pipeline stops before writing anything of the change.
TEST_F(SchemaEvolutionTest, DerivedColumnsAcrossAnEvolution) {
  Messages m;
  m.payloads[0] = {R"({"id": 1, "n": 5})", R"({"id": 2, "n": 6, "extra": "x"})",
                   R"({"id": 3, "n": 3000000000})"};
  TransformSpec transform{.columns = {{.name = "twice", .expr = "n * 2"}}, .where = "id > 1"};
  Setup setup{.ddl = "id BIGINT NOT NULL, n INT",
              .mode = SchemaEvolution::kAddColumnsAndWiden,
              .transform = transform,
              .max_rows = 1};
  ASSERT_TRUE(RunOnce(&m, setup).ok());
  EXPECT_EQ(Latest().schema()->ToString(),
            "id BIGINT NOT NULL, n BIGINT, _offset BIGINT, twice BIGINT, extra STRING");
  EXPECT_EQ(Rows(), (std::vector<std::string>{"id=2|n=6|_offset=1|twice=12|extra=x",
                                              "id=3|n=3000000000|_offset=2|twice=6000000000|"
                                              "extra=null"}));

  store_ = std::make_shared<storage::InMemoryStore>();
  Setup partitioned{.ddl = "id BIGINT NOT NULL, n INT",
                    .mode = SchemaEvolution::kAddColumnsAndWiden,
                    .transform = {.columns = {{.name = "bucket", .expr = "n % 10"}}},
                    .partition_by = {"bucket"},
                    .max_rows = 1};
  Status st = RunOnce(&m, partitioned);
  EXPECT_EQ(st.code(), StatusCode::kNotSupported) << st.ToString();
  EXPECT_NE(st.message().find("derived column 'bucket'"), std::string::npos) << st.ToString();
  // The batch before the widening (with `extra`) was committed; nothing of the widening was.
  EXPECT_EQ(Latest().schema()->ToString(),
            "id BIGINT NOT NULL, n INT, _offset BIGINT, bucket INT, extra STRING");
}

// The dedup key over a column that widens, across batches that add a column and widen one: the
// key is compiled again for each schema, and keys committed before a change still drop rows.
TEST_F(SchemaEvolutionTest, DedupKeysAcrossAnEvolution) {
  Messages m;
  m.payloads[0] = {R"({"id": 1, "n": 5})",          R"({"id": 2, "n": 6, "extra": "x"})",
                   R"({"id": 3, "n": 6})",          R"({"id": 4, "n": 3000000000})",
                   R"({"id": 5, "n": 3000000000})", R"({"id": 6, "n": 5, "extra": "y"})"};
  Setup setup{.ddl = "id BIGINT NOT NULL, n INT",
              .mode = SchemaEvolution::kAddColumnsAndWiden,
              .max_rows = 1,
              .dedup = DedupSpec{.key = "n"}};
  ASSERT_TRUE(RunOnce(&m, setup).ok());
  EXPECT_EQ(Latest().schema()->ToString(),
            "id BIGINT NOT NULL, n BIGINT, _offset BIGINT, extra STRING");
  EXPECT_EQ(Rows(),
            (std::vector<std::string>{"id=1|n=5|_offset=0|extra=null", "id=2|n=6|_offset=1|extra=x",
                                      "id=4|n=3000000000|_offset=3|extra=null"}));
  EXPECT_EQ(Metric("ferry_dedup_hits_total"), 3);
}

// Another writer (an operator's `ferry table add-columns`) adds a column while the pipeline runs
// in mode none: the pipeline's commit merges again, and the following batches fill the column.
TEST_F(SchemaEvolutionTest, AColumnAddedUnderARunningPipelineIsFilled) {
  Messages m;
  for (int i = 0; i < 6; ++i) {
    m.payloads[0].push_back(fmt::format(R"({{"id": {}, "region": "r{}"}})", i, i));
  }
  // max_in_flight 0: each batch's outcome is back before the next batch is read, so the
  // second batch decodes into the new column.
  auto p = Make(&m, {.mode = SchemaEvolution::kNone, .max_rows = 3, .max_in_flight = 0});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  // The column goes in before the pipeline's first commit (its snapshot is older).
  auto table = *delta::Table::Open(store_, "events");
  auto snap = *table->LoadSnapshot();
  auto merge = delta::MergeSchema(*snap.schema(),
                                  columnar::Schema({{"region", columnar::DataType::String()}}),
                                  {.mode = SchemaEvolution::kAddColumns});
  ASSERT_TRUE(merge.ok());
  auto change = delta::PlanSchemaChange(snap, *merge);
  ASSERT_TRUE(change.ok());
  delta::Transaction txn(*table, snap);
  txn.SetMetadata(change->metadata);
  ASSERT_TRUE(txn.Commit().ok());
  StopSignal stop;
  ASSERT_TRUE((*p)->Run(&stop).ok());
  std::vector<std::string> rows = Rows();
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows.back(), "id=5|_offset=5|region=r5");
  EXPECT_EQ(Latest().schema()->ToString(), "id BIGINT NOT NULL, _offset BIGINT, region STRING");
}

// Another writer (Spark's ALTER TABLE ADD COLUMNS) adds a column after the pipeline decoded a
// batch against the older schema (its decoder dropped the field) and before that batch commits:
// the MetadataChanged conflict tells the pipeline, which reads the batch again against the new
// schema, so every row fills the column (the interop suite's test_concurrent_writers found 400
// rows committed with nulls after Spark's ALTER).
TEST_F(SchemaEvolutionTest, ABatchDecodedBeforeAnotherWritersNewColumnIsReadAgain) {
  Messages m;
  for (int i = 0; i < 6; ++i) {
    m.payloads[0].push_back(fmt::format(R"({{"id": {}, "region": "r{}"}})", i, i));
  }
  bool altered = false;
  auto alter = [&](SealedBatch*) {
    if (altered) {
      return;
    }
    altered = true;
    auto table = *delta::Table::Open(store_, "events");
    auto snap = *table->LoadSnapshot();
    auto merge = delta::MergeSchema(*snap.schema(),
                                    columnar::Schema({{"region", columnar::DataType::String()}}),
                                    {.mode = SchemaEvolution::kAddColumns});
    ASSERT_TRUE(merge.ok());
    auto change = delta::PlanSchemaChange(snap, *merge);
    ASSERT_TRUE(change.ok());
    delta::Transaction txn(*table, snap);
    txn.SetMetadata(change->metadata);
    ASSERT_TRUE(txn.Commit().ok());
  };
  auto p = Make(
      &m, {.mode = SchemaEvolution::kNone, .max_rows = 3, .max_in_flight = 0, .seal_hook = alter});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  StopSignal stop;
  ASSERT_TRUE((*p)->Run(&stop).ok());
  EXPECT_TRUE(altered);
  std::vector<std::string> rows = Rows();
  ASSERT_EQ(rows.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(rows[static_cast<size_t>(i)], fmt::format("id={}|_offset={}|region=r{}", i, i, i));
  }
  EXPECT_EQ(Metric("ferry_schema_rewinds_total"), 1);
}

// A fenced pipeline drops its batch and decodes into the table's schema again, where another
// writer may have given a field another type and its own additions may be missing: its empty
// batch takes that schema whatever its columns were. Rows keep the rules (no type that does not
// convert, no column without a place). TwoWritersEvolveOneTable met this only under ASan's
// timing ("the open batch does not convert to the new schema").
TEST(ConformBatchTest, AnEmptyBatchTakesAnySchemaARowfulOneOnlyAConvertibleOne) {
  using columnar::DataType;
  auto ours = std::make_shared<columnar::Schema>(
      std::vector<columnar::Field>{{"id", DataType::Int64(), false},
                                   {"clash", DataType::String()},
                                   {"only_b", DataType::Int64()}});
  auto table = std::make_shared<columnar::Schema>(
      std::vector<columnar::Field>{{"id", DataType::Int64(), false}, {"clash", DataType::Int64()}});
  columnar::RecordBatch empty = columnar::RecordBatch::MakeEmpty(ours);
  ASSERT_TRUE(ConformBatch(&empty, table).ok());
  EXPECT_TRUE(empty.schema().Equals(*table));
  EXPECT_EQ(empty.num_columns(), 2);
  EXPECT_EQ(empty.num_rows(), 0);

  columnar::RecordBatch rowful = columnar::RecordBatch::MakeEmpty(ours);
  for (int c = 0; c < rowful.num_columns(); ++c) {
    rowful.mutable_column(c)->AppendNull();
  }
  Status refused = ConformBatch(&rowful, table);
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument) << refused.ToString();
  EXPECT_NE(refused.message().find("clash"), std::string::npos) << refused.ToString();
  EXPECT_TRUE(rowful.schema().Equals(*ours)) << "a refused batch is unchanged";
}

// Two pipelines (their own partitions, one table) evolve the table at once, with the same and
// with different new fields, and one whose new field the other added first with another type:
// one schema in the end and every row (values that cannot take the winner's type are bad
// records).
TEST_F(SchemaEvolutionTest, TwoWritersEvolveOneTable) {
  Messages a{.prefix = "kafka/a"};
  Messages b{.prefix = "kafka/b"};
  for (int i = 0; i < 200; ++i) {
    a.payloads[0].push_back(
        i < 50 ? fmt::format(R"({{"id": {}}})", i)
               : fmt::format(R"({{"id": {}, "shared": {}, "only_a": "a{}", "clash": {}}})", i, i, i,
                             i));
    b.payloads[0].push_back(
        i < 80 ? fmt::format(R"({{"id": {}}})", 1000 + i)
               : fmt::format(R"({{"id": {}, "shared": {}, "only_b": {{"k": {}}}, "clash": "{}"}})",
                             1000 + i, i, i, i % 3 == 0 ? "x" : std::to_string(i)));
  }
  // The table exists before either starts.
  ASSERT_TRUE(OpenOrCreateTable(store_, "events",
                                {.schema_ddl = "id BIGINT NOT NULL", .metadata_columns = metadata_})
                  .ok());
  Status result_a;
  Status result_b;
  std::thread ta([&] {
    result_a = RunOnce(&a, {.on_bad_record = OnBadRecord::kSkip, .max_rows = 7, .id = "a"});
  });
  std::thread tb([&] {
    result_b = RunOnce(&b, {.on_bad_record = OnBadRecord::kSkip, .max_rows = 11, .id = "b"});
  });
  ta.join();
  tb.join();
  ASSERT_TRUE(result_a.ok()) << result_a.ToString();
  ASSERT_TRUE(result_b.ok()) << result_b.ToString();
  delta::Snapshot snap = Latest();
  const columnar::Schema& schema = *snap.schema();
  for (const char* name : {"shared", "only_a", "only_b", "clash"}) {
    EXPECT_TRUE(schema.FieldIndex(name).has_value()) << name << " in " << schema.ToString();
  }
  EXPECT_EQ(snap.position("a/kafka/a/0"), 199);
  EXPECT_EQ(snap.position("b/kafka/b/0"), 199);
  // `clash` is BIGINT or STRING, whichever landed first; the loser's values that do not fit
  // were skipped, all others are there, each once.
  bool clash_is_string =
      schema.field(*schema.FieldIndex("clash")).type->id() == columnar::TypeId::kString;
  std::vector<std::string> rows = Rows();
  std::set<int64_t> ids;
  for (const std::string& row : rows) {
    EXPECT_TRUE(ids.insert(std::stoll(row.substr(3, row.find('|') - 3))).second) << row;
  }
  int64_t expected = 400;
  if (!clash_is_string) {
    for (int i = 80; i < 200; ++i) {
      expected -= i % 3 == 0 ? 1 : 0;  // b's "x" values do not fit BIGINT
    }
  }
  EXPECT_EQ(static_cast<int64_t>(ids.size()), expected);
  EXPECT_EQ(rows.size(), ids.size());
}

// The dead-letter table evolves with its pipeline: one made without a column gets it.
TEST_F(SchemaEvolutionTest, DeadLetterTableEvolves) {
  ASSERT_TRUE(
      OpenOrCreateTable(store_, "dead",
                        {.schema_ddl = "pipeline STRING NOT NULL, source_partition STRING "
                                       "NOT NULL, position BIGINT NOT NULL, payload BINARY"})
          .ok());
  Messages m;
  m.payloads[0] = {R"({"id": 1})", "not json"};
  ASSERT_TRUE(RunOnce(&m, {.on_bad_record = OnBadRecord::kDeadLetter}).ok());
  EXPECT_EQ(Latest("dead").schema()->ToString(),
            "pipeline STRING NOT NULL, source_partition STRING NOT NULL, position BIGINT NOT NULL, "
            "payload BINARY, key BINARY, error STRING, time TIMESTAMP");
  EXPECT_EQ(Rows("dead").size(), 1u);
}

// A table created with column mapping from the pipeline's table properties (docs/delta.md
// "Column mapping"), partitioned: the fields a batch adds get the next ids and physical names in
// the commit of their data, the files and partitionValues use the physical names, and the rows
// read back under the table's names.
TEST_F(SchemaEvolutionTest, ColumnMappedTableEvolves) {
  Messages m;
  for (int i = 0; i < 20; ++i) {
    m.payloads[0].push_back(
        i < 10 ? fmt::format(R"({{"id": {}, "p": "a", "loc": {{"lat": 1.5}}}})", i)
               : fmt::format(
                     R"({{"id": {}, "p": "b", "loc": {{"lat": 1.5, "alt": {}}}, "tag": "t{}"}})", i,
                     i, i));
  }
  Setup setup{.ddl = "id BIGINT NOT NULL, p STRING, loc STRUCT<lat: DOUBLE>",
              .partition_by = {"p"},
              .properties = {{"delta.columnMapping.mode", "name"}},
              .max_rows = 10};
  ASSERT_TRUE(RunOnce(&m, setup).ok());
  delta::Snapshot snap = Latest();
  EXPECT_EQ(snap.schema()->ToString(),
            "id BIGINT NOT NULL, p STRING, loc STRUCT<lat: DOUBLE, alt: BIGINT>, _offset BIGINT, "
            "tag STRING");
  // id, p, loc, loc.lat, _offset at creation; loc.alt and tag with the batch that had them.
  EXPECT_EQ(snap.metadata().configuration.at("delta.columnMapping.maxColumnId"), "7");
  EXPECT_EQ(MetadataVersions(), std::vector<int64_t>{2});
  const columnar::Schema& schema = *snap.schema();
  EXPECT_EQ(delta::ColumnMappingId(schema.field(4)), 7);
  std::vector<std::string> rows = Rows();
  ASSERT_EQ(rows.size(), 20u);
  EXPECT_NE(
      std::find(rows.begin(), rows.end(), "id=3|p=a|loc={lat:1.5,alt:null}|_offset=3|tag=null"),
      rows.end());
  EXPECT_NE(
      std::find(rows.begin(), rows.end(), "id=15|p=b|loc={lat:1.5,alt:15}|_offset=15|tag=t15"),
      rows.end());
  auto table = delta::Table::Open(store_, "events");
  ASSERT_TRUE(table.ok());
  ASSERT_EQ(snap.files().size(), 2u);
  for (const auto& [key, add] : snap.files()) {
    EXPECT_EQ(add.partition_values.begin()->first, *delta::PhysicalName(schema.field(1)));
    auto path = delta::DecodeUriPath(add.path);
    ASSERT_TRUE(path.ok());
    auto file = store_->OpenForRead((*table)->Key(*path));
    ASSERT_TRUE(file.ok());
    auto reader = parquet::FileReader::Open(*file);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    EXPECT_EQ((*reader)->schema()->field(0).name, *delta::PhysicalName(schema.field(0)));
  }
}

// An upsert batch that adds a column (and widens one) while it replaces and deletes rows of files
// written before: the rows a copy-on-write rewrite keeps take the new schema like the batch's
// own (the new column null, the widened one widened), on a copy-on-write table, one with
// deletion vectors, and one with row tracking (whose copies carry the materialized row ids).
TEST_F(SchemaEvolutionTest, UpsertsRewriteFilesWrittenBeforeAColumnTheBatchAdds) {
  for (const char* variant : {"cow", "dv", "tracked"}) {
    SCOPED_TRACE(variant);
    store_ = std::make_shared<storage::InMemoryStore>();
    Messages m;
    m.payloads[0] = {
        R"({"id": 1, "v": "a", "n": 1})",  // batch 1: offsets 0-3, before `extra`
        R"({"id": 2, "v": "b", "n": 2})",
        R"({"id": 3, "v": "c", "n": 3})",
        R"({"id": 4, "v": "d", "n": 4})",
        R"({"id": 2, "v": "B", "n": 20, "extra": "x"})",  // batch 2: adds extra, widens n
        "",                                               // tombstone of 3
        R"({"id": 5, "v": "e", "n": 3000000000, "extra": "y"})",
        R"({"id": 1, "v": "a2", "n": 10})",
        R"({"id": 6, "v": "f", "n": 6})",  // batch 3
        "",                                // tombstone of 4
    };
    m.keys[{0, 5}] = R"({"id": 3})";
    m.keys[{0, 9}] = R"({"id": 4})";
    Setup setup{.ddl = "id BIGINT NOT NULL, v STRING, n INT",
                .mode = SchemaEvolution::kAddColumnsAndWiden,
                .max_rows = 4,
                .id = variant,
                .upsert = UpsertSpec{.key = {"id"}}};
    if (std::string_view(variant) == "dv") {
      setup.properties = {{"delta.enableDeletionVectors", "true"}};
    } else if (std::string_view(variant) == "tracked") {
      setup.properties = {{"delta.enableRowTracking", "true"}};
    }
    Status st = RunOnce(&m, setup);
    ASSERT_TRUE(st.ok()) << st.ToString();
    delta::Snapshot snap = Latest();
    EXPECT_EQ(snap.schema()->ToString(),
              "id BIGINT NOT NULL, v STRING, n BIGINT, _offset BIGINT, extra STRING");
    EXPECT_EQ(snap.position(fmt::format("{}/kafka/events/0", variant)), 9);
    EXPECT_EQ(LiveRows(), (std::vector<std::string>{
                              "id=1|v=a2|n=10|_offset=7|extra=null",
                              "id=2|v=B|n=20|_offset=4|extra=x",
                              "id=5|v=e|n=3000000000|_offset=6|extra=y",
                              "id=6|v=f|n=6|_offset=8|extra=null",
                          }));
    int64_t with_dv = 0;
    for (const auto& [key, add] : snap.files()) {
      with_dv += add.deletion_vector ? 1 : 0;
    }
    EXPECT_EQ(with_dv > 0, std::string_view(variant) == "dv");
  }
}

}  // namespace
}  // namespace ferry::pipeline::evolution_test

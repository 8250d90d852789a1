// Schema evolution through the whole pipeline (schema_evolver.h, batch_committer.h step 3a):
// new fields and widened types committed with the data that needs them, bad values to
// on_bad_record, limits, derived columns, another writer changing the table under a running
// pipeline, and two pipelines evolving one table at once.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "ferry/delta/schema_history.h"
#include "ferry/delta/transaction.h"
#include "ferry/delta/type_widening.h"
#include "ferry/pipeline/pipeline.h"
#include "ferry/pipeline/schema_evolver.h"
#include "ferry/pipeline/table_setup.h"
#include "ferry/storage/memory_store.h"
#include "ferry/testing/fake_source.h"
#include "ferry/testing/table_verifier.h"
#include "ferry/transform/avro_decoder.h"
#include "ferry/transform/confluent_wire.h"
#include "ferry/transform/json_decoder.h"
#include "ferry/transform/protobuf_decoder.h"

namespace ferry::pipeline {
namespace {

using delta::SchemaEvolution;
using testing::FakeSource;
using testing::SharedSource;

// The messages of one source partition set; every source made replays them all.
struct Messages {
  std::string prefix = "kafka/events";
  int partitions = 1;
  std::vector<std::vector<std::string>> payloads = std::vector<std::vector<std::string>>(1);

  SourceFactory Factory() {
    return [this]() -> Result<std::unique_ptr<source::Source>> {
      auto s = std::make_shared<FakeSource>(
          FakeSource::Options{.prefix = prefix, .partitions = partitions});
      for (int p = 0; p < partitions; ++p) {
        for (const std::string& payload : payloads[static_cast<size_t>(p)]) {
          s->Produce(p, payload);
        }
      }
      return std::unique_ptr<source::Source>(std::make_unique<SharedSource>(std::move(s)));
    };
  }
};

class SchemaEvolutionTest : public ::testing::Test {
 protected:
  std::shared_ptr<storage::ObjectStore> store_ = std::make_shared<storage::InMemoryStore>();
  metrics::Registry registry_;
  std::map<std::string, std::string> metadata_ = {{"offset", "_offset"}};

  struct Setup {
    std::string ddl = "id BIGINT NOT NULL";
    SchemaEvolution mode = SchemaEvolution::kAddColumns;
    OnBadRecord on_bad_record = OnBadRecord::kFail;
    TransformSpec transform;
    std::vector<std::string> partition_by;
    delta::SchemaEvolutionLimits limits;
    int64_t max_rows = 1000;
    int max_in_flight = 1;
    std::string id = "events";
    std::shared_ptr<storage::ObjectStore> store;  // default store_
    std::optional<DedupSpec> dedup;
    // Framed Avro or Protobuf messages instead of JSON, their writer schemas by id.
    std::shared_ptr<transform::WriterSchemas> avro;
    std::shared_ptr<transform::ProtoSchemas> protobuf;
  };

  Result<std::unique_ptr<Pipeline>> Make(Messages* messages, const Setup& setup) {
    auto store = setup.store ? setup.store : store_;
    FERRY_ASSIGN_OR_RETURN(OpenedTable opened,
                           OpenOrCreateTable(store, "events",
                                             {.schema_ddl = setup.ddl,
                                              .partition_by = setup.partition_by,
                                              .metadata_columns = metadata_,
                                              .transform = setup.transform}));
    std::set<std::string> metadata_names;
    for (const auto& [kind, column] : metadata_) {
      metadata_names.insert(column);
    }
    bool observe = setup.mode != SchemaEvolution::kNone;
    bool widen = setup.mode == SchemaEvolution::kAddColumnsAndWiden;
    auto factory =
        [metadata_names, observe, widen, avro = setup.avro, protobuf = setup.protobuf](
            const columnar::SchemaPtr& input) -> Result<std::unique_ptr<transform::Decoder>> {
      std::vector<std::string> columns;
      for (const columnar::Field& f : input->fields()) {
        if (metadata_names.count(f.name) == 0) {
          columns.push_back(f.name);
        }
      }
      if (avro != nullptr) {
        FERRY_ASSIGN_OR_RETURN(
            auto d, transform::AvroDecoder::Create(
                        input, {.schemas = avro, .columns = columns, .observe = observe}));
        return std::unique_ptr<transform::Decoder>(std::move(d));
      }
      if (protobuf != nullptr) {
        FERRY_ASSIGN_OR_RETURN(
            auto d, transform::ProtobufDecoder::Create(
                        input, {.schemas = protobuf, .columns = columns, .observe = observe}));
        return std::unique_ptr<transform::Decoder>(std::move(d));
      }
      FERRY_ASSIGN_OR_RETURN(auto d,
                             transform::JsonDecoder::Create(input, {.columns = columns,
                                                                    .observe = observe,
                                                                    .observe_misfits = observe,
                                                                    .dates_keep_time = widen}));
      return std::unique_ptr<transform::Decoder>(std::move(d));
    };
    FERRY_ASSIGN_OR_RETURN(
        auto decoder, factory(InputSchema(*opened.snapshot.schema(), setup.transform.columns)));
    PipelineOptions options{.id = setup.id,
                            .max_rows = setup.max_rows,
                            .max_latency = std::chrono::milliseconds(50),
                            .max_in_flight = setup.max_in_flight,
                            .metadata_columns = metadata_,
                            .transform = setup.transform,
                            .on_bad_record = setup.on_bad_record,
                            .schema_evolution = setup.mode,
                            .evolution_limits = setup.limits,
                            .decoder_factory = factory,
                            .until_caught_up = true};
    options.dedup = setup.dedup;
    options.commit.checkpoint = false;
    options.initial_backoff = std::chrono::milliseconds(1);
    bool dead_letter = setup.on_bad_record == OnBadRecord::kDeadLetter;
    FERRY_ASSIGN_OR_RETURN(
        auto pipeline,
        Pipeline::Create(std::move(options), std::move(opened.table), std::move(opened.snapshot),
                         messages->Factory(), std::move(decoder), &registry_));
    if (dead_letter) {
      FERRY_ASSIGN_OR_RETURN(
          OpenedTable dead,
          OpenOrCreateTable(store, "dead",
                            {.schema_ddl = kDeadLetterSchema,
                             .allow_missing_columns = setup.mode != SchemaEvolution::kNone}));
      FERRY_RETURN_IF_ERROR(
          pipeline->SetDeadLetterTable(std::move(dead.table), std::move(dead.snapshot)));
    }
    return pipeline;
  }

  Status RunOnce(Messages* messages, const Setup& setup) {
    FERRY_ASSIGN_OR_RETURN(auto p, Make(messages, setup));
    StopSignal stop;
    return p->Run(&stop);
  }

  delta::Snapshot Latest(const std::string& name = "events") {
    auto table = delta::Table::Open(store_, name);
    auto snap = (*table)->LoadSnapshot();
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
    return *snap;
  }
  std::vector<std::string> Rows(const std::string& name = "events") {
    auto table = delta::Table::Open(store_, name);
    auto snap = (*table)->LoadSnapshot();
    auto rows = testing::ReadTableRows(**table, *snap);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? *rows : std::vector<std::string>{};
  }
  // Versions whose commit holds a metaData, and how many metaData actions the log holds.
  std::vector<int64_t> MetadataVersions(int64_t* actions = nullptr) {
    auto table = delta::Table::Open(store_, "events");
    std::vector<int64_t> out;
    int64_t count = 0;
    for (int64_t v = 1; v <= Latest().version(); ++v) {
      auto commit = (*table)->ReadCommit(v);
      EXPECT_TRUE(commit.ok());
      int64_t here = 0;
      for (const delta::Action& a : *commit) {
        here += std::holds_alternative<delta::Metadata>(a) ? 1 : 0;
      }
      if (here > 0) {
        out.push_back(v);
      }
      count += here;
    }
    if (actions != nullptr) {
      *actions = count;
    }
    return out;
  }
  double Metric(std::string_view name, const std::string& pipeline = "events") {
    return registry_.Value(name, {{"pipeline", pipeline}});
  }
  double Dropped(const std::string& field) {
    return registry_.Value("ferry_dropped_fields_total",
                           {{"pipeline", "events"}, {"field", field}});
  }
};

// Avro writer schemas by id for the tests below.
class AvroSchemasById final : public transform::WriterSchemas {
 public:
  explicit AvroSchemasById(std::map<int32_t, std::string> json) {
    for (const auto& [id, text] : json) {
      auto parsed = transform::avro::Schema::Parse(text);
      EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
      schemas_[id] = std::make_shared<const transform::avro::Schema>(std::move(*parsed));
    }
  }
  Result<std::shared_ptr<const transform::avro::Schema>> Get(int32_t id) override {
    auto it = schemas_.find(id);
    if (it == schemas_.end()) {
      return NotFound("no schema {}", id);
    }
    return it->second;
  }

 private:
  std::map<int32_t, std::shared_ptr<const transform::avro::Schema>> schemas_;
};

// Protobuf writer schemas (.proto texts) by id.
class ProtoSchemasById final : public transform::ProtoSchemas {
 public:
  explicit ProtoSchemasById(std::map<int32_t, std::string> texts) {
    for (const auto& [id, text] : texts) {
      auto parsed = transform::protobuf::ProtoSchema::FromProtoFiles({{"o.proto", text}});
      EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
      schemas_[id] = *parsed;
    }
  }
  Result<std::shared_ptr<const transform::protobuf::ProtoSchema>> Get(int32_t id) override {
    auto it = schemas_.find(id);
    if (it == schemas_.end()) {
      return NotFound("no schema {}", id);
    }
    return it->second;
  }

 private:
  std::map<int32_t, std::shared_ptr<const transform::protobuf::ProtoSchema>> schemas_;
};

// Avro binary by hand (the Avro specification's "Binary Encoding"): a zigzag varint long, a
// string as its length then its bytes, a double as 8 little-endian bytes.
std::string AvroLong(int64_t v) {
  auto u = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  std::string out;
  for (; u >= 0x80; u >>= 7) {
    out.push_back(static_cast<char>((u & 0x7f) | 0x80));
  }
  out.push_back(static_cast<char>(u));
  return out;
}
std::string AvroString(const std::string& s) {
  return AvroLong(static_cast<int64_t>(s.size())) + s;
}
std::string AvroDouble(double d) {
  std::string out(sizeof d, '\0');
  std::memcpy(out.data(), &d, sizeof d);
  return out;
}

// Protobuf wire fields by hand (protobuf.dev "Encoding").
std::string ProtoVarint(uint64_t v) {
  std::string out;
  for (; v >= 0x80; v >>= 7) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
  }
  out.push_back(static_cast<char>(v));
  return out;
}
std::string ProtoVarintField(uint32_t number, uint64_t v) {
  return ProtoVarint(uint64_t{number} << 3) + ProtoVarint(v);
}
std::string ProtoLenField(uint32_t number, const std::string& bytes) {
  return ProtoVarint((uint64_t{number} << 3) | 2) + ProtoVarint(bytes.size()) + bytes;
}

// v1 {id, loc {lat}}; v2 adds loc.alt inside the nested record and `note` at the top level.
constexpr const char* kAvroOrderV1 = R"({"type": "record", "name": "Order", "fields": [
    {"name": "id", "type": "long"},
    {"name": "loc", "type": {"type": "record", "name": "Loc", "fields": [
        {"name": "lat", "type": "double"}]}}]})";
constexpr const char* kAvroOrderV2 = R"({"type": "record", "name": "Order", "fields": [
    {"name": "id", "type": "long"},
    {"name": "loc", "type": {"type": "record", "name": "Loc", "fields": [
        {"name": "lat", "type": "double"}, {"name": "alt", "type": "long"}]}},
    {"name": "note", "type": "string"}]})";

// Message i: schema v1 for i < 5, v2 after.
std::string AvroOrder(int i) {
  std::string body = AvroLong(i) + AvroDouble(1.5);
  if (i < 5) {
    return transform::MakeConfluentFrame(1, {}, body, false);
  }
  body += AvroLong(i * 10) + AvroString(fmt::format("n{}", i));
  return transform::MakeConfluentFrame(2, {}, body, false);
}

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

// Avro (issue 20): a field new inside a nested record evolves the table as a new field of its
// STRUCT column, in the commit of its data; rows before read it as null; nothing is dropped.
TEST_F(SchemaEvolutionTest, AvroFieldsNewInsideANestedRecordEvolveTheTable) {
  Messages m;
  for (int i = 0; i < 10; ++i) {
    m.payloads[0].push_back(AvroOrder(i));
  }
  Setup setup{.ddl = "id BIGINT NOT NULL, loc STRUCT<lat: DOUBLE>",
              .avro = std::make_shared<AvroSchemasById>(
                  std::map<int32_t, std::string>{{1, kAvroOrderV1}, {2, kAvroOrderV2}})};
  Status st = RunOnce(&m, setup);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(
      Latest().schema()->ToString(),
      "id BIGINT NOT NULL, loc STRUCT<lat: DOUBLE, alt: BIGINT>, _offset BIGINT, note STRING");
  std::vector<std::string> rows = Rows();
  ASSERT_EQ(rows.size(), 10u);
  EXPECT_NE(std::find(rows.begin(), rows.end(), "id=3|loc={lat:1.5,alt:null}|_offset=3|note=null"),
            rows.end());
  EXPECT_NE(std::find(rows.begin(), rows.end(), "id=7|loc={lat:1.5,alt:70}|_offset=7|note=n7"),
            rows.end());
  EXPECT_EQ(Metric("ferry_schema_changes_total"), 1);
  EXPECT_EQ(Dropped("loc.alt"), 0);
}

// Avro with schema_evolution = "none": the nested and the top-level field are dropped, and
// counted once per message whose writer schema has them.
TEST_F(SchemaEvolutionTest, AvroFieldsTheTableLacksAreDroppedAndCounted) {
  Messages m;
  for (int i = 0; i < 12; ++i) {
    m.payloads[0].push_back(AvroOrder(i));
  }
  Setup setup{.ddl = "id BIGINT NOT NULL, loc STRUCT<lat: DOUBLE>",
              .mode = SchemaEvolution::kNone,
              .max_rows = 4,
              .avro = std::make_shared<AvroSchemasById>(
                  std::map<int32_t, std::string>{{1, kAvroOrderV1}, {2, kAvroOrderV2}})};
  Status st = RunOnce(&m, setup);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(Latest().schema()->ToString(),
            "id BIGINT NOT NULL, loc STRUCT<lat: DOUBLE>, _offset BIGINT");
  std::vector<std::string> rows = Rows();
  ASSERT_EQ(rows.size(), 12u);
  EXPECT_NE(std::find(rows.begin(), rows.end(), "id=7|loc={lat:1.5}|_offset=7"), rows.end());
  EXPECT_EQ(Dropped("loc.alt"), 7);  // messages 5..11
  EXPECT_EQ(Dropped("note"), 7);
  EXPECT_EQ(Metric("ferry_schema_changes_total"), 0);
}

// v1 Order {id, items: repeated Item {sku}}; v2 adds Item.qty (inside the repeated message) and
// Order.note.
constexpr const char* kProtoOrderV1 = R"(syntax = "proto3";
message Order { int64 id = 1; repeated Item items = 2; }
message Item { string sku = 1; })";
constexpr const char* kProtoOrderV2 = R"(syntax = "proto3";
message Order { int64 id = 1; repeated Item items = 2; string note = 3; }
message Item { string sku = 1; int32 qty = 2; })";

// Message i: v1 for i < 5, v2 after; two items each.
std::string ProtoOrder(int i) {
  std::string item = ProtoLenField(1, fmt::format("s{}", i));
  if (i < 5) {
    return transform::MakeConfluentFrame(
        1, {0}, ProtoVarintField(1, static_cast<uint64_t>(i)) + ProtoLenField(2, item), true);
  }
  item += ProtoVarintField(2, static_cast<uint64_t>(i));
  return transform::MakeConfluentFrame(2, {0},
                                       ProtoVarintField(1, static_cast<uint64_t>(i)) +
                                           ProtoLenField(2, item) + ProtoLenField(2, item) +
                                           ProtoLenField(3, fmt::format("n{}", i)),
                                       true);
}

// Protobuf: a field new inside a repeated message evolves the array's element STRUCT.
TEST_F(SchemaEvolutionTest, ProtobufFieldsNewInsideANestedMessageEvolveTheTable) {
  Messages m;
  for (int i = 0; i < 10; ++i) {
    m.payloads[0].push_back(ProtoOrder(i));
  }
  Setup setup{.ddl = "id BIGINT, items ARRAY<STRUCT<sku: STRING>>",
              .protobuf = std::make_shared<ProtoSchemasById>(
                  std::map<int32_t, std::string>{{1, kProtoOrderV1}, {2, kProtoOrderV2}})};
  Status st = RunOnce(&m, setup);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(Latest().schema()->ToString(),
            "id BIGINT, items ARRAY<STRUCT<sku: STRING, qty: INT>>, _offset BIGINT, note STRING");
  std::vector<std::string> rows = Rows();
  ASSERT_EQ(rows.size(), 10u);
  EXPECT_NE(
      std::find(rows.begin(), rows.end(), "id=2|items=[{sku:s2,qty:null}]|_offset=2|note=null"),
      rows.end());
  EXPECT_NE(std::find(rows.begin(), rows.end(),
                      "id=8|items=[{sku:s8,qty:8},{sku:s8,qty:8}]|_offset=8|note=n8"),
            rows.end());
  EXPECT_EQ(Metric("ferry_schema_changes_total"), 1);
}

// Protobuf with schema_evolution = "none": dropped and counted per message.
TEST_F(SchemaEvolutionTest, ProtobufFieldsTheTableLacksAreDroppedAndCounted) {
  Messages m;
  for (int i = 0; i < 9; ++i) {
    m.payloads[0].push_back(ProtoOrder(i));
  }
  Setup setup{.ddl = "id BIGINT, items ARRAY<STRUCT<sku: STRING>>",
              .mode = SchemaEvolution::kNone,
              .protobuf = std::make_shared<ProtoSchemasById>(
                  std::map<int32_t, std::string>{{1, kProtoOrderV1}, {2, kProtoOrderV2}})};
  Status st = RunOnce(&m, setup);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(Latest().schema()->ToString(),
            "id BIGINT, items ARRAY<STRUCT<sku: STRING>>, _offset BIGINT");
  EXPECT_EQ(Rows().size(), 9u);
  EXPECT_EQ(Dropped("items.element.qty"), 4);  // messages 5..8
  EXPECT_EQ(Dropped("note"), 4);
}

}  // namespace
}  // namespace ferry::pipeline

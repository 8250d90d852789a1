// Column rules (table_rules.h) end to end: a table whose metadata is written as Spark writes it
// (generated, default and identity columns, an invariant, a CHECK constraint) takes a topic
// through the pipeline; rows that break a rule land in the dead-letter table naming it, the rest
// are completed as Delta requires; identity values stay unique across runs and above a mark
// another writer raised while a commit was in flight.
#include "ferry/pipeline/table_rules.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <variant>

#include <nlohmann/json.hpp>

#include "ferry/delta/actions_json.h"
#include "ferry/delta/column_rules.h"
#include "ferry/delta/log_files.h"
#include "ferry/delta/schema_json.h"
#include "ferry/testing/pipeline_fixture.h"

namespace ferry::pipeline {
namespace {

using columnar::DataType;
using columnar::Field;

// The schema Spark writes for
//   CREATE TABLE events (id BIGINT NOT NULL, payload STRING,
//     id_mod BIGINT GENERATED ALWAYS AS (id % 10), note STRING DEFAULT 'none',
//     seq BIGINT GENERATED ALWAYS AS IDENTITY (START WITH 100 INCREMENT BY 10))
//   + CHECK (id < 1000) named small_id, and an invariant id >= 0 (the legacy kind).
columnar::SchemaPtr SparkSchema(const std::string& seq_mark = "") {
  columnar::FieldMetadata seq = {{"delta.identity.start", "100"},
                                 {"delta.identity.step", "10"},
                                 {"delta.identity.allowExplicitInsert", "false"}};
  if (!seq_mark.empty()) {
    seq.emplace_back("delta.identity.highWaterMark", seq_mark);
  }
  return std::make_shared<const columnar::Schema>(std::vector<Field>{
      {"id",
       DataType::Int64(),
       false,
       {{"delta.invariants", R"("{\"expression\":{\"expression\":\"id >= 0\"}}")"}}},
      {"payload", DataType::String(), true, {}},
      {"id_mod", DataType::Int64(), true, {{"delta.generationExpression", R"("id % 10")"}}},
      {"note",
       DataType::String(),
       true,
       {{"CURRENT_DEFAULT", R"("'none'")"}, {"EXISTS_DEFAULT", R"("'none'")"}}},
      {"seq", DataType::Int64(), false, seq},
  });
}

delta::Protocol SparkProtocol() {
  return delta::Protocol{.min_reader_version = 1,
                         .min_writer_version = 7,
                         .writer_features = std::vector<std::string>{
                             "appendOnly", "invariants", "checkConstraints", "generatedColumns",
                             "allowColumnDefaults", "identityColumns"}};
}

delta::Metadata SparkMetadata(const columnar::Schema& schema) {
  delta::Metadata m;
  m.id = "5f0b8c5e-0000-4000-8000-000000000001";
  m.schema_string = *delta::SchemaToJson(schema);
  m.configuration = {{"delta.constraints.small_id", "id < 1000"}};
  m.created_time = 1700000000000;
  return m;
}

struct Row {
  std::map<std::string, std::string> cells;
  int64_t Long(const std::string& name) const { return std::stoll(cells.at(name)); }
};

class TableRulesTest : public PipelineTest {
 protected:
  void SetUp() override {
    std::string text = delta::ActionToJson(SparkProtocol()) + "\n" +
                       delta::ActionToJson(SparkMetadata(*SparkSchema())) + "\n";
    ASSERT_TRUE(store_->PutIfAbsent("events/_delta_log/" + delta::CommitFileName(0), text).ok());
  }

  Result<std::unique_ptr<Pipeline>> MakeRules(Broker* broker,
                                              std::shared_ptr<storage::ObjectStore> store = nullptr,
                                              OnBadRecord on_bad = OnBadRecord::kDeadLetter) {
    FERRY_ASSIGN_OR_RETURN(OpenedTable opened,
                           OpenOrCreateTable(store ? store : store_, "events", {.create = false}));
    FERRY_ASSIGN_OR_RETURN(auto decoder, transform::JsonDecoder::Create(
                                             InputSchema(*opened.snapshot.schema(), {}), {}));
    PipelineOptions options{.on_bad_record = on_bad, .until_caught_up = true};
    options.id = "events";
    FERRY_ASSIGN_OR_RETURN(
        auto pipeline,
        Pipeline::Create(std::move(options), std::move(opened.table), std::move(opened.snapshot),
                         broker->Factory(), std::move(decoder), &registry_));
    if (on_bad == OnBadRecord::kDeadLetter) {
      FERRY_ASSIGN_OR_RETURN(OpenedTable dead,
                             OpenOrCreateTable(store_, "dead", {.schema_ddl = kDeadLetterSchema}));
      FERRY_RETURN_IF_ERROR(
          pipeline->SetDeadLetterTable(std::move(dead.table), std::move(dead.snapshot)));
    }
    return pipeline;
  }

  std::vector<Row> Rows() {
    auto table = delta::Table::Open(store_, "events");
    auto snap = (*table)->LoadSnapshot();
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
    auto rows = testing::ReadTableRows(**table, *snap);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    std::vector<Row> out;
    for (const std::string& text : *rows) {
      Row row;
      size_t start = 0;
      while (start <= text.size()) {
        size_t end = text.find('|', start);
        end = end == std::string::npos ? text.size() : end;
        std::string cell = text.substr(start, end - start);
        size_t eq = cell.find('=');
        row.cells[cell.substr(0, eq)] = cell.substr(eq + 1);
        start = end + 1;
      }
      out.push_back(std::move(row));
    }
    return out;
  }

  // The seq column's high-water mark in the table's schema.
  std::optional<int64_t> Mark() {
    delta::Snapshot snap = Latest();
    auto rules = delta::ReadColumnRules(snap.protocol(), snap.metadata(), *snap.schema());
    EXPECT_TRUE(rules.ok());
    return rules->identity.at(0).high_water_mark;
  }

  // Every seq unique, of the form 100 + 10k, and the mark the largest.
  void CheckIdentity(const std::vector<Row>& rows) {
    std::set<int64_t> seen;
    for (const Row& row : rows) {
      int64_t seq = row.Long("seq");
      EXPECT_GE(seq, 100);
      EXPECT_EQ((seq - 100) % 10, 0) << seq;
      EXPECT_TRUE(seen.insert(seq).second) << "duplicate seq " << seq;
    }
    ASSERT_FALSE(seen.empty());
    EXPECT_EQ(Mark(), *seen.rbegin());
  }
};

TEST_F(TableRulesTest, RowsAreCompletedAndViolationsGoToTheDeadLetterTable) {
  Broker broker{.partitions = 1, .per_partition = 30};
  broker.overrides[{0, 3}] = R"({"id": 3, "id_mod": 3, "note": "given"})";  // agrees, keeps note
  broker.overrides[{0, 5}] = R"({"id": 5, "id_mod": 7})";                   // disagrees
  broker.overrides[{0, 7}] = R"({"id": 1000})";                             // CHECK small_id
  broker.overrides[{0, 9}] = R"({"id": -1})";                               // invariant
  broker.overrides[{0, 11}] = R"({"id": 11, "seq": 4})";  // GENERATED ALWAYS identity
  auto p = MakeRules(&broker);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  StopSignal stop;
  Status run = (*p)->Run(&stop);
  ASSERT_TRUE(run.ok()) << run.ToString();

  std::vector<Row> rows = Rows();
  ASSERT_EQ(rows.size(), 26u);
  for (const Row& row : rows) {
    int64_t id = row.Long("id");
    EXPECT_NE(id, 5);
    EXPECT_EQ(row.Long("id_mod"), id % 10) << id;
    EXPECT_EQ(row.cells.at("note"), id == 3 ? "given" : "none") << id;
  }
  CheckIdentity(rows);

  std::vector<std::string> dead = DeadRows();
  ASSERT_EQ(dead.size(), 4u);
  std::string all = fmt::format("{}", fmt::join(dead, "\n"));
  EXPECT_NE(all.find("generated column 'id_mod': the message supplies 7 but its generation "
                     "expression (id % 10) gives 5"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("CHECK constraint 'small_id' (id < 1000)"), std::string::npos) << all;
  EXPECT_NE(all.find("CHECK constraint 'invariant on id' (id >= 0)"), std::string::npos) << all;
  EXPECT_NE(all.find("identity column 'seq'"), std::string::npos) << all;
  EXPECT_EQ(Latest().position("events/kafka/events/0"), 29);
}

TEST_F(TableRulesTest, AViolationStopsAPipelineThatFailsOnBadRecords) {
  Broker broker{.partitions = 1, .per_partition = 10};
  broker.overrides[{0, 4}] = R"({"id": 2000})";
  auto p = MakeRules(&broker, nullptr, OnBadRecord::kFail);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  StopSignal stop;
  Status st = (*p)->Run(&stop);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find("small_id"), std::string::npos) << st.ToString();
  EXPECT_EQ(Rows().size(), 4u);
}

TEST_F(TableRulesTest, IdentityValuesContinueAcrossRuns) {
  Broker first{.partitions = 1, .per_partition = 15};
  {
    auto p = MakeRules(&first);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    StopSignal stop;
    ASSERT_TRUE((*p)->Run(&stop).ok());
  }
  EXPECT_EQ(Mark(), 100 + 14 * 10);
  Broker second{.partitions = 1, .per_partition = 40};
  auto p = MakeRules(&second);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  StopSignal stop;
  ASSERT_TRUE((*p)->Run(&stop).ok());
  std::vector<Row> rows = Rows();
  EXPECT_EQ(rows.size(), 40u);
  CheckIdentity(rows);
  // The commit raising the mark says so as Spark does (tag, blind append): Delta's conflict
  // checker then lets a concurrent DELETE, UPDATE or MERGE commit after it (docs/interop.md).
  auto table = delta::Table::Open(store_, "events");
  ASSERT_TRUE(table.ok());
  auto actions = (*table)->ReadCommit(Latest().version());
  ASSERT_TRUE(actions.ok()) << actions.status().ToString();
  const auto* info = std::get_if<delta::CommitInfo>(&actions->front());
  ASSERT_NE(info, nullptr);
  const nlohmann::json json = nlohmann::json::parse(info->json);
  EXPECT_EQ(json["tags"]["delta.identity.schemaUpdate"], "true") << info->json;
  EXPECT_EQ(json["isBlindAppend"], true) << info->json;
  EXPECT_TRUE(std::any_of(actions->begin(), actions->end(), [](const delta::Action& a) {
    return std::holds_alternative<delta::Metadata>(a);
  }));
}

// Another writer (Spark inserting rows) raises the mark while ferry's commit is in flight: the
// commit conflicts on the metaData, assigns again above the new mark and lands.
TEST_F(TableRulesTest, IdentityIsAssignedAgainAfterAnotherWriterRaisedTheMark) {
  auto gated = std::make_shared<GatedStore>(store_);
  Broker broker{.partitions = 1, .per_partition = 5};
  auto p = MakeRules(&broker, gated);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  gated->Arm();
  StopSignal stop;
  Status result;
  std::thread run([&] { result = (*p)->Run(&stop); });
  WaitUntil([&] { return gated->Holding(); });
  // Version 1 by "Spark": the mark raised to 5000 (its rows are of no matter here).
  columnar::SchemaPtr raised = SparkSchema("5000");
  std::string text = delta::ActionToJson(SparkMetadata(*raised)) + "\n";
  ASSERT_TRUE(store_->PutIfAbsent("events/_delta_log/" + delta::CommitFileName(1), text).ok());
  gated->Open();
  run.join();
  ASSERT_TRUE(result.ok()) << result.ToString();
  std::vector<Row> rows = Rows();
  ASSERT_EQ(rows.size(), 5u);
  for (const Row& row : rows) {
    EXPECT_GT(row.Long("seq"), 5000);
  }
  CheckIdentity(rows);
  EXPECT_EQ(Latest().version(), 2);
}

// Another writer adds a CHECK constraint while a batch checked without it is in flight: the
// commit conflicts, the batch is read again and checked against the new constraint.
TEST_F(TableRulesTest, AConstraintAddedDuringACommitChecksTheBatchAgain) {
  auto gated = std::make_shared<GatedStore>(store_);
  Broker broker{.partitions = 1, .per_partition = 10};
  auto p = MakeRules(&broker, gated);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  gated->Arm();
  StopSignal stop;
  Status result;
  std::thread run([&] { result = (*p)->Run(&stop); });
  WaitUntil([&] { return gated->Holding(); });
  delta::Metadata metadata = SparkMetadata(*SparkSchema());
  metadata.configuration["delta.constraints.even"] = "id % 2 = 0";
  std::string text = delta::ActionToJson(metadata) + "\n";
  ASSERT_TRUE(store_->PutIfAbsent("events/_delta_log/" + delta::CommitFileName(1), text).ok());
  gated->Open();
  run.join();
  ASSERT_TRUE(result.ok()) << result.ToString();
  std::vector<Row> rows = Rows();
  ASSERT_EQ(rows.size(), 5u);
  for (const Row& row : rows) {
    EXPECT_EQ(row.Long("id") % 2, 0);
  }
  EXPECT_EQ(DeadRows().size(), 5u);
}

TEST_F(TableRulesTest, AnExpressionFerryCannotEvaluateRefusesTheTable) {
  delta::ColumnRules rules;
  rules.generated.push_back({"id_mod", "no_such_function(id)"});
  auto made = TableRules::Create(rules, *SparkSchema(), "UTC");
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(made.status().message().find("generation expression of column 'id_mod'"),
            std::string::npos)
      << made.status().ToString();
  EXPECT_NE(made.status().message().find("no_such_function(id)"), std::string::npos);
}

TEST(IdentityValues, FirstValueFollowsTheMarkInTheStepsDirection) {
  delta::IdentityColumn up{.column = "s", .start = 100, .step = 10};
  EXPECT_EQ(*delta::FirstIdentityValue(up), 100);
  up.high_water_mark = 100;
  EXPECT_EQ(*delta::FirstIdentityValue(up), 110);
  up.high_water_mark = 5003;  // not on the grid (another writer's explicit value)
  EXPECT_EQ(*delta::FirstIdentityValue(up), 5010);
  up.high_water_mark = 7;  // below start
  EXPECT_EQ(*delta::FirstIdentityValue(up), 100);
  delta::IdentityColumn down{.column = "s", .start = -1, .step = -3, .high_water_mark = -10};
  EXPECT_EQ(*delta::FirstIdentityValue(down), -13);
  delta::IdentityColumn full{
      .column = "s", .start = 1, .step = 1, .high_water_mark = std::numeric_limits<int64_t>::max()};
  EXPECT_EQ(delta::FirstIdentityValue(full).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ferry::pipeline

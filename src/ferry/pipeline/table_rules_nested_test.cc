// Column rules on fields inside structs (table_rules.h, delta/column_rules.h): CHECK constraints
// that read nested fields, invariants on nested fields and NOT NULL fields inside structs, read
// from metadata written as Spark writes it, evaluated per row, and end to end through a pipeline
// whose violating rows land in the dead-letter table naming the constraint.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "ferry/columnar/record_batch.h"
#include "ferry/delta/actions_json.h"
#include "ferry/delta/column_rules.h"
#include "ferry/delta/log_files.h"
#include "ferry/delta/schema_json.h"
#include "ferry/delta/table_features.h"
#include "ferry/pipeline/table_rules.h"
#include "ferry/testing/pipeline_fixture.h"
#include "ferry/transform/json_decoder.h"

namespace ferry::pipeline {
namespace {

using columnar::DataType;
using columnar::Field;

// The schema Spark writes for
//   CREATE TABLE nested (id BIGINT NOT NULL,
//     s STRUCT<x: INT, tag: STRING NOT NULL, inner: STRUCT<y: INT>>)
//   + CHECK (s.x > 0) named positive_x, and the legacy invariant
//     `s.inner.y IS NULL OR s.inner.y >= 0` on s.inner.y.
// With `relaxed`, every field nullable (the shape of what a lenient decoder may produce).
columnar::SchemaPtr NestedSchema(bool relaxed = false) {
  Field y{"y",
          DataType::Int32(),
          true,
          {{"delta.invariants",
            R"("{\"expression\":{\"expression\":\"s.inner.y IS NULL OR s.inner.y >= 0\"}}")"}}};
  auto inner = DataType::Struct({y});
  auto s = DataType::Struct({{"x", DataType::Int32(), true, {}},
                             {"tag", DataType::String(), relaxed, {}},
                             {"inner", inner, true, {}}});
  return std::make_shared<const columnar::Schema>(
      std::vector<Field>{{"id", DataType::Int64(), relaxed, {}}, {"s", s, true, {}}});
}

delta::Protocol NestedProtocol() {
  return delta::Protocol{
      .min_reader_version = 1,
      .min_writer_version = 7,
      .writer_features = std::vector<std::string>{"appendOnly", "invariants", "checkConstraints"}};
}

delta::Metadata NestedMetadata() {
  delta::Metadata m;
  m.id = "5f0b8c5e-0000-4000-8000-000000000002";
  m.schema_string = *delta::SchemaToJson(*NestedSchema());
  m.configuration = {{"delta.constraints.positive_x", "s.x > 0"}};
  m.created_time = 1700000000000;
  return m;
}

TEST(NestedColumnRules, AreReadFromStructsButNotBelowArrays) {
  auto rules = delta::ReadColumnRules(NestedProtocol(), NestedMetadata(), *NestedSchema());
  ASSERT_TRUE(rules.ok()) << rules.status().ToString();
  ASSERT_EQ(rules->checks.size(), 2u);
  EXPECT_EQ(rules->checks[0].name, "invariant on s.inner.y");
  EXPECT_EQ(rules->checks[0].expression, "s.inner.y IS NULL OR s.inner.y >= 0");
  EXPECT_EQ(rules->checks[1].name, "positive_x");
  ASSERT_EQ(rules->not_null.size(), 1u);
  EXPECT_EQ(rules->not_null[0], (std::vector<std::string>{"s", "tag"}));
  EXPECT_TRUE(delta::CheckWriteSupported(NestedProtocol(), NestedMetadata(), *NestedSchema()).ok());

  // The same invariant on a struct inside an array is refused (Spark does not look there).
  Field y = NestedSchema()->field(1).type->fields()[2].type->fields()[0];
  columnar::Schema listed(
      std::vector<Field>{{"l", DataType::List(DataType::Struct({y})), true, {}}});
  Status st = delta::CheckWriteSupported(NestedProtocol(), NestedMetadata(), listed);
  EXPECT_EQ(st.code(), StatusCode::kNotSupported) << st.ToString();
  EXPECT_NE(st.message().find("below an array or a map"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("l."), std::string::npos) << st.ToString();
}

// Rules compiled against the table's schema judge rows decoded into the relaxed shape, so that
// a NULL in a NOT NULL field of a present struct is reachable too.
TEST(NestedColumnRules, EvaluatePerRow) {
  auto read = delta::ReadColumnRules(NestedProtocol(), NestedMetadata(), *NestedSchema());
  ASSERT_TRUE(read.ok());
  auto rules = TableRules::Create(*read, *NestedSchema(), "UTC");
  ASSERT_TRUE(rules.ok()) << rules.status().ToString();
  EXPECT_FALSE((*rules)->empty());
  columnar::SchemaPtr relaxed = NestedSchema(/*relaxed=*/true);
  auto decoder = transform::JsonDecoder::Create(relaxed, {});
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
  columnar::RecordBatch batch = columnar::RecordBatch::MakeEmpty(relaxed);
  struct Case {
    std::string json;
    std::string violation;  // empty: the row passes
  };
  const std::vector<Case> cases = {
      {R"({"id": 1, "s": {"x": 1, "tag": "a", "inner": {"y": 0}}})", ""},
      {R"({"id": 2, "s": {"x": 3, "tag": "b", "inner": null}})", ""},
      {R"({"id": 3, "s": {"x": 0, "tag": "c"}})", "CHECK constraint 'positive_x' (s.x > 0)"},
      {R"({"id": 4, "s": {"tag": "d"}})", "CHECK constraint 'positive_x' (s.x > 0)"},
      {R"({"id": 5, "s": {"x": 9, "tag": "e", "inner": {"y": -1}}})",
       "CHECK constraint 'invariant on s.inner.y'"},
      {R"({"id": 6, "s": {"x": 9, "inner": {"y": 1}}})", "NOT NULL constraint on column 's.tag'"},
      // A NULL struct holds no field to check: NOT NULL s.tag passes, CHECK (s.x > 0) is NULL.
      {R"({"id": 7, "s": null})", "CHECK constraint 'positive_x' (s.x > 0)"},
      {R"({"id": 8})", "CHECK constraint 'positive_x' (s.x > 0)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.json);
    ASSERT_TRUE((*decoder)->Append(c.json, &batch).ok());
    Status st = (*rules)->CompleteRow(&batch, batch.num_rows() - 1);
    if (c.violation.empty()) {
      EXPECT_TRUE(st.ok()) << st.ToString();
    } else {
      EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
      EXPECT_NE(st.message().find(c.violation), std::string::npos) << st.ToString();
    }
  }
}

TEST(NestedColumnRules, NotNullAloneIsARuleAndMustNameADecodedField) {
  delta::ColumnRules read;
  read.not_null.push_back({"s", "tag"});
  auto rules = TableRules::Create(read, *NestedSchema(), "UTC");
  ASSERT_TRUE(rules.ok()) << rules.status().ToString();
  EXPECT_FALSE((*rules)->empty());
  read.not_null.push_back({"s", "nope"});
  auto missing = TableRules::Create(read, *NestedSchema(), "UTC");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotSupported);
}

class NestedRulesPipelineTest : public PipelineTest {
 protected:
  void SetUp() override {
    std::string text =
        delta::ActionToJson(NestedProtocol()) + "\n" + delta::ActionToJson(NestedMetadata()) + "\n";
    ASSERT_TRUE(store_->PutIfAbsent("events/_delta_log/" + delta::CommitFileName(0), text).ok());
  }

  // Runs pipeline "events" over `broker` until caught up, its bad records into table "dead".
  // `check_input` sees the input schema Pipeline derives from the table before the decoder is
  // made for it.
  void RunWithDeadLetters(Broker& broker,
                          const std::function<void(const columnar::Schema&)>& check_input = {}) {
    auto opened = OpenOrCreateTable(store_, "events", {.create = false});
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    const columnar::SchemaPtr input = InputSchema(*opened->snapshot.schema(), {});
    if (check_input) {
      check_input(*input);
    }
    auto decoder = transform::JsonDecoder::Create(input, {});
    ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
    PipelineOptions options{.on_bad_record = OnBadRecord::kDeadLetter, .until_caught_up = true};
    options.id = "events";
    auto pipeline =
        Pipeline::Create(std::move(options), std::move(opened->table), std::move(opened->snapshot),
                         broker.Factory(), std::move(*decoder), &registry_);
    ASSERT_TRUE(pipeline.ok()) << pipeline.status().ToString();
    auto dead = OpenOrCreateTable(store_, "dead", {.schema_ddl = kDeadLetterSchema});
    ASSERT_TRUE(dead.ok()) << dead.status().ToString();
    ASSERT_TRUE(
        (*pipeline)->SetDeadLetterTable(std::move(dead->table), std::move(dead->snapshot)).ok());
    StopSignal stop;
    Status run = (*pipeline)->Run(&stop);
    ASSERT_TRUE(run.ok()) << run.ToString();
  }
};

TEST_F(NestedRulesPipelineTest, ViolatingRowsGoToTheDeadLetterTableNamingTheConstraint) {
  Broker broker{.partitions = 1, .per_partition = 12};
  for (int64_t n = 0; n < 12; ++n) {
    broker.overrides[{0, n}] = fmt::format(
        R"({{"id": {}, "s": {{"x": {}, "tag": "t{}", "inner": {{"y": {}}}}}}})", n, n + 1, n, n);
  }
  broker.overrides[{0, 2}] = R"({"id": 2, "s": {"x": -2, "tag": "t2"}})";  // positive_x
  broker.overrides[{0, 4}] = R"({"id": 4, "s": {"x": 5, "tag": "t4", "inner": {"y": -4}}})";
  broker.overrides[{0, 6}] = R"({"id": 6, "s": null})";  // positive_x is NULL
  broker.overrides[{0, 8}] = R"({"id": 8, "s": {"x": 9, "tag": "t8", "inner": null}})";  // ok
  RunWithDeadLetters(broker);
  if (HasFatalFailure()) {
    return;
  }

  EXPECT_EQ(Ids(), (std::vector<int64_t>{0, 1, 3, 5, 7, 8, 9, 10, 11}));
  std::vector<std::string> rows = DeadRows();
  ASSERT_EQ(rows.size(), 3u);
  std::string all = fmt::format("{}", fmt::join(rows, "\n"));
  EXPECT_NE(all.find("CHECK constraint 'positive_x' (s.x > 0)"), std::string::npos) << all;
  EXPECT_NE(all.rfind("CHECK constraint 'positive_x' (s.x > 0)"),
            all.find("CHECK constraint 'positive_x' (s.x > 0)"))
      << "rows 2 and 6 both break positive_x: " << all;
  EXPECT_NE(all.find("CHECK constraint 'invariant on s.inner.y'"), std::string::npos) << all;
  EXPECT_EQ(Latest().position("events/kafka/events/0"), 11);
}

// A NOT NULL field inside a struct is the table's, whichever decoder reads the messages: the
// decoder fills rows of the input schema Pipeline derives from the table (InputSchema keeps the
// nested nullability; a JSON decoder refuses rows of another schema than its own), and the
// nested NOT NULL rules are compiled against that same schema. A message without s.tag is a bad
// record; one without s (a NULL struct) holds nothing to check (and breaks positive_x).
TEST_F(NestedRulesPipelineTest, AMessageWithoutANestedNotNullFieldIsABadRecord) {
  Broker broker{.partitions = 1, .per_partition = 4};
  for (int64_t n = 0; n < 4; ++n) {
    broker.overrides[{0, n}] = fmt::format(
        R"({{"id": {}, "s": {{"x": {}, "tag": "t{}", "inner": {{"y": {}}}}}}})", n, n + 1, n, n);
  }
  broker.overrides[{0, 1}] = R"({"id": 1, "s": {"x": 2, "inner": {"y": 1}}})";  // no s.tag
  broker.overrides[{0, 3}] = R"({"id": 3, "s": null})";
  RunWithDeadLetters(broker, [](const columnar::Schema& input) {
    EXPECT_FALSE(input.field(1).type->fields()[1].nullable);  // s.tag, as in the table
  });
  if (HasFatalFailure()) {
    return;
  }

  EXPECT_EQ(Ids(), (std::vector<int64_t>{0, 2}));
  std::vector<std::string> rows = DeadRows();
  ASSERT_EQ(rows.size(), 2u);
  std::string all = fmt::format("{}", fmt::join(rows, "\n"));
  EXPECT_NE(all.find("tag"), std::string::npos) << all;
  EXPECT_NE(all.find("CHECK constraint 'positive_x' (s.x > 0)"), std::string::npos) << all;
  EXPECT_EQ(Latest().position("events/kafka/events/0"), 3);
}

}  // namespace
}  // namespace ferry::pipeline

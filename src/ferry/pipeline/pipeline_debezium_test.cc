// Debezium change events through an append pipeline (docs/cdc.md "Debezium envelopes"): every
// op becomes a row with its op and source columns, the tombstone after a delete is consumed
// without one, and bad envelopes go to the dead-letter table naming the field. Fixtures are
// written here from Debezium's documented format.

#include <gtest/gtest.h>

#include "ferry/testing/pipeline_fixture.h"
#include "ferry/transform/debezium_json_decoder.h"

namespace ferry::pipeline {
namespace {

std::string Change(std::string_view op, std::string_view before, std::string_view after, int n) {
  return fmt::format(
      R"({{"before":{},"after":{},"source":{{"version":"2.5.0.Final","connector":"postgresql",)"
      R"("name":"shop","ts_ms":{},"snapshot":"false","db":"shop","schema":"public",)"
      R"("table":"customers","txId":{},"lsn":{}}},"op":"{}","ts_ms":{},"transaction":null}})",
      before, after, 1700000000000 + n, 700 + n, 100 + n, op, 1700000000500 + n);
}

class DebeziumPipelineTest : public PipelineTest {
 protected:
  Result<std::unique_ptr<Pipeline>> MakeDebezium(Broker* broker) {
    FERRY_ASSIGN_OR_RETURN(
        OpenedTable opened,
        OpenOrCreateTable(store_, "events",
                          {.schema_ddl = "id BIGINT NOT NULL, name STRING, _op STRING, "
                                         "_lsn BIGINT, _source_ts TIMESTAMP",
                           .metadata_columns = metadata_}));
    transform::DebeziumJsonOptions o{.envelope_columns = {{"op", "_op"},
                                                          {"source.lsn", "_lsn"},
                                                          {"source.ts_ms", "_source_ts"}}};
    o.row.columns = {"id", "name"};
    FERRY_ASSIGN_OR_RETURN(auto decoder,
                           transform::DebeziumJsonDecoder::Create(opened.snapshot.schema(), o));
    PipelineOptions options{.id = "events",
                            .metadata_columns = metadata_,
                            .on_bad_record = OnBadRecord::kDeadLetter,
                            .until_caught_up = true};
    FERRY_ASSIGN_OR_RETURN(
        auto pipeline,
        Pipeline::Create(std::move(options), std::move(opened.table), std::move(opened.snapshot),
                         broker->Factory(), std::move(decoder), &registry_));
    FERRY_ASSIGN_OR_RETURN(OpenedTable dead,
                           OpenOrCreateTable(store_, "dead", {.schema_ddl = kDeadLetterSchema}));
    FERRY_RETURN_IF_ERROR(
        pipeline->SetDeadLetterTable(std::move(dead.table), std::move(dead.snapshot)));
    return pipeline;
  }

  std::vector<std::string> Rows() {
    auto table = delta::Table::Open(store_, "events");
    auto snap = (*table)->LoadSnapshot();
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
    auto rows = testing::ReadTableRows(**table, *snap);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return *rows;
  }
};

TEST_F(DebeziumPipelineTest, EnvelopesBecomeRowsWithTheirOpAndSourceColumns) {
  Broker broker{.partitions = 1, .per_partition = 10};
  broker.overrides[{0, 0}] = Change("c", "null", R"({"id":1,"name":"a"})", 0);
  broker.overrides[{0, 1}] = Change("c", "null", R"({"id":2,"name":"x"})", 1);
  broker.overrides[{0, 2}] = Change("u", R"({"id":1,"name":"a"})", R"({"id":1,"name":"b"})", 2);
  broker.overrides[{0, 3}] = Change("d", R"({"id":2,"name":null})", "null", 3);
  broker.overrides[{0, 4}] = "";  // the tombstone after the delete
  broker.overrides[{0, 5}] = Change("x", "null", R"({"id":5})", 5);
  // The same with schemas.enable (a schema that names no special type).
  broker.overrides[{0, 6}] =
      R"({"schema":{"type":"struct","fields":[],"name":"shop.public.customers.Envelope"},)"
      R"("payload":)" +
      Change("r", "null", R"({"id":3,"name":"z"})", 6) + "}";
  broker.overrides[{0, 7}] = R"({"before":null,"after":{"id":7},"source":{}})";
  broker.overrides[{0, 8}] = Change("c", "null", "null", 8);
  broker.overrides[{0, 9}] = Change("c", "null", R"({"id":"nine"})", 9);
  auto p = MakeDebezium(&broker);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  StopSignal stop;
  Status st = (*p)->Run(&stop);
  ASSERT_TRUE(st.ok()) << st.ToString();

  auto row = [](int id, std::string_view name, std::string_view op, int n) {
    return fmt::format(
        "id={}|name={}|_op={}|_lsn={}|_source_ts={}|_key=k{}|_offset={}|_partition=0", id, name, op,
        100 + n, (1700000000000 + n) * 1000, n, n);
  };
  std::vector<std::string> expected = {row(1, "a", "c", 0), row(1, "b", "u", 2),
                                       row(2, "null", "d", 3), row(2, "x", "c", 1),
                                       row(3, "z", "r", 6)};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(Rows(), expected);
  EXPECT_EQ(Latest().position("events/kafka/events/0"), 9);

  std::vector<std::string> dead = DeadRows();
  ASSERT_EQ(dead.size(), 4u);
  std::string all;
  for (const std::string& d : dead) {
    all += d + "\n";
  }
  for (std::string_view reason :
       {"offset 5: field 'op': unknown operation \"x\"",
        "offset 7: field 'op': missing (not a Debezium change envelope)",
        "offset 8: field 'after': null in a 'c' change",
        "offset 9: field 'after.id': expected an integer, found string \"nine\""}) {
    EXPECT_NE(all.find(reason), std::string::npos) << reason << "\n" << all;
  }
}

}  // namespace
}  // namespace ferry::pipeline

#include "ferry/delta/actions_json.h"

#include <gtest/gtest.h>

namespace ferry::delta {
namespace {

TEST(ActionsJsonTest, ParsesEveryActionKind) {
  // Lines as Spark writes them (golden table dv-partitioned-with-checkpoint and PROTOCOL.md).
  std::string text =
      R"({"commitInfo":{"timestamp":1697571663834,"operation":"WRITE","operationParameters":{"mode":"ErrorIfExists"},"engineInfo":"Apache-Spark/3.5.0","txnId":"1d19"}})"
      "\n"
      R"({"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"],"writerFeatures":["deletionVectors"]}})"
      "\n"
      R"({"metaData":{"id":"testId","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[]}","partitionColumns":["p"],"configuration":{"delta.enableDeletionVectors":"true"},"createdTime":1697571659174}})"
      "\n"
      R"({"add":{"path":"p=1/a%20b.parquet","partitionValues":{"p":"1","q":null},"size":765,"modificationTime":1697571663000,"dataChange":true,"stats":"{\"numRecords\":50}","deletionVector":{"storageType":"u","pathOrInlineDv":"h{&8fAg]=QYJvl-}c!yH","offset":1,"sizeInBytes":34,"cardinality":1}}})"
      "\n"
      R"({"remove":{"path":"x","deletionTimestamp":5,"dataChange":true,"extendedFileMetadata":true,"partitionValues":{},"size":7}})"
      "\n"
      R"({"txn":{"appId":"app","version":42,"lastUpdated":7}})"
      "\n"
      R"({"domainMetadata":{"domain":"d","configuration":"{}","removed":false}})"
      "\n"
      R"({"checkpointMetadata":{"version":2}})"
      "\n"
      R"({"sidecar":{"path":"s.parquet","sizeInBytes":9367,"modificationTime":1714496115780}})"
      "\n"
      R"({"cdc":{"path":"_change_data/c.parquet","partitionValues":{},"size":3,"dataChange":false}})"
      "\n";
  auto actions = ParseActions(text);
  ASSERT_TRUE(actions.ok()) << actions.status().ToString();
  ASSERT_EQ(actions->size(), 10u);
  const auto& info = std::get<CommitInfo>((*actions)[0]);
  EXPECT_EQ(info.timestamp, 1697571663834);
  EXPECT_EQ(info.operation, "WRITE");
  EXPECT_EQ(info.txn_id, "1d19");
  const auto& protocol = std::get<Protocol>((*actions)[1]);
  EXPECT_EQ(protocol.min_reader_version, 3);
  EXPECT_EQ(protocol.reader_features, std::vector<std::string>{"deletionVectors"});
  const auto& metadata = std::get<Metadata>((*actions)[2]);
  EXPECT_EQ(metadata.partition_columns, std::vector<std::string>{"p"});
  EXPECT_EQ(metadata.configuration.at("delta.enableDeletionVectors"), "true");
  EXPECT_EQ(metadata.created_time, 1697571659174);
  const auto& add = std::get<AddFile>((*actions)[3]);
  EXPECT_EQ(add.path, "p=1/a%20b.parquet");
  EXPECT_EQ(add.partition_values.at("p"), "1");
  EXPECT_FALSE(add.partition_values.at("q").has_value());
  ASSERT_TRUE(add.deletion_vector.has_value());
  EXPECT_EQ(add.deletion_vector->UniqueId(), "uh{&8fAg]=QYJvl-}c!yH@1");
  EXPECT_EQ(KeyOf(add).dv_id, "uh{&8fAg]=QYJvl-}c!yH@1");
  EXPECT_EQ(std::get<RemoveFile>((*actions)[4]).size, 7);
  EXPECT_EQ(std::get<Txn>((*actions)[5]).version, 42);
  EXPECT_EQ(std::get<DomainMetadata>((*actions)[6]).domain, "d");
  EXPECT_EQ(std::get<CheckpointMetadata>((*actions)[7]).version, 2);
  EXPECT_EQ(std::get<Sidecar>((*actions)[8]).size_in_bytes, 9367);
  EXPECT_EQ(std::get<AddCdcFile>((*actions)[9]).size, 3);
}

TEST(ActionsJsonTest, RoundTripsThroughJson) {
  AddFile add;
  add.path = "x=a%252Fb/part-00000-1-c000.zstd.parquet";
  add.partition_values = {{"x", "a/b"}, {"y", std::nullopt}};
  add.size = 10;
  add.modification_time = 20;
  add.stats = R"({"numRecords":3})";
  add.tags = StringMap{{"k", "v"}};
  Metadata metadata;
  metadata.id = "id";
  metadata.schema_string = "{}";
  metadata.configuration = {{"delta.appendOnly", "true"}};
  metadata.created_time = 5;
  RemoveFile remove;
  remove.path = "old";
  remove.deletion_timestamp = 3;
  std::vector<Action> actions = {Protocol{}, metadata, add, Txn{"app/kafka/t/0", 17, 99}, remove};
  std::string text = ActionsToJson(actions);
  auto parsed = ParseActions(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, actions);
  EXPECT_EQ(ActionToJson(Txn{"a", 1, std::nullopt}), R"({"txn":{"appId":"a","version":1}})");
  EXPECT_EQ(ActionToJson(Protocol{}),
            R"({"protocol":{"minReaderVersion":1,"minWriterVersion":2}})");
}

TEST(ActionsJsonTest, UnknownActionsAndFieldsAreIgnored) {
  auto actions = ParseActions(R"({"someFutureAction":{"x":1}})"
                              "\n"
                              R"({"txn":{"appId":"a","version":1,"newField":[1,2]}})"
                              "\n\n");
  ASSERT_TRUE(actions.ok());
  ASSERT_EQ(actions->size(), 1u);
  EXPECT_EQ(std::get<Txn>((*actions)[0]).app_id, "a");
}

TEST(ActionsJsonTest, TornOrBadLinesAreDataLossNamingTheLine) {
  auto torn = ParseActions("{\"txn\":{\"appId\":\"a\",\"version\":1}}\n{\"add\":{\"path\":\"x\",");
  EXPECT_EQ(torn.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(torn.status().message().find("line 2"), std::string::npos) << torn.status().ToString();
  auto missing = ParseActions(R"({"add":{"partitionValues":{},"size":1}})");
  EXPECT_EQ(missing.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(missing.status().message().find("add.path is missing"), std::string::npos);
  auto wrong = ParseActions(R"({"txn":{"appId":"a","version":"7"}})");
  EXPECT_EQ(wrong.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(ParseActions("[1,2]").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(ParseActions(std::string("\xff\xfe", 2)).status().code(), StatusCode::kDataLoss);
}

TEST(ActionsJsonTest, CommitInfoKeepsArbitraryJson) {
  auto actions = ParseActions(
      R"({"commitInfo":{"timestamp":"not a number","operationParameters":{"a":[1,{"b":null}]}}})");
  ASSERT_TRUE(actions.ok()) << actions.status().ToString();
  const auto& info = std::get<CommitInfo>((*actions)[0]);
  EXPECT_FALSE(info.timestamp.has_value());
  EXPECT_NE(info.json.find("operationParameters"), std::string::npos);
  EXPECT_EQ(ActionToJson(info).substr(0, 14), R"({"commitInfo":)");
}

}  // namespace
}  // namespace ferry::delta

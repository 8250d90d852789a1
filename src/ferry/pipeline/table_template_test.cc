// TableTemplate: placeholders, the name rules, and JSON field extraction.
#include "ferry/pipeline/table_template.h"

#include <gtest/gtest.h>

namespace ferry::pipeline {
namespace {

source::Message KafkaMessage(std::string_view topic) {
  source::Message m;
  m.topic = topic;
  return m;
}

TEST(TableTemplateTest, TopicSubjectAndFields) {
  auto t = TableTemplate::Parse("s3://lake/{topic}/{field:a.b}_{field:kind}_{field:a.b}", {});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE(t->has_placeholders());
  EXPECT_EQ(t->fields(), (std::vector<std::string>{"a.b", "kind"}));
  EXPECT_EQ(t->Example(), "s3://lake/x/x_x_x");
  RenderedTable r = t->Render(KafkaMessage("Orders.EU"), {"X", "paid"});
  EXPECT_EQ(r.kind, RenderedTable::Kind::kTable);
  EXPECT_EQ(r.table, "s3://lake/orders_eu/x_paid_x");

  auto subject = TableTemplate::Parse("lake/{subject:2}/{subject:3}", {});
  ASSERT_TRUE(subject.ok());
  source::Message m;
  m.subject = "orders.eu.created";
  EXPECT_EQ(subject->Render(m, {}).table, "lake/eu/created");
  m.subject = "orders.eu";
  EXPECT_EQ(subject->Render(m, {}).kind, RenderedTable::Kind::kMissing);
}

TEST(TableTemplateTest, RulesMapUnsafeNames) {
  TableNameRules rules{.allowed_characters = "a-z0-9_", .replacement = "-", .max_length = 6};
  auto t = TableTemplate::Parse("lake/{field:t}", rules);
  ASSERT_TRUE(t.ok());
  source::Message m;
  EXPECT_EQ(t->Render(m, {"../Etc/Passwd"}).table, "lake/---etc");
  EXPECT_EQ(t->Render(m, {"Ab C"}).table, "lake/ab-c");
  EXPECT_EQ(t->Render(m, {std::nullopt}).kind, RenderedTable::Kind::kMissing);
  EXPECT_EQ(t->Render(m, {""}).kind, RenderedTable::Kind::kMissing);

  TableNameRules dropping{.replacement = "", .allow = "order_[a-z]+"};
  auto allow = TableTemplate::Parse("lake/{field:t}", dropping);
  ASSERT_TRUE(allow.ok());
  EXPECT_EQ(allow->Render(m, {"ORDER_paid!"}).table, "lake/order_paid");
  RenderedTable refused = allow->Render(m, {"user_x"});
  EXPECT_EQ(refused.kind, RenderedTable::Kind::kDisallowed);
  EXPECT_EQ(refused.detail, "table name \"user_x\" does not match allow = \"order_[a-z]+\"");
  EXPECT_EQ(allow->Render(m, {"!!!"}).kind, RenderedTable::Kind::kMissing);
}

TEST(TableTemplateTest, ParseErrors) {
  EXPECT_NE(TableTemplate::Parse("{nope}", {}).status().message().find("unknown placeholder"),
            std::string::npos);
  EXPECT_NE(TableTemplate::Parse("{field:a..b}", {}).status().message().find("field path"),
            std::string::npos);
  EXPECT_NE(TableTemplate::Parse("{subject:x}", {}).status().message().find("token number"),
            std::string::npos);
  EXPECT_NE(TableTemplate::Parse("{topic", {}).status().message().find("not closed"),
            std::string::npos);
  EXPECT_NE(TableTemplate::Parse("{topic}", {.allowed_characters = "z-a"})
                .status()
                .message()
                .find("backwards"),
            std::string::npos);
  auto plain = TableTemplate::Parse("lake/events", {});
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->has_placeholders());
}

TEST(TableTemplateTest, JsonFieldText) {
  std::string_view doc = R"({"kind": "paid", "n": 42, "ok": true, "a": {"b": "deep"}, "z": null,
                             "o": {}, "arr": [1]})";
  EXPECT_EQ(JsonFieldText(doc, "kind"), "paid");
  EXPECT_EQ(JsonFieldText(doc, "n"), "42");
  EXPECT_EQ(JsonFieldText(doc, "ok"), "true");
  EXPECT_EQ(JsonFieldText(doc, "a.b"), "deep");
  EXPECT_EQ(JsonFieldText(doc, "z"), std::nullopt);
  EXPECT_EQ(JsonFieldText(doc, "o"), std::nullopt);
  EXPECT_EQ(JsonFieldText(doc, "arr"), std::nullopt);
  EXPECT_EQ(JsonFieldText(doc, "missing"), std::nullopt);
  EXPECT_EQ(JsonFieldText(doc, "kind.x"), std::nullopt);
  EXPECT_EQ(JsonFieldText("not json", "kind"), std::nullopt);
  EXPECT_EQ(JsonFieldText("[1, 2]", "kind"), std::nullopt);
}

}  // namespace
}  // namespace ferry::pipeline

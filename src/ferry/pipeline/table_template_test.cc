// TableTemplate: placeholders, the name rules, and JSON field extraction.
#include "ferry/pipeline/table_template.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "ferry/pipeline/route_selector.h"

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

TEST(TableTemplateTest, KeysTellApartWhatRendersApart) {
  auto t = TableTemplate::Parse("lake/{topic}/{field:a}{field:b}", {});
  ASSERT_TRUE(t.ok());
  auto key = [&](std::string_view topic, std::vector<std::optional<std::string>> values) {
    std::string k;
    t->AppendKey(KafkaMessage(topic), values, &k);
    return k;
  };
  EXPECT_EQ(key("x", {"p", "q"}), key("x", {"p", "q"}));
  // The values are length-prefixed: "pq" + "" is not "p" + "q".
  EXPECT_NE(key("x", {"pq", ""}), key("x", {"p", "q"}));
  EXPECT_NE(key("x", {"p", "q"}), key("y", {"p", "q"}));
  // Literals are not in the key; a missing value keys as an empty one (both render kMissing).
  EXPECT_EQ(key("x", {std::nullopt, "q"}), key("x", {"", "q"}));
}

// Every table's name is interned (one view per table), a cached rendering equals a fresh one,
// and a run of more distinct values than the cache holds still routes each message right.
TEST(TableTemplateTest, SelectorCachesRenderingsAndInternsNames) {
  TableNameRules rules{.allow = "[a-z0-9_]+"};
  auto t = TableTemplate::Parse("lake/{field:kind}", rules);
  ASSERT_TRUE(t.ok());
  TemplateSelector selector(std::move(*t), "lake/unknown");
  std::vector<std::string> payloads;
  for (int i = 0; i < 10000; ++i) {
    payloads.push_back(fmt::format(R"({{"kind": "K{}"}})", i % 5000));
  }
  payloads.push_back(R"({"kind": "no way"})");  // cleaned to no_way: allowed
  payloads.push_back(R"({"kind": "Ünï"})");     // cleaned to "__": allowed
  payloads.push_back(R"({"other": 1})");        // missing: the fallback
  std::vector<source::Message> messages(payloads.size());
  for (size_t i = 0; i < payloads.size(); ++i) {
    messages[i].payload = payloads[i];
  }
  std::vector<RouteChoice> choices;
  ASSERT_TRUE(selector.Select(messages, &choices).ok());
  ASSERT_EQ(choices.size(), payloads.size());
  for (size_t i = 0; i < 10000; ++i) {
    ASSERT_EQ(choices[i].table, fmt::format("lake/k{}", i % 5000)) << i;
    ASSERT_EQ(choices[i].bad_reason, "") << i;
  }
  // 5,000 values are more than the cache keeps: the second round renders some again, and
  // still finds the same interned name.
  EXPECT_EQ(choices[0].table.data(), choices[5000].table.data());
  EXPECT_EQ(choices[4999].table.data(), choices[9999].table.data());
  EXPECT_EQ(choices[10000].table, "lake/no_way");
  EXPECT_EQ(choices[10001].table.substr(0, 5), "lake/");
  EXPECT_EQ(choices[10002].table, "lake/unknown");

  // A refused name: the fallback carries it, with the reason, cached or not.
  TableNameRules strict{.allow = "k1"};
  auto s = TableTemplate::Parse("lake/{field:kind}", strict);
  ASSERT_TRUE(s.ok());
  TemplateSelector refusing(std::move(*s), "lake/unknown");
  std::vector<std::string> two = {R"({"kind": "K2"})", R"({"kind": "k1"})", R"({"kind": "K2"})"};
  std::vector<source::Message> m2(two.size());
  for (size_t i = 0; i < two.size(); ++i) {
    m2[i].payload = two[i];
  }
  ASSERT_TRUE(refusing.Select(m2, &choices).ok());
  EXPECT_EQ(choices[0].table, "lake/unknown");
  EXPECT_EQ(choices[0].bad_reason, "table name \"k2\" does not match allow = \"k1\"");
  EXPECT_EQ(choices[1].table, "lake/k1");
  EXPECT_EQ(choices[1].bad_reason, "");
  EXPECT_EQ(choices[2].bad_reason, choices[0].bad_reason);
  EXPECT_EQ(choices[2].table.data(), choices[0].table.data());
}

}  // namespace
}  // namespace ferry::pipeline

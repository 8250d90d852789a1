// [pipeline.routing], table templates and [[pipeline.route]]: what parses, and errors that name
// file:line and the key.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>

#include "ferry/config/config.h"
#include "ferry/config/config_test_support.h"

namespace ferry::config {
namespace {

using test_support::Parse;

constexpr std::string_view kKafka = R"(
[pipeline.kafka]
brokers = "localhost:9092"
topics = ["events"]
)";

std::string WithKafka(std::string_view pipeline, std::string_view tail = "") {
  return std::string(pipeline) + std::string(kKafka) + std::string(tail);
}

TEST(ConfigRoutingTest, FieldTemplateWithRules) {
  Result<Config> c = Parse(WithKafka(R"([[pipeline]]
id = "events"
table = "s3://lake/raw/{field:event_type}"
schema = "id BIGINT, event_type STRING"
)",
                                     R"(
[pipeline.table_name_rules]
allowed_characters = "a-z0-9_"
replacement = "_"
max_length = 40
fallback = "s3://lake/raw/unknown"
allow = "order_.*|user_.*"

[pipeline.routing]
position_commit_interval = "2s"
max_open_tables = 8
max_tables = 100
)"));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const PipelineConfig& p = c->pipelines[0];
  EXPECT_TRUE(p.table_is_template);
  ASSERT_TRUE(p.routing.has_value());
  EXPECT_EQ(p.table_name_rules.fallback, "s3://lake/raw/unknown");
  EXPECT_EQ(p.table_name_rules.max_length, 40);
  EXPECT_EQ(p.routing->position_commit_interval, std::chrono::seconds(2));
  EXPECT_EQ(p.routing->max_open_tables, 8);
  EXPECT_EQ(p.routing->max_tables, 100);
  EXPECT_EQ(p.routing->positions_table, "s3://lake/raw/_ferry_routing_events");
  EXPECT_EQ(p.dead_letter_table, "s3://lake/raw/events_dead_letter");
  EXPECT_TRUE(p.routes.empty());
}

TEST(ConfigRoutingTest, TopicAndSubjectTemplates) {
  for (const char* table : {"lake/{topic}", "lake/{subject}", "lake/{subject:2}_{subject:3}"}) {
    Result<Config> c = Parse(WithKafka(fmt::format(R"([[pipeline]]
id = "events"
table = "{}"
schema = "id BIGINT"
table_name_rules = {{ fallback = "lake/other" }}
)",
                                                   table)));
    ASSERT_TRUE(c.ok()) << table << ": " << c.status().ToString();
    EXPECT_TRUE(c->pipelines[0].table_is_template);
    EXPECT_EQ(c->pipelines[0].routing->positions_table, "lake/_ferry_routing_events");
  }
}

TEST(ConfigRoutingTest, TemplateErrorsNameTheLine) {
  struct Case {
    std::string table;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {"lake/{topics}",
            "ferry.toml:3:9: pipeline[0].table: \"lake/{topics}\": unknown "
            "placeholder {topics}"},
           {"lake/{subject:0}", "needs a token number from 1"},
           {"lake/{field:}", "needs a field path"},
           {"lake/{topic", "is not closed"},
       }) {
    Result<Config> parsed = Parse(WithKafka(fmt::format(R"([[pipeline]]
id = "events"
table = "{}"
schema = "id BIGINT"
)",
                                                        c.table)));
    ASSERT_FALSE(parsed.ok()) << c.table;
    EXPECT_NE(parsed.status().message().find(c.error), std::string::npos)
        << parsed.status().ToString();
  }
}

TEST(ConfigRoutingTest, ATemplateNeedsAFallback) {
  Result<Config> c = Parse(WithKafka(R"([[pipeline]]
id = "events"
table = "lake/{field:kind}"
schema = "id BIGINT"
)"));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("ferry.toml:3:9: pipeline[0].table: a table template needs "
                                      "table_name_rules.fallback"),
            std::string::npos)
      << c.status().ToString();
}

TEST(ConfigRoutingTest, RulesErrors) {
  Result<Config> bad_allow = Parse(WithKafka(R"([[pipeline]]
id = "events"
table = "lake/{topic}"
schema = "id BIGINT"
)",
                                             R"(
[pipeline.table_name_rules]
allow = "order_("
)"));
  ASSERT_FALSE(bad_allow.ok());
  EXPECT_NE(bad_allow.status().message().find("ferry.toml:10:1"), std::string::npos)
      << bad_allow.status().ToString();
  EXPECT_NE(bad_allow.status().message().find("is not a valid pattern"), std::string::npos);

  Result<Config> no_template = Parse(WithKafka(R"([[pipeline]]
id = "events"
table = "lake/events"
schema = "id BIGINT"
)",
                                               R"(
[pipeline.routing]
max_open_tables = 3
)"));
  ASSERT_FALSE(no_template.ok());
  EXPECT_NE(no_template.status().message().find("applies to a pipeline that routes"),
            std::string::npos)
      << no_template.status().ToString();

  Result<Config> fallback_template = Parse(WithKafka(R"([[pipeline]]
id = "events"
table = "lake/{topic}"
schema = "id BIGINT"
)",
                                                     R"(
[pipeline.table_name_rules]
fallback = "lake/{topic}_x"
)"));
  ASSERT_FALSE(fallback_template.ok());
  EXPECT_NE(fallback_template.status().message().find("fallback: is a table location"),
            std::string::npos)
      << fallback_template.status().ToString();

  Result<Config> zero = Parse(WithKafka(R"([[pipeline]]
id = "events"
table = "lake/{topic}"
schema = "id BIGINT"
)",
                                        R"(
[pipeline.routing]
max_open_tables = 0
)"));
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("routing.max_open_tables: must be between 1"),
            std::string::npos)
      << zero.status().ToString();
}

constexpr std::string_view kRoutes = R"([[pipeline]]
id = "orders"
on_bad_record = "dead_letter"

[[pipeline.route]]
name = "created"
where = "event_type = 'order_created'"
table = "s3://lake/orders_created"
schema = "id BIGINT, event_type STRING, amount DOUBLE"
partition_by = ["event_type"]
[[pipeline.route.columns]]
name = "big"
expr = "amount > 100"
[pipeline.route.dedup]
key = "id"

[[pipeline.route]]
name = "paid"
where = "event_type = 'order_paid'"
table = "s3://lake/orders_paid"
schema = "id BIGINT, event_type STRING"

[[pipeline.route]]
name = "default"
table = "s3://lake/orders_other"
schema = "id BIGINT, event_type STRING"

[pipeline.routing]
unmatched = "default"
schema = "event_type STRING, amount DOUBLE"
)";

TEST(ConfigRoutingTest, StaticRoutes) {
  Result<Config> c = Parse(WithKafka(kRoutes));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const PipelineConfig& p = c->pipelines[0];
  EXPECT_TRUE(p.table.empty());
  ASSERT_EQ(p.routes.size(), 3u);
  EXPECT_EQ(p.routes[0].name, "created");
  EXPECT_EQ(p.routes[0].where, "event_type = 'order_created'");
  EXPECT_EQ(p.routes[0].partition_by, std::vector<std::string>{"event_type"});
  ASSERT_EQ(p.routes[0].columns.size(), 1u);
  EXPECT_EQ(p.routes[0].columns[0].name, "big");
  ASSERT_TRUE(p.routes[0].dedup.has_value());
  EXPECT_EQ(p.routes[0].dedup->key, "id");
  EXPECT_FALSE(p.routes[1].dedup.has_value());
  EXPECT_EQ(p.routes[2].name, "default");
  EXPECT_EQ(p.routing->unmatched, "default");
  EXPECT_EQ(p.routing->schema, "event_type STRING, amount DOUBLE");
  EXPECT_EQ(p.routing->positions_table, "s3://lake/_ferry_routing_orders");
  EXPECT_EQ(p.dead_letter_table, "s3://lake/orders_dead_letter");
}

TEST(ConfigRoutingTest, RouteErrors) {
  struct Case {
    std::string from, to, error;
  };
  std::string base(kRoutes);
  for (const Case& c : std::vector<Case>{
           {"name = \"paid\"", "name = \"created\"", "route name \"created\" is used twice"},
           {"table = \"s3://lake/orders_paid\"", "table = \"s3://lake/orders_created\"",
            "is the table of two routes"},
           {"name = \"default\"\n", "name = \"default\"\nwhere = \"true\"\n",
            "the route named default takes what no other route matches"},
           {"where = \"event_type = 'order_paid'\"\n", "", "route paid needs a where"},
           {"schema = \"event_type STRING, amount DOUBLE\"", "", "need [pipeline.routing] schema"},
           {"name = \"default\"", "name = \"other\"\nwhere = \"true\"",
            "unmatched = \"default\" needs a [[pipeline.route]] named default"},
           {"table = \"s3://lake/orders_paid\"", "table = \"s3://lake/{topic}\"",
            "a route's table is a location, not a template"},
           {"table = \"s3://lake/orders_paid\"",
            "table = \"s3://lake/orders_paid\"\ntable_properties = "
            "{ \"delta.setTransactionRetentionDuration\" = \"interval 1 day\" }",
            "delta.setTransactionRetentionDuration would expire the positions"},
       }) {
    std::string text = base;
    size_t at = text.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    text.replace(at, c.from.size(), c.to);
    Result<Config> parsed = Parse(WithKafka(text));
    ASSERT_FALSE(parsed.ok()) << c.error;
    EXPECT_NE(parsed.status().message().find(c.error), std::string::npos)
        << parsed.status().ToString();
    EXPECT_NE(parsed.status().message().find("ferry.toml:"), std::string::npos)
        << parsed.status().ToString();
  }
}

// {field:...} and `where` read decoded fields of JSON, Avro and Protobuf messages; raw has none.
// [pipeline.maintenance] covers a routed pipeline's tables.
TEST(ConfigRoutingTest, FieldsOfEveryFormatButRawAndMaintenance) {
  const std::string templ = R"([[pipeline]]
id = "events"
table = "s3://lake/raw/{field:kind}"

[pipeline.table_name_rules]
fallback = "s3://lake/raw/unknown"

[pipeline.maintenance]
optimize_every = "1h"
vacuum_every = "24h"
)";
  for (const char* decode : {"[pipeline.decode]\nformat = \"avro\"\n"
                             "[pipeline.decode.schema_registry]\nurl = \"http://r:8081\"\n",
                             "[pipeline.decode]\nformat = \"protobuf\"\n"
                             "[pipeline.decode.schema_registry]\nurl = \"http://r:8081\"\n"}) {
    Result<Config> c = Parse(WithKafka(templ, decode));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_TRUE(c->pipelines[0].routing.has_value());
    EXPECT_EQ(c->pipelines[0].maintenance.optimize_every, std::chrono::hours(1));
  }
  Result<Config> raw = Parse(WithKafka(templ, "[pipeline.decode]\nformat = \"raw\"\n"));
  ASSERT_FALSE(raw.ok());
  EXPECT_NE(raw.status().message().find("ferry.toml:"), std::string::npos);
  EXPECT_NE(raw.status().message().find("format \"raw\" has none"), std::string::npos)
      << raw.status().ToString();

  std::string routes(kRoutes);
  Result<Config> avro_routes =
      Parse(WithKafka(routes,
                      "[pipeline.decode]\nformat = \"avro\"\n"
                      "[pipeline.decode.schema_registry]\nurl = \"http://r:8081\"\n"));
  ASSERT_TRUE(avro_routes.ok()) << avro_routes.status().ToString();
  Result<Config> raw_routes = Parse(WithKafka(routes, "[pipeline.decode]\nformat = \"raw\"\n"));
  ASSERT_FALSE(raw_routes.ok());
  EXPECT_NE(raw_routes.status().message().find("format \"raw\" has none"), std::string::npos)
      << raw_routes.status().ToString();
}

}  // namespace
}  // namespace ferry::config

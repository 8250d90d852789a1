// The routed pipeline (router.h) while something does not answer: a routing decoder's schema
// registry (the poll's messages wait, nothing skipped), and --max-wait stopping a run that waits
// for the registry, the broker, or a table that takes no message.

#include <gtest/gtest.h>

#include "ferry/pipeline/router.h"
#include "ferry/testing/router_fixture.h"

namespace ferry::pipeline::router_test {
namespace {

// A selector whose routing decoder's schema registry does not answer for its first `outages`
// calls (negative: never answers).
class RegistryDownSelector final : public RouteSelector {
 public:
  RegistryDownSelector(std::unique_ptr<RouteSelector> inner, int outages)
      : inner_(std::move(inner)), outages_(outages) {}
  Status Select(std::span<const source::Message> messages, std::vector<RouteChoice>* out) override {
    if (outages_ != 0) {
      outages_ -= outages_ > 0 ? 1 : 0;
      out->clear();
      return Unavailable("schema registry at http://r:8081 unreachable");
    }
    return inner_->Select(messages, out);
  }
  std::vector<std::string> StaticTables() const override { return inner_->StaticTables(); }

 private:
  std::unique_ptr<RouteSelector> inner_;
  int outages_;
};

std::unique_ptr<RouteSelector> KindSelector(int outages) {
  auto templ = TableTemplate::Parse("t_{field:kind}", {});
  EXPECT_TRUE(templ.ok());
  return std::make_unique<RegistryDownSelector>(
      std::make_unique<TemplateSelector>(std::move(*templ), "t_unknown"), outages);
}

TEST_F(RouterTest, ARegistryOutageWhileRoutingSkipsNothing) {
  // The routing decoder fails the first polls: their messages wait, none is taken past.
  auto router = MakeRouter({.until_caught_up = true,
                            .initial_backoff = std::chrono::milliseconds(1),
                            .max_backoff = std::chrono::milliseconds(4)},
                           25, KindSelector(6));
  ASSERT_TRUE(router.ok()) << router.status().ToString();
  StopSignal stop;
  Status st = (*router)->Run(&stop);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ExpectExactlyOnce(per_partition_);
}

TEST_F(RouterTest, MaxWaitStopsARegistryOutageWithoutClaimingAnything) {
  auto router = MakeRouter({.until_caught_up = true,
                            .max_wait = std::chrono::milliseconds(100),
                            .initial_backoff = std::chrono::milliseconds(1),
                            .max_backoff = std::chrono::milliseconds(10)},
                           25, KindSelector(-1));
  ASSERT_TRUE(router.ok()) << router.status().ToString();
  StopSignal stop;
  Status st = (*router)->Run(&stop);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("schema registry"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("max wait 100 ms"), std::string::npos) << st.ToString();
  EXPECT_TRUE(TableIds().empty());
  for (int p = 0; p < partitions_; ++p) {
    EXPECT_EQ(MaxLow(fmt::format("kafka/events/{}", p)), std::nullopt) << p;
  }
  // The next run, with the registry back, routes everything once.
  auto next = MakeRouter({.until_caught_up = true});
  ASSERT_TRUE(next.ok());
  StopSignal stop2;
  ASSERT_TRUE((*next)->Run(&stop2).ok());
  ExpectExactlyOnce(per_partition_);
}

TEST_F(RouterTest, MaxWaitStopsWhenTheBrokerAssignsNothing) {
  assign_at_start_ = false;
  auto router = MakeRouter({.until_caught_up = true, .max_wait = std::chrono::milliseconds(100)});
  ASSERT_TRUE(router.ok()) << router.status().ToString();
  StopSignal stop;
  Status st = (*router)->Run(&stop);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("no contact with the broker"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("0 partition(s) assigned"), std::string::npos) << st.ToString();
}

TEST_F(RouterTest, MaxWaitStopsATableThatTakesNoMessages) {
  // The table of "paid" waits for its registry forever: its queue fills, the router waits on it
  // at most max_wait, then drains the others and says which table. max_wait also bounds every
  // other table's push and the broker's silence, so it is long enough for a loaded host to start
  // and run the healthy tables' pipelines (at 200 ms, one could be named instead).
  stuck_kind_ = "paid";
  auto router = MakeRouter({.queue_messages = 5,
                            .until_caught_up = true,
                            .max_wait = std::chrono::seconds(3),
                            .initial_backoff = std::chrono::milliseconds(1),
                            .max_backoff = std::chrono::milliseconds(10)});
  ASSERT_TRUE(router.ok()) << router.status().ToString();
  StopSignal stop;
  Status st = (*router)->Run(&stop);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("table t_paid taking no message"), std::string::npos)
      << st.ToString();
  EXPECT_TRUE(TableIds()["t_paid"].empty());
  // The next run, with the registry back, leaves every id in its table once.
  stuck_kind_.clear();
  auto next = MakeRouter({.until_caught_up = true});
  ASSERT_TRUE(next.ok());
  StopSignal stop2;
  ASSERT_TRUE((*next)->Run(&stop2).ok());
  ExpectExactlyOnce(per_partition_);
}

}  // namespace
}  // namespace ferry::pipeline::router_test

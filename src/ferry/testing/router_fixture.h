// RouterTest: a routed pipeline (router.h) over a fake broker, with three kinds of message routed
// by a field to three tables in an in-memory store; shared by router_test.cc and
// router_wait_test.cc.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ferry/columnar/ddl.h"
#include "ferry/pipeline/router.h"
#include "ferry/pipeline/shared_batch_budget.h"
#include "ferry/pipeline/table_setup.h"
#include "ferry/storage/memory_store.h"
#include "ferry/testing/fake_source.h"
#include "ferry/testing/table_verifier.h"
#include "ferry/transform/json_decoder.h"

namespace ferry::pipeline::router_test {

using testing::FakeSource;
using testing::SharedSource;

// Partition p's message n: id p * 1'000'000 + n, kind from `kind_of`.
inline std::string RoutedMessage(int64_t id, std::string_view kind) {
  return fmt::format(R"({{"id": {}, "kind": "{}"}})", id, kind);
}

// A table's decoder whose schema registry never answers for messages of one kind: its pipeline
// waits (nothing taken), so the router's queue for it fills.
class RegistryStuckDecoder final : public transform::Decoder {
 public:
  RegistryStuckDecoder(std::unique_ptr<transform::Decoder> inner, std::string stuck)
      : inner_(std::move(inner)), stuck_(std::move(stuck)) {}
  const std::vector<int>& output_columns() const override { return inner_->output_columns(); }
  Status Append(std::string_view payload, columnar::RecordBatch* batch) override {
    if (payload.find(stuck_) != std::string_view::npos) {
      return Unavailable("schema registry at http://r:8081 unreachable");
    }
    return inner_->Append(payload, batch);
  }

 private:
  std::unique_ptr<transform::Decoder> inner_;
  std::string stuck_;
};

class RouterTest : public ::testing::Test {
 protected:
  std::shared_ptr<storage::ObjectStore> store_ = std::make_shared<storage::InMemoryStore>();
  metrics::Registry registry_;
  int partitions_ = 3;
  int64_t per_partition_ = 300;
  bool assign_at_start_ = true;
  std::string stuck_kind_;  // not empty: the tables' decoders wait forever on this kind
  // The kind (and so the table) of partition p's message n.
  std::function<std::string(int, int64_t)> kind_of_ = [](int, int64_t n) {
    static const char* kKinds[] = {"created", "paid", "shipped"};
    return std::string(kKinds[(n * 7 + n / 5) % 3]);
  };
  std::mutex sources_mu_;
  std::vector<std::shared_ptr<FakeSource>> sources_;

  SourceFactory Factory() {
    return [this]() -> Result<std::unique_ptr<source::Source>> {
      auto s = std::make_shared<FakeSource>(
          FakeSource::Options{.prefix = "kafka/events",
                              .partitions = partitions_,
                              .assign_all_at_start = assign_at_start_});
      for (int p = 0; p < partitions_; ++p) {
        for (int64_t n = 0; n < per_partition_; ++n) {
          s->Produce(p, RoutedMessage(p * 1'000'000 + n, kind_of_(p, n)));
        }
      }
      std::lock_guard lock(sources_mu_);
      sources_.push_back(s);
      return std::unique_ptr<source::Source>(std::make_unique<SharedSource>(std::move(s)));
    };
  }

  InnerFactory Inners(int64_t max_rows) {
    return [this, max_rows, max_latency = inner_max_latency_,
            budget = inner_budget_](const InnerSpec& spec) -> Result<std::unique_ptr<Pipeline>> {
      FERRY_ASSIGN_OR_RETURN(OpenedTable opened,
                             OpenOrCreateTable(store_, spec.table,
                                               {.schema_ddl = "id BIGINT NOT NULL, kind STRING",
                                                .metadata_columns = {{"offset", "_offset"}}}));
      FERRY_ASSIGN_OR_RETURN(
          std::unique_ptr<transform::Decoder> decoder,
          transform::JsonDecoder::Create(opened.snapshot.schema(), {.columns = {"id", "kind"}}));
      if (!stuck_kind_.empty()) {
        decoder = std::make_unique<RegistryStuckDecoder>(
            std::move(decoder), fmt::format(R"("kind": "{}")", stuck_kind_));
      }
      PipelineOptions options{.id = "routed",
                              .max_rows = max_rows,
                              .max_latency = max_latency,
                              .metadata_columns = {{"offset", "_offset"}},
                              .on_bad_record = OnBadRecord::kDeadLetter,
                              .poll_timeout = std::chrono::milliseconds(10),
                              .initial_backoff = std::chrono::milliseconds(1),
                              .dead_letter_id = spec.dead_letter_id,
                              .metrics_table = spec.table,
                              .seal_hook = spec.seal_hook,
                              .seal_now = spec.seal_now,
                              .shared_batch_budget = budget};
      FERRY_ASSIGN_OR_RETURN(
          auto pipeline,
          Pipeline::Create(std::move(options), std::move(opened.table), std::move(opened.snapshot),
                           spec.source, std::move(decoder), &registry_));
      FERRY_ASSIGN_OR_RETURN(OpenedTable dead,
                             OpenOrCreateTable(store_, "dead", {.schema_ddl = kDeadLetterSchema}));
      FERRY_RETURN_IF_ERROR(
          pipeline->SetDeadLetterTable(std::move(dead.table), std::move(dead.snapshot)));
      return pipeline;
    };
  }

  TableReader Reader() {
    return [this](const std::string& table) -> Result<std::optional<delta::Snapshot>> {
      FERRY_ASSIGN_OR_RETURN(auto t, delta::Table::Open(store_, table));
      Result<delta::Snapshot> snap = t->LoadSnapshot();
      if (snap.status().code() == StatusCode::kNotFound) {
        return std::optional<delta::Snapshot>();
      }
      FERRY_RETURN_IF_ERROR(snap.status());
      return std::optional<delta::Snapshot>(std::move(*snap));
    };
  }

  Result<std::unique_ptr<Router>> MakeRouter(RouterOptions options, int64_t max_rows = 25,
                                             std::unique_ptr<RouteSelector> selector = nullptr) {
    if (selector == nullptr) {
      FERRY_ASSIGN_OR_RETURN(auto templ, TableTemplate::Parse("t_{field:kind}", {}));
      selector = std::make_unique<TemplateSelector>(std::move(templ), "t_unknown");
    }
    FERRY_ASSIGN_OR_RETURN(OpenedTable positions,
                           OpenOrCreateTable(store_, "_routing", {.schema_ddl = "table STRING"}));
    options.id = "routed";
    options.poll_timeout = std::chrono::milliseconds(10);
    options.max_poll = 37;
    return Router::Create(std::move(options), Factory(), std::move(selector), Inners(max_rows),
                          Reader(), std::move(positions.table), std::move(positions.snapshot));
  }

  // Every table's ids (table -> ids, sorted), with ferry's reader.
  std::map<std::string, std::vector<int64_t>> TableIds() {
    std::map<std::string, std::vector<int64_t>> out;
    for (const char* name : {"t_created", "t_paid", "t_shipped", "t_unknown", "t_refunded"}) {
      auto table = delta::Table::Open(store_, name);
      auto snap = (*table)->LoadSnapshot();
      if (!snap.ok()) {
        continue;
      }
      auto rows = testing::ReadTableRows(**table, *snap);
      EXPECT_TRUE(rows.ok()) << rows.status().ToString();
      for (const std::string& row : *rows) {
        out[name].push_back(std::stoll(row.substr(3, row.find('|') - 3)));
      }
      std::sort(out[name].begin(), out[name].end());
    }
    return out;
  }

  // Checks every id is in exactly one table, once, and in its kind's table.
  void ExpectExactlyOnce(int64_t per_partition) {
    std::map<int64_t, int> seen;
    for (const auto& [table, ids] : TableIds()) {
      for (int64_t id : ids) {
        ++seen[id];
        int p = static_cast<int>(id / 1'000'000);
        EXPECT_EQ(table, "t_" + kind_of_(p, id % 1'000'000)) << id;
      }
    }
    for (int p = 0; p < partitions_; ++p) {
      for (int64_t n = 0; n < per_partition; ++n) {
        int64_t id = p * 1'000'000 + n;
        EXPECT_EQ(seen[id], 1) << "id " << id;
        seen.erase(id);
      }
    }
    EXPECT_TRUE(seen.empty()) << seen.size() << " ids that were never produced";
  }

  // The largest resume position of `key` over the tables and the positions table.
  std::optional<int64_t> MaxLow(const std::string& key) {
    std::optional<int64_t> best;
    for (const char* name : {"t_created", "t_paid", "t_shipped", "t_unknown", "_routing"}) {
      auto snap = Reader()(name);
      if (snap.ok() && snap->has_value()) {
        auto low = (*snap)->position(RoutingLedger::ResumeAppId("routed", key));
        if (low && (!best || *low > *best)) {
          best = low;
        }
      }
    }
    return best;
  }

  // The inner pipelines' max_latency, and the budget their open batches share (null: none).
  std::chrono::milliseconds inner_max_latency_{20};
  std::shared_ptr<SharedBatchBudget> inner_budget_;

  // Over the tables (each inner pipeline's series has a `table` label).
  double Received() {
    double total = 0;
    for (const auto& [labels, value] : registry_.Values("ferry_messages_received_total")) {
      total += value;
    }
    return total;
  }
};

}  // namespace ferry::pipeline::router_test

#include "ferry/app/verify_command.h"

#include <charconv>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "ferry/app/routed_status.h"
#include "ferry/app/table_location.h"
#include "ferry/config/config.h"
#include "ferry/delta/table.h"
#include "ferry/delta/verify.h"
#include "ferry/pipeline/router.h"

namespace ferry::app {
namespace {

using OrderedJson = nlohmann::ordered_json;

constexpr int kClean = 0;
constexpr int kNotClean = 1;
constexpr int kError = 2;

struct VerifyArgs {
  std::vector<std::string> storage_options;
  std::string table;
  // More tables: the tables of one routed pipeline, checked together (VerifyRoutedTables).
  std::vector<std::string> more_tables;
  // The tables of a routed pipeline, from its configuration or its positions table.
  std::string config;
  std::string routing;
  std::string pipeline;
  std::string expect;
  std::string range;
  bool json = false;
  delta::VerifyOptions options;
};

std::optional<int64_t> ParseInt(std::string_view text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

// "A..B" -> {A, B}.
std::optional<std::pair<int64_t, int64_t>> ParseRange(std::string_view text) {
  size_t dots = text.find("..");
  if (dots == std::string_view::npos) {
    return std::nullopt;
  }
  auto first = ParseInt(text.substr(0, dots));
  auto last = ParseInt(text.substr(dots + 2));
  if (!first || !last) {
    return std::nullopt;
  }
  return std::pair<int64_t, int64_t>(*first, *last);
}

OrderedJson OptionalJson(const std::optional<int64_t>& value) {
  return value ? OrderedJson(*value) : OrderedJson(nullptr);
}

OrderedJson ReportJson(const std::string& table, const delta::VerifyReport& r,
                       const std::optional<int64_t>& expect) {
  OrderedJson out;
  out["table"] = table;
  out["version"] = r.version;
  out["files"] = r.files;
  out["rows"] = r.rows;
  out["distinct"] = r.distinct;
  out["null_ids"] = r.null_ids;
  out["duplicates"] = r.duplicates;
  out["duplicate_ids"] = r.duplicate_ids;
  OrderedJson listed = OrderedJson::array();
  for (const delta::DuplicateId& dup : r.duplicates_listed) {
    listed.push_back({{"id", dup.id}, {"count", dup.count}, {"files", dup.files}});
  }
  out["duplicates_listed"] = std::move(listed);
  out["missing"] = r.missing;
  out["missing_ids"] = r.missing_listed;
  out["out_of_range"] = r.out_of_range;
  out["positions_checked"] = r.positions_checked;
  OrderedJson positions = OrderedJson::array();
  for (const delta::PositionCheck& check : r.positions) {
    positions.push_back({{"app_id", check.app_id},
                         {"source", check.source},
                         {"txn", OptionalJson(check.txn_version)},
                         {"data_max", OptionalJson(check.data_max)},
                         {"ok", check.ok()}});
  }
  out["positions"] = std::move(positions);
  out["stats_mismatches"] = r.stats_mismatches;
  out["expect"] = OptionalJson(expect);
  out["expect_ok"] = r.expect_ok ? OrderedJson(*r.expect_ok) : OrderedJson(nullptr);
  out["ok"] = r.ok();
  return out;
}

std::string Text(const std::optional<int64_t>& value) {
  return value ? std::to_string(*value) : std::string("none");
}

void PrintReport(const std::string& table, const delta::VerifyReport& r,
                 const delta::VerifyOptions& options) {
  std::printf("table:       %s (version %lld, %lld files)\n", table.c_str(),
              static_cast<long long>(r.version), static_cast<long long>(r.files));
  std::printf("rows:        %lld\n", static_cast<long long>(r.rows));
  std::printf("distinct:    %lld\n", static_cast<long long>(r.distinct));
  if (r.null_ids > 0) {
    std::printf("null ids:    %lld\n", static_cast<long long>(r.null_ids));
  }
  std::printf("duplicates:  %lld extra rows of %lld ids\n", static_cast<long long>(r.duplicates),
              static_cast<long long>(r.duplicate_ids));
  for (const delta::DuplicateId& dup : r.duplicates_listed) {
    std::string files;
    for (const std::string& file : dup.files) {
      files += (files.empty() ? "" : ", ") + file;
    }
    std::printf("  id %s: %lld rows in %s\n", dup.id.c_str(), static_cast<long long>(dup.count),
                files.c_str());
  }
  if (options.range) {
    std::printf("missing:     %lld of %lld..%lld", static_cast<long long>(r.missing),
                static_cast<long long>(options.range->first),
                static_cast<long long>(options.range->second));
    std::string listed;
    for (int64_t id : r.missing_listed) {
      listed += (listed.empty() ? "" : ", ") + std::to_string(id);
    }
    std::printf("%s%s%s\n", listed.empty() ? "" : " (", listed.c_str(),
                listed.empty()
                    ? ""
                    : (r.missing > static_cast<int64_t>(r.missing_listed.size()) ? ", ...)" : ")"));
    if (r.out_of_range > 0) {
      std::printf("outside:     %lld distinct ids outside the range\n",
                  static_cast<long long>(r.out_of_range));
    }
  }
  if (!r.positions_checked) {
    std::printf("positions:   not checked (no %s/%s or %s/%s columns)\n",
                options.partition_column.c_str(), options.offset_column.c_str(),
                options.sequence_column.c_str(), options.subject_column.c_str());
  } else {
    std::printf("positions:   %zu checked, %lld mismatched\n", r.positions.size(),
                static_cast<long long>(r.position_mismatches()));
    for (const delta::PositionCheck& check : r.positions) {
      std::printf(
          "  %-40s txn %-12s data max %-12s %s\n",
          check.app_id.empty() ? ("(no txn) " + check.source).c_str() : check.app_id.c_str(),
          Text(check.txn_version).c_str(), Text(check.data_max).c_str(),
          check.ok() ? "ok" : "MISMATCH");
    }
  }
  for (const std::string& mismatch : r.stats_mismatches) {
    std::printf("stats:       %s\n", mismatch.c_str());
  }
  if (r.expect_ok) {
    std::printf("expect:      %lld rows and distinct ids: %s\n",
                static_cast<long long>(*options.expect), *r.expect_ok ? "ok" : "MISMATCH");
  }
  std::printf("result:      %s\n", r.ok() ? "CLEAN" : "NOT CLEAN");
}

int Usage(const std::string& message) {
  std::fprintf(stderr, "ferry verify: %s\n", message.c_str());
  return kError;
}

OrderedJson RoutedReportJson(const std::vector<std::string>& names,
                             const delta::RoutedVerifyReport& r,
                             const std::optional<int64_t>& expect) {
  OrderedJson out;
  OrderedJson tables = OrderedJson::array();
  for (size_t i = 0; i < r.tables.size(); ++i) {
    tables.push_back(ReportJson(names[i], r.tables[i].second, std::nullopt));
  }
  out["tables"] = std::move(tables);
  out["rows"] = r.rows;
  out["distinct"] = r.distinct;
  out["in_several_tables"] = r.in_several_tables;
  OrderedJson several = OrderedJson::array();
  for (const auto& [id, holders] : r.several_listed) {
    several.push_back({{"id", id}, {"tables", holders}});
  }
  out["several_listed"] = std::move(several);
  out["missing"] = r.missing;
  out["missing_ids"] = r.missing_listed;
  out["expect"] = OptionalJson(expect);
  out["expect_ok"] = r.expect_ok ? OrderedJson(*r.expect_ok) : OrderedJson(nullptr);
  out["ok"] = r.ok();
  return out;
}

// Several tables of one routed pipeline: each table's own report, then the union's.
int RunVerifyRouted(const std::vector<std::string>& names, const storage::StorageOptions& storage,
                    const delta::VerifyOptions& options, bool json) {
  std::vector<std::unique_ptr<delta::Table>> tables;
  std::vector<delta::Snapshot> snapshots;
  for (const std::string& name : names) {
    auto table = OpenTableAt(name, storage);
    if (!table.ok()) {
      return Usage(name + ": " + table.status().ToString());
    }
    auto snapshot = (*table)->LoadSnapshot();
    if (!snapshot.ok()) {
      return Usage(name + ": " + snapshot.status().ToString());
    }
    tables.push_back(std::move(*table));
    snapshots.push_back(std::move(*snapshot));
  }
  std::vector<delta::TableToVerify> list;
  for (size_t i = 0; i < tables.size(); ++i) {
    list.push_back({.table = tables[i].get(), .snapshot = &snapshots[i]});
  }
  auto report = delta::VerifyRoutedTables(list, options);
  if (!report.ok()) {
    return Usage(report.status().ToString());
  }
  if (json) {
    std::printf("%s\n", RoutedReportJson(names, *report, options.expect).dump().c_str());
    return report->ok() ? kClean : kNotClean;
  }
  delta::VerifyOptions each = options;  // expect and range apply to the union only
  each.expect.reset();
  each.range.reset();
  for (size_t i = 0; i < report->tables.size(); ++i) {
    PrintReport(names[i], report->tables[i].second, each);
  }
  std::printf(
      "%zu tables together: %lld rows, %lld distinct ids, %lld ids in more than one "
      "table\n",
      names.size(), static_cast<long long>(report->rows), static_cast<long long>(report->distinct),
      static_cast<long long>(report->in_several_tables));
  for (const auto& [id, holders] : report->several_listed) {
    std::string joined;
    for (const std::string& h : holders) {
      joined += (joined.empty() ? "" : ", ") + h;
    }
    std::printf("  id %s in: %s\n", id.c_str(), joined.c_str());
  }
  if (options.range) {
    std::printf("missing ids of %lld..%lld: %lld\n", static_cast<long long>(options.range->first),
                static_cast<long long>(options.range->second),
                static_cast<long long>(report->missing));
    for (int64_t id : report->missing_listed) {
      std::printf("  %lld\n", static_cast<long long>(id));
    }
  }
  if (report->expect_ok) {
    std::printf("expected %lld: %s\n", static_cast<long long>(*options.expect),
                *report->expect_ok ? "yes" : "NO");
  }
  std::printf("%s\n", report->ok() ? "OK: every id in exactly one table, once" : "NOT CLEAN");
  return report->ok() ? kClean : kNotClean;
}

// The tables pipeline `id` recorded in a positions table (RoutingLedger::RecordedTables); without
// an id, the one pipeline it records tables for.
Result<std::vector<std::string>> RecordedTablesAt(const std::string& path,
                                                  const storage::StorageOptions& storage,
                                                  std::string id) {
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<delta::Table> table, OpenTableAt(path, storage));
  Result<delta::Snapshot> snapshot = table->LoadSnapshot();
  if (!snapshot.ok()) {
    return snapshot.status().WithContext("positions table {}", path);
  }
  if (id.empty()) {
    std::set<std::string> ids;
    for (const auto& [app_id, txn] : snapshot->txns()) {
      if (size_t at = app_id.find("/table/"); at != std::string::npos && at > 0) {
        ids.insert(app_id.substr(0, at));
      }
    }
    if (ids.size() != 1) {
      std::string listed;
      for (const std::string& i : ids) {
        listed += (listed.empty() ? "" : ", ") + i;
      }
      return InvalidArgument(
          "positions table {}: {}; name one with --pipeline", path,
          ids.empty() ? std::string("records no routed table (txns \"<id>/table/<table>\")")
                      : "records the tables of several pipelines (" + listed + ")");
    }
    id = *ids.begin();
  }
  std::vector<std::string> tables = pipeline::RoutingLedger::RecordedTables(*snapshot, id);
  if (tables.empty()) {
    return InvalidArgument("positions table {}: pipeline {} routed to no table yet", path, id);
  }
  return tables;
}

// --config FILE --pipeline ID: the pipeline's static tables and the ones its positions table
// records; a static table nothing was routed to yet (no table there) is left out, with a note.
Result<std::vector<std::string>> ConfiguredRoutedTables(const VerifyArgs& args,
                                                        storage::StorageOptions* storage) {
  FERRY_ASSIGN_OR_RETURN(config::Config cfg, config::LoadConfig(args.config));
  for (const config::PipelineConfig& p : cfg.pipelines) {
    if (p.id != args.pipeline) {
      continue;
    }
    if (!p.routing) {
      return InvalidArgument("{}:{}: pipeline {} writes one table ({}); verify it as TABLE",
                             p.location.file, p.location.line, p.id, p.table);
    }
    *storage = storage::MergeStorageOptions({storage, &p.storage});
    std::vector<std::string> recorded;
    Result<std::unique_ptr<delta::Table>> positions =
        OpenTableAt(p.routing->positions_table, *storage);
    Result<delta::Snapshot> snapshot =
        positions.ok() ? (*positions)->LoadSnapshot() : positions.status();
    if (snapshot.ok()) {
      recorded = pipeline::RoutingLedger::RecordedTables(*snapshot, p.id);
    } else if (snapshot.status().code() != StatusCode::kNotFound) {
      return snapshot.status().WithContext("positions table {}", p.routing->positions_table);
    }
    std::vector<std::string> out;
    for (const std::string& table : RoutedTableList(StaticRoutedTables(p), recorded)) {
      Result<std::unique_ptr<delta::Table>> t = OpenTableAt(table, *storage);
      Result<delta::Snapshot> s = t.ok() ? (*t)->LoadSnapshot() : t.status();
      if (s.status().code() == StatusCode::kNotFound) {
        std::fprintf(stderr,
                     "ferry verify: %s: no table there yet (nothing routed to it); left out\n",
                     table.c_str());
        continue;
      }
      out.push_back(table);
    }
    if (out.empty()) {
      return InvalidArgument("pipeline {} routed to no table yet (positions table {})", p.id,
                             p.routing->positions_table);
    }
    return out;
  }
  return InvalidArgument("{}: no pipeline with id '{}'", args.config, args.pipeline);
}

struct UpsertTarget {
  std::string table;
  std::vector<std::string> key;
  storage::StorageOptions storage;
};

// --config FILE --pipeline ID naming an upsert pipeline (mode = "upsert"): its table and key;
// nullopt for another pipeline (routed ones are handled by ConfiguredRoutedTables).
Result<std::optional<UpsertTarget>> ConfiguredUpsertTable(const VerifyArgs& args) {
  FERRY_ASSIGN_OR_RETURN(config::Config cfg, config::LoadConfig(args.config));
  for (const config::PipelineConfig& p : cfg.pipelines) {
    if (p.id == args.pipeline && p.mode == "upsert" && !p.routing) {
      return std::optional<UpsertTarget>(
          UpsertTarget{.table = p.table, .key = p.key, .storage = p.storage});
    }
  }
  return std::optional<UpsertTarget>();
}

int RunVerify(VerifyArgs args) {
  // Checked here rather than by CLI11 so that every usage error exits with 2.
  const int sources =
      (args.table.empty() ? 0 : 1) + (args.config.empty() ? 0 : 1) + (args.routing.empty() ? 0 : 1);
  if (sources == 0) {
    return Usage("TABLE is required (or --config FILE --pipeline ID, or --routing TABLE)");
  }
  if (sources > 1) {
    return Usage(
        "give the tables one way: TABLE..., --config FILE --pipeline ID, or --routing "
        "TABLE");
  }
  if (!args.config.empty() && args.pipeline.empty()) {
    return Usage("--config needs --pipeline ID: the routed pipeline whose tables to verify");
  }
  if (!args.pipeline.empty() && args.config.empty() && args.routing.empty()) {
    return Usage("--pipeline goes with --config or --routing");
  }
  if (!args.options.key_columns.empty() && !args.options.id_column.empty()) {
    return Usage("give --id COLUMN or --key COLUMN[,COLUMN...], not both");
  }
  if (!args.options.key_columns.empty() && args.routing.empty() && args.config.empty() &&
      !args.more_tables.empty()) {
    return Usage("--key checks one table (an upsert pipeline's)");
  }
  if (!args.expect.empty()) {
    args.options.expect = ParseInt(args.expect);
    if (!args.options.expect || *args.options.expect < 0) {
      return Usage("--expect needs a non-negative integer, got '" + args.expect + "'");
    }
  }
  if (!args.range.empty()) {
    args.options.range = ParseRange(args.range);
    if (!args.options.range) {
      return Usage("--range needs A..B with integers A <= B, got '" + args.range + "'");
    }
  }
  auto options = StorageOptionsFromFlags(args.storage_options);
  if (!options.ok()) {
    return Usage(options.status().message());
  }
  if (!args.config.empty()) {
    // An upsert pipeline: its table, checked by its key (unless --id or --key says otherwise).
    Result<std::optional<UpsertTarget>> upsert = ConfiguredUpsertTable(args);
    if (!upsert.ok()) {
      return Usage(upsert.status().ToString());
    }
    if (*upsert) {
      args.table = (*upsert)->table;
      args.config.clear();
      *options = storage::MergeStorageOptions({&*options, &(*upsert)->storage});
      if (args.options.id_column.empty() && args.options.key_columns.empty()) {
        args.options.key_columns = (*upsert)->key;
      }
    }
  }
  if (args.options.id_column.empty() && args.options.key_columns.empty()) {
    return Usage("--id COLUMN (or --key COLUMN[,COLUMN...]) is required");
  }
  if (!args.options.key_columns.empty() && !args.routing.empty()) {
    return Usage("--key checks one table (an upsert pipeline's), not a routed pipeline's");
  }
  if (!args.config.empty() || !args.routing.empty()) {
    storage::StorageOptions storage = *options;
    Result<std::vector<std::string>> names =
        args.config.empty() ? RecordedTablesAt(args.routing, storage, args.pipeline)
                            : ConfiguredRoutedTables(args, &storage);
    if (!names.ok()) {
      return Usage(names.status().ToString());
    }
    return RunVerifyRouted(*names, storage, args.options, args.json);
  }
  if (!args.more_tables.empty()) {
    std::vector<std::string> names = {args.table};
    names.insert(names.end(), args.more_tables.begin(), args.more_tables.end());
    return RunVerifyRouted(names, *options, args.options, args.json);
  }
  auto table = OpenTableAt(args.table, *options);
  if (!table.ok()) {
    return Usage(args.table + ": " + table.status().ToString());
  }
  auto snapshot = (*table)->LoadSnapshot();
  if (!snapshot.ok()) {
    return Usage(args.table + ": " + snapshot.status().ToString());
  }
  auto report = delta::VerifyTable(**table, *snapshot, args.options);
  if (!report.ok()) {
    return Usage(args.table + ": " + report.status().ToString());
  }
  if (args.json) {
    std::printf("%s\n", ReportJson(args.table, *report, args.options.expect).dump().c_str());
  } else {
    PrintReport(args.table, *report, args.options);
  }
  return report->ok() ? kClean : kNotClean;
}

}  // namespace

void RegisterVerifyCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<VerifyArgs>();
  CLI::App* verify = app.add_subcommand(
      "verify",
      "Check a table for duplicate and missing ids and txn positions that disagree with the data; "
      "several tables (a routed pipeline's: listed, or --config/--pipeline, or --routing) "
      "together: every id in exactly one of them, once (exit 0 clean, 1 not clean, 2 error)");
  verify->add_option("TABLE", args->table, "Table location (directory or URI)");
  verify->add_option("MORE_TABLES", args->more_tables,
                     "The other tables of a routed pipeline: every id must be in exactly one of "
                     "them, once");
  verify->add_option("-c,--config", args->config,
                     "With --pipeline: verify the routed pipeline's tables together (its routes, "
                     "fallback and every table its positions table records)");
  verify->add_option("--routing", args->routing,
                     "A routed pipeline's positions table (routing.positions_table): verify every "
                     "table it records together");
  verify->add_option("-p,--pipeline", args->pipeline,
                     "The routed pipeline's id (with --config; with --routing when the positions "
                     "table records several pipelines)");
  AddStorageOptionFlag(verify, &args->storage_options);
  verify->add_option("--id", args->options.id_column, "Id column (integer or string)");
  verify
      ->add_option("--key", args->options.key_columns,
                   "Key columns of an upsert table (COLUMN[,COLUMN...]): every key must have "
                   "one live row; txn positions may lie past the data (deletes). With "
                   "--config/--pipeline of an upsert pipeline, its key is the default")
      ->delimiter(',');
  verify->add_option("--expect", args->expect, "Rows and distinct ids must both equal N");
  verify->add_option("--range", args->range, "Inclusive id range A..B that must all be present");
  verify->add_flag("--json", args->json,
                   "Print one JSON object (several tables: {tables: [one per table], rows, "
                   "distinct, in_several_tables, several_listed, missing, ..., ok})");
  verify->add_option("--max-listed", args->options.max_listed,
                     "How many duplicate and missing ids to list (default 10)");
  verify->add_option("--partition-column", args->options.partition_column,
                     "Kafka partition column (default _partition)");
  verify->add_option("--offset-column", args->options.offset_column,
                     "Kafka offset column (default _offset)");
  verify->add_option("--topic-column", args->options.topic_column,
                     "Kafka topic column, when present (default _topic)");
  verify->add_option("--sequence-column", args->options.sequence_column,
                     "JetStream stream sequence column (default _sequence)");
  verify->add_option("--subject-column", args->options.subject_column,
                     "JetStream subject column (default _subject)");
  verify->callback([args, exit_code] { *exit_code = RunVerify(*args); });
}

}  // namespace ferry::app

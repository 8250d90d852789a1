#include "ferry/app/table_commands.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "ferry/app/table_location.h"
#include "ferry/columnar/column_conform.h"
#include "ferry/columnar/ddl.h"
#include "ferry/delta/history.h"
#include "ferry/delta/schema_evolution.h"
#include "ferry/delta/schema_history.h"
#include "ferry/delta/table.h"
#include "ferry/delta/transaction.h"
#include "ferry/delta/value_format.h"

namespace ferry::app {
namespace {

using OrderedJson = nlohmann::ordered_json;

struct TableArgs {
  std::string path;
  std::vector<std::string> storage_options;
  std::optional<int64_t> version;
  bool json = false;
};

std::string Time(int64_t millis) {
  return delta::FormatTimestampMicros(millis * 1000, delta::TimestampStyle::kStatsMillis);
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) {
    out += (out.empty() ? "" : ", ") + item;
  }
  return out;
}

OrderedJson HistoryJson(const std::vector<delta::SchemaVersion>& history) {
  OrderedJson out = OrderedJson::array();
  for (const delta::SchemaVersion& v : history) {
    OrderedJson entry;
    entry["version"] = v.version;
    entry["timestamp"] = v.timestamp_ms;
    entry["operation"] = v.operation;
    if (v.initial) {
      entry["schema"] = v.schema->ToString();
    } else {
      entry["changes"] = v.changes;
    }
    out.push_back(std::move(entry));
  }
  return out;
}

void PrintHistory(const std::vector<delta::SchemaVersion>& history) {
  std::printf("schema history:\n");
  for (const delta::SchemaVersion& v : history) {
    std::string what =
        v.initial ? (v.version == 0 ? "created: " : "oldest in the log: ") + v.schema->ToString()
                  : (v.changes.empty() ? std::string("properties only")
                                       : fmt::format("{}", fmt::join(v.changes, "; ")));
    std::printf("  v%-6lld %s  %s\n", static_cast<long long>(v.version),
                Time(v.timestamp_ms).c_str(), what.c_str());
  }
}

OrderedJson InspectJson(const delta::Snapshot& snap) {
  const delta::Protocol& p = snap.protocol();
  OrderedJson protocol;
  protocol["minReaderVersion"] = p.min_reader_version;
  protocol["minWriterVersion"] = p.min_writer_version;
  if (p.reader_features) {
    protocol["readerFeatures"] = *p.reader_features;
  }
  if (p.writer_features) {
    protocol["writerFeatures"] = *p.writer_features;
  }
  OrderedJson out;
  out["version"] = snap.version();
  out["timestamp"] = snap.timestamp_ms();
  out["table_id"] = snap.metadata().id;
  out["protocol"] = std::move(protocol);
  // The schema as the log holds it; null when the metaData has none or it is not JSON (such a
  // table opens, but nlohmann would print its discarded parse as `<discarded>`).
  OrderedJson schema = OrderedJson::parse(snap.metadata().schema_string, nullptr, false);
  out["schema"] = schema.is_discarded() ? OrderedJson(nullptr) : std::move(schema);
  out["partition_columns"] = snap.partition_columns();
  out["configuration"] = snap.metadata().configuration;
  out["num_files"] = snap.num_files();
  std::optional<int64_t> rows = snap.num_records();
  out["num_rows"] = rows ? OrderedJson(*rows) : OrderedJson(nullptr);
  out["size_bytes"] = snap.size_bytes();
  OrderedJson txns = OrderedJson::object();
  for (const auto& [app_id, txn] : snap.txns()) {
    txns[app_id] = txn.version;
  }
  out["txns"] = std::move(txns);
  return out;
}

void PrintInspect(const std::string& path, const delta::Snapshot& snap) {
  const delta::Protocol& p = snap.protocol();
  std::printf("table:             %s\n", path.c_str());
  std::printf("version:           %lld (%s)\n", static_cast<long long>(snap.version()),
              Time(snap.timestamp_ms()).c_str());
  std::printf("table id:          %s\n", snap.metadata().id.c_str());
  std::printf("protocol:          reader %d, writer %d\n", p.min_reader_version,
              p.min_writer_version);
  if (p.reader_features) {
    std::printf("reader features:   %s\n", Join(*p.reader_features).c_str());
  }
  if (p.writer_features) {
    std::printf("writer features:   %s\n", Join(*p.writer_features).c_str());
  }
  std::printf("schema:            %s\n", snap.schema()->ToString().c_str());
  std::printf("partition columns: %s\n", Join(snap.partition_columns()).c_str());
  std::printf("files:             %lld\n", static_cast<long long>(snap.num_files()));
  std::optional<int64_t> rows = snap.num_records();
  std::printf("rows:              %s\n",
              rows ? std::to_string(*rows).c_str() : "unknown (a file has no stats)");
  std::printf("bytes:             %lld\n", static_cast<long long>(snap.size_bytes()));
  for (const auto& [key, value] : snap.metadata().configuration) {
    std::printf("property:          %s = %s\n", key.c_str(), value.c_str());
  }
  std::printf("txns:              %zu\n", snap.txns().size());
  for (const auto& [app_id, txn] : snap.txns()) {
    std::printf("  %s = %lld\n", app_id.c_str(), static_cast<long long>(txn.version));
  }
}

int RunInspect(const TableArgs& args) {
  auto options = StorageOptionsFromFlags(args.storage_options);
  auto table = options.ok() ? OpenTableAt(args.path, *options)
                            : Result<std::unique_ptr<delta::Table>>(options.status());
  auto snap = table.ok() ? (*table)->LoadSnapshot(args.version) : table.status();
  if (!snap.ok()) {
    std::fprintf(stderr, "ferry table inspect: %s\n", snap.status().ToString().c_str());
    return 1;
  }
  // Which version added which column (a table whose log lost its first commits starts later).
  auto history = delta::ReadSchemaHistory(**table, snap->version());
  if (!history.ok()) {
    std::fprintf(stderr, "ferry table inspect: schema history: %s\n",
                 history.status().ToString().c_str());
    return 1;
  }
  if (args.json) {
    OrderedJson out = InspectJson(*snap);
    out["schema_history"] = HistoryJson(*history);
    std::printf("%s\n", out.dump(-1, ' ', false, OrderedJson::error_handler_t::replace).c_str());
  } else {
    PrintInspect(args.path, *snap);
    PrintHistory(*history);
  }
  return 0;
}

struct AddColumnsArgs {
  std::string path;
  std::string columns;
  std::vector<std::string> storage_options;
};

// `ferry table add-columns`: the columns as one commit (metaData only), by the rules of schema
// evolution (delta/schema_evolution.h); another writer's metaData first: merge again, retry.
int RunAddColumns(const AddColumnsArgs& args) {
  auto fail = [](const Status& st) {
    std::fprintf(stderr, "ferry table add-columns: %s\n", st.ToString().c_str());
    return 1;
  };
  Result<columnar::Schema> wanted = columnar::ParseDdlSchema(args.columns, "columns");
  if (!wanted.ok()) {
    return fail(wanted.status());
  }
  for (const columnar::Field& f : wanted->fields()) {
    if (!f.nullable) {
      return fail(InvalidArgument(
          "column '{}': a column added to an existing table must be nullable (its rows so far "
          "have no value)",
          f.name));
    }
  }
  auto options = StorageOptionsFromFlags(args.storage_options);
  if (!options.ok()) {
    return fail(options.status());
  }
  auto table = OpenTableAt(args.path, *options);
  if (!table.ok()) {
    return fail(table.status());
  }
  auto snap = (*table)->LoadSnapshot();
  for (int attempt = 0; snap.ok() && attempt < 20; ++attempt) {
    // Each column must be new, or a struct that gains fields.
    auto merge =
        delta::MergeSchema(*snap->schema(), *wanted,
                           {.mode = delta::SchemaEvolution::kAddColumns,
                            .limits = {.max_new_fields = INT64_MAX, .max_fields = INT64_MAX},
                            .partition_columns = snap->partition_columns()});
    if (!merge.ok()) {
      return fail(merge.status().WithContext("table {}", (*table)->Describe()));
    }
    for (const columnar::Field& f : wanted->fields()) {
      auto i = columnar::FindFieldIgnoringCase(snap->schema()->fields(), f.name);
      if (!i) {
        continue;
      }
      const std::string& name = snap->schema()->fields()[*i].name;
      bool gains = std::any_of(merge->changes.begin(), merge->changes.end(),
                               [&](const delta::SchemaChange& c) {
                                 return c.field.size() > 1 && c.field.front() == name;
                               });
      if (!gains) {
        return fail(
            InvalidArgument("table {}: column '{}' exists already", (*table)->Describe(), name));
      }
    }
    auto change = delta::PlanSchemaChange(*snap, *merge);
    if (!change.ok()) {
      return fail(change.status().WithContext("table {}", (*table)->Describe()));
    }
    std::vector<std::string> described;
    for (const delta::SchemaChange& c : merge->changes) {
      described.push_back(c.Describe());
    }
    delta::Transaction txn(**table, *snap);
    txn.SetMetadata(change->metadata);
    if (change->protocol) {
      txn.SetProtocol(*change->protocol);
    }
    txn.SetOperation("ADD COLUMNS", {{"columns", wanted->ToString()}});
    auto committed = txn.Commit();
    if (committed.ok()) {
      std::printf("%s: version %lld: %s\n", (*table)->Describe().c_str(),
                  static_cast<long long>(committed->version),
                  fmt::format("{}", fmt::join(described, "; ")).c_str());
      return 0;
    }
    if (txn.conflict() != delta::Conflict::kMetadataChanged) {
      return fail(committed.status());
    }
    snap = (*table)->LoadSnapshot();  // another writer changed the schema first: merge again
  }
  return fail(snap.ok() ? Unavailable("the table's schema kept changing; try again")
                        : snap.status());
}

int RunHistory(const TableArgs& args) {
  auto options = StorageOptionsFromFlags(args.storage_options);
  auto table = options.ok() ? OpenTableAt(args.path, *options)
                            : Result<std::unique_ptr<delta::Table>>(options.status());
  auto history = table.ok() ? delta::ReadHistory(**table)
                            : Result<std::vector<delta::CommitSummary>>(table.status());
  if (!history.ok()) {
    std::fprintf(stderr, "ferry table history: %s\n", history.status().ToString().c_str());
    return 1;
  }
  for (const delta::CommitSummary& c : *history) {
    if (args.json) {
      OrderedJson line;
      line["version"] = c.version;
      line["timestamp"] = c.timestamp_ms;
      line["operation"] = c.operation;
      line["engine_info"] = c.engine_info;
      line["files_added"] = c.files_added;
      line["files_removed"] = c.files_removed;
      line["txns"] = c.txns;
      // Spark's operationParameters (ferry's: queryId, epochId, and gaps skipped with
      // on_gap = "continue").
      OrderedJson info = OrderedJson::parse(c.commit_info_json, nullptr, false);
      if (info.is_object() && info.contains("operationParameters")) {
        line["operation_parameters"] = info["operationParameters"];
      }
      std::printf("%s\n", line.dump(-1, ' ', false, OrderedJson::error_handler_t::replace).c_str());
      continue;
    }
    std::string txns;
    for (const auto& [app_id, version] : c.txns) {
      txns += fmt::format(" {}={}", app_id, version);
    }
    std::printf("%-6lld %s  %-20s +%lld -%lld%s%s\n", static_cast<long long>(c.version),
                Time(c.timestamp_ms).c_str(), c.operation.empty() ? "-" : c.operation.c_str(),
                static_cast<long long>(c.files_added), static_cast<long long>(c.files_removed),
                txns.empty() ? "" : "  txns:", txns.c_str());
  }
  return 0;
}

}  // namespace

void RegisterTableCommands(CLI::App& app, int* exit_code) {
  CLI::App* table = app.add_subcommand("table", "Inspect Delta tables, add columns");
  table->require_subcommand(1);

  auto inspect_args = std::make_shared<TableArgs>();
  CLI::App* inspect = table->add_subcommand(
      "inspect",
      "Show a table's snapshot: protocol, schema, files, rows, bytes, positions, and the schema "
      "history (which version added which column)");
  inspect->add_option("PATH", inspect_args->path, "Table location (directory or URI)")->required();
  AddStorageOptionFlag(inspect, &inspect_args->storage_options);
  inspect->add_option("--version", inspect_args->version, "Version to show (default: latest)");
  inspect->add_flag("--json", inspect_args->json, "Print one JSON object");
  inspect->callback([inspect_args, exit_code] { *exit_code = RunInspect(*inspect_args); });

  auto add_args = std::make_shared<AddColumnsArgs>();
  CLI::App* add = table->add_subcommand(
      "add-columns",
      "Add nullable columns to a table in one commit, as schema evolution would: each column goes "
      "at the end; a STRUCT column that exists gains the fields it lacks (\"loc STRUCT<alt: "
      "DOUBLE>\"). Running pipelines fill the new columns from their next batch");
  add->add_option("PATH", add_args->path, "Table location (directory or URI)")->required();
  add->add_option("COLUMNS", add_args->columns, "Spark DDL, e.g. \"region STRING, score DOUBLE\"")
      ->required();
  AddStorageOptionFlag(add, &add_args->storage_options);
  add->callback([add_args, exit_code] { *exit_code = RunAddColumns(*add_args); });

  auto history_args = std::make_shared<TableArgs>();
  CLI::App* history = table->add_subcommand("history", "List a table's commits, oldest first");
  history->add_option("PATH", history_args->path, "Table location (directory or URI)")->required();
  AddStorageOptionFlag(history, &history_args->storage_options);
  history->add_flag("--json", history_args->json, "Print one JSON object per commit");
  history->callback([history_args, exit_code] { *exit_code = RunHistory(*history_args); });
}

}  // namespace ferry::app

#include "ferry/app/table_commands.h"

#include <cstdio>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "ferry/app/table_location.h"
#include "ferry/delta/history.h"
#include "ferry/delta/table.h"
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
  if (args.json) {
    std::printf(
        "%s\n",
        InspectJson(*snap).dump(-1, ' ', false, OrderedJson::error_handler_t::replace).c_str());
  } else {
    PrintInspect(args.path, *snap);
  }
  return 0;
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
  CLI::App* table = app.add_subcommand("table", "Inspect Delta tables");
  table->require_subcommand(1);

  auto inspect_args = std::make_shared<TableArgs>();
  CLI::App* inspect = table->add_subcommand(
      "inspect", "Show a table's snapshot: protocol, schema, files, rows, bytes, positions");
  inspect->add_option("PATH", inspect_args->path, "Table location (directory or URI)")->required();
  AddStorageOptionFlag(inspect, &inspect_args->storage_options);
  inspect->add_option("--version", inspect_args->version, "Version to show (default: latest)");
  inspect->add_flag("--json", inspect_args->json, "Print one JSON object");
  inspect->callback([inspect_args, exit_code] { *exit_code = RunInspect(*inspect_args); });

  auto history_args = std::make_shared<TableArgs>();
  CLI::App* history = table->add_subcommand("history", "List a table's commits, oldest first");
  history->add_option("PATH", history_args->path, "Table location (directory or URI)")->required();
  AddStorageOptionFlag(history, &history_args->storage_options);
  history->add_flag("--json", history_args->json, "Print one JSON object per commit");
  history->callback([history_args, exit_code] { *exit_code = RunHistory(*history_args); });
}

}  // namespace ferry::app

#include "ferry/app/status_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "ferry/app/broker_heads.h"
#include "ferry/app/logging.h"
#include "ferry/app/routed_status.h"
#include "ferry/app/status_watch.h"
#include "ferry/app/table_location.h"
#include "ferry/config/config.h"
#include "ferry/delta/history.h"
#include "ferry/delta/table.h"
#include "ferry/delta/value_format.h"
#include "ferry/pipeline/router.h"

namespace ferry::app {
namespace {

constexpr int kExitLagging = 1;
constexpr int kExitError = 2;
// Commits read back (newest first) to find the one that set each position.
constexpr int64_t kHistoryDepth = 1000;

struct StatusArgs {
  std::string config;
  std::string table;
  std::vector<std::string> storage_options;
  std::vector<std::string> pipelines;
  std::optional<int64_t> max_lag;
  bool json = false;
  bool watch = false;
  std::string interval = "1s";
  int64_t count = 0;
};

struct Row {
  std::string pipeline;
  std::optional<std::string> table;  // a routed pipeline's table (routed_status.h)
  std::string partition;
  std::optional<int64_t> resume;  // a routed pipeline's L for the partition
  std::optional<int64_t> position;
  std::optional<int64_t> head;
  std::optional<int64_t> lag;
  std::optional<int64_t> last_commit_ms;
  // Elastic JetStream: the process holding the partition's lease ("" when free) and how long it
  // has held it.
  std::optional<std::string> owner;
  std::optional<int64_t> lease_age_ms;
};

std::string Time(int64_t millis) {
  return delta::FormatTimestampMicros(millis * 1000, delta::TimestampStyle::kStatsMillis);
}

// The table's latest snapshot and, per appId, the time of the newest commit (within the last
// kHistoryDepth) that set it. An empty state when there is no table yet.
struct TableState {
  std::optional<delta::Snapshot> snapshot;
  std::map<std::string, int64_t> set_at_ms;
};

Result<TableState> ReadTableState(const std::string& path, const storage::StorageOptions& options) {
  TableState out;
  Result<std::unique_ptr<delta::Table>> table = OpenTableAt(path, options);
  Result<delta::Snapshot> loaded = table.ok() ? (*table)->LoadSnapshot() : table.status();
  if (loaded.status().code() == StatusCode::kNotFound) {
    return out;  // no table (or no directory) yet
  }
  FERRY_ASSIGN_OR_RETURN(delta::Snapshot snapshot, std::move(loaded));
  int64_t from = std::max<int64_t>(0, snapshot.version() - kHistoryDepth + 1);
  Result<std::vector<delta::CommitSummary>> history =
      delta::ReadHistory(**table, from, snapshot.version());
  if (history.ok()) {
    for (const delta::CommitSummary& c : *history) {
      for (const auto& [app_id, version] : c.txns) {
        out.set_at_ms[app_id] = c.timestamp_ms;  // oldest first: the newest wins
      }
    }
  }
  out.snapshot = std::move(snapshot);
  return out;
}

std::optional<int64_t> LastCommit(const TableState& t, const std::string& app_id) {
  if (!t.snapshot) {
    return std::nullopt;
  }
  auto it = t.set_at_ms.find(app_id);
  return it != t.set_at_ms.end() ? it->second : t.snapshot->timestamp_ms();
}

// Elastic JetStream: the lease of each row's partition as the bucket holds it now (OWNER and
// LEASE AGE); rows of other pipelines are left as they are.
Status AddLeases(const config::PipelineConfig& p, std::vector<Row>* rows) {
  if (!p.jetstream || p.jetstream->partition_count == 0) {
    return Status::OK();
  }
  Result<std::map<std::string, PartitionLease>> leases = QueryLeases(p);
  if (!leases.ok() && leases.status().code() != StatusCode::kNotFound) {
    return leases.status().WithContext("pipeline {}: partition leases", p.id);
  }
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  for (Row& row : *rows) {
    if (!row.lag) {
      continue;  // a position of a partition the broker does not report
    }
    row.owner = "";  // free, or no process created the bucket yet
    if (leases.ok()) {
      auto lease = leases->find(row.partition);
      if (lease != leases->end() && !lease->second.owner.empty()) {
        row.owner = lease->second.owner;
        row.lease_age_ms = std::max<int64_t>(0, now_ms - lease->second.taken_unix_ms);
      }
    }
  }
  return Status::OK();
}

// A routed pipeline: per table and partition (routed_status.h).
Result<std::vector<Row>> RoutedRows(const config::PipelineConfig& p) {
  Result<TableState> positions = ReadTableState(p.routing->positions_table, p.storage);
  if (!positions.ok()) {
    return positions.status().WithContext("positions table {}", p.routing->positions_table);
  }
  RoutedStatusInput in{.id = p.id};
  std::vector<std::string> recorded;
  if (positions->snapshot) {
    recorded = pipeline::RoutingLedger::RecordedTables(*positions->snapshot, p.id);
    for (const auto& [app_id, txn] : positions->snapshot->txns()) {
      in.positions_txns[app_id] = txn.version;
    }
  }
  std::map<std::string, TableState> states;
  for (const std::string& table : RoutedTableList(StaticRoutedTables(p), recorded)) {
    Result<TableState> state = ReadTableState(table, p.storage);
    if (!state.ok()) {
      return state.status().WithContext("routed table {}", table);
    }
    std::optional<std::map<std::string, int64_t>>& txns = in.tables[table];
    if (state->snapshot) {
      txns.emplace();
      for (const auto& [app_id, txn] : state->snapshot->txns()) {
        (*txns)[app_id] = txn.version;
      }
    }
    states[table] = std::move(*state);
  }
  FERRY_ASSIGN_OR_RETURN(in.heads, QueryBrokerHeads(p));
  std::vector<Row> rows;
  for (const RoutedStatusRow& r : RoutedStatusRows(in)) {
    rows.push_back(
        Row{.pipeline = p.id,
            .table = r.table,
            .partition = r.partition,
            .resume = r.resume,
            .position = r.position,
            .head = r.head,
            .lag = r.lag,
            .last_commit_ms = r.position ? LastCommit(states[r.table], r.app_id) : std::nullopt});
  }
  FERRY_RETURN_IF_ERROR(AddLeases(p, &rows));
  return rows;
}

Result<std::vector<Row>> PipelineRows(const config::PipelineConfig& p) {
  if (p.routing) {
    return RoutedRows(p);
  }
  FERRY_ASSIGN_OR_RETURN(TableState table, ReadTableState(p.table, p.storage));
  FERRY_ASSIGN_OR_RETURN(std::vector<source::PartitionHead> heads, QueryBrokerHeads(p));
  std::vector<Row> rows;
  std::set<std::string> seen;
  for (const source::PartitionHead& h : heads) {
    std::string app_id = p.id + "/" + h.key;
    seen.insert(app_id);
    Row row{.pipeline = p.id, .partition = h.key, .head = h.last_position};
    if (table.snapshot) {
      row.position = table.snapshot->position(app_id);
    }
    if (row.position) {
      row.last_commit_ms = LastCommit(table, app_id);
      row.lag = std::max<int64_t>(0, h.last_position.value_or(*row.position) - *row.position);
    } else if (h.last_position && h.first_position) {
      row.lag = *h.last_position - *h.first_position + 1;
    } else {
      row.lag = 0;
    }
    rows.push_back(std::move(row));
  }
  FERRY_RETURN_IF_ERROR(AddLeases(p, &rows));
  // Positions of partitions the broker no longer reports (a deleted topic, a removed filter).
  if (table.snapshot) {
    std::string prefix = p.id + "/";
    for (const auto& [app_id, txn] : table.snapshot->txns()) {
      if (app_id.rfind(prefix, 0) == 0 && seen.count(app_id) == 0) {
        rows.push_back(Row{.pipeline = p.id,
                           .partition = app_id.substr(prefix.size()),
                           .position = txn.version,
                           .last_commit_ms = LastCommit(table, app_id)});
      }
    }
  }
  return rows;
}

Result<std::vector<Row>> TableRows(const std::string& path,
                                   const storage::StorageOptions& options) {
  FERRY_ASSIGN_OR_RETURN(TableState table, ReadTableState(path, options));
  if (!table.snapshot) {
    return NotFound("{}: no Delta table there", path);
  }
  std::vector<Row> rows;
  for (const auto& [app_id, txn] : table.snapshot->txns()) {
    // ferry's appIds are "<pipeline>/<partition key>"; others (Spark, kafka-delta-ingest) are
    // shown whole.
    size_t slash = app_id.find('/');
    Row row{.position = txn.version, .last_commit_ms = LastCommit(table, app_id)};
    if (slash != std::string::npos) {
      row.pipeline = app_id.substr(0, slash);
      row.partition = app_id.substr(slash + 1);
    } else {
      row.partition = app_id;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string Cell(const std::optional<int64_t>& v) {
  return v ? std::to_string(*v) : "-";
}

std::string Format(const std::vector<Row>& rows);

void Print(const std::vector<Row>& rows, bool json) {
  if (json) {
    for (const Row& r : rows) {
      auto opt = [](const std::optional<int64_t>& v) {
        return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
      };
      nlohmann::json line = {
          {"pipeline", r.pipeline},
          {"partition", r.partition},
          {"position", opt(r.position)},
          {"head", opt(r.head)},
          {"lag", opt(r.lag)},
          {"last_commit",
           r.last_commit_ms ? nlohmann::json(Time(*r.last_commit_ms)) : nlohmann::json(nullptr)}};
      if (r.table) {
        line["table"] = *r.table;
        line["resume"] = opt(r.resume);
      }
      if (r.owner) {
        line["owner"] = r.owner->empty() ? nlohmann::json(nullptr) : nlohmann::json(*r.owner);
        line["lease_age_ms"] = opt(r.lease_age_ms);
      }
      std::printf("%s\n", line.dump().c_str());
    }
    return;
  }
  std::fputs(Format(rows).c_str(), stdout);
}

std::string Format(const std::vector<Row>& rows) {
  // PIPELINE, TABLE (routed pipelines), PARTITION, POSITION, RESUME (routed), HEAD, LAG, OWNER and
  // LEASE AGE (elastic JetStream), LAST COMMIT; optional columns only when a row has them.
  const bool routed = std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.table; });
  const bool leased = std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.owner; });
  struct Column {
    std::string title;
    size_t width;  // 0: as wide as its widest cell
    bool right;
  };
  std::vector<Column> columns = {{"PIPELINE", 8, false}};
  if (routed) {
    columns.push_back({"TABLE", 5, false});
  }
  columns.push_back({"PARTITION", 9, false});
  columns.push_back({"POSITION", 12, true});
  if (routed) {
    columns.push_back({"RESUME", 12, true});
  }
  columns.push_back({"HEAD", 12, true});
  columns.push_back({"LAG", 10, true});
  if (leased) {
    columns.push_back({"OWNER", 5, false});
    columns.push_back({"LEASE AGE", 9, true});
  }
  columns.push_back({"LAST COMMIT", 0, false});
  std::vector<std::vector<std::string>> cells;
  for (const Row& r : rows) {
    std::vector<std::string>& c = cells.emplace_back();
    c.push_back(r.pipeline);
    if (routed) {
      c.push_back(r.table.value_or("-"));
    }
    c.push_back(r.partition);
    c.push_back(Cell(r.position));
    if (routed) {
      c.push_back(Cell(r.resume));
    }
    c.push_back(Cell(r.head));
    c.push_back(Cell(r.lag));
    if (leased) {
      c.push_back(r.owner && !r.owner->empty() ? *r.owner : "-");
      c.push_back(r.lease_age_ms
                      ? fmt::format("{:.1f}s", static_cast<double>(*r.lease_age_ms) / 1000.0)
                      : "-");
    }
    c.push_back(r.last_commit_ms ? Time(*r.last_commit_ms) : "-");
  }
  for (size_t i = 0; i + 1 < columns.size(); ++i) {
    for (const std::vector<std::string>& c : cells) {
      columns[i].width = std::max(columns[i].width, c[i].size());
    }
  }
  auto line = [&](const std::vector<std::string>& c) {
    std::string out;
    for (size_t i = 0; i < columns.size(); ++i) {
      if (i + 1 == columns.size()) {
        out += c[i];
      } else if (columns[i].right) {
        out += fmt::format("{:>{}}  ", c[i], columns[i].width);
      } else {
        out += fmt::format("{:<{}}  ", c[i], columns[i].width);
      }
    }
    return out + "\n";
  };
  std::vector<std::string> titles;
  for (const Column& column : columns) {
    titles.push_back(column.title);
  }
  std::string out = line(titles);
  for (const std::vector<std::string>& c : cells) {
    out += line(c);
  }
  return out;
}

// --watch: the running ferry's status page in the terminal; the rows above when it is not up.
int Watch(const StatusArgs& args, const config::Config& cfg) {
  Result<config::Duration> interval = config::ParseDuration(args.interval);
  if (!interval.ok() || interval->count() <= 0) {
    std::fprintf(stderr, "ferry status: --interval: \"%s\" is not a duration such as 1s\n",
                 args.interval.c_str());
    return kExitError;
  }
  WatchOptions options{.interval = *interval,
                       .count = args.count,
                       .pipelines = {args.pipelines.begin(), args.pipelines.end()}};
  return WatchStatus(cfg, options, [&] {
    std::vector<Row> rows;
    for (const config::PipelineConfig& p : cfg.pipelines) {
      if (!options.pipelines.empty() && options.pipelines.count(p.id) == 0) {
        continue;
      }
      Result<std::vector<Row>> r = PipelineRows(p);
      if (!r.ok()) {
        return Redact(fmt::format("pipeline {}: {}\n", p.id, r.status().ToString()), cfg.secrets);
      }
      rows.insert(rows.end(), r->begin(), r->end());
    }
    return Format(rows);
  });
}

int ShowStatus(const StatusArgs& args) {
  if (args.config.empty() == args.table.empty()) {
    std::fprintf(stderr, "ferry status: give exactly one of --config and --table\n");
    return kExitError;
  }
  Result<storage::StorageOptions> flags = StorageOptionsFromFlags(args.storage_options);
  if (!flags.ok()) {
    std::fprintf(stderr, "ferry status: %s\n", flags.status().message().c_str());
    return kExitError;
  }
  if (args.watch && args.config.empty()) {
    std::fprintf(stderr, "ferry status: --watch needs --config (the running ferry's listener)\n");
    return kExitError;
  }
  std::vector<Row> rows;
  if (!args.table.empty()) {
    Result<std::vector<Row>> r = TableRows(args.table, *flags);
    if (!r.ok()) {
      std::fprintf(stderr, "ferry status: %s\n", r.status().ToString().c_str());
      return kExitError;
    }
    rows = std::move(*r);
  } else {
    Result<config::Config> cfg = config::LoadConfig(args.config);
    if (!cfg.ok()) {
      std::fprintf(stderr, "ferry status: %s\n", cfg.status().message().c_str());
      return kExitError;
    }
    // librdkafka and nats.c log through spdlog: keep stdout for the table.
    if (Status st = SetupLogging(
            {.format = cfg->log.format, .level = cfg->log.level, .secrets = cfg->secrets});
        !st.ok()) {
      std::fprintf(stderr, "ferry status: %s\n", st.ToString().c_str());
      return kExitError;
    }
    if (args.watch) {
      return Watch(args, *cfg);
    }
    std::set<std::string> wanted(args.pipelines.begin(), args.pipelines.end());
    for (config::PipelineConfig& p : cfg->pipelines) {
      if (!wanted.empty() && wanted.erase(p.id) == 0) {
        continue;
      }
      p.storage = storage::MergeStorageOptions({&*flags, &p.storage});
      Result<std::vector<Row>> r = PipelineRows(p);
      if (!r.ok()) {
        // Broker errors may quote a server URL with its credentials: redact like the logger.
        std::fprintf(stderr, "ferry status: pipeline %s: %s\n", p.id.c_str(),
                     Redact(r.status().ToString(), cfg->secrets).c_str());
        return kExitError;
      }
      rows.insert(rows.end(), r->begin(), r->end());
    }
    if (!wanted.empty()) {
      std::fprintf(stderr, "ferry status: %s: no pipeline with id '%s'\n", args.config.c_str(),
                   wanted.begin()->c_str());
      return kExitError;
    }
  }
  Print(rows, args.json);
  if (args.max_lag) {
    for (const Row& r : rows) {
      if (r.lag && *r.lag > *args.max_lag) {
        std::string where = r.table ? *r.table + " " + r.partition : r.partition;
        std::fprintf(stderr, "ferry status: %s %s: lag %lld exceeds --max-lag %lld\n",
                     r.pipeline.c_str(), where.c_str(), static_cast<long long>(*r.lag),
                     static_cast<long long>(*args.max_lag));
        return kExitLagging;
      }
    }
  }
  return 0;
}

}  // namespace

void RegisterStatusCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<StatusArgs>();
  CLI::App* status = app.add_subcommand(
      "status",
      "Per source partition: the table's committed position, the broker head, the lag in\n"
      "messages (JetStream: sequences) and the time of the commit that set the position.\n"
      "A routed pipeline: per table and partition, with the resume position (RESUME) a\n"
      "restart would start after; lag = head - max(position, resume).\n"
      "Exit codes: 0 ok, 1 a partition's lag exceeds --max-lag, 2 an error.");
  status->add_option("-c,--config", args->config,
                     "The TOML configuration: positions of its pipelines, heads from the broker");
  status->add_option("-t,--table", args->table,
                     "A Delta table: the positions it holds (no broker, so no head or lag)");
  AddStorageOptionFlag(status, &args->storage_options);
  status->add_option("-p,--pipeline", args->pipelines,
                     "With --config: only the pipeline with this id (repeatable)");
  status->add_option("--max-lag", args->max_lag,
                     "Exit 1 when any partition's lag exceeds N messages (for cron and alerts)");
  status->add_flag("--json", args->json, "One JSON object per partition per line");
  status->add_flag("--watch", args->watch,
                   "With --config: the status page of the running `ferry run` in the terminal "
                   "(its [metrics] listener), redrawn every --interval; positions from the tables "
                   "and brokers while it does not answer. Ctrl-C stops");
  status->add_option("--interval", args->interval, "With --watch: time between frames")
      ->capture_default_str();
  status->add_option("--count", args->count, "With --watch: stop after N frames (0: never)")
      ->capture_default_str();
  status->callback([args, exit_code] { *exit_code = ShowStatus(*args); });
}

}  // namespace ferry::app

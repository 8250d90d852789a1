#include "ferry/app/hygiene_commands.h"

#include <cstdio>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "ferry/app/table_location.h"
#include "ferry/config/config.h"
#include "ferry/delta/optimize.h"
#include "ferry/delta/table.h"
#include "ferry/delta/vacuum.h"

namespace ferry::app {
namespace {

constexpr int kFailed = 1;
constexpr int kUsage = 2;

struct OptimizeArgs {
  std::string table;
  std::vector<std::string> storage_options;
  std::string where;
  std::string target_size = "256MiB";
  std::string cluster_memory = "256MiB";
  bool dry_run = false;
  bool full = false;
  bool json = false;
};

struct VacuumArgs {
  std::string table;
  std::vector<std::string> storage_options;
  std::string retain = "168h";
  bool dry_run = false;
  bool force = false;
  bool json = false;
};

int Fail(const char* command, int code, const std::string& message) {
  std::fprintf(stderr, "ferry %s: %s\n", command, message.c_str());
  return code;
}

// Usage and read errors exit 2; a failed commit (conflict, contention, I/O while writing) 1.
int CodeFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kAborted:
    case StatusCode::kUnavailable:
    case StatusCode::kIOError:
    case StatusCode::kResourceExhausted:
      return kFailed;
    default:
      return kUsage;
  }
}

int RunOptimize(const OptimizeArgs& args) {
  auto where = delta::PartitionPredicate::Parse(args.where);
  if (!where.ok()) {
    return Fail("optimize", kUsage, where.status().ToString());
  }
  auto size = config::ParseSize(args.target_size);
  if (!size.ok() || *size <= 0) {
    return Fail("optimize", kUsage, "--target-size: bad size '" + args.target_size + "'");
  }
  auto memory = config::ParseSize(args.cluster_memory);
  if (!memory.ok() || *memory <= 0) {
    return Fail("optimize", kUsage, "--cluster-memory: bad size '" + args.cluster_memory + "'");
  }
  auto options = StorageOptionsFromFlags(args.storage_options);
  auto table = options.ok() ? OpenTableAt(args.table, *options)
                            : Result<std::unique_ptr<delta::Table>>(options.status());
  if (!table.ok()) {
    return Fail("optimize", kUsage, args.table + ": " + table.status().ToString());
  }
  auto result = delta::Optimize(**table, {.where = *where,
                                          .target_size = *size,
                                          .dry_run = args.dry_run,
                                          .full = args.full,
                                          .max_cluster_memory = *memory,
                                          .commit = {}});
  if (!result.ok()) {
    return Fail("optimize", CodeFor(result.status()),
                args.table + ": " + result.status().ToString());
  }
  const delta::OptimizeResult& r = *result;
  if (args.json) {
    nlohmann::ordered_json out;
    out["version"] = r.version ? nlohmann::ordered_json(*r.version) : nullptr;
    out["dry_run"] = args.dry_run;
    out["bins"] = r.bins;
    out["files_removed"] = r.files_removed;
    out["files_added"] = r.files_added;
    out["bytes_removed"] = r.bytes_removed;
    out["bytes_added"] = r.bytes_added;
    out["rows"] = r.rows;
    out["clustering_columns"] = r.clustering_columns;
    out["cluster_parts"] = r.cluster_parts;
    out["row_ids_preserved"] = r.row_ids_preserved;
    std::printf("%s\n", out.dump().c_str());
  } else if (r.bins == 0) {
    std::printf(
        "%s: nothing to optimize%s\n", args.table.c_str(),
        r.clustering_columns.empty() ? "" : " (every file is clustered; --full reclusters)");
  } else if (args.dry_run) {
    std::printf("%s: would pack %lld files (%lld bytes) in %lld bins\n", args.table.c_str(),
                static_cast<long long>(r.files_removed), static_cast<long long>(r.bytes_removed),
                static_cast<long long>(r.bins));
  } else {
    std::printf(
        "%s: version %lld packed %lld files (%lld bytes) into %lld (%lld bytes), %lld rows\n",
        args.table.c_str(), static_cast<long long>(*r.version),
        static_cast<long long>(r.files_removed), static_cast<long long>(r.bytes_removed),
        static_cast<long long>(r.files_added), static_cast<long long>(r.bytes_added),
        static_cast<long long>(r.rows));
  }
  if (!args.json && r.bins > 0 && !r.clustering_columns.empty()) {
    std::string columns;
    for (const std::string& column : r.clustering_columns) {
      columns += (columns.empty() ? "" : ", ") + column;
    }
    std::printf("%s: clustered by %s%s\n", args.table.c_str(), columns.c_str(),
                r.row_ids_preserved ? "; row ids kept" : "");
  } else if (!args.json && r.bins > 0 && r.row_ids_preserved) {
    std::printf("%s: row ids kept\n", args.table.c_str());
  }
  return 0;
}

int RunVacuum(const VacuumArgs& args) {
  auto retain = config::ParseDuration(args.retain);
  if (!retain.ok() || retain->count() < 0) {
    return Fail("vacuum", kUsage, "--retain: bad duration '" + args.retain + "'");
  }
  auto options = StorageOptionsFromFlags(args.storage_options);
  auto table = options.ok() ? OpenTableAt(args.table, *options)
                            : Result<std::unique_ptr<delta::Table>>(options.status());
  if (!table.ok()) {
    return Fail("vacuum", kUsage, args.table + ": " + table.status().ToString());
  }
  auto result = delta::Vacuum(**table, {.retain_ms = retain->count(),
                                        .dry_run = args.dry_run,
                                        .force = args.force,
                                        .now_ms = std::nullopt});
  if (!result.ok()) {
    return Fail("vacuum", CodeFor(result.status()), args.table + ": " + result.status().ToString());
  }
  const delta::VacuumResult& r = *result;
  if (args.json) {
    nlohmann::ordered_json out;
    out["version"] = r.version;
    out["dry_run"] = args.dry_run;
    out["files_deleted"] = r.deleted.size();
    out["bytes"] = r.bytes;
    out["files_kept"] = r.files_kept;
    out["deleted"] = r.deleted;
    std::printf("%s\n", out.dump().c_str());
    return 0;
  }
  for (const std::string& path : r.deleted) {
    std::printf("%s %s\n", args.dry_run ? "would delete" : "deleted", path.c_str());
  }
  std::printf("%s: %s %zu files (%lld bytes), kept %lld (version %lld)\n", args.table.c_str(),
              args.dry_run ? "would delete" : "deleted", r.deleted.size(),
              static_cast<long long>(r.bytes), static_cast<long long>(r.files_kept),
              static_cast<long long>(r.version));
  return 0;
}

}  // namespace

void RegisterHygieneCommands(CLI::App& app, int* exit_code) {
  auto optimize_args = std::make_shared<OptimizeArgs>();
  CLI::App* optimize = app.add_subcommand(
      "optimize",
      "Bin-pack a table's small files, or cluster a clustered table (safe while ingestion runs)");
  optimize->add_option("TABLE", optimize_args->table, "Table location (directory or URI)")
      ->required();
  AddStorageOptionFlag(optimize, &optimize_args->storage_options);
  optimize->add_option("--where", optimize_args->where,
                       "Partition predicate: col = 'v' [AND col2 = 1 AND col3 IS NULL]");
  optimize->add_option("--target-size", optimize_args->target_size,
                       "Size of the packed files (default 256MiB)");
  optimize->add_option("--cluster-memory", optimize_args->cluster_memory,
                       "Clustered tables: decoded rows sorted at once (default 256MiB)");
  optimize->add_flag("--dry-run", optimize_args->dry_run, "Plan only; change nothing");
  optimize->add_flag("--full", optimize_args->full,
                     "Clustered tables: also recluster the files clustered before");
  optimize->add_flag("--json", optimize_args->json, "Print one JSON object");
  optimize->callback([optimize_args, exit_code] { *exit_code = RunOptimize(*optimize_args); });

  auto vacuum_args = std::make_shared<VacuumArgs>();
  CLI::App* vacuum = app.add_subcommand(
      "vacuum", "Delete files no snapshot within the retention references (never live files)");
  vacuum->add_option("TABLE", vacuum_args->table, "Table location (directory or URI)")->required();
  AddStorageOptionFlag(vacuum, &vacuum_args->storage_options);
  vacuum->add_option("--retain", vacuum_args->retain, "Retention (default 168h, the minimum)");
  vacuum->add_flag("--dry-run", vacuum_args->dry_run, "List what would be deleted");
  vacuum->add_flag("--force", vacuum_args->force, "Allow a retention below 168h");
  vacuum->add_flag("--json", vacuum_args->json, "Print one JSON object");
  vacuum->callback([vacuum_args, exit_code] { *exit_code = RunVacuum(*vacuum_args); });
}

}  // namespace ferry::app

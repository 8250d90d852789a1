#include "ferry/app/maintenance_scheduler.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>

#include "ferry/app/routed_pipeline.h"
#include "ferry/app/table_location.h"
#include "ferry/base/clock.h"
#include "ferry/base/log.h"
#include "ferry/delta/optimize.h"
#include "ferry/delta/table.h"
#include "ferry/delta/vacuum.h"

namespace ferry::app {
namespace {

using Clock = std::chrono::steady_clock;
// "Never": far enough, and safe for wait_until's clock conversions (time_point::max is not).
constexpr auto kNever = std::chrono::hours(24 * 365 * 10);

}  // namespace

MaintenanceScheduler::~MaintenanceScheduler() {
  Stop();
}

void MaintenanceScheduler::Start(const std::vector<config::PipelineConfig>& pipelines) {
  for (const config::PipelineConfig& p : pipelines) {
    if (p.maintenance.optimize_every.count() > 0 || p.maintenance.vacuum_every.count() > 0) {
      threads_.emplace_back([this, p] { Loop(p); });
    }
  }
}

void MaintenanceScheduler::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) {
    t.join();
  }
  threads_.clear();
}

void MaintenanceScheduler::RunRound(const config::PipelineConfig& p, bool optimize) {
  if (!p.routing) {
    RunOnce(p, p.table, optimize);
    return;
  }
  Result<std::vector<std::string>> tables = RoutedTablesOf(p);
  if (!tables.ok()) {
    FERRY_LOG_WARN(
        "pipeline {}: scheduled {}: listing the routed tables failed (tried again "
        "next time): {}",
        p.id, optimize ? "optimize" : "vacuum", tables.status().ToString());
    return;
  }
  for (const std::string& table : *tables) {
    {
      std::lock_guard lock(mu_);
      if (stop_) {
        return;
      }
    }
    RunOnce(p, table, optimize);
  }
}

void MaintenanceScheduler::RunOnce(const config::PipelineConfig& p, const std::string& location,
                                   bool optimize) {
  const char* operation = optimize ? "optimize" : "vacuum";
  // A routed pipeline's tables are told apart in the log and the journal.
  const std::string where = p.routing ? fmt::format(" of table {}", location) : std::string();
  Clock::time_point start = Clock::now();
  metrics::MaintenanceRecord record{.time_ms = WallMillis(), .operation = operation};
  Status st = [&]() -> Status {
    FERRY_ASSIGN_OR_RETURN(std::unique_ptr<delta::Table> table, OpenTableAt(location, p.storage));
    if (optimize) {
      FERRY_ASSIGN_OR_RETURN(delta::OptimizeResult r, delta::Optimize(*table, {}));
      record.detail = fmt::format("{}{} files into {} ({} rows)", p.routing ? location + ": " : "",
                                  r.files_removed, r.files_added, r.rows);
      record.version = r.version;
      FERRY_LOG_INFO("pipeline {}: scheduled optimize: {}{}", p.id, record.detail,
                     r.version ? " at version " + std::to_string(*r.version) : "");
    } else {
      FERRY_ASSIGN_OR_RETURN(
          delta::VacuumResult r,
          delta::Vacuum(*table, {.retain_ms = p.maintenance.vacuum_retain.count()}));
      record.detail = fmt::format("{}against version {}: {} files deleted",
                                  p.routing ? location + ": " : "", r.version, r.deleted.size());
      FERRY_LOG_INFO("pipeline {}: scheduled vacuum {}", p.id, record.detail);
    }
    return Status::OK();
  }();
  if (!st.ok()) {
    FERRY_LOG_WARN("pipeline {}: scheduled {}{} failed (tried again next time): {}", p.id,
                   operation, where, st.ToString());
    record.ok = false;
    record.detail = st.ToString();
  }
  record.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  // A routed pipeline's table has its own record (as its inner pipeline's commits do).
  registry_->journal()->RecordMaintenance({p.id, p.routing ? location : std::string()},
                                          std::move(record));
  registry_
      ->GetCounter(
          "ferry_maintenance_runs_total", "Scheduled optimize and vacuum rounds",
          {{"pipeline", p.id}, {"operation", operation}, {"outcome", st.ok() ? "ok" : "failed"}})
      ->Increment();
}

void MaintenanceScheduler::Loop(config::PipelineConfig p) {
  const auto optimize_every = p.maintenance.optimize_every;
  const auto vacuum_every = p.maintenance.vacuum_every;
  Clock::time_point next_optimize =
      optimize_every.count() > 0 ? Clock::now() + optimize_every : Clock::now() + kNever;
  Clock::time_point next_vacuum =
      vacuum_every.count() > 0 ? Clock::now() + vacuum_every : Clock::now() + kNever;
  std::unique_lock lock(mu_);
  while (!stop_) {
    Clock::time_point next = std::min(next_optimize, next_vacuum);
    if (cv_.wait_until(lock, next, [this] { return stop_; })) {
      break;
    }
    lock.unlock();
    if (Clock::now() >= next_optimize) {
      RunRound(p, true);
      next_optimize = Clock::now() + optimize_every;
    }
    if (Clock::now() >= next_vacuum) {
      RunRound(p, false);
      next_vacuum = Clock::now() + vacuum_every;
    }
    lock.lock();
  }
}

}  // namespace ferry::app

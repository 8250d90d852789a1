// TableProbe: what the status page shows of a table that the pipeline's own figures (journal.h's
// TableRecord) do not hold: when the table was last optimized and when its newest checkpoint's
// commit was made.
//
// It reads commit files one version at a time (Table::ReadCommit; never a listing of the log):
// at the first call the last kFirstDepth commits, newest first, until an OPTIMIZE is found; at
// each later call only the commits after the newest one it has read. OPTIMIZE commits by ferry's
// scheduler, `ferry optimize` or any other engine count alike. A checkpoint's time is the
// timestamp of the commit it checkpoints (read once per new checkpoint version).
//
// Thread-safety: not thread-safe; StatusHistory calls it from its own thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "ferry/base/result.h"
#include "ferry/delta/table.h"

namespace ferry::app {

class TableProbe {
 public:
  static constexpr int64_t kFirstDepth = 1000;

  struct Times {
    std::optional<int64_t> optimize_version;
    std::optional<int64_t> optimize_ms;
    std::optional<int64_t> checkpoint_version;
    std::optional<int64_t> checkpoint_ms;
    std::string error;  // the last read failure ("" when the last probe succeeded)
  };
  using Opener = std::function<Result<std::unique_ptr<delta::Table>>(const std::string& table)>;

  explicit TableProbe(Opener opener) : opener_(std::move(opener)) {}

  // The times for `table` once the commits up to `latest_version` are read; the checkpoint's
  // time for `checkpoint_version` (both as the pipeline last saw them; nullopt: unknown).
  Times Update(const std::string& table, std::optional<int64_t> latest_version,
               std::optional<int64_t> checkpoint_version);

 private:
  struct Known {
    std::unique_ptr<delta::Table> table;
    int64_t read_up_to = -1;  // commits <= this were looked at
    Times times;
  };
  // The commit's operation and timestamp; NotFound once log cleanup removed it.
  static Status ReadOne(const delta::Table& table, int64_t version, std::string* operation,
                        int64_t* timestamp_ms);

  Opener opener_;
  std::map<std::string, Known> tables_;
};

}  // namespace ferry::app

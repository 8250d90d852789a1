// The JSON of `GET /api/status` (its schema: docs/status_api.schema.json, which the browser test
// validates the live endpoint against): every pipeline's state, rates and series, partitions,
// last commits, bad records, fencing events, maintenance runs and table figures.
//
//   {"version": 1, "ferry_version": "...", "now_ms": ..., "started_ms": ...,
//    "history": {"step_ms": 1000, "capacity": 900, "first_tick": F, "next_tick": N,
//                "times_ms": [...]},
//    "pipelines": [{"id", "source", "table", "state", ..., "series": {...},
//                   "partitions": [...], "commits": [...], ...}]}
//
// Every series array holds the samples of ticks [first_tick, next_tick), oldest first, null where
// nothing was sampled. With `since` (the next_tick of an earlier answer) first_tick is at least
// `since`: a poller appends the new points instead of reading 15 minutes again. With `points`
// only the last that many (`ferry status --watch` asks for the last minute).
//
// Thread-safety: stateless; reads the history under its lock and the journal's copy.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ferry/app/status_page/status_history.h"

namespace ferry::app {

// Which samples to include: from tick `since` on, and at most the last `points` of them.
struct StatusQuery {
  std::optional<int64_t> since;
  std::optional<int64_t> points;
};

// State names beyond the journal's: "catching_up" (running with a partition's lag above 0).
std::string RenderStatusJson(const StatusHistory& history, const StatusQuery& query,
                             int64_t now_ms);

}  // namespace ferry::app

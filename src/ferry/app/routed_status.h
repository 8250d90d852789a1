// RoutedStatus: where a routed pipeline (docs/decisions/routing.md) stands, per table and source
// partition, for `ferry status` and `ferry verify --config/--routing`. Pure functions over what
// the caller read (the tables' txns, the positions table's, the broker's heads), so that the
// model is tested without a broker or a store.
//
// The tables of a routed pipeline: its static tables (every [[pipeline.route]]'s table, the
// template's table_name_rules.fallback) and every table its positions table records (txn
// "<id>/table/<table>", router.h step 3).
//
// One row per table and partition the table holds a position for (txn "<id>/<partition>");
// a table that holds none (a static table nothing was routed to yet, a table not created yet)
// has one row per partition, without a position. Each row has:
//   position  the table's own txn "<id>/<partition>": the last message of the partition it holds;
//   resume    L: the largest txn "<id>/<partition>/resume" over the pipeline's tables and its
//             positions table, where a restart resumes (every message at or below it is durable
//             in its table); the same for every table;
//   head      the broker's last position of the partition;
//   lag       head - max(position, resume): every message of the partition routed to this table
//             and not known to be in it lies above both (none known: every message the broker
//             holds).
//
// Thread-safety: stateless functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ferry/config/config.h"
#include "ferry/source/source.h"

namespace ferry::app {

// The tables routed pipeline `c` knows before any message: its routes' tables and its fallback.
std::vector<std::string> StaticRoutedTables(const config::PipelineConfig& c);

// `statics` and `recorded` (RoutingLedger::RecordedTables) together, sorted, without repeats.
std::vector<std::string> RoutedTableList(const std::vector<std::string>& statics,
                                         const std::vector<std::string>& recorded);

struct RoutedStatusInput {
  std::string id;  // the pipeline's
  // Every table of the pipeline with the txns (appId -> version) of its latest snapshot;
  // nullopt: no table there yet.
  std::map<std::string, std::optional<std::map<std::string, int64_t>>> tables;
  std::map<std::string, int64_t> positions_txns;  // the positions table's (empty: none yet)
  std::vector<source::PartitionHead> heads;       // empty: the broker was not asked
};

struct RoutedStatusRow {
  std::string table;
  std::string partition;  // the source's key ("kafka/<topic>/<n>", "jetstream/<stream>/<filter>")
  std::string app_id;     // "<id>/<partition>": the txn of `position`
  std::optional<int64_t> position;
  std::optional<int64_t> resume;
  std::optional<int64_t> head;
  std::optional<int64_t> lag;  // nullopt: no head
};

// Rows by table, then partition.
std::vector<RoutedStatusRow> RoutedStatusRows(const RoutedStatusInput& in);

}  // namespace ferry::app

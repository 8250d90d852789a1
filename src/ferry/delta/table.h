// Table: a Delta table at a key prefix of an ObjectStore; the entry point of the delta layer.
//
//   auto table = delta::Table::Open(store, "events");
//   FERRY_ASSIGN_OR_RETURN(delta::Snapshot snap, table->LoadSnapshot());   // latest
//   std::optional<int64_t> p = snap.position("pipe/kafka/orders/3");         // resume at p + 1
//   ... write files with TableWriter (table_writer.h), commit with Transaction (transaction.h)
//   FERRY_ASSIGN_OR_RETURN(snap, table->Update(std::move(snap)));           // new commits only
//
// Loading a snapshot, numbered:
//   1. list the log (log_segment.h): newest complete checkpoint at or below the target, then
//      the contiguous commits after it;
//   2. read the checkpoint (checkpoint_reader.h) and apply its actions;
//   3. read and apply each commit in version order (removes before adds within a commit);
//   4. check protocol and metaData exist, that ferry can read the protocol (table_features.h),
//      and parse the schema.
// Update() does steps 3-4 for the commits after the snapshot's version only.
//
// Errors: NotFound (no table, or no such version), DataLoss (broken log: a gap, a torn line,
// a bad schemaString, a checkpoint part that is missing; the message names version and file),
// NotSupported (a protocol or feature ferry cannot read, named).
//
// Thread-safety: a Table is immutable after Open; all methods are thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"
#include "ferry/delta/actions.h"
#include "ferry/delta/snapshot.h"
#include "ferry/storage/object_store.h"

namespace ferry::delta {

// What a new table is made of (Table::Create).
struct TableSpec {
  columnar::SchemaPtr schema;
  std::vector<std::string> partition_columns;
  StringMap configuration;  // delta.* properties and any others
  std::optional<std::string> name;
  std::optional<std::string> description;
};

class Table {
 public:
  // `path`: the table root as a key prefix of `store` ("" = the store's root). InvalidArgument
  // for a malformed path.
  static Result<std::unique_ptr<Table>> Open(std::shared_ptr<storage::ObjectStore> store,
                                             std::string path);

  storage::ObjectStore& store() const { return *store_; }
  const std::shared_ptr<storage::ObjectStore>& shared_store() const { return store_; }
  const std::string& path() const { return path_; }
  // The key of the _delta_log directory, and of a path relative to the table root.
  const std::string& log_dir() const { return log_dir_; }
  std::string Key(std::string_view relative_path) const;
  // For messages: where the table lives.
  std::string Describe() const { return store_->Describe(path_.empty() ? "." : path_); }

  // The latest snapshot, or the one at `version` (time travel).
  Result<Snapshot> LoadSnapshot(std::optional<int64_t> version = std::nullopt) const;
  // `snapshot` moved forward to the latest version by applying only the newer commits (the
  // same snapshot if there are none). REQUIRES: `snapshot` came from this table.
  Result<Snapshot> Update(Snapshot snapshot) const;

  // Creates version 0: protocol 1/2 (or what the schema and configuration need: timestamp_ntz
  // columns, delta.enableInCommitTimestamps, delta.enableRowTracking add their features at
  // writer version 7; row tracking also names its materialized columns;
  // delta.columnMapping.mode = name or id gives every field an id and a physical name,
  // column_mapping.h), metaData with a random id and createdTime, the schema as Spark writes it.
  // AlreadyExists if a table is there; InvalidArgument for a schema Delta cannot hold or a bad
  // partition column.
  Result<Snapshot> Create(const TableSpec& spec) const;

  // The actions of one commit file. NotFound if the version does not exist.
  Result<std::vector<Action>> ReadCommit(int64_t version) const;

 private:
  Table(std::shared_ptr<storage::ObjectStore> store, std::string path);

  std::shared_ptr<storage::ObjectStore> store_;
  std::string path_;
  std::string log_dir_;
};

}  // namespace ferry::delta

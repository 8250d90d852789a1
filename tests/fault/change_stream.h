// A generator of keyed change streams for the upsert torture (upsert_torture_test.cc) and the
// upsert benchmark (tools/bench_upsert.sh, through `ferry-change-stream`): inserts of new keys,
// updates, deletes (tombstones: an empty value), deletes of keys that never existed or are
// already deleted, and re-inserts of deleted keys, over `keys` keys of which a few are hot (they
// receive a large share of the changes). Deterministic by seed.
//
// Each change is one Kafka message in the shape an upsert pipeline with `key = ["id"]` reads
// (docs/cdc.md): key `{"id": N}`, value `{"id": N, "v": "...", "n": I}` (I the change's index)
// or empty for a delete. Replay() is the test's own account of the final state, written apart
// from the generator's bookkeeping: the last value of every key whose last change was not a
// delete.
//
// Thread-safety: values and stateless functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ferry::fault {

struct ChangeStreamOptions {
  int64_t keys = 100000;     // ids 1..keys
  int64_t changes = 400000;  // messages
  // The hot keys are ids 1..keys*hot_keys; they receive hot_share of the changes.
  double hot_keys = 0.01;
  double hot_share = 0.5;
  uint64_t seed = 1;
};

struct Change {
  int64_t id = 0;
  std::optional<std::string> value;  // nullopt: a delete (tombstone)
};

struct ChangeCounts {
  int64_t inserts = 0;       // of a key never seen
  int64_t updates = 0;       // of a live key
  int64_t reinserts = 0;     // of a deleted key
  int64_t deletes = 0;       // of a live key
  int64_t void_deletes = 0;  // of a key never seen or already deleted
};

std::vector<Change> GenerateChangeStream(const ChangeStreamOptions& options,
                                         ChangeCounts* counts = nullptr);

// One line of `ferry produce kafka --lines`: `{"id": N}<TAB>value` (nothing after the tab for
// a delete).
std::string ChangeLine(const Change& change);

// The final state: id -> value.
std::map<int64_t, std::string> Replay(const std::vector<Change>& changes);

}  // namespace ferry::fault

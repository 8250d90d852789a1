#include "change_stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>

namespace ferry::fault {

std::vector<Change> GenerateChangeStream(const ChangeStreamOptions& options, ChangeCounts* counts) {
  enum class State : uint8_t { kNever, kLive, kDeleted };
  std::vector<State> state(static_cast<size_t>(options.keys) + 1, State::kNever);
  const int64_t hot = std::max<int64_t>(
      1, static_cast<int64_t>(static_cast<double>(options.keys) * options.hot_keys));
  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<int64_t> any_key(1, options.keys);
  std::uniform_int_distribution<int64_t> hot_key(1, hot);
  ChangeCounts local;
  ChangeCounts& c = counts != nullptr ? *counts : local;
  std::vector<Change> out;
  out.reserve(static_cast<size_t>(options.changes));
  for (int64_t i = 0; i < options.changes; ++i) {
    const int64_t id = unit(rng) < options.hot_share ? hot_key(rng) : any_key(rng);
    State& s = state[static_cast<size_t>(id)];
    const double p = unit(rng);
    bool upsert = false;
    switch (s) {
      case State::kNever:  // mostly inserts; some deletes of keys that never existed
        upsert = p < 0.9;
        (upsert ? c.inserts : c.void_deletes)++;
        break;
      case State::kLive:  // updates, and deletes
        upsert = p < 0.75;
        (upsert ? c.updates : c.deletes)++;
        break;
      case State::kDeleted:  // re-inserts, and deletes again
        upsert = p < 0.8;
        (upsert ? c.reinserts : c.void_deletes)++;
        break;
    }
    Change change{.id = id, .value = std::nullopt};
    if (upsert) {
      // A value of varying length, as rows of a real table have.
      change.value = fmt::format(R"({{"id": {}, "v": "c{}-{}", "n": {}}})", id, i,
                                 std::string(static_cast<size_t>(i % 23), 'x'), i);
      s = State::kLive;
    } else if (s == State::kLive) {
      s = State::kDeleted;
    }
    out.push_back(std::move(change));
  }
  return out;
}

std::string ChangeLine(const Change& change) {
  return fmt::format("{{\"id\": {}}}\t{}", change.id, change.value.value_or(""));
}

std::map<int64_t, std::string> Replay(const std::vector<Change>& changes) {
  std::map<int64_t, std::string> state;
  for (const Change& change : changes) {
    if (change.value) {
      state[change.id] = *change.value;
    } else {
      state.erase(change.id);
    }
  }
  return state;
}

}  // namespace ferry::fault

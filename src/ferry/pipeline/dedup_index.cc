#include "ferry/pipeline/dedup_index.h"

#include <algorithm>
#include <unordered_set>

#include "ferry/base/log.h"
#include "ferry/delta/file_scan.h"

namespace ferry::pipeline {

Result<std::unique_ptr<DedupIndex>> DedupIndex::Create(const columnar::SchemaPtr& table_schema,
                                                       DedupSpec spec) {
  if (spec.key.empty()) {
    return InvalidArgument("{}: dedup needs a key (a column or an expression)", spec.origin);
  }
  if (spec.max_keys <= 0 || spec.window.count() <= 0) {
    return InvalidArgument("{}: dedup window and max_keys must be > 0", spec.origin);
  }
  auto index = std::unique_ptr<DedupIndex>(new DedupIndex());
  FERRY_ASSIGN_OR_RETURN(index->key_, transform::Expression::Compile(
                                          "CAST((" + spec.key + ") AS STRING)", *table_schema,
                                          {.time_zone = spec.time_zone, .origin = spec.origin}));
  index->spec_ = std::move(spec);
  return index;
}

void DedupIndex::Add(std::string key, int64_t time_ms) {
  auto [it, inserted] = keys_.try_emplace(key, time_ms);
  if (!inserted) {
    it->second = std::max(it->second, time_ms);
    return;
  }
  order_.emplace_back(time_ms, std::move(key));
  while (static_cast<int64_t>(keys_.size()) > spec_.max_keys) {
    if (!warned_full_) {
      FERRY_LOG_WARN("{}: more than {} keys within the window; forgetting the oldest first",
                     spec_.origin, spec_.max_keys);
      warned_full_ = true;
    }
    keys_.erase(order_.front().second);
    order_.pop_front();
  }
}

void DedupIndex::Expire(int64_t now_ms) {
  int64_t oldest = now_ms - spec_.window.count();
  while (!order_.empty() && order_.front().first < oldest) {
    auto it = keys_.find(order_.front().second);
    if (it != keys_.end() && it->second < oldest) {
      keys_.erase(it);
    }
    order_.pop_front();
  }
}

Status DedupIndex::AddFile(const delta::Table& table, const delta::Snapshot& snapshot,
                           const delta::AddFile& add) {
  FERRY_ASSIGN_OR_RETURN(columnar::RecordBatch rows, delta::ReadLiveFile(table, snapshot, add));
  std::unique_ptr<columnar::Column> keys = key_->Evaluate(rows);
  const auto* text = keys->As<columnar::BinaryColumn>();
  for (int64_t i = 0; i < keys->length(); ++i) {
    if (keys->IsValid(i)) {
      Add(std::string(text->Value(i)), add.modification_time);
    }
  }
  return Status::OK();
}

Status DedupIndex::Rebuild(const delta::Table& table, const delta::Snapshot& snapshot,
                           int64_t now_ms) {
  keys_.clear();
  order_.clear();
  std::vector<const delta::AddFile*> recent;
  for (const auto& [key, add] : snapshot.files()) {
    if (add.modification_time >= now_ms - spec_.window.count()) {
      recent.push_back(&add);
    }
  }
  // Oldest first, so max_keys keeps the newest.
  std::sort(recent.begin(), recent.end(), [](const delta::AddFile* a, const delta::AddFile* b) {
    return a->modification_time < b->modification_time;
  });
  for (const delta::AddFile* add : recent) {
    FERRY_RETURN_IF_ERROR(AddFile(table, snapshot, *add));
  }
  version_ = snapshot.version();
  FERRY_LOG_INFO("{}: dedup index rebuilt from {} files at version {}: {} keys", spec_.origin,
                 recent.size(), version_, keys_.size());
  return Status::OK();
}

Status DedupIndex::CatchUp(const delta::Table& table, const delta::Snapshot& snapshot,
                           std::optional<int64_t> up_to) {
  int64_t last = up_to.value_or(snapshot.version());
  for (int64_t v = version_ + 1; v <= last; ++v) {
    FERRY_ASSIGN_OR_RETURN(std::vector<delta::Action> actions, table.ReadCommit(v));
    for (const delta::Action& action : actions) {
      const auto* add = std::get_if<delta::AddFile>(&action);
      // Compaction rewrites rows that are indexed already (dataChange = false).
      if (add != nullptr && add->data_change) {
        FERRY_RETURN_IF_ERROR(AddFile(table, snapshot, *add));
      }
    }
  }
  version_ = std::max(version_, last);
  return Status::OK();
}

std::vector<int64_t> DedupIndex::Filter(const columnar::RecordBatch& batch,
                                        std::vector<std::string>* kept_keys) const {
  std::unique_ptr<columnar::Column> keys = key_->Evaluate(batch);
  const auto* text = keys->As<columnar::BinaryColumn>();
  std::unordered_set<std::string_view> seen;
  std::vector<int64_t> keep;
  keep.reserve(static_cast<size_t>(batch.num_rows()));
  kept_keys->clear();
  for (int64_t i = 0; i < batch.num_rows(); ++i) {
    if (!keys->IsValid(i)) {
      keep.push_back(i);
      continue;
    }
    std::string_view key = text->Value(i);
    if (keys_.count(std::string(key)) != 0 || !seen.insert(key).second) {
      continue;
    }
    keep.push_back(i);
    kept_keys->emplace_back(key);
  }
  return keep;
}

void DedupIndex::Remember(const std::vector<std::string>& keys, int64_t version, int64_t now_ms) {
  for (const std::string& key : keys) {
    Add(key, now_ms);
  }
  Expire(now_ms);
  version_ = std::max(version_, version);
}

}  // namespace ferry::pipeline

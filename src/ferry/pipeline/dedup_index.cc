#include "ferry/pipeline/dedup_index.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <unordered_set>

#include "ferry/base/endian.h"
#include "ferry/base/log.h"
#include "ferry/base/varint.h"
#include "ferry/delta/file_scan.h"
#include "ferry/delta/log_files.h"
#include "ferry/pipeline/index_dir.h"

namespace ferry::pipeline {
namespace {

// The index files (DedupIndex's comment says what they hold):
//   magic "FERRYDDX", kind ('B' base, 'S' segment), then as varint-length strings and varints:
//   table id (metaData.id), key expression, table version, entry count, and per entry the key and
//   its commit time (ms since the epoch); last, the XXH64 of everything before, little-endian.
constexpr std::string_view kMagic = "FERRYDDX";
constexpr std::string_view kBaseName = "base.idx";
constexpr std::string_view kSegmentSuffix = ".seg";

struct IndexFile {
  char kind = 0;
  std::string table_id;
  std::string key;
  int64_t version = -1;
  std::vector<std::pair<std::string, int64_t>> entries;
};

void AppendString(std::string* out, std::string_view s) {
  AppendVarint(out, s.size());
  out->append(s);
}

std::string Encode(const IndexFile& file) {
  std::string out(kMagic);
  out.push_back(file.kind);
  AppendString(&out, file.table_id);
  AppendString(&out, file.key);
  AppendVarint(&out, static_cast<uint64_t>(file.version));
  AppendVarint(&out, file.entries.size());
  for (const auto& [key, time_ms] : file.entries) {
    AppendString(&out, key);
    AppendVarint(&out, ZigZagEncode(time_ms));
  }
  AppendLE<uint64_t>(&out, XXH64(out.data(), out.size(), 0));
  return out;
}

// Bounds-checked; an error message says what is wrong (the caller names the file).
Result<IndexFile> Decode(std::string_view bytes) {
  if (bytes.size() < kMagic.size() + 1 + 8 || bytes.substr(0, kMagic.size()) != kMagic) {
    return DataLoss("not a ferry dedup index file");
  }
  size_t body = bytes.size() - 8;
  if (XXH64(bytes.data(), body, 0) != LoadLE<uint64_t>(bytes.data() + body)) {
    return DataLoss("checksum mismatch (a torn or damaged file)");
  }
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data()) + kMagic.size();
  const auto* end = reinterpret_cast<const uint8_t*>(bytes.data()) + body;
  IndexFile file;
  file.kind = static_cast<char>(*p++);
  auto read_varint = [&](uint64_t* v) { return DecodeVarint(&p, end, v); };
  auto read_string = [&](std::string* s) {
    uint64_t n = 0;
    if (!read_varint(&n) || n > static_cast<uint64_t>(end - p)) {
      return false;
    }
    s->assign(reinterpret_cast<const char*>(p), n);
    p += n;
    return true;
  };
  uint64_t version = 0;
  uint64_t count = 0;
  if (!read_string(&file.table_id) || !read_string(&file.key) || !read_varint(&version) ||
      !read_varint(&count) || version > static_cast<uint64_t>(INT64_MAX) ||
      count > static_cast<uint64_t>(end - p)) {  // every entry takes at least one byte
    return DataLoss("malformed header");
  }
  file.version = static_cast<int64_t>(version);
  file.entries.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    std::string key;
    uint64_t time = 0;
    if (!read_string(&key) || !read_varint(&time)) {
      return DataLoss("malformed entry {} of {}", i, count);
    }
    file.entries.emplace_back(std::move(key), ZigZagDecode(time));
  }
  if (p != end) {
    return DataLoss("{} bytes after the last entry", end - p);
  }
  return file;
}

std::string SegmentName(int64_t version) {
  return delta::PaddedVersion(version) + std::string(kSegmentSuffix);
}

// The version a segment's file name holds; nullopt for any other name.
std::optional<int64_t> SegmentVersion(std::string_view name) {
  if (name.size() != 20 + kSegmentSuffix.size() || !name.ends_with(kSegmentSuffix)) {
    return std::nullopt;
  }
  int64_t v = 0;
  for (char c : name.substr(0, 20)) {
    if (c < '0' || c > '9') {
      return std::nullopt;
    }
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

Result<std::unique_ptr<DedupIndex>> DedupIndex::Create(const columnar::SchemaPtr& table_schema,
                                                       DedupSpec spec) {
  if (spec.key.empty()) {
    return InvalidArgument("{}: dedup needs a key (a column or an expression)", spec.origin);
  }
  if (spec.max_keys <= 0 || spec.window.count() <= 0) {
    return InvalidArgument("{}: dedup window and max_keys must be > 0", spec.origin);
  }
  auto index = std::unique_ptr<DedupIndex>(new DedupIndex());
  index->spec_ = std::move(spec);
  FERRY_RETURN_IF_ERROR(index->UseSchema(table_schema));
  return index;
}

Status DedupIndex::UseSchema(const columnar::SchemaPtr& schema) {
  if (key_ != nullptr && (schema == key_schema_ || schema->Equals(*key_schema_))) {
    return Status::OK();
  }
  FERRY_ASSIGN_OR_RETURN(
      key_, transform::Expression::Compile("CAST((" + spec_.key + ") AS STRING)", *schema,
                                           {.time_zone = spec_.time_zone, .origin = spec_.origin}));
  key_schema_ = schema;
  return Status::OK();
}

void DedupIndex::Add(std::string key, int64_t time_ms) {
  auto [it, inserted] = keys_.try_emplace(key, time_ms);
  if (!inserted) {
    if (time_ms <= it->second) {
      return;
    }
    it->second = time_ms;  // the older order_ entry becomes stale
  }
  order_.emplace_back(time_ms, std::move(key));
  while (static_cast<int64_t>(keys_.size()) > spec_.max_keys && !order_.empty()) {
    if (!warned_full_) {
      FERRY_LOG_WARN("{}: more than {} keys within the window; forgetting the oldest first",
                     spec_.origin, spec_.max_keys);
      warned_full_ = true;
    }
    auto oldest = keys_.find(order_.front().second);
    if (oldest != keys_.end() && oldest->second == order_.front().first) {
      keys_.erase(oldest);
    }
    order_.pop_front();
  }
}

void DedupIndex::Expire(int64_t now_ms) {
  int64_t oldest = now_ms - spec_.window.count();
  while (!order_.empty() && order_.front().first < oldest) {
    auto it = keys_.find(order_.front().second);
    if (it != keys_.end() && it->second == order_.front().first) {
      keys_.erase(it);
    }
    order_.pop_front();
  }
}

Status DedupIndex::AddFile(const delta::Table& table, const delta::Snapshot& snapshot,
                           const delta::AddFile& add) {
  return delta::ScanLiveFile(table, snapshot, add, {}, delta::kScanBatchRows,
                             [&](columnar::RecordBatch& rows) {
                               FERRY_RETURN_IF_ERROR(UseSchema(rows.schema_ptr()));
                               std::unique_ptr<columnar::Column> keys = key_->Evaluate(rows);
                               const auto* text = keys->As<columnar::BinaryColumn>();
                               for (int64_t i = 0; i < keys->length(); ++i) {
                                 if (keys->IsValid(i)) {
                                   Add(std::string(text->Value(i)), add.modification_time);
                                 }
                               }
                               return Status::OK();
                             });
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

Status DedupIndex::AddCommit(const delta::Table& table, const delta::Snapshot& snapshot,
                             int64_t version) {
  FERRY_ASSIGN_OR_RETURN(std::vector<delta::Action> actions, table.ReadCommit(version));
  for (const delta::Action& action : actions) {
    const auto* add = std::get_if<delta::AddFile>(&action);
    // Compaction rewrites rows that are indexed already (dataChange = false).
    if (add != nullptr && add->data_change) {
      FERRY_RETURN_IF_ERROR(AddFile(table, snapshot, *add));
      ++last_load_.files_read;
    }
  }
  return Status::OK();
}

Status DedupIndex::CatchUp(const delta::Table& table, const delta::Snapshot& snapshot,
                           std::optional<int64_t> up_to) {
  int64_t last = up_to.value_or(snapshot.version());
  for (int64_t v = version_ + 1; v <= last; ++v) {
    FERRY_RETURN_IF_ERROR(AddCommit(table, snapshot, v));
  }
  version_ = std::max(version_, last);
  return Status::OK();
}

std::string DedupIndex::IndexDir(const delta::Table& table) const {
  return pipeline::IndexDir(table, "dedup", spec_.index_name);
}

Result<std::string> DedupIndex::LoadPersisted(const delta::Table& table,
                                              const delta::Snapshot& snapshot) {
  storage::ObjectStore& store = table.store();
  std::string dir = IndexDir(table);
  std::string base_key = dir + std::string(kBaseName);
  Result<std::string> bytes = store.Read(base_key);
  if (bytes.status().code() == StatusCode::kNotFound) {
    return std::string("no index beside the table yet");
  }
  FERRY_RETURN_IF_ERROR(bytes.status());
  Result<IndexFile> base = Decode(*bytes);
  if (!base.ok()) {
    return fmt::format("{}: {}", store.Describe(base_key), base.status().message());
  }
  const std::string& table_id = snapshot.metadata().id;
  if (base->kind != 'B' || base->table_id != table_id) {
    return fmt::format("{} belongs to another table (id {}, this table's is {})",
                       store.Describe(base_key), base->table_id, table_id);
  }
  if (base->key != spec_.key) {
    return fmt::format("{} indexes another key ({})", store.Describe(base_key), base->key);
  }
  if (base->version > snapshot.version()) {
    return fmt::format("{} reflects version {}, newer than the table's {}",
                       store.Describe(base_key), base->version, snapshot.version());
  }
  keys_.clear();
  order_.clear();
  for (auto& [key, time_ms] : base->entries) {
    Add(std::move(key), time_ms);
  }
  last_load_.base_version = base->version;

  FERRY_ASSIGN_OR_RETURN(std::vector<storage::ObjectInfo> listed, store.List(dir, {}));
  std::map<int64_t, std::string> segments;
  for (const storage::ObjectInfo& info : listed) {
    std::optional<int64_t> v = SegmentVersion(std::string_view(info.key).substr(dir.size()));
    if (v && *v > base->version && *v <= snapshot.version()) {
      segments.emplace(*v, info.key);
    }
  }
  for (int64_t v = base->version + 1; v <= snapshot.version(); ++v) {
    auto it = segments.find(v);
    if (it != segments.end()) {
      Result<std::string> seg_bytes = store.Read(it->second);
      Result<IndexFile> seg = seg_bytes.ok() ? Decode(*seg_bytes) : seg_bytes.status();
      if (seg.ok() && seg->kind == 'S' && seg->table_id == table_id && seg->key == spec_.key &&
          seg->version == v) {
        for (auto& [key, time_ms] : seg->entries) {
          Add(std::move(key), time_ms);
        }
        ++last_load_.segments;
        continue;
      }
      // Deleted by a compaction of another process, or damaged: the log has the same keys.
      FERRY_LOG_DEBUG("{}: segment {} not used ({}); reading version {} from the log", spec_.origin,
                      store.Describe(it->second),
                      seg.ok() ? std::string("mismatch") : seg.status().message(), v);
    }
    Status added = AddCommit(table, snapshot, v);
    if (added.code() == StatusCode::kNotFound) {
      return fmt::format("version {} is covered by no segment and no longer in the log", v);
    }
    FERRY_RETURN_IF_ERROR(added);
    ++last_load_.commits_from_log;
  }
  version_ = snapshot.version();
  return std::string();
}

Status DedupIndex::Load(const delta::Table& table, const delta::Snapshot& snapshot,
                        int64_t now_ms) {
  last_load_ = {};
  std::string reason = "the index is not persisted";
  if (!spec_.index_name.empty()) {
    FERRY_ASSIGN_OR_RETURN(reason, LoadPersisted(table, snapshot));
  }
  if (!reason.empty()) {
    last_load_ = {.rebuilt = true, .rebuild_reason = reason};
    FERRY_LOG_INFO("{}: rebuilding the dedup index from the table: {}", spec_.origin, reason);
    FERRY_RETURN_IF_ERROR(Rebuild(table, snapshot, now_ms));
  } else {
    Expire(now_ms);
    FERRY_LOG_INFO(
        "{}: dedup index loaded at version {}: base of version {}, {} segments, {} commits read "
        "from the log, {} keys",
        spec_.origin, version_, last_load_.base_version, last_load_.segments,
        last_load_.commits_from_log, keys_.size());
  }
  segments_since_base_ = last_load_.segments;
  if (!spec_.index_name.empty() && (last_load_.rebuilt || last_load_.commits_from_log > 0)) {
    Status written = WriteBase(table, snapshot);
    if (!written.ok()) {
      FERRY_LOG_WARN(
          "{}: could not write the dedup index beside the table (the next start reads the table "
          "again): {}",
          spec_.origin, written.ToString());
    }
  }
  return Status::OK();
}

Status DedupIndex::WriteBase(const delta::Table& table, const delta::Snapshot& snapshot) {
  IndexFile base{
      .kind = 'B', .table_id = snapshot.metadata().id, .key = spec_.key, .version = version_};
  base.entries.reserve(keys_.size());
  for (const auto& [time_ms, key] : order_) {
    auto it = keys_.find(key);
    if (it != keys_.end() && it->second == time_ms) {
      base.entries.emplace_back(key, time_ms);
    }
  }
  storage::ObjectStore& store = table.store();
  std::string dir = IndexDir(table);
  FERRY_RETURN_IF_ERROR(store.Put(dir + std::string(kBaseName), Encode(base)));
  segments_since_base_ = 0;
  // The segments the base covers. Another process may still be reading one: it then reads that
  // version from the log.
  FERRY_ASSIGN_OR_RETURN(std::vector<storage::ObjectInfo> listed, store.List(dir, {}));
  for (const storage::ObjectInfo& info : listed) {
    std::optional<int64_t> v = SegmentVersion(std::string_view(info.key).substr(dir.size()));
    if (v && *v <= version_) {
      FERRY_RETURN_IF_ERROR(store.Delete(info.key));
    }
  }
  return Status::OK();
}

Status DedupIndex::Persist(const delta::Table& table, const delta::Snapshot& snapshot,
                           int64_t version, const std::vector<std::string>& keys, int64_t now_ms) {
  if (spec_.index_name.empty()) {
    return Status::OK();
  }
  IndexFile segment{
      .kind = 'S', .table_id = snapshot.metadata().id, .key = spec_.key, .version = version};
  segment.entries.reserve(keys.size());
  for (const std::string& key : keys) {
    segment.entries.emplace_back(key, now_ms);
  }
  FERRY_RETURN_IF_ERROR(table.store().Put(IndexDir(table) + SegmentName(version), Encode(segment)));
  if (++segments_since_base_ >= spec_.compact_every && version_ == version) {
    return WriteBase(table, snapshot);
  }
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

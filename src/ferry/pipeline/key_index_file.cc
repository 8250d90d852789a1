#include <xxhash.h>

#include <string>
#include <utility>
#include <vector>

#include "ferry/base/endian.h"
#include "ferry/base/log.h"
#include "ferry/base/varint.h"
#include "ferry/pipeline/index_dir.h"
#include "ferry/pipeline/key_index.h"

namespace ferry::pipeline {
namespace {

constexpr std::string_view kKeyIndexMagic = "FERRYKIX";
constexpr uint8_t kKeyIndexFormat = 1;
constexpr std::string_view kKeyIndexFileName = "keys.idx";

void AppendKeyIndexString(std::string* out, std::string_view s) {
  AppendVarint(out, s.size());
  out->append(s);
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& k : names) {
    out += (out.empty() ? "" : ",") + k;
  }
  return out;
}

// A bounds-checked reader of the file's varints and strings.
class KeyIndexReader {
 public:
  KeyIndexReader(const uint8_t* p, const uint8_t* end) : p_(p), end_(end) {}
  bool Varint(uint64_t* v) { return DecodeVarint(&p_, end_, v); }
  bool Int(int64_t* v) {
    uint64_t u = 0;
    if (!Varint(&u)) {
      return false;
    }
    *v = ZigZagDecode(u);
    return true;
  }
  bool String(std::string* s) {
    uint64_t n = 0;
    if (!Varint(&n) || n > static_cast<uint64_t>(end_ - p_)) {
      return false;
    }
    s->assign(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return true;
  }
  // A count of items that take at least one byte each.
  bool Count(uint64_t* n) { return Varint(n) && *n <= static_cast<uint64_t>(end_ - p_); }
  bool done() const { return p_ == end_; }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

}  // namespace

std::string KeyIndex::IndexFileKey(const delta::Table& table, const std::string& name) {
  return IndexDir(table, "upsert", name) + std::string(kKeyIndexFileName);
}

std::string KeyIndex::Encode(const std::string& table_id) const {
  std::string out(kKeyIndexMagic);
  out.push_back(static_cast<char>(kKeyIndexFormat));
  AppendKeyIndexString(&out, table_id);
  AppendKeyIndexString(&out, JoinNames(keys_.key()));
  AppendKeyIndexString(&out, keys_.sequence());
  AppendKeyIndexString(&out, JoinNames(partition_columns_));
  AppendVarint(&out, static_cast<uint64_t>(version_));
  std::vector<int32_t> ids;
  for (const auto& [path, id] : file_ids_) {
    ids.push_back(id);
  }
  AppendVarint(&out, ids.size());
  for (int32_t id : ids) {
    const File& file = files_[static_cast<size_t>(id)];
    AppendKeyIndexString(&out, file.path);
    AppendVarint(&out, file.keys.size());
    for (size_t row = 0; row < file.keys.size(); ++row) {
      const std::string& key = file.keys[row];
      AppendKeyIndexString(&out, key);
      const Entry* entry = key.empty() ? nullptr : Find(key);
      const bool here =
          entry != nullptr && entry->file == id && entry->row == static_cast<int64_t>(row);
      AppendVarint(&out, here ? 1 : 0);
      AppendVarint(&out, ZigZagEncode(here ? entry->sequence : kNoSequence));
    }
  }
  std::vector<std::pair<const std::string*, int64_t>> deleted;
  for (const auto& [key, entry] : entries_) {
    if (entry.file < 0) {
      deleted.emplace_back(&key, entry.sequence);
    }
  }
  AppendVarint(&out, deleted.size());
  for (const auto& [key, sequence] : deleted) {
    AppendKeyIndexString(&out, *key);
    AppendVarint(&out, ZigZagEncode(sequence));
  }
  AppendVarint(&out, loaded_.size());
  for (const std::string& partition : loaded_) {
    AppendKeyIndexString(&out, partition);
  }
  AppendVarint(&out, pending_paths_.size());
  for (const auto& [path, partition] : pending_paths_) {
    AppendKeyIndexString(&out, path);
    AppendKeyIndexString(&out, partition);
  }
  AppendLE<uint64_t>(&out, XXH64(out.data(), out.size(), 0));
  return out;
}

std::string KeyIndex::Decode(std::string_view bytes, const std::string& table_id) {
  if (bytes.size() < kKeyIndexMagic.size() + 1 + 8 ||
      bytes.substr(0, kKeyIndexMagic.size()) != kKeyIndexMagic) {
    return "not a ferry key index file";
  }
  const size_t body = bytes.size() - 8;
  if (XXH64(bytes.data(), body, 0) != LoadLE<uint64_t>(bytes.data() + body)) {
    return "checksum mismatch (a torn or damaged file)";
  }
  const auto* begin = reinterpret_cast<const uint8_t*>(bytes.data());
  if (begin[kKeyIndexMagic.size()] != kKeyIndexFormat) {
    return fmt::format("format version {} (this ferry reads {})", begin[kKeyIndexMagic.size()],
                       kKeyIndexFormat);
  }
  KeyIndexReader in(begin + kKeyIndexMagic.size() + 1, begin + body);
  std::string id;
  std::string key;
  std::string sequence;
  std::string partitions;
  uint64_t version = 0;
  uint64_t num_files = 0;
  if (!in.String(&id) || !in.String(&key) || !in.String(&sequence) || !in.String(&partitions) ||
      !in.Varint(&version) || !in.Count(&num_files) || version > static_cast<uint64_t>(INT64_MAX)) {
    return "malformed header";
  }
  if (id != table_id) {
    return fmt::format("it belongs to another table (id {}, this table's is {})", id, table_id);
  }
  if (key != JoinNames(keys_.key()) || sequence != keys_.sequence() ||
      partitions != JoinNames(partition_columns_)) {
    return fmt::format("it indexes another key ({}, sequence '{}', partitions pruned by '{}')", key,
                       sequence, partitions);
  }
  Clear();
  for (uint64_t f = 0; f < num_files; ++f) {
    File file;
    uint64_t rows = 0;
    if (!in.String(&file.path) || !in.Count(&rows)) {
      Clear();
      return fmt::format("malformed file {} of {}", f, num_files);
    }
    const auto id32 = static_cast<int32_t>(files_.size());
    file.keys.resize(rows);
    for (uint64_t row = 0; row < rows; ++row) {
      uint64_t flags = 0;
      int64_t seq = 0;
      if (!in.String(&file.keys[row]) || !in.Varint(&flags) || !in.Int(&seq)) {
        Clear();
        return fmt::format("malformed row {} of {}", row, file.path);
      }
      if ((flags & 1) != 0 && !file.keys[row].empty()) {
        Entry& entry = entries_[file.keys[row]];
        if (entry.file < 0) {
          ++live_;
        }
        entry = Entry{.file = id32, .row = static_cast<int64_t>(row), .sequence = seq};
      }
    }
    file_ids_[file.path] = id32;
    files_.push_back(std::move(file));
  }
  uint64_t num_deleted = 0;
  if (!in.Count(&num_deleted)) {
    Clear();
    return "malformed deleted keys";
  }
  for (uint64_t i = 0; i < num_deleted; ++i) {
    std::string deleted;
    int64_t seq = 0;
    if (!in.String(&deleted) || !in.Int(&seq)) {
      Clear();
      return "malformed deleted key";
    }
    Entry& entry = entries_[deleted];
    if (entry.file < 0) {
      entry = Entry{.file = -1, .row = 0, .sequence = seq};
    }
  }
  uint64_t num_loaded = 0;
  if (!in.Count(&num_loaded)) {
    Clear();
    return "malformed partitions";
  }
  for (uint64_t i = 0; i < num_loaded; ++i) {
    std::string partition;
    if (!in.String(&partition)) {
      Clear();
      return "malformed partition";
    }
    loaded_.insert(std::move(partition));
  }
  uint64_t num_pending = 0;
  if (!in.Count(&num_pending)) {
    Clear();
    return "malformed pending files";
  }
  for (uint64_t i = 0; i < num_pending; ++i) {
    std::string path;
    std::string partition;
    if (!in.String(&path) || !in.String(&partition)) {
      Clear();
      return "malformed pending file";
    }
    pending_[partition].insert(path);
    pending_paths_[path] = std::move(partition);
  }
  if (!in.done()) {
    Clear();
    return "bytes after the last entry";
  }
  version_ = static_cast<int64_t>(version);
  return std::string();
}

Result<std::string> KeyIndex::LoadPersisted(const delta::Table& table,
                                            const delta::Snapshot& snapshot,
                                            const std::string& name) {
  storage::ObjectStore& store = table.store();
  const std::string key = IndexFileKey(table, name);
  Result<std::string> bytes = store.Read(key);
  if (bytes.status().code() == StatusCode::kNotFound) {
    return std::string("no index beside the table yet");
  }
  FERRY_RETURN_IF_ERROR(bytes.status());
  std::string wrong = Decode(*bytes, snapshot.metadata().id);
  if (!wrong.empty()) {
    return fmt::format("{}: {}", store.Describe(key), wrong);
  }
  if (version_ > snapshot.version()) {
    std::string why = fmt::format("{} reflects version {}, newer than the table's {}",
                                  store.Describe(key), version_, snapshot.version());
    Clear();
    return why;
  }
  last_load_.base_version = version_;
  return std::string();
}

Status KeyIndex::Load(const delta::Table& table, const delta::Snapshot& snapshot,
                      const std::string& name) {
  last_load_ = {};
  const int64_t files_before = files_read_;
  const int64_t rebuilds_before = rebuilds_;
  std::string reason = "the index is not persisted";
  if (!name.empty()) {
    FERRY_ASSIGN_OR_RETURN(reason, LoadPersisted(table, snapshot, name));
  }
  if (!reason.empty()) {
    FERRY_LOG_INFO("upsert key index of {}: rebuilding from the table: {}", table.Describe(),
                   reason);
    FERRY_RETURN_IF_ERROR(Rebuild(table, snapshot));
  } else {
    last_load_.commits_from_log = snapshot.version() - version_;
    FERRY_RETURN_IF_ERROR(CatchUp(table, snapshot));  // may rebuild (a commit left the log)
    if (rebuilds_ != rebuilds_before) {
      reason = "a commit after the persisted index is no longer in the log";
    }
  }
  last_load_.rebuilt = rebuilds_ != rebuilds_before;
  last_load_.reason = reason;
  last_load_.files_read = files_read_ - files_before;
  FERRY_LOG_INFO("upsert key index of {} at version {}: {} keys, {} ({} data files read)",
                 table.Describe(), version_, live_,
                 last_load_.rebuilt
                     ? "rebuilt"
                     : fmt::format("persisted at version {} and {} commits from the log",
                                   last_load_.base_version, last_load_.commits_from_log),
                 last_load_.files_read);
  if (!name.empty() && (last_load_.rebuilt || last_load_.commits_from_log > 0)) {
    Status written = Persist(table, snapshot, name);
    if (!written.ok()) {
      FERRY_LOG_WARN(
          "upsert key index of {}: could not write it beside the table (the next start reads "
          "the table again): {}",
          table.Describe(), written.ToString());
    }
  }
  return Status::OK();
}

Status KeyIndex::Persist(const delta::Table& table, const delta::Snapshot& snapshot,
                         const std::string& name) const {
  if (name.empty() || version_ < 0) {
    return Status::OK();
  }
  return table.store().Put(IndexFileKey(table, name), Encode(snapshot.metadata().id));
}

}  // namespace ferry::pipeline

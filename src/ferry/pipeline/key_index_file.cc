#include <xxhash.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ferry/base/endian.h"
#include "ferry/base/log.h"
#include "ferry/base/varint.h"
#include "ferry/delta/log_files.h"
#include "ferry/pipeline/index_dir.h"
#include "ferry/pipeline/key_index.h"
#include "ferry/pipeline/key_index_writer.h"

namespace ferry::pipeline {
namespace {

constexpr std::string_view kKeyIndexMagic = "FERRYKIX";
constexpr uint8_t kKeyIndexFormat = 3;
// The format before the derived key columns were recorded: read as recording none.
constexpr uint8_t kKeyIndexFormatWithoutDerived = 2;
// The commit file's XXH64 and the checksum (key_index_writer.h).
constexpr size_t kKeyIndexTrailer = 16;
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

// Derived key columns for a message: "bucket = id % 16 (time zone UTC)", or "none recorded".
std::string DescribeDerived(const std::map<std::string, std::string>& derived) {
  if (derived.empty()) {
    return "none recorded";
  }
  std::string out;
  for (const auto& [name, definition] : derived) {
    out += fmt::format("{}{} = {}", out.empty() ? "" : ", ", name, definition);
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
  bool View(std::string_view* s) {
    uint64_t n = 0;
    if (!Varint(&n) || n > static_cast<uint64_t>(end_ - p_)) {
      return false;
    }
    *s = std::string_view(reinterpret_cast<const char*>(p_), static_cast<size_t>(n));
    p_ += n;
    return true;
  }
  bool String(std::string* s) {
    std::string_view v;
    if (!View(&v)) {
      return false;
    }
    s->assign(v);
    return true;
  }
  // A count of items that take at least one byte each.
  bool Count(uint64_t* n) { return Varint(n) && *n <= static_cast<uint64_t>(end_ - p_); }
  bool done() const { return p_ == end_; }
  const uint8_t* position() const { return p_; }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

// The header of a file: what LoadPersisted checks before it decodes the rest.
struct KeyIndexHeader {
  std::string table_id;
  std::string key;
  std::string sequence;
  std::string partitions;
  std::map<std::string, std::string> derived;
  uint64_t version = 0;
  uint64_t keys = 0;
  uint64_t key_bytes = 0;
  int64_t high_sequence = kNoSequence;
  uint64_t commit_hash = 0;
  size_t body_offset = 0;  // of the file count
};

// The header of `bytes`, or what is wrong with them.
std::string DecodeHeader(std::string_view bytes, KeyIndexHeader* header) {
  if (bytes.size() < kKeyIndexMagic.size() + 1 + kKeyIndexTrailer ||
      bytes.substr(0, kKeyIndexMagic.size()) != kKeyIndexMagic) {
    return "not a ferry key index file";
  }
  const size_t body = bytes.size() - 8;
  if (XXH64(bytes.data(), body, 0) != LoadLE<uint64_t>(bytes.data() + body)) {
    return "checksum mismatch (a torn or damaged file)";
  }
  const auto* begin = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint8_t format = begin[kKeyIndexMagic.size()];
  if (format != kKeyIndexFormat && format != kKeyIndexFormatWithoutDerived) {
    return fmt::format("format version {} (this ferry reads {} and {})", format,
                       kKeyIndexFormatWithoutDerived, kKeyIndexFormat);
  }
  header->commit_hash = LoadLE<uint64_t>(bytes.data() + bytes.size() - kKeyIndexTrailer);
  const uint8_t* end = begin + bytes.size() - kKeyIndexTrailer;
  KeyIndexReader in(begin + kKeyIndexMagic.size() + 1, end);
  if (!in.String(&header->table_id) || !in.String(&header->key) || !in.String(&header->sequence) ||
      !in.String(&header->partitions)) {
    return "malformed header";
  }
  uint64_t derived = 0;
  if (format == kKeyIndexFormat && !in.Count(&derived)) {
    return "malformed header";
  }
  for (uint64_t i = 0; i < derived; ++i) {
    std::string name;
    std::string definition;
    if (!in.String(&name) || !in.String(&definition)) {
      return "malformed header";
    }
    header->derived[std::move(name)] = std::move(definition);
  }
  if (!in.Varint(&header->version) || !in.Varint(&header->keys) || !in.Varint(&header->key_bytes) ||
      !in.Int(&header->high_sequence) || header->version > static_cast<uint64_t>(INT64_MAX)) {
    return "malformed header";
  }
  header->body_offset = static_cast<size_t>(in.position() - begin);
  return std::string();
}

}  // namespace

std::string KeyIndex::IndexFileKey(const delta::Table& table, const std::string& name) {
  return IndexDir(table, "upsert", name) + std::string(kKeyIndexFileName);
}

std::string KeyIndex::KeySignature(const delta::Snapshot& snapshot) const {
  std::string out;
  for (const std::string& name : keys_.key()) {
    std::optional<int> i = snapshot.schema()->FieldIndex(name);
    out += fmt::format("{}{} {}", out.empty() ? "" : ",", name,
                       i ? snapshot.schema()->field(*i).type->ToString() : "?");
  }
  return out;
}

std::string KeyIndex::SequenceSignature(const delta::Snapshot& snapshot) const {
  if (!keys_.has_sequence()) {
    return std::string();
  }
  std::optional<int> i = snapshot.schema()->FieldIndex(keys_.sequence());
  return fmt::format("{} {}", keys_.sequence(),
                     i ? snapshot.schema()->field(*i).type->ToString() : "?");
}

std::string KeyIndex::Encode(const delta::Snapshot& snapshot) const {
  std::string out(kKeyIndexMagic);
  out.push_back(static_cast<char>(kKeyIndexFormat));
  AppendKeyIndexString(&out, snapshot.metadata().id);
  AppendKeyIndexString(&out, KeySignature(snapshot));
  AppendKeyIndexString(&out, SequenceSignature(snapshot));
  AppendKeyIndexString(&out, JoinNames(partition_columns_));
  AppendVarint(&out, options_.derived.size());
  for (const auto& [name, definition] : options_.derived) {
    AppendKeyIndexString(&out, name);
    AppendKeyIndexString(&out, definition);
  }
  AppendVarint(&out, static_cast<uint64_t>(version_));
  AppendVarint(&out, table_.size());
  AppendVarint(&out, table_.key_bytes());
  AppendVarint(&out, ZigZagEncode(high_sequence_));
  // Rows with their key and a sequence; the others one byte.
  const size_t per_key = 1 + (keys_.has_sequence() ? 5 : 0);
  size_t rows = 0;
  for (const auto& [path, id] : file_ids_) {
    rows += files_[static_cast<size_t>(id)].ids.size();
  }
  out.reserve(out.size() + table_.key_bytes() + table_.size() * per_key + rows +
              file_ids_.size() * 64 + 64);
  AppendVarint(&out, file_ids_.size());
  for (const auto& [path, id] : file_ids_) {
    const File& file = files_[static_cast<size_t>(id)];
    AppendKeyIndexString(&out, file.path);
    AppendVarint(&out, file.ids.size());
    for (size_t row = 0; row < file.ids.size(); ++row) {
      if (!LiveRow(id, row)) {
        out.push_back('\0');
        continue;
      }
      const uint32_t key = file.ids[row];
      AppendKeyIndexString(&out, table_.key(key));
      if (keys_.has_sequence()) {
        AppendVarint(&out, ZigZagEncode(entries_[key].sequence));
      }
    }
  }
  AppendVarint(&out, tombstones());
  for (uint32_t key = 0; key < table_.id_limit(); ++key) {
    if (table_.live(key) && entries_[key].file < 0) {
      AppendKeyIndexString(&out, table_.key(key));
      AppendVarint(&out, ZigZagEncode(entries_[key].sequence));
    }
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
  return out;
}

std::string KeyIndex::DecodeBody(std::string_view bytes, size_t body_offset) {
  const auto* begin = reinterpret_cast<const uint8_t*>(bytes.data());
  KeyIndexReader in(begin + body_offset, begin + bytes.size() - kKeyIndexTrailer);
  uint64_t num_files = 0;
  if (!in.Count(&num_files)) {
    return "malformed file count";
  }
  for (uint64_t f = 0; f < num_files; ++f) {
    File file;
    uint64_t rows = 0;
    if (!in.String(&file.path) || !in.Count(&rows) || rows > UINT32_MAX ||
        file_ids_.count(file.path) != 0) {
      return fmt::format("malformed file {} of {}", f, num_files);
    }
    const auto id = static_cast<int32_t>(files_.size());
    file.ids.assign(static_cast<size_t>(rows), KeyTable::kNoKey);
    for (uint64_t row = 0; row < rows; ++row) {
      std::string_view key;
      int64_t seq = kNoSequence;
      if (!in.View(&key) || (!key.empty() && keys_.has_sequence() && !in.Int(&seq))) {
        return fmt::format("malformed row {} of {}", row, file.path);
      }
      if (!key.empty()) {
        file.ids[row] =
            SetEntry(key, Entry{.file = id, .row = static_cast<uint32_t>(row), .sequence = seq});
      } else {
        ++file.deleted_rows;
      }
    }
    file_ids_[file.path] = id;
    files_.push_back(std::move(file));
  }
  uint64_t num_deleted = 0;
  if (!in.Count(&num_deleted)) {
    return "malformed tombstones";
  }
  for (uint64_t i = 0; i < num_deleted; ++i) {
    std::string_view key;
    int64_t seq = 0;
    if (!in.View(&key) || key.empty() || !in.Int(&seq)) {
      return "malformed tombstone";
    }
    const Entry* entry = Find(key);
    if (entry == nullptr || entry->file < 0) {
      SetEntry(key, Entry{.file = -1, .row = 0, .sequence = seq});
    }
  }
  uint64_t num_loaded = 0;
  if (!in.Count(&num_loaded)) {
    return "malformed partitions";
  }
  for (uint64_t i = 0; i < num_loaded; ++i) {
    std::string partition;
    if (!in.String(&partition)) {
      return "malformed partition";
    }
    loaded_.insert(std::move(partition));
  }
  uint64_t num_pending = 0;
  if (!in.Count(&num_pending)) {
    return "malformed pending files";
  }
  for (uint64_t i = 0; i < num_pending; ++i) {
    std::string path;
    std::string partition;
    if (!in.String(&path) || !in.String(&partition)) {
      return "malformed pending file";
    }
    pending_[partition].insert(path);
    pending_paths_[path] = std::move(partition);
  }
  if (!in.done()) {
    return "bytes after the last entry";
  }
  return std::string();
}

Result<std::string> KeyIndex::LoadPersisted(const delta::Table& table,
                                            const delta::Snapshot& snapshot) {
  storage::ObjectStore& store = table.store();
  const std::string key = IndexFileKey(table, options_.name);
  Result<std::string> bytes = store.Read(key);
  if (bytes.status().code() == StatusCode::kNotFound) {
    return std::string("no index beside the table yet");
  }
  FERRY_RETURN_IF_ERROR(bytes.status());
  const std::string where = store.Describe(key);
  KeyIndexHeader header;
  if (std::string wrong = DecodeHeader(*bytes, &header); !wrong.empty()) {
    return fmt::format("{}: {}", where, wrong);
  }
  if (header.table_id != snapshot.metadata().id) {
    return fmt::format("{}: it belongs to another table (id {}, this table's is {})", where,
                       header.table_id, snapshot.metadata().id);
  }
  const std::string key_signature = KeySignature(snapshot);
  const std::string sequence_signature = SequenceSignature(snapshot);
  const std::string partitions = JoinNames(partition_columns_);
  if (header.key != key_signature || header.sequence != sequence_signature ||
      header.partitions != partitions) {
    return fmt::format(
        "{}: it indexes another key ({}, sequence '{}', partitions pruned by '{}'; the table's is "
        "{}, sequence '{}', partitions pruned by '{}')",
        where, header.key, header.sequence, header.partitions, key_signature, sequence_signature,
        partitions);
  }
  if (header.derived != options_.derived) {
    // Its keys (and their partitions) hold the values another definition computed, and so do
    // the table's files: a rebuild would read the same old partitions, and every key written
    // before the change would be looked for in the partition the new definition gives, not
    // found, and left twice (docs/cdc.md, "Partition pruning"). Refused; deleting the file is
    // the user's statement that the table's rows follow the new definition.
    if (!header.derived.empty()) {
      return Status(
          StatusCode::kInvalidArgument,
          fmt::format(
              "upsert key index of {}: the partition columns derived from the key are computed "
              "otherwise than when the table's rows were indexed ({}; now {}): rows written "
              "before the change lie in the partitions the old definition gave, where an upsert "
              "under the new one would not find them and would leave their keys twice. Restore "
              "the old definition (and time_zone), or rewrite the table's partition column by "
              "the new one (e.g. with Spark) and then delete {} so that the index is rebuilt",
              table.Describe(), DescribeDerived(header.derived), DescribeDerived(options_.derived),
              where));
    }
    return fmt::format(
        "{}: its key columns derived from the key were not recorded (format 2; now {})", where,
        DescribeDerived(options_.derived));
  }
  const auto version = static_cast<int64_t>(header.version);
  if (version > snapshot.version()) {
    return fmt::format(
        "{} reflects version {}, newer than the table's {} (commits lost, or a restored table)",
        where, version, snapshot.version());
  }
  // The commit of that version must be the one the index was built from.
  Result<std::string> commit = store.Read(table.log_dir() + "/" + delta::CommitFileName(version));
  if (commit.status().code() == StatusCode::kNotFound) {
    return fmt::format("{} reflects version {}, whose commit is no longer in the log", where,
                       version);
  }
  FERRY_RETURN_IF_ERROR(commit.status());
  if (XXH64(commit->data(), commit->size(), 0) != header.commit_hash) {
    return fmt::format(
        "{} reflects another version {} than the table's (the table was replaced or restored)",
        where, version);
  }
  Clear();
  table_.Reserve(static_cast<size_t>(std::min<uint64_t>(header.keys, bytes->size())),
                 static_cast<size_t>(std::min<uint64_t>(header.key_bytes, bytes->size())));
  entries_.reserve(table_.id_limit() +
                   static_cast<size_t>(std::min<uint64_t>(header.keys, bytes->size())));
  if (std::string wrong = DecodeBody(*bytes, header.body_offset); !wrong.empty()) {
    Clear();
    return fmt::format("{}: {}", where, wrong);
  }
  version_ = version;
  high_sequence_ = std::max(high_sequence_, header.high_sequence);
  last_load_.base_version = version_;
  return std::string();
}

Status KeyIndex::Load(const delta::Table& table, const delta::Snapshot& snapshot) {
  WaitForWrite();
  last_load_ = {};
  commits_since_persist_ = 0;
  const int64_t files_before = files_read_;
  const int64_t rebuilds_before = rebuilds_;
  std::string reason = "the index is not persisted";
  if (!options_.name.empty()) {
    FERRY_ASSIGN_OR_RETURN(reason, LoadPersisted(table, snapshot));
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
  const KeyIndexMetrics& m = options_.metrics;
  if (metrics::Counter* loads = last_load_.rebuilt ? m.rebuilt : m.loaded; loads != nullptr) {
    loads->Increment();
  }
  FERRY_LOG_INFO(
      "upsert key index of {} at version {}: {} keys, {} tombstones, {} MiB, {} ({} data files "
      "read)",
      table.Describe(), version_, live_, tombstones(), MemoryBytes() >> 20,
      last_load_.rebuilt ? "rebuilt"
                         : fmt::format("loaded from the file persisted at version {} and {} "
                                       "commits from the log",
                                       last_load_.base_version, last_load_.commits_from_log),
      last_load_.files_read);
  if (!options_.name.empty() && (last_load_.rebuilt || last_load_.commits_from_log > 0)) {
    Persist(table, snapshot);
  } else {
    DropOldTombstones();
  }
  Publish();
  return Status::OK();
}

Status KeyIndex::Committed(const delta::Table& table, const delta::Snapshot& snapshot) {
  FERRY_RETURN_IF_ERROR(CatchUp(table, snapshot));
  if (++commits_since_persist_ >= std::max<int64_t>(1, options_.persist_every)) {
    commits_since_persist_ = 0;
    if (options_.name.empty()) {
      DropOldTombstones();
    } else {
      Persist(table, snapshot);  // drops them too
    }
  }
  Publish();
  return Status::OK();
}

void KeyIndex::Persist(const delta::Table& table, const delta::Snapshot& snapshot) {
  if (options_.name.empty() || version_ < 0) {
    return;
  }
  if (writer_->busy()) {
    if (options_.metrics.write_skipped != nullptr) {
      options_.metrics.write_skipped->Increment();
    }
    return;
  }
  DropOldTombstones();
  writer_->Start(
      KeyIndexWriteJob{.store = table.shared_store(),
                       .key = IndexFileKey(table, options_.name),
                       .commit_key = table.log_dir() + "/" + delta::CommitFileName(version_),
                       .bytes = Encode(snapshot),
                       .version = version_,
                       .table = table.Describe(),
                       .written = options_.metrics.written,
                       .failed = options_.metrics.write_failed});
}

void KeyIndex::WaitForWrite() const {
  writer_->Wait();
}

}  // namespace ferry::pipeline

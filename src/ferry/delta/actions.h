// The Delta log's actions as plain C++ values (Delta PROTOCOL.md, "Actions"), independent of how
// they are encoded: actions_json.h reads and writes the JSON lines of commits and v2 checkpoints,
// checkpoint_reader.h / checkpoint_writer.h the Parquet rows of checkpoints.
//
// Field names follow the protocol (camelCase there, snake_case here). Optional protocol fields
// are std::optional; fields ferry does not interpret but must carry through a checkpoint
// (tags, deletion vectors, row-tracking ids) are kept.
//
// Thread-safety: value types.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace ferry::delta {

// partitionValues and similar string maps. A partition value may be JSON null (a null value).
using PartitionValues = std::map<std::string, std::optional<std::string>>;
using StringMap = std::map<std::string, std::string>;

struct Protocol {
  int32_t min_reader_version = 1;
  int32_t min_writer_version = 2;
  // Present only at reader version 3 / writer version 7.
  std::optional<std::vector<std::string>> reader_features;
  std::optional<std::vector<std::string>> writer_features;

  // The feature is named in readerFeatures / writerFeatures (false when the list is absent).
  bool ReaderLists(std::string_view feature) const { return Lists(reader_features, feature); }
  bool WriterLists(std::string_view feature) const { return Lists(writer_features, feature); }

  bool operator==(const Protocol&) const = default;

 private:
  static bool Lists(const std::optional<std::vector<std::string>>& features,
                    std::string_view feature) {
    return features.has_value() &&
           std::find(features->begin(), features->end(), feature) != features->end();
  }
};

struct Format {
  std::string provider = "parquet";
  StringMap options;
  bool operator==(const Format&) const = default;
};

struct Metadata {
  std::string id;
  std::optional<std::string> name;
  std::optional<std::string> description;
  Format format;
  // Empty when the log's metaData has no schemaString (a table without a schema).
  std::string schema_string;
  std::vector<std::string> partition_columns;
  StringMap configuration;
  std::optional<int64_t> created_time;

  bool operator==(const Metadata&) const = default;
};

struct DeletionVector {
  std::string storage_type;  // "u", "i" or "p"
  std::string path_or_inline_dv;
  std::optional<int32_t> offset;
  int32_t size_in_bytes = 0;
  int64_t cardinality = 0;
  std::optional<int64_t> max_row_index;

  // "<storageType><pathOrInlineDv>" or "<storageType><pathOrInlineDv>@<offset>" (the protocol's
  // derived uniqueId), the second half of a logical file's key.
  std::string UniqueId() const;
  bool operator==(const DeletionVector&) const = default;
};

struct AddFile {
  std::string path;  // URI-encoded, relative to the table root (or absolute)
  PartitionValues partition_values;
  int64_t size = 0;
  int64_t modification_time = 0;
  bool data_change = true;
  std::optional<std::string> stats;  // JSON text (stats.h)
  std::optional<StringMap> tags;
  std::optional<DeletionVector> deletion_vector;
  std::optional<int64_t> base_row_id;
  std::optional<int64_t> default_row_commit_version;
  std::optional<std::string> clustering_provider;

  bool operator==(const AddFile&) const = default;
};

struct RemoveFile {
  std::string path;
  std::optional<int64_t> deletion_timestamp;
  bool data_change = true;
  std::optional<bool> extended_file_metadata;
  std::optional<PartitionValues> partition_values;
  std::optional<int64_t> size;
  std::optional<std::string> stats;
  std::optional<StringMap> tags;
  std::optional<DeletionVector> deletion_vector;
  std::optional<int64_t> base_row_id;
  std::optional<int64_t> default_row_commit_version;

  bool operator==(const RemoveFile&) const = default;
};

// Application transaction: ferry stores a source partition's committed position here.
struct Txn {
  std::string app_id;
  int64_t version = 0;
  std::optional<int64_t> last_updated;

  bool operator==(const Txn&) const = default;
};

struct DomainMetadata {
  std::string domain;
  std::string configuration;
  bool removed = false;

  bool operator==(const DomainMetadata&) const = default;
};

// Commit provenance. Any JSON is allowed here; ferry parses the fields it shows in `table
// history` and keeps the whole object as text.
struct CommitInfo {
  std::optional<int64_t> timestamp;
  std::optional<int64_t> in_commit_timestamp;
  std::optional<std::string> operation;
  std::optional<std::string> engine_info;
  std::optional<std::string> txn_id;
  std::optional<bool> is_blind_append;
  std::string json = "{}";  // the whole commitInfo object, as written

  bool operator==(const CommitInfo&) const = default;
};

// Change data files are only read by change-feed readers; the snapshot ignores them.
struct AddCdcFile {
  std::string path;
  PartitionValues partition_values;
  int64_t size = 0;
  bool operator==(const AddCdcFile&) const = default;
};

// v2 checkpoints only.
struct CheckpointMetadata {
  int64_t version = 0;
  std::optional<StringMap> tags;
  bool operator==(const CheckpointMetadata&) const = default;
};

// v2 checkpoints only: a Parquet file in _delta_log/_sidecars holding add/remove rows.
struct Sidecar {
  std::string path;  // URI-encoded, normally just the file name
  int64_t size_in_bytes = 0;
  int64_t modification_time = 0;
  std::optional<StringMap> tags;
  bool operator==(const Sidecar&) const = default;
};

using Action = std::variant<Protocol, Metadata, AddFile, RemoveFile, Txn, DomainMetadata,
                            CommitInfo, AddCdcFile, CheckpointMetadata, Sidecar>;

// The name of an action's key in the log ("add", "metaData", ...).
const char* ActionName(const Action& action);

// A logical file's identity: (canonical path, deletion vector unique id or "").
struct FileKey {
  std::string path;
  std::string dv_id;
  auto operator<=>(const FileKey&) const = default;
};

// The path as a file key: absolute local paths are spelled one way, as Spark's DeltaLog
// canonicalizes them ("/a/b", "file:/a/b" and "file:///a/b" are all "file:/a/b"); relative
// paths and other schemes are unchanged.
std::string CanonicalPath(std::string_view path);

inline FileKey KeyOf(const AddFile& add) {
  return FileKey{CanonicalPath(add.path),
                 add.deletion_vector ? add.deletion_vector->UniqueId() : ""};
}
inline FileKey KeyOf(const RemoveFile& remove) {
  return FileKey{CanonicalPath(remove.path),
                 remove.deletion_vector ? remove.deletion_vector->UniqueId() : ""};
}

}  // namespace ferry::delta

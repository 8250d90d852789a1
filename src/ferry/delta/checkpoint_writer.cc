#include "ferry/delta/checkpoint_writer.h"

#include "ferry/base/clock.h"
#include "ferry/base/failpoint.h"
#include "ferry/base/log.h"
#include "ferry/columnar/column.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/delta/last_checkpoint.h"
#include "ferry/delta/log_files.h"
#include "ferry/delta/parquet_codec.h"
#include "ferry/delta/table.h"
#include "ferry/parquet/writer.h"

namespace ferry::delta {
namespace {

using columnar::BinaryColumn;
using columnar::Column;
using columnar::DataType;
using columnar::DataTypePtr;
using columnar::Field;
using columnar::ListColumn;
using columnar::MapColumn;
using columnar::StructColumn;

// Rows per batch handed to the Parquet writer (bounds the memory of a large checkpoint).
constexpr int64_t kBatchRows = 4096;

// The action columns, in order; kCheckpointMetadata only in V2 spec checkpoints.
enum ActionColumn {
  kTxn,
  kAdd,
  kRemove,
  kMetaData,
  kProtocol,
  kDomainMetadata,
  kCheckpointMetadata
};

Field Opt(std::string name, DataTypePtr type) {
  return Field{std::move(name), type, true, {}};
}

DataTypePtr StringMapType() {
  return DataType::Map(DataType::String(), DataType::String(), true);
}
DataTypePtr StringList() {
  return DataType::List(DataType::String(), true);
}

DataTypePtr DeletionVectorType() {
  return DataType::Struct(
      {Opt("storageType", DataType::String()), Opt("pathOrInlineDv", DataType::String()),
       Opt("offset", DataType::Int32()), Opt("sizeInBytes", DataType::Int32()),
       Opt("cardinality", DataType::Int64()), Opt("maxRowIndex", DataType::Int64())});
}

// The columns Spark writes into a classic checkpoint (compare the checkpointSchema of the golden
// table `checkpoint`'s _last_checkpoint), in Spark's order; `v2` adds the checkpointMetadata
// column of a V2 spec checkpoint.
columnar::SchemaPtr CheckpointSchema(bool with_stats, bool v2) {
  std::vector<Field> add = {Opt("path", DataType::String()),
                            Opt("partitionValues", StringMapType()),
                            Opt("size", DataType::Int64()),
                            Opt("modificationTime", DataType::Int64()),
                            Opt("dataChange", DataType::Boolean()),
                            Opt("tags", StringMapType()),
                            Opt("deletionVector", DeletionVectorType()),
                            Opt("baseRowId", DataType::Int64()),
                            Opt("defaultRowCommitVersion", DataType::Int64()),
                            Opt("clusteringProvider", DataType::String())};
  if (with_stats) {
    add.push_back(Opt("stats", DataType::String()));
  }
  std::vector<Field> fields = {
      Opt("txn",
          DataType::Struct({Opt("appId", DataType::String()), Opt("version", DataType::Int64()),
                            Opt("lastUpdated", DataType::Int64())})),
      Opt("add", DataType::Struct(std::move(add))),
      Opt("remove",
          DataType::Struct(
              {Opt("path", DataType::String()), Opt("deletionTimestamp", DataType::Int64()),
               Opt("dataChange", DataType::Boolean()),
               Opt("extendedFileMetadata", DataType::Boolean()),
               Opt("partitionValues", StringMapType()), Opt("size", DataType::Int64()),
               Opt("deletionVector", DeletionVectorType()), Opt("baseRowId", DataType::Int64()),
               Opt("defaultRowCommitVersion", DataType::Int64())})),
      Opt("metaData",
          DataType::Struct(
              {Opt("id", DataType::String()), Opt("name", DataType::String()),
               Opt("description", DataType::String()),
               Opt("format", DataType::Struct({Opt("provider", DataType::String()),
                                               Opt("options", StringMapType())})),
               Opt("schemaString", DataType::String()), Opt("partitionColumns", StringList()),
               Opt("configuration", StringMapType()), Opt("createdTime", DataType::Int64())})),
      Opt("protocol", DataType::Struct({Opt("minReaderVersion", DataType::Int32()),
                                        Opt("minWriterVersion", DataType::Int32()),
                                        Opt("readerFeatures", StringList()),
                                        Opt("writerFeatures", StringList())})),
      Opt("domainMetadata", DataType::Struct({Opt("domain", DataType::String()),
                                              Opt("configuration", DataType::String()),
                                              Opt("removed", DataType::Boolean())})),
  };
  if (v2) {
    fields.push_back(Opt("checkpointMetadata", DataType::Struct({Opt("version", DataType::Int64()),
                                                                 Opt("tags", StringMapType())})));
  }
  return std::make_shared<const columnar::Schema>(std::move(fields));
}

void PutString(Column* c, const std::optional<std::string>& v) {
  if (v.has_value()) {
    c->As<BinaryColumn>()->Append(*v);
  } else {
    c->AppendNull();
  }
}
void PutLong(Column* c, std::optional<int64_t> v) {
  if (v.has_value()) {
    c->As<columnar::Int64Column>()->Append(*v);
  } else {
    c->AppendNull();
  }
}
void PutInt(Column* c, std::optional<int32_t> v) {
  if (v.has_value()) {
    c->As<columnar::Int32Column>()->Append(*v);
  } else {
    c->AppendNull();
  }
}
void PutBool(Column* c, std::optional<bool> v) {
  if (v.has_value()) {
    c->As<columnar::BooleanColumn>()->Append(*v ? 1 : 0);
  } else {
    c->AppendNull();
  }
}
template <typename Map>
void PutMap(Column* c, const Map* map) {
  if (map == nullptr) {
    c->AppendNull();
    return;
  }
  auto* m = c->As<MapColumn>();
  for (const auto& [k, v] : *map) {
    m->mutable_keys()->As<BinaryColumn>()->Append(k);
    PutString(m->mutable_values(), std::optional<std::string>(v));
  }
  m->FinishRow();
}
void PutList(Column* c, const std::optional<std::vector<std::string>>& list) {
  if (!list.has_value()) {
    c->AppendNull();
    return;
  }
  auto* l = c->As<ListColumn>();
  for (const std::string& item : *list) {
    l->mutable_child()->As<BinaryColumn>()->Append(item);
  }
  l->FinishRow();
}
void PutDeletionVector(Column* c, const std::optional<DeletionVector>& dv) {
  if (!dv.has_value()) {
    c->AppendNull();
    return;
  }
  auto* s = c->As<StructColumn>();
  PutString(s->mutable_child(0), dv->storage_type);
  PutString(s->mutable_child(1), dv->path_or_inline_dv);
  PutInt(s->mutable_child(2), dv->offset);
  PutInt(s->mutable_child(3), dv->size_in_bytes);
  PutLong(s->mutable_child(4), dv->cardinality);
  PutLong(s->mutable_child(5), dv->max_row_index);
  s->FinishRow();
}

// Appends checkpoint rows, one action each, to a batch of the checkpoint schema.
class RowBuilder {
 public:
  RowBuilder(columnar::SchemaPtr schema, bool with_stats)
      : schema_(std::move(schema)),
        batch_(columnar::RecordBatch::MakeEmpty(schema_)),
        with_stats_(with_stats),
        num_columns_(schema_->num_fields()) {}

  columnar::RecordBatch& batch() { return batch_; }
  void Reset() { batch_ = columnar::RecordBatch::MakeEmpty(schema_); }

  void Txn(const delta::Txn& t) {
    StructColumn* s = Row(kTxn);
    PutString(s->mutable_child(0), t.app_id);
    PutLong(s->mutable_child(1), t.version);
    PutLong(s->mutable_child(2), t.last_updated);
    s->FinishRow();
  }
  void Add(const AddFile& a) {
    StructColumn* s = Row(kAdd);
    PutString(s->mutable_child(0), a.path);
    PutMap(s->mutable_child(1), &a.partition_values);
    PutLong(s->mutable_child(2), a.size);
    PutLong(s->mutable_child(3), a.modification_time);
    PutBool(s->mutable_child(4), a.data_change);
    PutMap(s->mutable_child(5), a.tags ? &*a.tags : nullptr);
    PutDeletionVector(s->mutable_child(6), a.deletion_vector);
    PutLong(s->mutable_child(7), a.base_row_id);
    PutLong(s->mutable_child(8), a.default_row_commit_version);
    PutString(s->mutable_child(9), a.clustering_provider);
    if (with_stats_) {
      PutString(s->mutable_child(10), a.stats);
    }
    s->FinishRow();
  }
  void Remove(const RemoveFile& r) {
    StructColumn* s = Row(kRemove);
    PutString(s->mutable_child(0), r.path);
    PutLong(s->mutable_child(1), r.deletion_timestamp);
    PutBool(s->mutable_child(2), r.data_change);
    PutBool(s->mutable_child(3), r.extended_file_metadata);
    PutMap(s->mutable_child(4), r.partition_values ? &*r.partition_values : nullptr);
    PutLong(s->mutable_child(5), r.size);
    PutDeletionVector(s->mutable_child(6), r.deletion_vector);
    PutLong(s->mutable_child(7), r.base_row_id);
    PutLong(s->mutable_child(8), r.default_row_commit_version);
    s->FinishRow();
  }
  void Metadata(const delta::Metadata& m) {
    StructColumn* s = Row(kMetaData);
    PutString(s->mutable_child(0), m.id);
    PutString(s->mutable_child(1), m.name);
    PutString(s->mutable_child(2), m.description);
    auto* format = s->mutable_child(3)->As<StructColumn>();
    PutString(format->mutable_child(0), m.format.provider);
    PutMap(format->mutable_child(1), &m.format.options);
    format->FinishRow();
    PutString(s->mutable_child(4), m.schema_string);
    PutList(s->mutable_child(5), m.partition_columns);
    PutMap(s->mutable_child(6), &m.configuration);
    PutLong(s->mutable_child(7), m.created_time);
    s->FinishRow();
  }
  void Protocol(const delta::Protocol& p) {
    StructColumn* s = Row(kProtocol);
    PutInt(s->mutable_child(0), p.min_reader_version);
    PutInt(s->mutable_child(1), p.min_writer_version);
    PutList(s->mutable_child(2), p.reader_features);
    PutList(s->mutable_child(3), p.writer_features);
    s->FinishRow();
  }
  void Domain(const DomainMetadata& d) {
    StructColumn* s = Row(kDomainMetadata);
    PutString(s->mutable_child(0), d.domain);
    PutString(s->mutable_child(1), d.configuration);
    PutBool(s->mutable_child(2), d.removed);
    s->FinishRow();
  }
  void CheckpointMetadata(int64_t version, const StringMap& tags) {
    StructColumn* s = Row(kCheckpointMetadata);
    PutLong(s->mutable_child(0), version);
    PutMap(s->mutable_child(1), &tags);
    s->FinishRow();
  }

 private:
  // Nulls in every action column but `which`, whose struct the caller fills and finishes.
  StructColumn* Row(int which) {
    for (int i = 0; i < num_columns_; ++i) {
      if (i != which) {
        batch_.mutable_column(i)->AppendNull();
      }
    }
    return batch_.mutable_column(which)->As<StructColumn>();
  }

  columnar::SchemaPtr schema_;
  columnar::RecordBatch batch_;
  bool with_stats_;
  int num_columns_;
};

struct WrittenCheckpoint {
  int64_t actions = 0;
  int64_t adds = 0;
  uint64_t bytes = 0;
};

// Step 1 and 2 of the header.
Result<WrittenCheckpoint> WriteParquet(const Table& table, const Snapshot& snapshot,
                                       const TableProperties& properties) {
  bool with_stats = properties.checkpoint_write_stats_as_json;
  const bool v2 = WritesV2Checkpoints(snapshot);
  columnar::SchemaPtr schema = CheckpointSchema(with_stats, v2);
  parquet::WriterOptions options;
  FERRY_ASSIGN_OR_RETURN(options.codec, CodecFromName(properties.compression_codec));
  std::string key = table.log_dir() + "/" + ClassicCheckpointFileName(snapshot.version());
  FERRY_ASSIGN_OR_RETURN(auto sink, table.store().OpenAtomicWriter(key));
  FERRY_ASSIGN_OR_RETURN(auto writer, parquet::FileWriter::Open(std::move(sink), schema, options));
  RowBuilder rows(schema, with_stats);
  WrittenCheckpoint out;
  if (v2) {
    rows.CheckpointMetadata(snapshot.version(), StringMap{});
    out.actions++;
  }
  auto flush_if_full = [&]() -> Status {
    out.actions++;
    if (rows.batch().num_rows() < kBatchRows) {
      return Status::OK();
    }
    FERRY_RETURN_IF_ERROR(writer->Write(rows.batch()));
    rows.Reset();
    return Status::OK();
  };
  rows.Protocol(snapshot.protocol());
  FERRY_RETURN_IF_ERROR(flush_if_full());
  rows.Metadata(snapshot.metadata());
  FERRY_RETURN_IF_ERROR(flush_if_full());
  for (const auto& [app_id, txn] : snapshot.txns()) {
    rows.Txn(txn);
    FERRY_RETURN_IF_ERROR(flush_if_full());
  }
  for (const auto& [domain, metadata] : snapshot.domain_metadata()) {
    rows.Domain(metadata);
    FERRY_RETURN_IF_ERROR(flush_if_full());
  }
  for (const auto& [file_key, add] : snapshot.files()) {
    rows.Add(add);
    out.adds++;
    FERRY_RETURN_IF_ERROR(flush_if_full());
  }
  int64_t expired_before = WallMillis() - properties.deleted_file_retention_ms;
  for (const auto& [file_key, remove] : snapshot.tombstones()) {
    if (remove.deletion_timestamp.value_or(0) > expired_before) {
      rows.Remove(remove);
      FERRY_RETURN_IF_ERROR(flush_if_full());
    }
  }
  if (rows.batch().num_rows() > 0) {
    FERRY_RETURN_IF_ERROR(writer->Write(rows.batch()));
  }
  FERRY_RETURN_IF_ERROR(FERRY_FAILPOINT("delta.checkpoint.before_write"));
  FERRY_RETURN_IF_ERROR(writer->Close());
  FERRY_ASSIGN_OR_RETURN(storage::ObjectInfo info, table.store().Stat(key));
  out.bytes = info.size;
  return out;
}

}  // namespace

bool WritesV2Checkpoints(const Snapshot& snapshot) {
  auto policy = snapshot.metadata().configuration.find("delta.checkpointPolicy");
  return snapshot.protocol().ReaderLists("v2Checkpoint") &&
         snapshot.protocol().WriterLists("v2Checkpoint") &&
         policy != snapshot.metadata().configuration.end() && policy->second == "v2";
}

Status WriteCheckpoint(const Table& table, const Snapshot& snapshot) {
  FERRY_ASSIGN_OR_RETURN(TableProperties properties, snapshot.properties());
  if (properties.checkpoint_write_stats_as_struct) {
    FERRY_LOG_WARN(
        "{}: no checkpoint at version {}: delta.checkpoint.writeStatsAsStruct needs stats_parsed, "
        "which ferry does not write",
        table.Describe(), snapshot.version());
    return Status::OK();
  }
  auto written = WriteParquet(table, snapshot, properties);
  if (!written.ok()) {
    return written.status().WithContext("checkpoint of {} at version {}", table.Describe(),
                                        snapshot.version());
  }
  LastCheckpoint hint;
  hint.version = snapshot.version();
  hint.size = written->actions;
  hint.size_in_bytes = static_cast<int64_t>(written->bytes);
  hint.num_of_add_files = written->adds;
  FERRY_RETURN_IF_ERROR(FERRY_FAILPOINT("delta.checkpoint.before_last_checkpoint"));
  // The hint never moves back: another writer (or this process's maintenance) may have written a
  // newer checkpoint while this one was built. Best effort: two writers can still race here, and
  // readers list past a stale hint anyway (last_checkpoint.h).
  const std::string key = table.log_dir() + "/" + std::string(kLastCheckpointName);
  Result<std::string> current = table.store().Read(key);
  std::optional<LastCheckpoint> newer = current.ok() ? ParseLastCheckpoint(*current) : std::nullopt;
  if (newer && newer->version > hint.version) {
    FERRY_LOG_DEBUG("{}: _last_checkpoint names version {}, newer than checkpoint {}: kept",
                    table.Describe(), newer->version, hint.version);
  } else {
    FERRY_RETURN_IF_ERROR(table.store().Put(key, LastCheckpointToJson(hint)));
  }
  return FERRY_FAILPOINT("delta.checkpoint.after_last_checkpoint");
}

}  // namespace ferry::delta

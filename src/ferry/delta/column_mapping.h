// Column mapping (PROTOCOL.md "Column Mapping"): the physical names and ids behind the columns a
// Delta table shows. With `delta.columnMapping.mode` = name or id, every struct field at every
// depth carries `delta.columnMapping.physicalName` and `delta.columnMapping.id` in its metadata,
// and the table property `delta.columnMapping.maxColumnId` is the highest id ever assigned.
//
// What ferry does with it:
//   writing   data files name their columns by physical name and carry each field's id as the
//             Parquet field_id (in both modes, as Spark writes them); partition directories,
//             partitionValues and stats are keyed by physical name (table_writer.h);
//   evolving  a column a batch adds gets the next id (maxColumnId + 1, ...) and a physical name
//             `col-<uuid>`, and the property rises in the same metaData (schema_evolution.h);
//   creating  a new table whose configuration asks for a mode gets ids and names for every field
//             and the protocol that supports the feature (table.h);
//   reading   a data file's fields are found by physical name (name mode) or by field_id (id
//             mode) and renamed to the table's names; fields the table no longer has (dropped
//             columns) are left out, fields the file lacks read as nulls (file_scan.h).
// In mode none, or when the protocol does not support the feature (PROTOCOL.md: the property is
// then ignored), names are used as they are and nothing here changes anything.
//
// Thread-safety: stateless functions.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/column.h"
#include "ferry/columnar/types.h"
#include "ferry/delta/actions.h"

namespace ferry::delta {

enum class ColumnMappingMode : uint8_t { kNone, kName, kId };

inline constexpr char kColumnMappingModeProperty[] = "delta.columnMapping.mode";
inline constexpr char kColumnMappingMaxIdProperty[] = "delta.columnMapping.maxColumnId";
inline constexpr char kColumnMappingIdKey[] = "delta.columnMapping.id";
inline constexpr char kColumnMappingPhysicalNameKey[] = "delta.columnMapping.physicalName";

// "none", "name", "id"; and back (InvalidArgument naming the property for other text).
std::string_view ColumnMappingModeName(ColumnMappingMode mode);
Result<ColumnMappingMode> ParseColumnMappingMode(std::string_view text);

// Reader version 2 or 3 with columnMapping in readerFeatures; or writer version 5, 6 or 7 with
// columnMapping in writerFeatures (PROTOCOL.md: only then is the mode property honoured; in a
// valid protocol the two agree).
bool SupportsColumnMapping(const Protocol& protocol);

// The mode a table's readers and writers must follow: kNone when the protocol does not support
// the feature or the property is absent. NotSupported for a value other than none/name/id.
Result<ColumnMappingMode> GetColumnMappingMode(const Protocol& protocol, const Metadata& metadata);

// A field's column-mapping id and physical name, from its metadata (nullopt when absent or not
// of the right JSON type).
std::optional<int64_t> ColumnMappingId(const columnar::Field& field);
std::optional<std::string> PhysicalName(const columnar::Field& field);

// Writer requirement: in a mapped mode, every struct field at every depth has an id and a
// physical name, the ids are unique, no sibling shares a physical name, and
// delta.columnMapping.maxColumnId (if set) is an integer. NotSupported naming the field
// otherwise (ferry does not repair another writer's schema). An id above maxColumnId is not
// refused here (a schema change is checked before its metaData raises the property); ids ferry
// assigns start above both (MaxColumnId).
Status CheckColumnMappingSchema(const columnar::Schema& schema, const Metadata& metadata,
                                ColumnMappingMode mode);

// The highest id in use: delta.columnMapping.maxColumnId, or a larger id found in the schema.
int64_t MaxColumnId(const columnar::Schema& schema, const Metadata& metadata);

// Gives every struct field (at every depth) that lacks them the next id after `*max_column_id`
// and a fresh physical name `col-<uuid>`, raising `*max_column_id`. Fields that have both keep
// them. Returns how many fields were given ids.
int64_t AssignColumnMapping(std::vector<columnar::Field>* fields, int64_t* max_column_id);

// A new table whose configuration sets delta.columnMapping.mode to name or id: every field gets
// an id and a physical name, the configuration gets delta.columnMapping.maxColumnId (and the mode
// spelled in lowercase), and the protocol supports the feature (reader 2 / writer 5 when it was
// a legacy protocol, else columnMapping added to both feature lists). Nothing changes without
// the property or with mode none. InvalidArgument for an unknown mode.
Status ApplyColumnMappingToNewTable(columnar::SchemaPtr* schema, StringMap* configuration,
                                    Protocol* protocol);

// The schema of the data files: every struct field renamed to its physical name, its metadata
// reduced to its id as the Parquet field_id (parquet/metadata.h kFieldIdMetadataKey). A field
// without a physical name keeps its name.
columnar::SchemaPtr PhysicalSchema(const columnar::Schema& schema);

// The physical name of top-level column `name` (partition columns): its own name when the
// schema has no such column or it has no physical name.
std::string PhysicalColumnName(const columnar::Schema& schema, std::string_view name);

// A dotted column path (delta.dataSkippingStatsColumns: `a.b.c`, matched ignoring case) with
// every segment that names a struct field replaced by that field's physical name.
std::string PhysicalColumnPath(const columnar::Schema& schema, std::string_view path);

// `values` (an add's partitionValues, keyed by physical name) keyed by the partition columns'
// names as the table shows them.
PartitionValues LogicalPartitionValues(const PartitionValues& values,
                                       const columnar::Schema& schema,
                                       const std::vector<std::string>& partition_columns);

// Reading a data file. The index of the field of `file_fields` that holds `table_field`: by
// physical name (exactly, else ignoring case) in name mode, by field_id in id mode, by name
// (columnar::FindFieldIgnoringCase) in mode none.
std::optional<size_t> FindFileField(const std::vector<columnar::Field>& file_fields,
                                    const columnar::Field& table_field, ColumnMappingMode mode);

// Whether any top-level field of a data file carries a Parquet field_id. In id mode a file
// without them cannot be read by id (PROTOCOL.md: refuse the file or read nulls; ferry refuses).
bool HasFieldIds(const columnar::Schema& file_schema);

// A column read from a data file, its struct fields (at every depth) renamed to the names of
// `table_type`'s fields they hold (FindFileField's rules) and the fields `table_type` lacks
// dropped. Fields the file lacks are not added: conform the result to `table_type` afterwards
// (columnar/column_conform.h), which also reorders fields and widens types.
std::unique_ptr<columnar::Column> RenameFileColumn(std::unique_ptr<columnar::Column> column,
                                                   const columnar::DataType& table_type,
                                                   ColumnMappingMode mode);

}  // namespace ferry::delta

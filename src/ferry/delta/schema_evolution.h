// Schema evolution of a Delta table: what a writer's schema adds to the table's, by Delta's rules,
// and the protocol and metaData actions that commit the change. The writer's schema may come
// from anywhere (types inferred from JSON, an Avro or Protobuf writer schema, a DDL string): this
// file knows only schemas. The change goes into the same commit as the data that needs it
// (DESIGN.md, "Schemas that change"); when another writer changes the metaData first, the caller
// merges again with the new table schema and commits again.
//
//   FERRY_ASSIGN_OR_RETURN(SchemaMerge merge,
//                          MergeSchema(*snapshot.schema(), batch_schema, options));
//   if (merge.changed()) {
//     FERRY_ASSIGN_OR_RETURN(SchemaChangeCommit commit, PlanSchemaChange(snapshot, merge));
//     txn.SetMetadata(commit.metadata);        // and SetProtocol(*commit.protocol) when set
//   }
//
// Merging, field by field of the wanted schema (names compared ignoring case, as Delta does: a
// field that differs from a column only in case is that column):
//   1. a field the table lacks is added, nullable, at the end of its struct (top-level fields at
//      the end of the table), under the name it arrived with; a name Delta cannot hold without
//      column mapping (empty, or with one of ` ,;{}()\n\t=`) is refused;
//   2. a field the table has: structs merge field by field, arrays by element, maps by key and
//      value; a primitive type the table's type already holds (CanConform: INT into BIGINT,
//      DATE into TIMESTAMP_NTZ, ...) keeps the table's type; a wider type that Delta's schema
//      evolution may apply (type_widening.h) widens the table's type when the mode allows and the
//      column is not a partition column; anything else (a narrowing, a STRING where a STRUCT is)
//      is refused;
//   3. table fields the wanted schema lacks stay (the data holds nulls there).
// Limits: the fields one merge adds (nested fields count one each) and the fields the table holds
// afterwards (every struct field at every depth) are capped.
//
// Errors: InvalidArgument naming the field and the reason (a refusal under the mode, a bad name,
// an incompatible type, the total limit); ResourceExhausted when only the per-merge limit is
// exceeded (a smaller batch may fit).
//
// Thread-safety: stateless functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"
#include "ferry/delta/actions.h"
#include "ferry/delta/snapshot.h"

namespace ferry::delta {

enum class SchemaEvolution : uint8_t {
  kNone,                // the table's schema never changes
  kAddColumns,          // new fields become nullable columns
  kAddColumnsAndWiden,  // and types widen (type_widening.h)
};

// "none", "add_columns", "add_columns_and_widen"; and back (InvalidArgument for other text).
std::string_view SchemaEvolutionName(SchemaEvolution mode);
Result<SchemaEvolution> ParseSchemaEvolution(std::string_view text);

struct SchemaEvolutionLimits {
  // Fields one merge (one batch) may add.
  int64_t max_new_fields = 100;
  // Fields the table may hold after a change, counted at every depth.
  int64_t max_fields = 1000;
};

struct SchemaMergeOptions {
  SchemaEvolution mode = SchemaEvolution::kNone;
  SchemaEvolutionLimits limits;
  std::vector<std::string> partition_columns;  // never widened
};

struct SchemaChange {
  enum class Kind : uint8_t { kAddField, kWidenType };
  Kind kind = Kind::kAddField;
  // The struct field added or holding the widened type: names from the root, with "element",
  // "key" and "value" entering arrays and maps on the way.
  std::vector<std::string> field;
  // kWidenType inside the field's own arrays and maps: "element", "value.element", ...
  std::string inner;
  columnar::DataTypePtr from;  // kWidenType: the table's type
  columnar::DataTypePtr to;    // the new field's type, or the wider type

  // "loc.alt" / "items.element.qty"
  std::string Path() const;
  // "add column loc.alt DOUBLE", "widen column id from INT to BIGINT"
  std::string Describe() const;
};

struct SchemaMerge {
  // The table's schema with the wanted one merged in (no type-change metadata yet).
  columnar::SchemaPtr schema;
  std::vector<SchemaChange> changes;
  bool changed() const { return !changes.empty(); }
};

Result<SchemaMerge> MergeSchema(const columnar::Schema& table, const columnar::Schema& wanted,
                                const SchemaMergeOptions& options);

// What commits a merge to `snapshot`'s table.
struct SchemaChangeCommit {
  columnar::SchemaPtr schema;        // the merged schema with delta.typeChanges recorded
  Metadata metadata;                 // the table's, with the new schemaString (and properties)
  std::optional<Protocol> protocol;  // set when the protocol must change
};

// REQUIRES: `merge` came from MergeSchema(*snapshot.schema(), ...). Adds the typeWidening feature
// and delta.enableTypeWidening when a type widens, timestampNtz when a new field needs it. On a
// table with column mapping (column_mapping.h) every new field, nested ones too, gets the next
// id after delta.columnMapping.maxColumnId and a physical name `col-<uuid>`, and the property
// rises to the last id given, in the same metaData.
// InvalidArgument when the table sets delta.enableTypeWidening to false and a type must widen;
// NotSupported when the result is a table ferry cannot write.
Result<SchemaChangeCommit> PlanSchemaChange(const Snapshot& snapshot, const SchemaMerge& merge);

// Whether Delta can hold `name` as a column or field name without column mapping.
bool IsValidColumnName(std::string_view name);

// Every struct field of the schema, at every depth.
int64_t CountFields(const columnar::Schema& schema);

}  // namespace ferry::delta

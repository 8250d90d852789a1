// Type widening (PROTOCOL.md "Type Widening"): which type changes a Delta table may undergo, how
// they are recorded in the schema (`delta.typeChanges`), and how the protocol and the table
// properties are set up for them.
//
//   supported (readers must read them):  BYTE -> SHORT -> INT -> BIGINT; FLOAT -> DOUBLE;
//     BYTE, SHORT, INT -> DOUBLE; DATE -> TIMESTAMP_NTZ; DECIMAL(p, s) -> DECIMAL(p + k1, s + k2)
//     with k1 >= k2 >= 0; BYTE, SHORT, INT -> DECIMAL(10 + k1, k2); BIGINT -> DECIMAL(20 + k1, k2)
//   applied by schema evolution (Delta's own writers widen automatically only these):
//     integers to wider integers, FLOAT -> DOUBLE, DECIMAL -> wider DECIMAL, DATE -> TIMESTAMP_NTZ
//
// Recording a change (writer requirements): the table's protocol lists `typeWidening` in its
// reader and writer features (reader 3, writer 7; the preview name `typeWidening-preview` counts
// as support), `delta.enableTypeWidening` is "true", and the nearest struct field of the widened
// type gets a `delta.typeChanges` entry {fromType, toType[, fieldPath]} appended to its metadata,
// where fieldPath is "key", "value", "element" (dotted for nesting) for a change inside a map or
// array. Tables with the preview feature also get the `tableVersion` the preview readers expect
// (the version of the commit's first attempt, as Delta's writer does).
//
// Thread-safety: stateless functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"
#include "ferry/delta/actions.h"

namespace ferry::delta {

inline constexpr char kTypeWideningFeature[] = "typeWidening";
inline constexpr char kTypeWideningPreviewFeature[] = "typeWidening-preview";
inline constexpr char kEnableTypeWideningProperty[] = "delta.enableTypeWidening";
inline constexpr char kTypeChangesKey[] = "delta.typeChanges";

// The protocol lists typeWidening (or its preview) as a reader and writer feature.
bool SupportsTypeWidening(const Protocol& protocol);
bool SupportsTypeWideningPreview(const Protocol& protocol);

// A change between two primitive types that the protocol supports (readers must read it).
bool IsSupportedTypeChange(const columnar::DataType& from, const columnar::DataType& to);
// The subset that schema evolution applies (see above).
bool IsEvolutionTypeChange(const columnar::DataType& from, const columnar::DataType& to);

struct TypeChange {
  std::string from_type;  // Delta type names: "integer", "decimal(10,2)"
  std::string to_type;
  std::optional<std::string> field_path;  // "element", "key", "value.element", ...
  std::optional<int64_t> table_version;   // preview tables only
};

// The type changes recorded on a field (its own metadata); empty when there are none.
// DataLoss when the metadata is not a list of {fromType, toType} objects.
Result<std::vector<TypeChange>> ReadTypeChanges(const columnar::Field& field);
// Appends `change` to the field's `delta.typeChanges`, keeping the entries already there.
Status AppendTypeChange(columnar::Field* field, const TypeChange& change);

// Reader requirement: every type change recorded anywhere in `schema` is supported (above).
// NotSupported naming the column and the change otherwise.
Status CheckTypeChangesReadable(const columnar::Schema& schema);

// `protocol` with the given reader and writer features added: a legacy protocol is first turned
// into the table-features form (reader 3 only when a reader feature is needed, writer 7) listing
// the features its versions imply.
Protocol WithFeatures(const Protocol& protocol, const std::vector<std::string>& reader_features,
                      const std::vector<std::string>& writer_features);

}  // namespace ferry::delta

// Column conformance: a column of one type turned into a column of a wider type that holds every
// value of the first. This is what a reader of a Delta table does with a data file written before
// the table's schema changed (PROTOCOL.md "Type Widening", reader requirements, and "Columns
// present in the schema of the table MAY be missing from data files"), and what ferry does to a
// batch decoded before a column was added or widened.
//
// The conversions, applied at any depth:
//   BYTE -> SHORT -> INT -> BIGINT          (any narrower integer to a wider one)
//   BYTE, SHORT, INT -> DOUBLE; FLOAT -> DOUBLE
//   BYTE, SHORT, INT -> DECIMAL(p, s) with p - s >= 10; BIGINT -> DECIMAL(p, s) with p - s >= 20
//   DECIMAL(p1, s1) -> DECIMAL(p2, s2) with s2 >= s1 and p2 - s2 >= p1 - s1 (values rescaled)
//   DATE -> TIMESTAMP_NTZ                   (midnight)
//   STRUCT -> STRUCT whose fields are the source's (matched by name, exactly or else ignoring
//             case, in any order) plus nullable fields the source lacks (all null); every source
//             field must have a place in the target
//   ARRAY / MAP -> ARRAY / MAP whose element, key and value conform
// Nullability is not checked: a caller writing to NOT NULL fields validates the result.
// ConformOptions::int64_to_double adds BIGINT -> DOUBLE (not a Delta widening: exact only up to
// 2^53), for columns that no table holds yet (a batch re-typing a field it added itself).
//
// Thread-safety: stateless functions.
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/column.h"
#include "ferry/columnar/types.h"

namespace ferry::columnar {

struct ConformOptions {
  bool int64_to_double = false;
};

// The bytes of a signed integer type (1, 2, 4, 8); 0 for every other type. Conforming here and
// type widening in the Delta log (delta/type_widening.h) compare integer types by it.
int SignedIntegerWidth(TypeId id);

// True when every value of `from` has a place in `to` by the rules above (equal types too).
bool CanConform(const DataType& from, const DataType& to, ConformOptions options = {});

// `column` as a column of type `to` (the same object when the types are equal, else rebuilt;
// nested columns are reshaped in place). InvalidArgument naming `name` when CanConform is false
// (the column is then returned to nobody: check CanConform first to keep it).
Result<std::unique_ptr<Column>> ConformColumn(std::unique_ptr<Column> column, const DataTypePtr& to,
                                              std::string_view name = "<column>",
                                              ConformOptions options = {});

// The index of the field of `fields` called `name`: the exact match, else the only one equal
// ignoring ASCII case; nullopt when there is none (or several differ only in case).
std::optional<size_t> FindFieldIgnoringCase(const std::vector<Field>& fields,
                                            std::string_view name);

}  // namespace ferry::columnar

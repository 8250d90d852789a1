// Type inference for schema evolution: the column type a JSON value asks for when its field is
// new to the table, and the type a value needs when it does not fit its column (the rules and
// their reasons: docs/decisions/schema-inference.md). Used by the JSON decoder on its slow paths
// only (an unknown field, a value that failed); nothing here runs for a message that fits.
//
//   integer                        BIGINT (DOUBLE beyond BIGINT's range)
//   other number                   DOUBLE
//   true / false                   BOOLEAN
//   string                         STRING (no guessing of dates or numbers in strings)
//   object                         STRUCT of its fields in order, fields that are null left out
//   array                          ARRAY of its elements' unified type
//   null, {} , [], [null]          nothing yet: wait until a typed value arrives
// Unifying two types (elements of one array, a field repeated in one object): equal types stay;
// BIGINT and DOUBLE give DOUBLE; structs merge their fields; arrays unify their elements; any
// other pair keeps the first (the value that does not fit it is then a bad record).
//
// Thread-safety: pure functions.
#pragma once

#include <string_view>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"
#include "ferry/transform/json_plan.h"

namespace ferry::transform {

// Objects and arrays nested deeper than this are not inferred (Delta schemas stop at 64 levels).
inline constexpr int kMaxInferDepth = 32;

// The type of one JSON value, or null when it has nothing typed yet. REQUIRES: `json` is exactly
// one syntactically valid JSON value (CheckJsonSyntax). InvalidArgument when it is nested deeper
// than kMaxInferDepth.
Result<columnar::DataTypePtr> InferJsonType(std::string_view json);

// Either may be null (nothing inferred).
columnar::DataTypePtr UnifyInferredTypes(const columnar::DataTypePtr& a,
                                         const columnar::DataTypePtr& b);

// The type a value that failed to decode into `node` needs, or null when no wider type of the
// kind Delta widens to would hold it: integers too large for their column (the smallest integer
// type that holds them, else DOUBLE for a number with a fraction), numbers beyond FLOAT (DOUBLE),
// decimals with more digits than the column (the DECIMAL that holds both, up to 38 digits), and a
// date with a time of day (TIMESTAMP_NTZ). `text` is the number token or the string's content.
columnar::DataTypePtr NeededType(const JsonPlanNode& node, std::string_view text, bool is_string);

// The field of struct `node` whose name equals `key` ignoring ASCII case (Delta's matching), or -1
// when none does or several do.
int FindChildIgnoringCase(const JsonPlanNode& node, std::string_view key);

}  // namespace ferry::transform

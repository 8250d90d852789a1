// Spark DDL schema strings: the parser that turns `id BIGINT NOT NULL, tags ARRAY<STRING>` into a
// Schema, and the quoting helpers that let Schema::ToString() print text that parses back.
//
// Grammar (keywords and type names case-insensitive; Spark's `parseTableSchema` plus the ferry
// extensions marked *):
//   schema  := column (',' column)*
//   column  := name type [NOT NULL] [COMMENT string]
//   field   := name [':'] type [NOT NULL] [COMMENT string]        (inside STRUCT<...>)
//   type    := BOOLEAN | TINYINT | BYTE | SMALLINT | SHORT | INT | INTEGER | BIGINT | LONG
//            | FLOAT | REAL | DOUBLE | STRING | CHAR(n) | VARCHAR(n) | BINARY | DATE
//            | TIMESTAMP | TIMESTAMP_LTZ | TIMESTAMP_NTZ
//            | DECIMAL | DEC | NUMERIC [ '(' p [',' s] ')' ]        (default (10,0))
//            | ARRAY '<' type [NOT NULL]* '>'
//            | MAP '<' type ',' type [NOT NULL]* '>'
//            | STRUCT '<' [field (',' field)*] '>'
//            | UINT8 | UINT16 | UINT32 | UINT64 | JSON | FIXED(n)*
//            | TIMESTAMP_MILLIS | TIMESTAMP_NANOS | TIMESTAMP_NTZ_MILLIS | TIMESTAMP_NTZ_NANOS*
//   name    := [A-Za-z0-9_]+ | '`' (any character, '``' for a backquote)* '`'
//   string  := '...' or "..." with Spark's backslash escapes (\n, \t, \', \\, \uXXXX, ...)
// Whitespace, `-- line` and `/* block */` comments may appear between tokens. CHAR(n) and
// VARCHAR(n) are read as STRING (the length is not enforced). A COMMENT is kept in the field's
// metadata under the key "comment" as a JSON string, like the Delta schema does. Column names
// must be unique within a struct (compared case-insensitively, as Delta does). Nesting deeper
// than kMaxDdlDepth is refused.
//
// Errors are InvalidArgument with the position of the offending token, 1-based line and column
// (in characters): `schema:1:27: expected '>' after map value type, found ','`.
//
// Thread-safety: free functions without shared state.
#pragma once

#include <string>
#include <string_view>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"

namespace ferry::columnar {

inline constexpr int kMaxDdlDepth = 128;

// Parses a table schema. `origin` prefixes error positions ("schema:1:27: ...").
Result<Schema> ParseDdlSchema(std::string_view ddl, std::string_view origin = "schema");

// Parses one data type, e.g. "MAP<STRING, ARRAY<DECIMAL(12,2)>>".
Result<DataTypePtr> ParseDdlType(std::string_view ddl, std::string_view origin = "type");

// `name` as DDL writes it: bare when it is made of [A-Za-z0-9_] and does not start with a digit,
// otherwise in backquotes with every backquote doubled.
std::string QuoteDdlName(std::string_view name);

// `text` as a single-quoted DDL string literal with backslash escapes.
std::string QuoteDdlString(std::string_view text);

// JSON string literal codec for field metadata values (the Delta schema keeps them as JSON).
std::string EncodeJsonString(std::string_view text);
// The decoded text of a JSON string literal; InvalidArgument if `json` is not exactly one.
Result<std::string> DecodeJsonString(std::string_view json);

// Fuzzing entry (libFuzzer-friendly: no output, never fails on bad input): parses `input` as a
// schema and as a type; whatever parses must print with ToString() and parse back equal
// (metadata included). A difference is a bug and aborts through FERRY_CHECK.
void FuzzDdlRoundTrip(std::string_view input);

}  // namespace ferry::columnar

// TableTemplate: a table location with placeholders that a routed pipeline (router.h) fills per
// message: `s3://lake/raw/{topic}`, `lake/{subject:2}`, `lake/events_{field:event_type}`.
//
//   {topic}        the Kafka topic (JetStream: the stream name)
//   {subject}      the JetStream subject (Kafka: empty)
//   {subject:N}    the N-th (1-based) token of the subject split on '.'
//   {field:a.b}    a field of the decoded message (JSON: a string, number or boolean value)
//
// Every value substituted goes through TableNameRules first (lower-casing, allowed characters,
// length), then must match the `allow` pattern. Rendering is a pure function of the message and
// the rules: the same message always goes to the same table (the exactly-once argument of
// docs/decisions/routing.md relies on it).
//
// Thread-safety: immutable after Parse; Render may run on many threads.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/source/source.h"

namespace re2 {
class RE2;
}  // namespace re2

namespace ferry::pipeline {

struct TableNameRules {
  bool lower_case = true;
  // Characters a substituted value may keep: single characters and ranges ("a-z0-9_-": a '-'
  // first or last is itself). Others become `replacement` (empty: dropped).
  std::string allowed_characters = "a-z0-9_-";
  std::string replacement = "_";
  // Longest substituted value (longer ones are cut).
  int64_t max_length = 128;
  // RE2 pattern each substituted value must match in full (empty: any).
  std::string allow;
};

// How a message's table came out.
struct RenderedTable {
  enum class Kind {
    kTable,       // `table` is the location
    kMissing,     // a placeholder had no value (a missing or empty field, no subject token)
    kDisallowed,  // a value does not match `allow`; `detail` names it
  };
  Kind kind = Kind::kTable;
  std::string table;
  std::string detail;
};

class TableTemplate {
 public:
  // InvalidArgument naming the offending placeholder: unknown, unclosed, a bad token number, an
  // empty field path. A text without placeholders is a template with no parts to fill.
  static Result<TableTemplate> Parse(std::string_view text, const TableNameRules& rules);

  bool has_placeholders() const { return placeholders_ > 0; }
  // Field paths ({field:a.b} -> "a.b") in order of first use, without repeats.
  const std::vector<std::string>& fields() const { return fields_; }
  // The text with every placeholder replaced by `x` (to check that it is a table location).
  std::string Example() const;

  // `field_values[i]` is the value of fields()[i] for the message (nullopt: missing).
  RenderedTable Render(const source::Message& message,
                       const std::vector<std::optional<std::string>>& field_values) const;
  // Appends to *key what Render reads of the message: each placeholder's raw value, length-
  // prefixed. Two messages with equal keys render alike (a cache of renderings may use it).
  void AppendKey(const source::Message& message,
                 const std::vector<std::optional<std::string>>& field_values,
                 std::string* key) const;

  // The value after the rules, or nullopt when nothing is left.
  std::optional<std::string> Clean(std::string_view value) const;

 private:
  enum class PartKind { kLiteral, kTopic, kSubject, kSubjectToken, kField };
  struct Part {
    PartKind kind = PartKind::kLiteral;
    std::string text;  // kLiteral
    int index = 0;     // kSubjectToken: 1-based token; kField: index into fields_
  };

  // The value `p` reads from the message (a literal: its text).
  static std::string_view RawValue(const Part& p, const source::Message& message,
                                   const std::vector<std::optional<std::string>>& field_values);

  std::vector<Part> parts_;
  std::vector<std::string> fields_;
  int placeholders_ = 0;
  TableNameRules rules_;
  std::array<bool, 256> allowed_{};
  std::shared_ptr<const re2::RE2> allow_;  // null: any
};

// The value at `path` ("a.b") of a JSON object, as a string: a JSON string's contents, or a
// number's or boolean's text. nullopt when absent, null, an object or an array, or when the
// payload is not a JSON object.
std::optional<std::string> JsonFieldText(std::string_view payload, std::string_view path);

}  // namespace ferry::pipeline

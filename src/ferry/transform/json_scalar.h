// The text conversions of the JSON decoder that do not depend on simdjson: a number's text or a
// string's content into one value of a column's type (integers, floats, decimals, booleans,
// dates, timestamps, base64 binary), with the coercion rules of json_decoder.h. Internal to the
// transform module; kept apart from json_decoder.cc so that the simdjson walk stays small.
//
// Each function appends exactly one value on success and nothing on failure, and returns the
// reason of a failure as InvalidArgument without a field path (the caller adds it).
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <string_view>

#include "ferry/base/status.h"
#include "ferry/columnar/column.h"
#include "ferry/transform/json_plan.h"

namespace ferry::transform {

// `text` is a JSON number token (`is_string` false) or the content of a JSON string.
Status AppendIntegerText(const JsonPlanNode& node, std::string_view text, bool is_string,
                         columnar::Column* column);
Status AppendFloatText(const JsonPlanNode& node, std::string_view text, columnar::Column* column);
Status AppendDecimalText(const JsonPlanNode& node, std::string_view text, bool is_string,
                         columnar::Column* column);
Status AppendBooleanText(std::string_view text, columnar::Column* column);
Status AppendBase64Text(const JsonPlanNode& node, std::string_view text, columnar::Column* column);
Status AppendDateText(const JsonPlan& plan, std::string_view text, columnar::Column* column);
Status AppendTimestampText(const JsonPlan& plan, const JsonPlanNode& node, std::string_view text,
                           columnar::Column* column);
// A JSON number as an epoch count in plan.options.epoch_unit.
Status AppendEpochNumber(const JsonPlan& plan, const JsonPlanNode& node, std::string_view token,
                         bool is_string, columnar::Column* column);

// "TINYINT", "DECIMAL(12,2)"... for messages.
std::string_view KindName(JsonNodeKind kind);

}  // namespace ferry::transform

// The analyzer of expressions: resolves column references against a schema (exact name first,
// then a unique case-insensitive match, as Spark's default resolution), types every node,
// inserts Spark's implicit casts as explicit kCast nodes, binds calls to their FunctionDef and
// precomputes constant state (compiled datetime patterns, regexes). Errors point at the node's
// position in the expression text. Internal to the transform module.
//
// Thread-safety: free function; the tree is modified in place.
#pragma once

#include <string_view>

#include "ferry/base/status.h"
#include "ferry/columnar/types.h"
#include "ferry/transform/expr_ast.h"
#include "ferry/transform/time_zone.h"

namespace ferry::transform {

Status AnalyzeExpression(ExprNode* root, const columnar::Schema& schema, std::string_view text,
                         std::string_view origin, const TimeZone& zone);

}  // namespace ferry::transform

// The JSON encoding of Delta actions: one action per line, `{"<name>":{...}}`, as in commit files
// (_delta_log/<version>.json) and JSON v2 checkpoints.
//
// Reading follows the protocol's evolution rules: unknown actions and unknown fields are ignored;
// a missing required field or a field of the wrong type is corruption (DataLoss) naming the line.
// Writing emits fields in the order Spark writes them and omits absent optionals.
//
// Thread-safety: stateless functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/delta/actions.h"

namespace ferry::delta {

// Parses one line. nullopt for an action ferry does not know (the protocol says: ignore it).
// DataLoss for text that is not a JSON object or an action with a bad field.
Result<std::optional<Action>> ParseActionLine(std::string_view line);

// Parses a whole commit file. Blank lines are skipped. Errors name the 1-based line number; the
// caller adds the file name and version. A last line cut short (a torn write) is DataLoss.
Result<std::vector<Action>> ParseActions(std::string_view text);

// One line of JSON, without the newline.
std::string ActionToJson(const Action& action);

// Every action on its own line, each line ending in '\n'.
std::string ActionsToJson(const std::vector<Action>& actions);

}  // namespace ferry::delta

// A strict, iterative JSON syntax check (RFC 8259) for the parts of a message the JSON decoder
// does not decode: simdjson's On-Demand API skips unread values by counting brackets only, so
// `{"id": 1, "junk": [tru}` would otherwise pass. The text is assumed to be valid UTF-8 (simdjson
// checked the whole message). Nesting is limited by `max_depth`, without recursion, so a value
// of 100,000 nested arrays is an error rather than a stack overflow.
//
// Thread-safety: pure function.
#pragma once

#include <string>
#include <string_view>

namespace ferry::transform {

// True when `text` is exactly one JSON value (surrounding whitespace allowed); otherwise false
// with a short reason and byte offset in `*error`.
bool CheckJsonSyntax(std::string_view text, int max_depth, std::string* error);

}  // namespace ferry::transform

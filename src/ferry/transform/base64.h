// Base64 decoding for BINARY columns fed from JSON strings (RFC 4648). Both the standard
// (+/) and the URL-safe (-_) alphabets are accepted; '=' padding is optional but, when present,
// must be right. Whitespace is not accepted.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace ferry::transform {

// Appends the decoded bytes to `out`; false (and `out` possibly extended) on bad input.
bool DecodeBase64(std::string_view text, std::string* out);
std::string EncodeBase64(std::string_view bytes);

}  // namespace ferry::transform

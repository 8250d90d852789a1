// UTF-8 validation and code point helpers for the decoders (a STRING column holds valid UTF-8)
// and the string functions of expressions (length, substr, lower and upper count code points).
// IsValidUtf8 uses simdjson's vectorized validator; the rest is scalar.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ferry::transform {

bool IsValidUtf8(std::string_view s);
// Byte offset of the first invalid sequence, or std::string_view::npos.
size_t FindInvalidUtf8(std::string_view s);

// Code points in valid UTF-8 text (continuation bytes are not counted).
size_t CountCodePoints(std::string_view s);
// Byte offset of code point `index` (clamped to s.size()).
size_t CodePointOffset(std::string_view s, size_t index);

// Decodes the code point at `*pos` of valid UTF-8 and advances `*pos`.
uint32_t NextCodePoint(std::string_view s, size_t* pos);
void AppendCodePoint(uint32_t cp, std::string* out);

}  // namespace ferry::transform

#include "ferry/http/headers.h"

#include <algorithm>

namespace ferry::http {

namespace {
char LowerAscii(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}
}  // namespace

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (LowerAscii(a[i]) != LowerAscii(b[i])) {
      return false;
    }
  }
  return true;
}

std::string ToLowerAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = LowerAscii(c);
  }
  return out;
}

void HttpHeaders::Set(std::string_view name, std::string_view value) {
  Remove(name);
  Add(name, value);
}

void HttpHeaders::Add(std::string_view name, std::string_view value) {
  fields_.emplace_back(std::string(name), std::string(value));
}

void HttpHeaders::Remove(std::string_view name) {
  std::erase_if(fields_, [&](const Field& f) { return EqualsIgnoreCase(f.first, name); });
}

std::optional<std::string_view> HttpHeaders::Get(std::string_view name) const {
  for (const Field& f : fields_) {
    if (EqualsIgnoreCase(f.first, name)) {
      return std::string_view(f.second);
    }
  }
  return std::nullopt;
}

std::string_view HttpHeaders::GetOr(std::string_view name, std::string_view fallback) const {
  std::optional<std::string_view> v = Get(name);
  return v ? *v : fallback;
}

}  // namespace ferry::http

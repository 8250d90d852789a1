#include "ferry/storage/table_uri.h"

#include <fmt/format.h>

#include <cctype>

namespace ferry::storage {
namespace {

// `table "gs://b/t"` in messages, or just `"gs://b/t"` when the caller names the setting itself.
std::string Subject(std::string_view what, std::string_view text) {
  return what.empty() ? fmt::format("\"{}\"", text) : fmt::format("{} \"{}\"", what, text);
}

// RFC 3986: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), followed by ':'. Returns the
// scheme's length, or 0 when `text` does not start with one.
size_t SchemeLength(std::string_view text) {
  if (text.empty() || std::isalpha(static_cast<unsigned char>(text[0])) == 0) {
    return 0;
  }
  for (size_t i = 1; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == ':') {
      return i;
    }
    if (std::isalnum(c) == 0 && c != '+' && c != '-' && c != '.') {
      return 0;
    }
  }
  return 0;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::string TrimTrailingSlashes(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') {
    path.remove_suffix(1);
  }
  return std::string(path);
}

Result<TableUri> ParseFileUri(TableUri uri, std::string_view rest, std::string_view what) {
  // file:///abs/path or file://localhost/abs/path; file:/abs/path (one slash) as Hadoop writes.
  if (rest.starts_with("//")) {
    rest.remove_prefix(2);
    size_t slash = rest.find('/');
    std::string_view host = rest.substr(0, slash);
    if (!host.empty() && Lower(host) != "localhost") {
      return InvalidArgument(
          "{}: a file:// URI names a local path (file:///path); host '{}' is not local",
          Subject(what, uri.original), host);
    }
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  }
  if (!rest.starts_with('/')) {
    return InvalidArgument("{}: a file:// URI needs an absolute path (file:///path)",
                           Subject(what, uri.original));
  }
  uri.path = TrimTrailingSlashes(rest);
  return uri;
}

}  // namespace

std::string SupportedTableSchemes() {
  return "file:// (or a plain local path)";
}

Result<TableUri> ParseTableUri(std::string_view text, std::string_view what) {
  TableUri uri;
  uri.original = std::string(text);
  if (text.empty()) {
    return InvalidArgument("{} is empty: expected a local path or a URI ({})",
                           what.empty() ? "table location" : what, SupportedTableSchemes());
  }
  const size_t scheme_length = SchemeLength(text);
  if (scheme_length == 0) {
    uri.path = TrimTrailingSlashes(text);
    return uri;
  }
  uri.scheme = Lower(text.substr(0, scheme_length));
  std::string_view rest = text.substr(scheme_length + 1);
  if (uri.scheme == "file") {
    return ParseFileUri(std::move(uri), rest, what);
  }
  return InvalidArgument(
      "{}: scheme '{}' is not supported; supported: {}. (A local path that contains ':' can be "
      "written as ./{} or file:///absolute/path.)",
      Subject(what, uri.original), uri.scheme, SupportedTableSchemes(), uri.original);
}

std::string SiblingLocation(std::string_view location, std::string_view suffix) {
  std::string_view root = location;
  while (root.size() > 1 && root.back() == '/') {
    root.remove_suffix(1);
  }
  return std::string(root) + std::string(suffix);
}

}  // namespace ferry::storage

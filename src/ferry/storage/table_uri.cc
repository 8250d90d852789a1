#include "ferry/storage/table_uri.h"

#include <fmt/format.h>

#include <cctype>

#include "ferry/storage/object_store.h"

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

// s3://bucket[/prefix]: bucket names as S3 allows them (3-63 of a-z 0-9 . -), a prefix of valid
// key segments.
Result<TableUri> ParseS3Uri(TableUri uri, std::string_view rest, std::string_view what) {
  if (!rest.starts_with("//")) {
    return InvalidArgument("{}: an {} URI is {}://BUCKET/PREFIX", Subject(what, uri.original),
                           uri.scheme, uri.scheme);
  }
  rest.remove_prefix(2);
  const size_t slash = rest.find('/');
  uri.bucket = std::string(rest.substr(0, slash));
  std::string_view prefix = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
  while (!prefix.empty() && prefix.back() == '/') {
    prefix.remove_suffix(1);
  }
  uri.key_prefix = std::string(prefix);
  bool bucket_ok = uri.bucket.size() >= 3 && uri.bucket.size() <= 63;
  for (char c : uri.bucket) {
    bucket_ok =
        bucket_ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-');
  }
  if (!bucket_ok) {
    return InvalidArgument(
        "{}: '{}' is not a bucket name (3 to 63 lower-case letters, digits, '.' and '-')",
        Subject(what, uri.original), uri.bucket);
  }
  if (!uri.key_prefix.empty() && !ValidateKey(uri.key_prefix).ok()) {
    return InvalidArgument("{}: the key prefix '{}' has an empty, '.' or '..' segment",
                           Subject(what, uri.original), uri.key_prefix);
  }
  uri.kind = StoreKind::kS3;
  return uri;
}

}  // namespace

std::string TableUri::Canonical() const {
  switch (kind) {
    case StoreKind::kS3:
      return key_prefix.empty() ? "s3://" + bucket : "s3://" + bucket + "/" + key_prefix;
    case StoreKind::kLocal:
      break;
  }
  return path;
}

std::string SupportedTableSchemes() {
  return "file:// (or a plain local path), s3://, s3a://";
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
  if (uri.scheme == "s3" || uri.scheme == "s3a") {
    return ParseS3Uri(std::move(uri), rest, what);
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

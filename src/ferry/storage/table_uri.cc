#include "ferry/storage/table_uri.h"

#include <fmt/format.h>

#include <cctype>

#include "ferry/base/ascii.h"
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
    if (!host.empty() && AsciiLower(host) != "localhost") {
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

// Container names: 3-63 of a-z 0-9 '-', beginning and ending with a letter or digit, no "--".
bool IsContainerName(std::string_view name) {
  if (name.size() < 3 || name.size() > 63 || name.front() == '-' || name.back() == '-' ||
      name.find("--") != std::string_view::npos) {
    return false;
  }
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
      return false;
    }
  }
  return true;
}

// Account names: 3-24 of a-z 0-9.
bool IsAccountName(std::string_view name) {
  if (name.size() < 3 || name.size() > 24) {
    return false;
  }
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
      return false;
    }
  }
  return true;
}

// "account.dfs.core.windows.net" or "account.blob.<suffix>": sets the account and the Blob
// endpoint host.
Status ParseAzureHost(TableUri* uri, std::string_view host, std::string_view what) {
  const std::string lower = AsciiLower(host);
  const size_t dot = lower.find('.');
  const std::string account = lower.substr(0, dot);
  std::string_view rest = dot == std::string::npos ? "" : std::string_view(lower).substr(dot + 1);
  std::string_view suffix;
  if (rest.starts_with("blob.")) {
    suffix = rest.substr(5);
  } else if (rest.starts_with("dfs.")) {
    suffix = rest.substr(4);
  }
  if (suffix.empty() || !IsAccountName(account)) {
    return InvalidArgument(
        "{}: '{}' is not an Azure storage host (ACCOUNT.dfs.core.windows.net or "
        "ACCOUNT.blob.core.windows.net, the account 3 to 24 lower-case letters and digits)",
        Subject(what, uri->original), host);
  }
  uri->account = account;
  uri->host = account + ".blob." + std::string(suffix);
  return Status::OK();
}

// Sets the container and the prefix from "container/prefix..." (the path after the authority
// or the host), checking both.
Status SetAzureContainerAndPrefix(TableUri* uri, std::string_view container,
                                  std::string_view prefix, std::string_view what) {
  while (!prefix.empty() && prefix.back() == '/') {
    prefix.remove_suffix(1);
  }
  uri->bucket = std::string(container);
  uri->key_prefix = std::string(prefix);
  if (!IsContainerName(uri->bucket)) {
    return InvalidArgument(
        "{}: '{}' is not a container name (3 to 63 lower-case letters, digits and single '-', "
        "beginning and ending with a letter or digit)",
        Subject(what, uri->original), uri->bucket);
  }
  if (!uri->key_prefix.empty() && !ValidateKey(uri->key_prefix).ok()) {
    return InvalidArgument("{}: the blob name prefix '{}' has an empty, '.' or '..' segment",
                           Subject(what, uri->original), uri->key_prefix);
  }
  uri->kind = StoreKind::kAzure;
  return Status::OK();
}

// az://container[/prefix], azure://..., abfs[s]://container[/prefix], and all of them as
// SCHEME://container@host[/prefix].
Result<TableUri> ParseAzureUri(TableUri uri, std::string_view rest, std::string_view what) {
  if (!rest.starts_with("//")) {
    return InvalidArgument("{}: an {} URI is {}://CONTAINER/PREFIX or {}://CONTAINER@HOST/PREFIX",
                           Subject(what, uri.original), uri.scheme, uri.scheme, uri.scheme);
  }
  rest.remove_prefix(2);
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
  const size_t at = authority.find('@');
  if (at != std::string_view::npos) {
    FERRY_RETURN_IF_ERROR(ParseAzureHost(&uri, authority.substr(at + 1), what));
    authority = authority.substr(0, at);
  }
  FERRY_RETURN_IF_ERROR(SetAzureContainerAndPrefix(&uri, authority, path, what));
  return uri;
}

// https://account.blob.core.windows.net/container[/prefix] (or .dfs.).
Result<TableUri> ParseAzureHttpsUri(TableUri uri, std::string_view rest, std::string_view what) {
  if (!rest.starts_with("//")) {
    return InvalidArgument("{}: expected https://ACCOUNT.blob.core.windows.net/CONTAINER/PREFIX",
                           Subject(what, uri.original));
  }
  rest.remove_prefix(2);
  const size_t slash = rest.find('/');
  FERRY_RETURN_IF_ERROR(ParseAzureHost(&uri, rest.substr(0, slash), what));
  std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
  const size_t next = path.find('/');
  FERRY_RETURN_IF_ERROR(SetAzureContainerAndPrefix(
      &uri, path.substr(0, next), next == std::string_view::npos ? "" : path.substr(next + 1),
      what));
  return uri;
}

// GCS bucket names: 3 to 63 of a-z 0-9 '-' '_' '.', beginning and ending with a letter or digit;
// names with dots may be up to 222 long, in dot-separated parts of at most 63.
bool IsGcsBucketName(std::string_view name) {
  if (name.size() < 3 || name.size() > 222 ||
      std::isalnum(static_cast<unsigned char>(name.front())) == 0 ||
      std::isalnum(static_cast<unsigned char>(name.back())) == 0) {
    return false;
  }
  if (name.size() > 63 && name.find('.') == std::string_view::npos) {
    return false;
  }
  size_t part = 0;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.')) {
      return false;
    }
    part = c == '.' ? 0 : part + 1;
    if (part > 63) {
      return false;
    }
  }
  return true;
}

// gs://bucket[/prefix]: the object name prefix made of valid key segments.
Result<TableUri> ParseGcsUri(TableUri uri, std::string_view rest, std::string_view what) {
  if (!rest.starts_with("//")) {
    return InvalidArgument("{}: a gs URI is gs://BUCKET/PREFIX", Subject(what, uri.original));
  }
  rest.remove_prefix(2);
  const size_t slash = rest.find('/');
  uri.bucket = std::string(rest.substr(0, slash));
  std::string_view prefix = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
  while (!prefix.empty() && prefix.back() == '/') {
    prefix.remove_suffix(1);
  }
  uri.key_prefix = std::string(prefix);
  if (!IsGcsBucketName(uri.bucket)) {
    return InvalidArgument(
        "{}: '{}' is not a bucket name (3 to 63 lower-case letters, digits, '-', '_' and '.', "
        "beginning and ending with a letter or digit)",
        Subject(what, uri.original), uri.bucket);
  }
  if (!uri.key_prefix.empty() && !ValidateKey(uri.key_prefix).ok()) {
    return InvalidArgument("{}: the object name prefix '{}' has an empty, '.' or '..' segment",
                           Subject(what, uri.original), uri.key_prefix);
  }
  uri.kind = StoreKind::kGcs;
  return uri;
}

}  // namespace

std::string TableUri::Canonical() const {
  switch (kind) {
    case StoreKind::kS3:
      return key_prefix.empty() ? "s3://" + bucket : "s3://" + bucket + "/" + key_prefix;
    case StoreKind::kGcs:
      return key_prefix.empty() ? "gs://" + bucket : "gs://" + bucket + "/" + key_prefix;
    case StoreKind::kAzure: {
      std::string out = host.empty() ? "az://" + bucket : "https://" + host + "/" + bucket;
      return key_prefix.empty() ? out : out + "/" + key_prefix;
    }
    case StoreKind::kLocal:
      break;
  }
  return path;
}

std::string SupportedTableSchemes() {
  return "file:// (or a plain local path), s3://, s3a://, az://, azure://, abfs://, abfss://, "
         "https://ACCOUNT.blob.core.windows.net/, gs://";
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
  uri.scheme = AsciiLower(text.substr(0, scheme_length));
  std::string_view rest = text.substr(scheme_length + 1);
  if (uri.scheme == "file") {
    return ParseFileUri(std::move(uri), rest, what);
  }
  if (uri.scheme == "s3" || uri.scheme == "s3a") {
    return ParseS3Uri(std::move(uri), rest, what);
  }
  if (uri.scheme == "az" || uri.scheme == "azure" || uri.scheme == "abfs" ||
      uri.scheme == "abfss") {
    return ParseAzureUri(std::move(uri), rest, what);
  }
  if (uri.scheme == "gs") {
    return ParseGcsUri(std::move(uri), rest, what);
  }
  if (uri.scheme == "https") {
    return ParseAzureHttpsUri(std::move(uri), rest, what);
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

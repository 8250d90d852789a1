// TomlTable: a typed, position-aware view of one TOML table, used by the section readers
// (config.cc, config_pipeline.cc, config_sources.cc) to read keys with errors that name
// file:line:column and the dotted key, and to reject unknown keys.
//
// Every getter records the key as known, present or not; Finish() then reports any key of the
// table that no getter asked for (with the closest known key as a suggestion). String values go
// through ${ENV} interpolation.
//
// Internal to the config layer: only its .cc files include this header, because it pulls in
// toml++ (slow to compile). Debian's shared toml++ is built with exceptions: toml::parse throws
// toml::parse_error, which config.cc catches right at the call (the adapter boundary).
// Thread-safety: none; one reader per parse.
#pragma once

#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "ferry/base/result.h"
#include "ferry/config/config.h"

namespace ferry::config::internal {

struct ParseContext {
  std::string file;
  const EnvLookup* env = nullptr;
  std::vector<std::string>* secrets = nullptr;
};

class TomlTable {
 public:
  // `path` is the dotted key of this table ("" for the root, "pipeline[0].kafka", ...).
  TomlTable(const toml::table& table, std::string path, ParseContext* ctx);

  Result<std::optional<std::string>> String(std::string_view key, bool secret = false);
  // A string that must be given and non-empty; `Error("", missing)` (at the table) otherwise.
  Result<std::string> RequiredString(std::string_view key, std::string_view missing);
  // A string that, when given, must be one of `choices`; `Error(key, expected)` otherwise.
  Result<std::optional<std::string>> OneOf(std::string_view key,
                                           std::initializer_list<std::string_view> choices,
                                           std::string_view expected);
  Result<std::optional<int64_t>> Int(std::string_view key);
  Result<std::optional<double>> Number(std::string_view key);
  Result<std::optional<bool>> Bool(std::string_view key);
  // A string or an array of strings.
  Result<std::optional<std::vector<std::string>>> StringList(std::string_view key);
  // "64MB" or an integer number of bytes.
  Result<std::optional<int64_t>> Size(std::string_view key);
  // "1s" or an integer number of milliseconds.
  Result<std::optional<Duration>> DurationValue(std::string_view key);
  // A sub-table (inline or not).
  Result<std::optional<TomlTable>> Table(std::string_view key);
  // An array of tables ([[key]]).
  Result<std::vector<TomlTable>> TableArray(std::string_view key);
  // Every key/value of a sub-table whose values are strings, numbers or booleans, rendered as
  // strings (for pass-through maps like librdkafka properties). `secret_keys` decides which
  // values are secrets.
  Result<std::optional<std::vector<std::pair<std::string, std::string>>>> StringMap(
      std::string_view key, bool (*is_secret)(std::string_view) = nullptr);

  // Records a secret found inside a value (e.g. the password of a URL) for redaction.
  void AddSecret(std::string value);

  // Errors for keys no getter asked for.
  Status Finish() const;

  // "file:line:col: path.key: message" at `key` (or at the table when key is empty).
  Status Error(std::string_view key, std::string_view message) const;
  SourceLocation Location(std::string_view key) const;
  const std::string& path() const { return path_; }

 private:
  const toml::node* Get(std::string_view key);
  std::string KeyPath(std::string_view key) const;
  Result<std::string> InterpolateAt(std::string_view key, std::string_view value, bool secret);

  const toml::table* table_;
  std::string path_;
  ParseContext* ctx_;
  std::set<std::string, std::less<>> known_;
};

}  // namespace ferry::config::internal

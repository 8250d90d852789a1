// Storage options: how a table's store is reached (credentials, endpoint, region, addressing,
// transfer sizes) of S3, Azure and Google Cloud Storage. Names follow delta-rs / the Rust
// object_store crate, so that a user's existing `storage_options` carry over: `aws_access_key_id`,
// `aws_endpoint_url`, `azure_storage_account_key`, `google_service_account`, ... Keys are
// case-insensitive (`AWS_REGION` = `aws_region`), and the short aliases those crates accept
// (`region`, `endpoint`, `access_key_id`, ...) map to the canonical name.
//
// Where they come from, the first that sets a key winning:
//   1. `--storage-option KEY=VALUE` on the command line;
//   2. `[pipeline.storage]` of the pipeline;
//   3. `[storage]`, global to the file;
//   4. the environment: each canonical `aws_*` / `azure_*` name read as its upper-case variable
//      (AWS_ENDPOINT_URL, AWS_REGION, AWS_ALLOW_HTTP, AZURE_STORAGE_ACCOUNT_NAME, ...), and the
//      `azure_*` aliases likewise (AZURE_CLIENT_ID, AZURE_TENANT_ID, AZURE_FEDERATED_TOKEN_FILE,
//      AZURE_AUTHORITY_HOST, as AKS sets them), each `google_*` name and alias likewise
//      (GOOGLE_SERVICE_ACCOUNT, GOOGLE_SERVICE_ACCOUNT_KEY, GOOGLE_BUCKET, ... as the
//      object_store crate reads them), STORAGE_EMULATOR_HOST as Google's clients read it, plus
//      AWS_DEFAULT_REGION for the region. (The AWS credential variables and
//      GOOGLE_APPLICATION_CREDENTIALS are read by the credential chains themselves, in their
//      order: storage/s3/credentials.h, storage/gcs/.)
//
// Thread-safety: values and pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"

namespace ferry::storage {

// Canonical (lower-case) name -> value.
using StorageOptions = std::map<std::string, std::string>;

struct StorageOptionSpec {
  std::string_view name;  // canonical, lower case
  std::vector<std::string_view> aliases;
  bool secret = false;
  std::string_view help;
};

// Every option ferry knows, in documentation order.
const std::vector<StorageOptionSpec>& KnownStorageOptions();

// The canonical name of `key` (any case, canonical or alias); nullopt for an unknown key.
std::optional<std::string> CanonicalStorageOption(std::string_view key);

// Whether a value of `key` is a secret (redacted from logs and messages).
bool IsSecretStorageOption(std::string_view key);

// `raw` with every key made canonical. InvalidArgument for an unknown key, naming it and the
// closest known name, or for one option given twice under two names; `origin` says where the
// options were written ("--storage-option", "ferry.toml:7: [storage]").
Result<StorageOptions> NormalizeStorageOptions(
    const std::vector<std::pair<std::string, std::string>>& raw, std::string_view origin);

// "KEY=VALUE" of `--storage-option`. InvalidArgument without '='.
Result<std::pair<std::string, std::string>> ParseStorageOptionFlag(std::string_view flag);

// Layers of options, highest precedence first, merged: a key takes the first layer's value.
StorageOptions MergeStorageOptions(const std::vector<const StorageOptions*>& layers);

// Options from the environment (step 4 of the header), as canonical names.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;
StorageOptions StorageOptionsFromEnvironment(const EnvLookup& env);

// A boolean option: "true"/"false"/"1"/"0"/"yes"/"no" (any case). InvalidArgument naming the key
// otherwise; `fallback` when absent.
Result<bool> BoolOption(const StorageOptions& options, std::string_view key, bool fallback);

// A duration option: "30s", "500ms", "2m", "1h", or a number of seconds. InvalidArgument naming
// the key otherwise; `fallback` when absent.
Result<std::chrono::milliseconds> DurationOption(const StorageOptions& options,
                                                 std::string_view key,
                                                 std::chrono::milliseconds fallback);
// A size option: "16MiB", "8MB", "512KiB", or a number of bytes. InvalidArgument naming the key
// otherwise; `fallback` when absent.
Result<int64_t> SizeOption(const StorageOptions& options, std::string_view key, int64_t fallback);
// A non-negative integer option.
Result<int64_t> IntOption(const StorageOptions& options, std::string_view key, int64_t fallback);
// The value of `key`, or "" when absent.
std::string OptionOr(const StorageOptions& options, std::string_view key,
                     std::string_view fallback = "");

// `options` as "key=value, ..." with secrets shown as "<redacted>" (for logs).
std::string DescribeStorageOptions(const StorageOptions& options);

}  // namespace ferry::storage

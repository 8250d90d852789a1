#include "ferry/storage/storage_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>

#include "ferry/base/ascii.h"

namespace ferry::storage {
namespace {

// Levenshtein distance, for "did you mean".
size_t Distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) {
    row[j] = j;
  }
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

const std::vector<StorageOptionSpec>& KnownStorageOptions() {
  static const std::vector<StorageOptionSpec> kOptions = {
      // S3 and S3-compatible stores.
      {"aws_access_key_id", {"access_key_id"}, false, "access key id (with the secret key)"},
      {"aws_secret_access_key", {"secret_access_key"}, true, "secret access key"},
      {"aws_session_token",
       {"session_token", "aws_token", "token"},
       true,
       "session token of temporary credentials"},
      {"aws_profile", {"profile"}, false, "profile of ~/.aws/credentials and ~/.aws/config"},
      {"aws_region",
       {"region", "aws_default_region", "default_region"},
       false,
       "region (default: from the profile, else us-east-1)"},
      {"aws_endpoint_url",
       {"aws_endpoint", "endpoint_url", "endpoint"},
       false,
       "endpoint of an S3-compatible store (MinIO, Ceph RGW, R2), e.g. http://127.0.0.1:7480"},
      {"aws_allow_http",
       {"allow_http", "azure_allow_http"},
       false,
       "allow an http:// endpoint, on S3 and Azure (default false)"},
      {"aws_virtual_hosted_style_request",
       {"virtual_hosted_style_request"},
       false,
       "bucket in the host name (bucket.endpoint) instead of the path (default false; AWS "
       "endpoints without aws_endpoint_url are always virtual-hosted)"},
      {"aws_s3_allow_unsafe_rename",
       {"allow_unsafe_rename"},
       false,
       "write even when the store ignores If-None-Match (one writer per table only; default "
       "false)"},
      {"aws_ca_bundle",
       {"ca_bundle"},
       false,
       "PEM file of extra CA certificates to trust, on S3 and Azure"},
      // Azure Blob Storage and ADLS Gen2.
      {"azure_storage_account_name",
       {"account_name"},
       false,
       "storage account (when the location does not name it)"},
      {"azure_storage_account_key",
       {"azure_storage_access_key", "azure_storage_master_key", "account_key", "access_key",
        "master_key"},
       true,
       "account key: Shared Key authorization"},
      {"azure_storage_sas_key",
       {"azure_storage_sas_token", "sas_key", "sas_token"},
       true,
       "shared access signature (the query string, with or without '?')"},
      {"azure_storage_token", {"bearer_token"}, true, "Entra ID access token, used as is"},
      {"azure_storage_client_id",
       {"azure_client_id", "client_id"},
       false,
       "Entra ID application (client) id, for a client secret or workload identity"},
      {"azure_storage_client_secret",
       {"azure_client_secret", "client_secret"},
       true,
       "Entra ID client secret"},
      {"azure_storage_tenant_id",
       {"azure_tenant_id", "tenant_id", "azure_storage_authority_id", "azure_authority_id",
        "authority_id"},
       false,
       "Entra ID tenant id"},
      {"azure_federated_token_file",
       {"federated_token_file"},
       false,
       "file of a federated token (workload identity, as AKS mounts it)"},
      {"azure_storage_authority_host",
       {"azure_authority_host", "authority_host"},
       false,
       "Entra ID authority (default https://login.microsoftonline.com)"},
      {"azure_storage_endpoint",
       {"azure_endpoint"},
       false,
       "the account's Blob endpoint, everything before /CONTAINER (default "
       "https://ACCOUNT.blob.core.windows.net)"},
      {"azure_storage_use_emulator",
       {"azure_use_emulator", "use_emulator"},
       false,
       "the local storage emulator (Azurite): its account and key, http://127.0.0.1:10000 or "
       "AZURITE_BLOB_STORAGE_URL (default false)"},
      // Google Cloud Storage.
      {"google_bucket",
       {"google_bucket_name", "bucket", "bucket_name"},
       false,
       "bucket (the gs:// location names it; when both are given they must agree)"},
      {"google_service_account",
       {"service_account", "google_service_account_path", "service_account_path"},
       false,
       "path of a service account key file (JSON)"},
      {"google_service_account_key",
       {"service_account_key"},
       true,
       "a service account key (the JSON itself)"},
      {"google_application_credentials",
       {},
       false,
       "path of an Application Default Credentials file (a service account key, an authorized "
       "user or an external account file), as GOOGLE_APPLICATION_CREDENTIALS"},
      {"google_skip_signature",
       {"skip_signature"},
       false,
       "send GCS requests without credentials (public buckets; default false)"},
      {"storage_emulator_host",
       {},
       false,
       "a GCS emulator (fake-gcs-server), host:port or http://host:port, as "
       "STORAGE_EMULATOR_HOST: every GCS request goes there, anonymously unless credentials are "
       "configured"},
      // Every store.
      {"allow_invalid_certificates",
       {"aws_allow_invalid_certificates"},
       false,
       "skip TLS certificate verification (development endpoints only; default false)"},
      {"connect_timeout", {}, false, "connection setup timeout (default 10s)"},
      {"timeout", {"request_timeout"}, false, "deadline of one request (default 60s)"},
      {"max_retries", {}, false, "attempts of one request in all (default 10)"},
      {"retry_timeout", {}, false, "how long one call retries, in all (default 3m)"},
      {"upload_part_size",
       {"multipart_part_size"},
       false,
       "size of the parts of a multipart upload (Azure: of the blocks), and the size from which a "
       "file is uploaded in parts (default 16MiB; at least 5MiB on S3, 64KiB on Azure)"},
      {"upload_parts_in_flight",
       {"multipart_concurrency"},
       false,
       "parts of one file uploaded at once (default 4)"},
  };
  return kOptions;
}

std::optional<std::string> CanonicalStorageOption(std::string_view key) {
  const std::string lower = AsciiLower(key);
  for (const StorageOptionSpec& spec : KnownStorageOptions()) {
    if (spec.name == lower ||
        std::find(spec.aliases.begin(), spec.aliases.end(), lower) != spec.aliases.end()) {
      return std::string(spec.name);
    }
  }
  return std::nullopt;
}

bool IsSecretStorageOption(std::string_view key) {
  std::optional<std::string> name = CanonicalStorageOption(key);
  if (!name) {
    // Unknown keys are refused later; until then, treat anything that looks secret as such.
    const std::string lower = AsciiLower(key);
    return lower.find("secret") != std::string::npos || lower.find("token") != std::string::npos ||
           lower.find("key") != std::string::npos || lower.find("password") != std::string::npos;
  }
  for (const StorageOptionSpec& spec : KnownStorageOptions()) {
    if (spec.name == *name) {
      return spec.secret;
    }
  }
  return false;
}

Result<StorageOptions> NormalizeStorageOptions(
    const std::vector<std::pair<std::string, std::string>>& raw, std::string_view origin) {
  StorageOptions out;
  std::map<std::string, std::string> given_as;
  for (const auto& [key, value] : raw) {
    std::optional<std::string> name = CanonicalStorageOption(key);
    if (!name) {
      std::string_view best;
      size_t best_distance = 4;
      for (const StorageOptionSpec& spec : KnownStorageOptions()) {
        size_t d = Distance(AsciiLower(key), spec.name);
        if (d < best_distance) {
          best_distance = d;
          best = spec.name;
        }
      }
      return InvalidArgument(
          "{}: unknown storage option '{}'{} (docs/storage.md lists them)", origin, key,
          best.empty() ? std::string() : fmt::format("; did you mean '{}'?", best));
    }
    auto [it, inserted] = given_as.emplace(*name, key);
    if (!inserted) {
      return InvalidArgument("{}: storage option '{}' is given twice (as '{}' and '{}')", origin,
                             *name, it->second, key);
    }
    out[*name] = value;
  }
  return out;
}

Result<std::pair<std::string, std::string>> ParseStorageOptionFlag(std::string_view flag) {
  size_t eq = flag.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return InvalidArgument("--storage-option '{}': expected KEY=VALUE, e.g. aws_region=eu-west-1",
                           flag.substr(0, flag.find('=')));
  }
  return std::make_pair(std::string(flag.substr(0, eq)), std::string(flag.substr(eq + 1)));
}

StorageOptions MergeStorageOptions(const std::vector<const StorageOptions*>& layers) {
  StorageOptions out;
  for (const StorageOptions* layer : layers) {
    if (layer == nullptr) {
      continue;
    }
    for (const auto& [key, value] : *layer) {
      out.emplace(key, value);  // an earlier layer's value stays
    }
  }
  return out;
}

StorageOptions StorageOptionsFromEnvironment(const EnvLookup& env) {
  StorageOptions out;
  for (const StorageOptionSpec& spec : KnownStorageOptions()) {
    // The canonical name, then the azure_ aliases (AZURE_CLIENT_ID and the other names the AKS
    // workload identity webhook sets) and the google_ ones (GOOGLE_SERVICE_ACCOUNT_PATH, as the
    // object_store crate reads every GOOGLE_* variable).
    std::vector<std::string_view> names;
    if (spec.name.starts_with("aws_") && spec.name != "aws_access_key_id" &&
        spec.name != "aws_secret_access_key" && spec.name != "aws_session_token" &&
        spec.name != "aws_profile") {
      // (AWS credentials and the profile: the credential chain reads them in its order.)
      names.push_back(spec.name);
    } else if (spec.name.starts_with("azure_") || spec.name == "storage_emulator_host" ||
               (spec.name.starts_with("google_") &&
                spec.name != "google_application_credentials")) {
      // (GOOGLE_APPLICATION_CREDENTIALS: the credential chain reads it in its order, and not
      // with an emulator, as Google's clients do.)
      names.push_back(spec.name);
    }
    for (std::string_view alias : spec.aliases) {
      if (alias.starts_with("azure_") || alias.starts_with("google_")) {
        names.push_back(alias);
      }
    }
    for (std::string_view name : names) {
      if (std::optional<std::string> v = env(AsciiUpper(name)); v && !v->empty()) {
        out[std::string(spec.name)] = *v;
        break;
      }
    }
  }
  if (out.count("aws_region") == 0) {
    if (std::optional<std::string> v = env("AWS_DEFAULT_REGION"); v && !v->empty()) {
      out["aws_region"] = *v;
    }
  }
  if (out.count("aws_endpoint_url") == 0) {
    // The AWS CLI's service-specific form.
    if (std::optional<std::string> v = env("AWS_ENDPOINT_URL_S3"); v && !v->empty()) {
      out["aws_endpoint_url"] = *v;
    }
  }
  return out;
}

Result<bool> BoolOption(const StorageOptions& options, std::string_view key, bool fallback) {
  auto it = options.find(std::string(key));
  if (it == options.end()) {
    return fallback;
  }
  const std::string v = AsciiLower(it->second);
  if (v == "true" || v == "1" || v == "yes" || v == "on") {
    return true;
  }
  if (v == "false" || v == "0" || v == "no" || v == "off" || v.empty()) {
    return false;
  }
  return InvalidArgument("storage option {} = '{}': expected true or false", key, it->second);
}

namespace {

// "16MiB" -> (16, "MiB"); nullopt when the number part is missing or malformed.
std::optional<std::pair<double, std::string>> NumberAndUnit(std::string_view text) {
  size_t i = 0;
  while (i < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[i])) != 0 || text[i] == '.')) {
    ++i;
  }
  if (i == 0) {
    return std::nullopt;
  }
  double number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + i, number);
  if (ec != std::errc() || end != text.data() + i) {
    return std::nullopt;
  }
  std::string_view unit = text.substr(i);
  while (!unit.empty() && unit.front() == ' ') {
    unit.remove_prefix(1);
  }
  return std::make_pair(number, AsciiLower(unit));
}

}  // namespace

Result<std::chrono::milliseconds> DurationOption(const StorageOptions& options,
                                                 std::string_view key,
                                                 std::chrono::milliseconds fallback) {
  auto it = options.find(std::string(key));
  if (it == options.end()) {
    return fallback;
  }
  auto parsed = NumberAndUnit(it->second);
  static const std::map<std::string, double> kMillis = {
      {"", 1000},    {"ms", 1},       {"s", 1000},     {"sec", 1000},
      {"m", 60'000}, {"min", 60'000}, {"h", 3'600'000}};
  auto unit = parsed ? kMillis.find(parsed->second) : kMillis.end();
  if (unit == kMillis.end()) {
    return InvalidArgument("storage option {} = '{}': expected a duration such as 30s, 500ms or 2m",
                           key, it->second);
  }
  return std::chrono::milliseconds(static_cast<int64_t>(parsed->first * unit->second));
}

Result<int64_t> SizeOption(const StorageOptions& options, std::string_view key, int64_t fallback) {
  auto it = options.find(std::string(key));
  if (it == options.end()) {
    return fallback;
  }
  auto parsed = NumberAndUnit(it->second);
  static const std::map<std::string, double> kBytes = {
      {"", 1},       {"b", 1},         {"kb", 1e3},        {"mb", 1e6},
      {"gb", 1e9},   {"kib", 1024.0},  {"mib", 1048576.0}, {"gib", 1073741824.0},
      {"k", 1024.0}, {"m", 1048576.0}, {"g", 1073741824.0}};
  auto unit = parsed ? kBytes.find(parsed->second) : kBytes.end();
  if (unit == kBytes.end()) {
    return InvalidArgument("storage option {} = '{}': expected a size such as 16MiB or 8MB", key,
                           it->second);
  }
  return static_cast<int64_t>(parsed->first * unit->second);
}

Result<int64_t> IntOption(const StorageOptions& options, std::string_view key, int64_t fallback) {
  auto it = options.find(std::string(key));
  if (it == options.end()) {
    return fallback;
  }
  int64_t value = -1;
  auto [p, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), value);
  if (ec != std::errc() || p != it->second.data() + it->second.size() || value < 0) {
    return InvalidArgument("storage option {} = '{}': expected a non-negative integer", key,
                           it->second);
  }
  return value;
}

std::string OptionOr(const StorageOptions& options, std::string_view key,
                     std::string_view fallback) {
  auto it = options.find(std::string(key));
  return it == options.end() ? std::string(fallback) : it->second;
}

std::string DescribeStorageOptions(const StorageOptions& options) {
  std::string out;
  for (const auto& [key, value] : options) {
    out += fmt::format("{}{}={}", out.empty() ? "" : ", ", key,
                       IsSecretStorageOption(key) ? "<redacted>" : value);
  }
  return out;
}

}  // namespace ferry::storage

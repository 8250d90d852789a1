#include "ferry/app/table_location.h"

#include <cstdlib>

#include <CLI/CLI.hpp>

namespace ferry::app {

Result<std::shared_ptr<storage::ObjectStore>> OpenStoreAt(const std::string& location,
                                                          const storage::StorageOptions& options,
                                                          storage::OpenMode mode) {
  FERRY_ASSIGN_OR_RETURN(storage::TableUri uri, storage::ParseTableUri(location));
  const storage::StorageOptions env = storage::StorageOptionsFromEnvironment(
      [](std::string_view name) -> std::optional<std::string> {
        const char* v = std::getenv(std::string(name).c_str());
        return v == nullptr ? std::nullopt : std::optional<std::string>(v);
      });
  return storage::OpenTableStore(uri, storage::MergeStorageOptions({&options, &env}), mode);
}

Result<std::unique_ptr<delta::Table>> OpenTableAt(const std::string& location,
                                                  const storage::StorageOptions& options,
                                                  storage::OpenMode mode) {
  FERRY_ASSIGN_OR_RETURN(std::shared_ptr<storage::ObjectStore> store,
                         OpenStoreAt(location, options, mode));
  return delta::Table::Open(std::move(store), "");
}

void AddStorageOptionFlag(CLI::App* command, std::vector<std::string>* flags) {
  command->add_option("--storage-option", *flags,
                      "Storage option KEY=VALUE for the table's store (repeatable; e.g. "
                      "aws_region=eu-west-1; docs/storage.md lists them)");
}

Result<storage::StorageOptions> StorageOptionsFromFlags(const std::vector<std::string>& flags) {
  std::vector<std::pair<std::string, std::string>> raw;
  for (const std::string& flag : flags) {
    FERRY_ASSIGN_OR_RETURN(auto kv, storage::ParseStorageOptionFlag(flag));
    raw.push_back(std::move(kv));
  }
  return storage::NormalizeStorageOptions(raw, "--storage-option");
}

}  // namespace ferry::app

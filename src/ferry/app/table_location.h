// Opening the tables users name: the Delta table at a location a user wrote (a local path or a
// URI, parsed by storage/table_uri.h), on the store that location names, with the storage
// options that apply to it. Every command that takes a table (`table inspect|history`, `verify`,
// `optimize`, `vacuum`, `status`, the maintenance scheduler and the pipelines of `run`) opens it
// here, so all of them accept the same locations and options and refuse the same unsupported
// schemes with the same message.
//
// Storage options, highest precedence first (storage/storage_options.h): `--storage-option
// KEY=VALUE` flags, the configuration's [pipeline.storage] and [storage] (when a configuration is
// involved), the environment.
//
// Thread-safety: thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/delta/table.h"
#include "ferry/storage/store_factory.h"

namespace CLI {
class App;
}

namespace ferry::app {

// InvalidArgument for a location ferry does not serve (the message names the scheme and lists
// the supported ones) or bad options; NotFound when the location does not exist (kExisting). The
// table itself need not exist yet: LoadSnapshot answers NotFound then. `options` are the
// explicit ones (flags over configuration); the environment's are applied beneath them.
Result<std::unique_ptr<delta::Table>> OpenTableAt(
    const std::string& location, const storage::StorageOptions& options,
    storage::OpenMode mode = storage::OpenMode::kExisting);

// The store alone (the pipelines open their tables through pipeline/table_setup.h). Same rules.
Result<std::shared_ptr<storage::ObjectStore>> OpenStoreAt(const std::string& location,
                                                          const storage::StorageOptions& options,
                                                          storage::OpenMode mode);

// Adds the repeatable `--storage-option KEY=VALUE` flag to a command.
void AddStorageOptionFlag(CLI::App* command, std::vector<std::string>* flags);
// The flags as canonical options. InvalidArgument naming a malformed or unknown one.
Result<storage::StorageOptions> StorageOptionsFromFlags(const std::vector<std::string>& flags);

}  // namespace ferry::app

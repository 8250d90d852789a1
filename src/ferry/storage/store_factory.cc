#include "ferry/storage/store_factory.h"

#include <filesystem>
#include <system_error>

#include "ferry/storage/local_store.h"

namespace ferry::storage {

Result<std::shared_ptr<ObjectStore>> OpenTableStore(const TableUri& uri,
                                                    const StorageOptions& /*options*/,
                                                    OpenMode mode) {
  std::error_code ec;
  if (mode == OpenMode::kCreate) {
    std::filesystem::create_directories(uri.path, ec);
    if (ec) {
      return IOError("cannot create directory {}: {}", uri.path, ec.message());
    }
  } else if (!std::filesystem::is_directory(uri.path, ec)) {
    return NotFound("{}: no such directory", uri.path);
  }
  FERRY_ASSIGN_OR_RETURN(auto store, LocalStore::Create(uri.path));
  return std::shared_ptr<ObjectStore>(std::move(store));
}

}  // namespace ferry::storage

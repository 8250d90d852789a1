#include "ferry/storage/store_factory.h"

#include <filesystem>
#include <system_error>

#include "ferry/storage/azure/azure_store.h"
#include "ferry/storage/gcs/gcs_store.h"
#include "ferry/storage/local_store.h"
#include "ferry/storage/s3/s3_store.h"

namespace ferry::storage {

Result<std::shared_ptr<ObjectStore>> OpenTableStore(const TableUri& uri,
                                                    const StorageOptions& options, OpenMode mode) {
  switch (uri.kind) {
    case StoreKind::kS3: {
      // An object store has no directories: the table's location exists once it has an object.
      FERRY_ASSIGN_OR_RETURN(std::unique_ptr<s3::S3Store> store,
                             s3::OpenS3Store(uri.bucket, uri.key_prefix, options));
      return std::shared_ptr<ObjectStore>(std::move(store));
    }
    case StoreKind::kAzure: {
      FERRY_ASSIGN_OR_RETURN(std::unique_ptr<azure::AzureBlobStore> store,
                             azure::OpenAzureStore(uri, options));
      return std::shared_ptr<ObjectStore>(std::move(store));
    }
    case StoreKind::kGcs: {
      FERRY_ASSIGN_OR_RETURN(std::unique_ptr<gcs::GcsStore> store, gcs::OpenGcsStore(uri, options));
      return std::shared_ptr<ObjectStore>(std::move(store));
    }
    case StoreKind::kLocal:
      break;
  }
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

#include "ferry/app/table_location.h"

namespace ferry::app {

Result<std::unique_ptr<delta::Table>> OpenTableAt(const std::string& location,
                                                  const storage::StorageOptions& options,
                                                  storage::OpenMode mode) {
  FERRY_ASSIGN_OR_RETURN(storage::TableUri uri, storage::ParseTableUri(location));
  FERRY_ASSIGN_OR_RETURN(std::shared_ptr<storage::ObjectStore> store,
                         storage::OpenTableStore(uri, options, mode));
  return delta::Table::Open(std::move(store), "");
}

}  // namespace ferry::app

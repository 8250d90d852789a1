#include "azure_torture_store.h"

#include <fmt/format.h>

namespace ferry::fault {
namespace {

constexpr char kContainer[] = "torture";

}  // namespace

Result<std::unique_ptr<AzureTortureStore>> AzureTortureStore::Start(uint64_t seed,
                                                                    int64_t memory_limit_mb) {
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<testing::Azurite> azurite,
                         testing::Azurite::Start({.memory_limit_mb = memory_limit_mb}));
  FERRY_RETURN_IF_ERROR(azurite->CreateContainer(kContainer));
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<StoreFaultProxy> proxy,
                         StoreFaultProxy::Start(azurite->port(), seed, StoreDialect::kAzure));
  return std::unique_ptr<AzureTortureStore>(
      new AzureTortureStore(std::move(azurite), std::move(proxy)));
}

std::vector<std::string> AzureTortureStore::ChildEnv() const {
  // The emulator's variables alone, as the Azure SDKs and delta-rs read them; the account's path
  // on the proxy's port.
  return {
      "AZURE_STORAGE_USE_EMULATOR=true",
      fmt::format("AZURE_STORAGE_ENDPOINT={}/{}", proxy_->endpoint(), testing::Azurite::account())};
}

storage::StorageOptions AzureTortureStore::DirectOptions() const {
  // Quick to give up: the harness polls.
  return {{"azure_storage_use_emulator", "true"},
          {"azure_storage_endpoint", azurite_->endpoint()},
          {"connect_timeout", "1s"},
          {"timeout", "10s"},
          {"max_retries", "2"}};
}

TableLocation AzureTortureStore::Table(const std::string& name) const {
  return TableLocation::Remote(fmt::format("az://{}/{}", kContainer, name), ChildEnv(),
                               {"timeout=5s", "max_retries=4"}, DirectOptions());
}

Status AzureTortureStore::TakeDown() {
  proxy_->SetDown(true);
  return Status::OK();
}

Status AzureTortureStore::BringBack() {
  proxy_->SetDown(false);
  return azurite_->Alive() ? Status::OK()
                           : Unavailable("azurite on port {} died", azurite_->port());
}

std::string AzureTortureStore::ServerLog() const {
  return azurite_->Log();
}

}  // namespace ferry::fault

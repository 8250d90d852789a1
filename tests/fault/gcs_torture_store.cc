#include "gcs_torture_store.h"

#include <fmt/format.h>

namespace ferry::fault {
namespace {

constexpr char kGcsBucket[] = "torture";

}  // namespace

Result<std::unique_ptr<GcsTortureStore>> GcsTortureStore::Start(uint64_t seed) {
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<testing::FakeGcs> gcs, testing::FakeGcs::Start());
  FERRY_RETURN_IF_ERROR(gcs->CreateBucket(kGcsBucket));
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<StoreFaultProxy> proxy,
                         StoreFaultProxy::Start(gcs->port(), seed, StoreDialect::kGcs));
  return std::unique_ptr<GcsTortureStore>(new GcsTortureStore(std::move(gcs), std::move(proxy)));
}

std::vector<std::string> GcsTortureStore::ChildEnv() const {
  // The emulator's variable alone, host:port as Google's clients take it, naming the proxy.
  const std::string endpoint = proxy_->endpoint();
  return {"STORAGE_EMULATOR_HOST=" + endpoint.substr(endpoint.find("//") + 2)};
}

storage::StorageOptions GcsTortureStore::DirectOptions() const {
  // Quick to give up: the harness polls.
  return {{"storage_emulator_host", gcs_->endpoint()},
          {"connect_timeout", "1s"},
          {"timeout", "10s"},
          {"max_retries", "2"}};
}

TableLocation GcsTortureStore::Table(const std::string& name) const {
  return TableLocation::Remote(fmt::format("gs://{}/{}", kGcsBucket, name), ChildEnv(),
                               {"timeout=5s", "max_retries=4"}, DirectOptions());
}

Status GcsTortureStore::TakeDown() {
  proxy_->SetDown(true);
  return Status::OK();
}

Status GcsTortureStore::BringBack() {
  proxy_->SetDown(false);
  return gcs_->Alive() ? Status::OK()
                       : Unavailable("fake-gcs-server on port {} died", gcs_->port());
}

std::string GcsTortureStore::ServerLog() const {
  return gcs_->Log();
}

}  // namespace ferry::fault

#include "s3_torture_store.h"

#include <fmt/format.h>

namespace ferry::fault {
namespace {

constexpr char kBucket[] = "torture";

}  // namespace

Result<std::unique_ptr<S3TortureStore>> S3TortureStore::Start(uint64_t seed,
                                                              int64_t memstore_bytes) {
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<testing::RadosGw> rgw,
                         testing::RadosGw::Start({.memstore_bytes = memstore_bytes}));
  FERRY_RETURN_IF_ERROR(rgw->CreateBucket(kBucket));
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<StoreFaultProxy> proxy,
                         StoreFaultProxy::Start(rgw->port(), seed));
  return std::unique_ptr<S3TortureStore>(new S3TortureStore(std::move(rgw), std::move(proxy)));
}

std::vector<std::string> S3TortureStore::ChildEnv() const {
  // The standard variables alone, as delta-rs and the AWS CLI read them.
  return {"AWS_ENDPOINT_URL=" + proxy_->endpoint(), "AWS_ACCESS_KEY_ID=" + rgw_->access_key(),
          "AWS_SECRET_ACCESS_KEY=" + rgw_->secret_key(), "AWS_REGION=" + rgw_->region(),
          "AWS_ALLOW_HTTP=true"};
}

storage::StorageOptions S3TortureStore::DirectOptions() const {
  // Quick to give up: the harness polls, and must not hang while the gateway is down.
  return {{"aws_endpoint_url", rgw_->endpoint()},
          {"aws_access_key_id", rgw_->access_key()},
          {"aws_secret_access_key", rgw_->secret_key()},
          {"aws_region", rgw_->region()},
          {"aws_allow_http", "true"},
          {"connect_timeout", "1s"},
          {"timeout", "10s"},
          {"max_retries", "2"}};
}

TableLocation S3TortureStore::Table(const std::string& name) const {
  return TableLocation::Remote(fmt::format("s3://{}/{}", kBucket, name), ChildEnv(),
                               {"timeout=5s", "max_retries=4"}, DirectOptions());
}

Status S3TortureStore::TakeDown() {
  return rgw_->StopGateway();
}

Status S3TortureStore::BringBack() {
  return rgw_->RestartGateway();
}

std::string S3TortureStore::ServerLog() const {
  return rgw_->Log();
}

}  // namespace ferry::fault

// Microsoft Entra ID tokens end to end: Azurite over HTTPS checking bearer tokens (`--oauth
// basic`: issuer, audience, lifetime), a local token endpoint (testing::EntraTokenStandIn) that
// hands out tokens living a few seconds in exchange for a workload identity's federated token,
// and a Delta table on the emulator committed to across several token expiries, opened as a
// user would (a table location and storage options), with the federated token file rotated
// meanwhile as the kubelet does. No commit may fail, and the emulator must have seen several
// different tokens.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "ferry/columnar/column.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_writer.h"
#include "ferry/delta/transaction.h"
#include "ferry/storage/store_factory.h"
#include "ferry/testing/azurite.h"
#include "ferry/testing/entra_token_stand_in.h"

namespace ferry {
namespace {

using testing::Azurite;
using testing::EntraTokenStandIn;

columnar::SchemaPtr Schema() {
  return std::make_shared<const columnar::Schema>(std::vector<columnar::Field>{
      {"id", columnar::DataType::Int64(), false, {}},
  });
}

class AzureTokenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ferry-azure-token-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    token_file_ = dir_ + "/azure-identity-token";
    std::ofstream(token_file_) << "federated-token-1\n";
    auto server = Azurite::Start(Azurite::Options{.oauth = true});
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    azurite_ = std::move(*server);
    Status created = azurite_->CreateContainer("lake");
    ASSERT_TRUE(created.ok()) << created.ToString() << "\n" << azurite_->Log();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The table abfss://lake@devstoreaccount1.dfs.core.windows.net/<root>, reached at the
  // emulator, with `options` besides the endpoint and its certificate.
  Result<std::shared_ptr<storage::ObjectStore>> Open(const std::string& root,
                                                     storage::StorageOptions options) {
    auto uri = storage::ParseTableUri("abfss://lake@devstoreaccount1.dfs.core.windows.net/" + root);
    if (!uri.ok()) {
      return uri.status();
    }
    options["azure_storage_endpoint"] = azurite_->endpoint();
    options["aws_ca_bundle"] = azurite_->ca_file();
    return storage::OpenTableStore(*uri, options, storage::OpenMode::kCreate);
  }

  std::string dir_;
  std::string token_file_;
  std::unique_ptr<Azurite> azurite_;
};

TEST_F(AzureTokenTest, CommitsGoOnAcrossSeveralTokenExpiries) {
  EntraTokenStandIn endpoint(
      {.federated_token_file = token_file_, .lifetime = std::chrono::seconds(4)});
  ASSERT_TRUE(endpoint.Start().ok());
  auto store = Open("events", {{"azure_storage_client_id", "ferry-client"},
                               {"azure_storage_tenant_id", "ferry-tenant"},
                               {"azure_federated_token_file", token_file_},
                               {"azure_storage_authority_host", endpoint.authority()}});
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto table = delta::Table::Open(*store, "");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  delta::TableSpec spec;
  spec.schema = Schema();
  Result<delta::Snapshot> snapshot = (*table)->Create(spec);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString() << "\n" << azurite_->Log();
  // Commit until the fourth token is in use (three expiries at least), rotating the federated
  // token every ten commits. Bounded by count, not by time.
  int commits = 0;
  for (; endpoint.issued() < 5 && commits < 5000; ++commits) {
    if (commits % 10 == 9) {
      endpoint.RotateFederatedToken("federated-token-" + std::to_string(commits));
    }
    auto writer = delta::TableWriter::Create(**table, *snapshot);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    auto batch = columnar::RecordBatch::MakeEmpty(Schema());
    batch.mutable_column(0)->As<columnar::Int64Column>()->Append(commits);
    ASSERT_TRUE((*writer)->Write(batch).ok());
    auto adds = (*writer)->Finish();
    ASSERT_TRUE(adds.ok()) << "commit " << commits << ": " << adds.status().ToString();
    delta::Transaction txn(**table, *snapshot);
    txn.AddFiles(std::move(*adds));
    auto result = txn.Commit();
    ASSERT_TRUE(result.ok()) << "commit " << commits << " failed: " << result.status().ToString()
                             << "\n"
                             << azurite_->Log();
    snapshot = std::move(result->snapshot);
  }
  EXPECT_GE(endpoint.issued(), 5) << "only " << commits << " commits";
  EXPECT_EQ(endpoint.refused(), 0);
  EXPECT_GE(endpoint.distinct_assertions(), 2u);  // the rotated token file was read again
  auto reread = (*table)->LoadSnapshot();
  ASSERT_TRUE(reread.ok()) << reread.status().ToString();
  EXPECT_EQ(reread->version(), commits);
  EXPECT_EQ(reread->num_files(), commits);
  RecordProperty("commits", commits);
  RecordProperty("tokens", endpoint.issued());
}

// The emulator does check tokens: a malformed one and a wrong audience are refused, with the
// blob named and the token nowhere in the message.
TEST_F(AzureTokenTest, TheEmulatorRefusesATokenItCannotAccept) {
  auto store = Open("t", {{"azure_storage_token", "not-a-jwt-at-all"}});
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  Status refused = (*store)->Put("x.json", "{}");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("/lake/t/x.json"), std::string::npos) << refused.ToString();
  EXPECT_EQ(refused.message().find("not-a-jwt-at-all"), std::string::npos) << refused.ToString();
}

}  // namespace
}  // namespace ferry

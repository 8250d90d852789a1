// AzureBlobStore (azure_store.h) against a local stand-in of the Blob service (HttpStandIn)
// answering what Azurite cannot be made to answer: 503 ServerBusy and 500 OperationTimedOut
// (retried, or "outcome unknown" for a conditional create), 409 and 412 on put-if-absent,
// the directory entries of a hierarchical-namespace account in a listing, and a Blob Batch
// refused by the account. Azurite runs the rest (tests/integration/azure_store_test.cc).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <deque>
#include <mutex>

#include "ferry/http/digest.h"
#include "ferry/storage/azure/azure_store.h"
#include "ferry/testing/http_stand_in.h"

namespace ferry::storage::azure {
namespace {

constexpr char kStandInKey[] = "a2V5LWJ5dGVzLW9mLXRoZS1hY2NvdW50";

struct Answer {
  int status = 200;
  std::string error_code;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

// The stand-in: every request is recorded; answers come from a script, else a default.
class BlobStandIn {
 public:
  BlobStandIn() {
    auto handler = [this](const httplib::Request& req, httplib::Response& res) {
      Answer a;
      {
        std::lock_guard lock(mu_);
        requests_.push_back(req);
        if (!script_.empty()) {
          a = script_.front();
          script_.pop_front();
        } else {
          a = fallback_(req);
        }
      }
      res.status = a.status;
      if (!a.error_code.empty()) {
        res.set_header("x-ms-error-code", a.error_code);
      }
      for (const auto& [name, value] : a.headers) {
        res.set_header(name, value);
      }
      res.set_content(a.body, "application/xml");
    };
    httplib::Server& s = server_.server();
    s.Get(R"(/acct/c(/.*)?)", handler);
    s.Put(R"(/acct/c(/.*)?)", handler);
    s.Post(R"(/acct/c(/.*)?)", handler);
    s.Delete(R"(/acct/c(/.*)?)", handler);
    // (HEAD goes to the GET handler.)
    EXPECT_TRUE(server_.Start().ok());
  }

  void Script(std::vector<Answer> answers) {
    std::lock_guard lock(mu_);
    script_.assign(answers.begin(), answers.end());
  }
  void Fallback(std::function<Answer(const httplib::Request&)> f) {
    std::lock_guard lock(mu_);
    fallback_ = std::move(f);
  }
  std::vector<httplib::Request> Requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  void ClearRequests() {
    std::lock_guard lock(mu_);
    requests_.clear();
  }
  std::string endpoint() const { return server_.url("/acct"); }

 private:
  testing::HttpStandIn server_;
  std::mutex mu_;
  std::deque<Answer> script_;
  std::function<Answer(const httplib::Request&)> fallback_ = [](const httplib::Request&) {
    return Answer{.status = 200};
  };
  std::vector<httplib::Request> requests_;
};

class AzureStoreStandInTest : public ::testing::Test {
 protected:
  void SetUp() override { store_ = MakeStore({.account = "acct", .account_key = kStandInKey}); }

  std::unique_ptr<AzureBlobStore> MakeStore(AzureCredentialOptions credentials) {
    auto client = http::HttpClient::Create(http::HttpClientOptions{.allow_http = true});
    EXPECT_TRUE(client.ok());
    auto provider = MakeAzureCredentialProvider(credentials);
    EXPECT_TRUE(provider.ok()) << provider.status().ToString();
    auto store = AzureBlobStore::Create(
        AzureStoreOptions{.account = "acct",
                          .container = "c",
                          .root = "lake/t",
                          .endpoint = blobs_.endpoint(),
                          .transfer = {.retry = {.max_attempts = 5,
                                                 .initial_backoff = std::chrono::milliseconds(1),
                                                 .max_backoff = std::chrono::milliseconds(5)}}},
        std::move(client).value(), std::shared_ptr<AzureCredentialProvider>(std::move(*provider)));
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return std::move(store).value();
  }

  BlobStandIn blobs_;
  std::unique_ptr<AzureBlobStore> store_;
};

TEST_F(AzureStoreStandInTest, PutIfAbsentSendsAConditionalPutBlobAndMapsEveryAnswer) {
  blobs_.Script({{.status = 201}});
  ASSERT_TRUE(store_->PutIfAbsent("_delta_log/0.json", "{}").ok());
  std::vector<httplib::Request> sent = blobs_.Requests();
  ASSERT_EQ(sent.size(), 1u);
  const httplib::Request& put = sent[0];
  EXPECT_EQ(put.method, "PUT");
  EXPECT_EQ(put.path, "/acct/c/lake/t/_delta_log/0.json");
  EXPECT_EQ(put.get_header_value("If-None-Match"), "*");
  EXPECT_EQ(put.get_header_value("x-ms-blob-type"), "BlockBlob");
  EXPECT_EQ(put.get_header_value("Content-MD5"), http::ContentMd5("{}"));
  EXPECT_EQ(put.get_header_value("x-ms-version"), "2021-08-06");
  EXPECT_FALSE(put.get_header_value("x-ms-date").empty());
  EXPECT_TRUE(put.get_header_value("Authorization").starts_with("SharedKey acct:"));

  blobs_.Script({{.status = 409, .error_code = "BlobAlreadyExists"}});
  EXPECT_EQ(store_->PutIfAbsent("k", "x").code(), StatusCode::kAlreadyExists);
  blobs_.Script({{.status = 412, .error_code = "ConditionNotMet"}});
  EXPECT_EQ(store_->PutIfAbsent("k", "x").code(), StatusCode::kAlreadyExists);
  // Another 409 is not "exists": a lease on the blob.
  blobs_.Script({{.status = 409, .error_code = "LeaseIdMissing"}});
  Status leased = store_->PutIfAbsent("k", "x");
  EXPECT_NE(leased.code(), StatusCode::kAlreadyExists);
  EXPECT_NE(leased.message().find("LeaseIdMissing"), std::string::npos) << leased.ToString();
  // 500 OperationTimedOut: the service may have written it. Not repeated (a repeat would see the
  // blob and answer 409), and the caller is told to read back.
  blobs_.ClearRequests();
  blobs_.Script({{.status = 500, .error_code = "OperationTimedOut"}});
  Status unknown = store_->PutIfAbsent("k", "x");
  EXPECT_EQ(unknown.code(), StatusCode::kUnavailable);
  EXPECT_NE(unknown.message().find("outcome unknown"), std::string::npos) << unknown.ToString();
  EXPECT_EQ(blobs_.Requests().size(), 1u);
  // 503 ServerBusy: refused before any work, retried.
  blobs_.ClearRequests();
  const uint64_t throttled = store_->counters().throttled.load();
  blobs_.Script({{.status = 503, .error_code = "ServerBusy"},
                 {.status = 503, .error_code = "ServerBusy"},
                 {.status = 201}});
  EXPECT_TRUE(store_->PutIfAbsent("k", "x").ok());
  EXPECT_EQ(blobs_.Requests().size(), 3u);
  EXPECT_EQ(store_->counters().throttled.load(), throttled + 2);
}

TEST_F(AzureStoreStandInTest, ReadsRetryTimeoutsAndStayPinnedToTheETag) {
  const std::string head(65536, 'h');
  blobs_.Script({{.status = 500, .error_code = "OperationTimedOut"},
                 {.status = 206,
                  .body = head,
                  .headers = {{"Content-Range", "bytes 0-65535/100000"}, {"ETag", "\"0x8D1\""}}},
                 {.status = 206, .body = std::string(10, 't')},
                 {.status = 412, .error_code = "ConditionNotMet"}});
  auto file = store_->OpenForRead("data.parquet");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ((*file)->size(), 100000u);
  std::string out;
  ASSERT_TRUE((*file)->ReadAt(99990, 10, &out).ok());
  EXPECT_EQ(out, std::string(10, 't'));
  std::vector<httplib::Request> sent = blobs_.Requests();
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[1].get_header_value("x-ms-range"), "bytes=0-65535");
  EXPECT_EQ(sent[2].get_header_value("x-ms-range"), "bytes=99990-99999");
  EXPECT_EQ(sent[2].get_header_value("If-Match"), "\"0x8D1\"");
  EXPECT_EQ((*file)->ReadAt(70000, 10, &out).code(), StatusCode::kDataLoss);
  // A missing blob.
  blobs_.Script({{.status = 404, .error_code = "BlobNotFound"}});
  EXPECT_EQ(store_->OpenForRead("nope").status().code(), StatusCode::kNotFound);
}

TEST_F(AzureStoreStandInTest,
       ListingFollowsMarkersAndLeavesOutDirectoriesOfAHierarchicalNamespace) {
  auto blob = [](std::string name, std::string size, bool folder = false, bool encoded = false) {
    return fmt::format(
        "<Blob><Name{}>{}</Name><Properties><Last-Modified>Wed, 02 Dec 2026 05:29:03 GMT"
        "</Last-Modified><Content-Length>{}</Content-Length></Properties><Metadata>{}</Metadata>"
        "</Blob>",
        encoded ? " Encoded=\"true\"" : "", name, size,
        folder ? "<hdi_isfolder>true</hdi_isfolder>" : "");
  };
  blobs_.Script(
      {{.status = 200,
        .body = "<?xml version=\"1.0\" encoding=\"utf-8\"?><EnumerationResults><Blobs>" +
                blob("lake/t/_delta_log", "0", true) + blob("lake/t/_delta_log/0.json", "10") +
                blob("lake/t/_delta_log/1.json", "11") +
                "</Blobs><NextMarker>page-2</NextMarker></EnumerationResults>"},
       {.status = 200,
        .body = "<EnumerationResults><Blobs>" + blob("lake/t/_delta_log/2.json", "12") +
                blob("lake/t/_delta_log/x%01y", "1", false, true) +
                "</Blobs><NextMarker/></EnumerationResults>"}});
  auto list = store_->List("_delta_log/", {.recursive = true, .start_after = "_delta_log/0.json"});
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[0].key, "_delta_log/1.json");
  EXPECT_EQ((*list)[0].size, 11u);
  EXPECT_EQ((*list)[0].modification_time_ms, 1796189343000);
  EXPECT_EQ((*list)[1].key, "_delta_log/2.json");
  EXPECT_EQ((*list)[2].key, std::string("_delta_log/x\x01y"));
  std::vector<httplib::Request> sent = blobs_.Requests();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].get_param_value("prefix"), "lake/t/_delta_log/");
  EXPECT_EQ(sent[0].get_param_value("comp"), "list");
  EXPECT_EQ(sent[0].get_param_value("include"), "metadata");
  EXPECT_FALSE(sent[0].has_param("delimiter"));
  EXPECT_EQ(sent[1].get_param_value("marker"), "page-2");
  // A directory is not an object either when asked for by name.
  blobs_.Script({{.status = 200, .headers = {{"x-ms-meta-hdi_isfolder", "true"}}}});
  EXPECT_EQ(store_->Stat("_delta_log").status().code(), StatusCode::kNotFound);
}

TEST_F(AzureStoreStandInTest, DeleteManyBatchesAndFallsBackWhereBatchesAreRefused) {
  // A batch whose second subrequest failed: that blob is deleted alone.
  blobs_.Fallback([](const httplib::Request& req) {
    if (req.method != "POST") {
      return Answer{.status = 202};
    }
    std::string boundary = "batchresponse_1";
    std::string body = fmt::format(
        "--{0}\r\nContent-Type: application/http\r\nContent-ID: 0\r\n\r\nHTTP/1.1 202 Accepted\r\n"
        "x-ms-delete-type-permanent: true\r\n\r\n"
        "--{0}\r\nContent-Type: application/http\r\nContent-ID: 1\r\n\r\nHTTP/1.1 500 Internal"
        "\r\nx-ms-error-code: InternalError\r\n\r\n"
        "--{0}\r\nContent-Type: application/http\r\nContent-ID: 2\r\n\r\nHTTP/1.1 404 The "
        "specified blob does not exist.\r\nx-ms-error-code: BlobNotFound\r\n\r\n--{0}--\r\n",
        boundary);
    return Answer{.status = 202,
                  .body = body,
                  .headers = {{"Content-Type", "multipart/mixed; boundary=" + boundary}}};
  });
  ASSERT_TRUE(store_->DeleteMany({"a", "b", "c"}).ok());
  std::vector<httplib::Request> sent = blobs_.Requests();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].method, "POST");
  EXPECT_EQ(sent[0].get_param_value("comp"), "batch");
  EXPECT_TRUE(
      sent[0].get_header_value("Content-Type").starts_with("multipart/mixed; boundary=batch_"));
  EXPECT_NE(sent[0].body.find("DELETE /acct/c/lake/t/a HTTP/1.1\r\n"), std::string::npos);
  EXPECT_NE(sent[0].body.find("Authorization: SharedKey acct:"), std::string::npos);
  EXPECT_EQ(sent[0].body.find("x-ms-version"), std::string::npos);
  EXPECT_EQ(sent[1].method, "DELETE");
  EXPECT_EQ(sent[1].path, "/acct/c/lake/t/b");

  // An account that refuses batches: single deletes, now and from then on.
  blobs_.ClearRequests();
  blobs_.Fallback([](const httplib::Request& req) {
    return req.method == "POST" ? Answer{.status = 400, .error_code = "FeatureNotSupported"}
                                : Answer{.status = 202};
  });
  ASSERT_TRUE(store_->DeleteMany({"a", "b", "c"}).ok());
  EXPECT_EQ(blobs_.Requests().size(), 4u);
  blobs_.ClearRequests();
  ASSERT_TRUE(store_->DeleteMany({"d", "e"}).ok());
  sent = blobs_.Requests();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].method, "DELETE");
  EXPECT_EQ(sent[1].method, "DELETE");
}

TEST_F(AzureStoreStandInTest, SasAndBearerTokensAuthorizeEveryRequest) {
  auto sas = MakeStore({.account = "acct", .sas = "?sv=2022-11-02&sp=rwdl&sig=c2ln%3D"});
  blobs_.Script({{.status = 201}});
  ASSERT_TRUE(sas->Put("k", "v").ok());
  std::vector<httplib::Request> sent = blobs_.Requests();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].get_param_value("sig"), "c2ln=");
  EXPECT_EQ(sent[0].get_param_value("sp"), "rwdl");
  EXPECT_FALSE(sent[0].has_header("Authorization"));
  auto bearer = MakeStore({.account = "acct", .bearer_token = "eyJ0eXAi"});
  blobs_.ClearRequests();
  blobs_.Script({{.status = 202}});
  ASSERT_TRUE(bearer->Delete("k").ok());
  EXPECT_EQ(blobs_.Requests()[0].get_header_value("Authorization"), "Bearer eyJ0eXAi");
  // An error message names the blob, never the signature.
  blobs_.Script({{.status = 403, .error_code = "AuthenticationFailed"}});
  Status denied = sas->Put("k", "v");
  EXPECT_EQ(denied.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(denied.message().find("AuthenticationFailed"), std::string::npos);
  EXPECT_EQ(denied.message().find("c2ln"), std::string::npos) << denied.ToString();
}

}  // namespace
}  // namespace ferry::storage::azure

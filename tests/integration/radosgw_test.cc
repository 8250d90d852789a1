// The radosgw test server (ferry/testing/radosgw.h) and the S3 behaviour ferry's stores rely on,
// observed with clients no one here wrote (curl's SigV4 signer, the Debian awscli): a PUT with
// `If-None-Match: *` on an existing key answers 412 and keeps the object, concurrent conditional
// PUTs of one key have exactly one winner, ListObjectsV2 pages with prefix and start-after,
// multipart uploads assemble their parts. And the server leaves nothing behind.
#include "ferry/testing/radosgw.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <latch>
#include <random>
#include <set>
#include <thread>

namespace ferry::testing {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void WriteFile(const std::string& path, const std::string& data) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary);
  out << data;
}

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::string s(n, '\0');
  for (char& c : s) {
    c = static_cast<char>(gen());
  }
  return s;
}

class RadosGwTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<RadosGw*> server = RadosGw::Shared();
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    rgw_ = *server;
    bucket_ = "t-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name());
    for (char& c : bucket_) {
      c = static_cast<char>(tolower(c));
    }
    Status created = rgw_->CreateBucket(bucket_);
    ASSERT_TRUE(created.ok()) << created.ToString() << "\n" << rgw_->Log();
  }

  // Fails the test with the server's log when the server died (the failure then names it).
  void ExpectAlive() { EXPECT_TRUE(rgw_->Alive()) << rgw_->Log(); }

  HttpReply Put(const std::string& key, const std::string& body, bool if_none_match) {
    std::vector<std::string> headers;
    if (if_none_match) {
      headers.push_back("If-None-Match: *");
    }
    Result<HttpReply> reply = rgw_->Cli().Request("PUT", "/" + bucket_ + "/" + key, headers, body);
    EXPECT_TRUE(reply.ok()) << reply.status().ToString();
    return reply.ok() ? *reply : HttpReply{};
  }

  std::string Get(const std::string& key) {
    Result<HttpReply> reply = rgw_->Cli().Request("GET", "/" + bucket_ + "/" + key);
    EXPECT_TRUE(reply.ok()) << reply.status().ToString();
    EXPECT_EQ(reply.ok() ? reply->status : 0, 200) << key;
    return reply.ok() ? reply->body : "";
  }

  RadosGw* rgw_ = nullptr;
  std::string bucket_;
};

TEST_F(RadosGwTest, PutIfNoneMatchAnswers412OnAnExistingKeyAndKeepsTheObject) {
  EXPECT_EQ(Put("_delta_log/00000000000000000000.json", "first", true).status, 200);
  HttpReply second = Put("_delta_log/00000000000000000000.json", "second", true);
  EXPECT_EQ(second.status, 412);
  EXPECT_NE(second.body.find("PreconditionFailed"), std::string::npos) << second.body;
  EXPECT_EQ(Get("_delta_log/00000000000000000000.json"), "first");
  // Without the condition the PUT overwrites: the 412 came from the header.
  EXPECT_EQ(Put("_delta_log/00000000000000000000.json", "third", false).status, 200);
  EXPECT_EQ(Get("_delta_log/00000000000000000000.json"), "third");
  // A deleted key can be created again.
  auto del = rgw_->Cli().Request("DELETE", "/" + bucket_ + "/_delta_log/00000000000000000000.json");
  ASSERT_TRUE(del.ok());
  EXPECT_EQ(del->status, 204);
  EXPECT_EQ(Put("_delta_log/00000000000000000000.json", "fourth", true).status, 200);
  ExpectAlive();
}

TEST_F(RadosGwTest, EightConcurrentConditionalPutsOfOneKeyHaveExactlyOneWinner) {
  constexpr int kWriters = 8;
  for (int round = 0; round < 3; ++round) {
    const std::string key = "_delta_log/" + std::to_string(round) + ".json";
    std::vector<std::string> bodies;
    for (int w = 0; w < kWriters; ++w) {
      bodies.push_back(RandomBytes(64 * 1024 + static_cast<size_t>(w), round * 100 + w));
    }
    std::vector<int> statuses(kWriters);
    std::vector<std::thread> writers;
    for (int w = 0; w < kWriters; ++w) {
      writers.emplace_back([&, w] { statuses[w] = Put(key, bodies[w], true).status; });
    }
    for (std::thread& t : writers) {
      t.join();
    }
    int winners = 0;
    int winner = -1;
    for (int w = 0; w < kWriters; ++w) {
      if (statuses[w] == 200) {
        ++winners;
        winner = w;
      } else {
        EXPECT_EQ(statuses[w], 412) << "writer " << w << " round " << round;
      }
    }
    ASSERT_EQ(winners, 1) << "round " << round;
    EXPECT_TRUE(Get(key) == bodies[winner]) << "the stored bytes are not the winner's";
  }
  ExpectAlive();
}

TEST_F(RadosGwTest, ListObjectsV2PagesWithPrefixAndStartAfter) {
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(Put("t/_delta_log/" + std::to_string(i) + ".json", "x", true).status, 200);
  }
  ASSERT_EQ(Put("t/part-0.parquet", "y", true).status, 200);
  ASSERT_EQ(Put("other/a", "z", true).status, 200);
  // A '/' in a query value goes percent-encoded (curl's signer signs it as sent).
  auto page1 = rgw_->Cli().Request(
      "GET",
      "/" + bucket_ +
          "?list-type=2&prefix=t%2F_delta_log%2F&start-after=t%2F_delta_log%2F1.json&max-keys=2");
  ASSERT_TRUE(page1.ok()) << page1.status().ToString();
  ASSERT_EQ(page1->status, 200) << page1->body;
  EXPECT_EQ(XmlTexts(page1->body, "Key"),
            (std::vector<std::string>{"t/_delta_log/2.json", "t/_delta_log/3.json"}));
  EXPECT_EQ(XmlText(page1->body, "IsTruncated"), "true");
  std::string token = XmlText(page1->body, "NextContinuationToken");
  ASSERT_FALSE(token.empty()) << page1->body;
  std::string escaped;
  for (unsigned char c : token) {
    if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      escaped.push_back(static_cast<char>(c));
    } else {
      escaped += fmt::format("%{:02X}", c);
    }
  }
  auto page2 = rgw_->Cli().Request("GET", "/" + bucket_ +
                                              "?list-type=2&prefix=t%2F_delta_log%2F&max-keys=2"
                                              "&continuation-token=" +
                                              escaped);
  ASSERT_TRUE(page2.ok());
  ASSERT_EQ(page2->status, 200) << page2->body;
  EXPECT_EQ(XmlTexts(page2->body, "Key"), (std::vector<std::string>{"t/_delta_log/4.json"}));
  EXPECT_EQ(XmlText(page2->body, "IsTruncated"), "false");
  // The awscli's listing (every page) agrees.
  auto keys = rgw_->Cli().ListKeys(bucket_, "t/");
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  EXPECT_EQ(*keys, (std::vector<std::string>{"t/_delta_log/0.json", "t/_delta_log/1.json",
                                             "t/_delta_log/2.json", "t/_delta_log/3.json",
                                             "t/_delta_log/4.json", "t/part-0.parquet"}));
  ExpectAlive();
}

TEST_F(RadosGwTest, MultipartUploadAssemblesItsPartsAndSyncDownloadsAPrefix) {
  // awscli uploads files of 8 MB and more in 8 MB parts.
  const std::string data = RandomBytes(20 * 1024 * 1024 + 123, 7);
  const std::string dir = rgw_->dir() + "/multipart-test";
  WriteFile(dir + "/up/big.bin", data);
  WriteFile(dir + "/up/_delta_log/0.json", "{}");
  auto copied = rgw_->Cli().Aws(
      {"s3", "cp", "--recursive", "--no-progress", dir + "/up", "s3://" + bucket_ + "/table"});
  ASSERT_TRUE(copied.ok()) << copied.status().ToString();
  auto head = rgw_->Cli().Request("HEAD", "/" + bucket_ + "/table/big.bin");
  ASSERT_TRUE(head.ok());
  ASSERT_EQ(head->status, 200);
  // A multipart object's ETag is "<md5 of the part md5s>-<number of parts>".
  EXPECT_NE(head->body.find("-3\""), std::string::npos) << head->body;
  EXPECT_TRUE(Get("table/big.bin") == data);
  Status synced = rgw_->Cli().DownloadPrefix(bucket_, "table", dir + "/down");
  ASSERT_TRUE(synced.ok()) << synced.ToString();
  EXPECT_TRUE(ReadFile(dir + "/down/big.bin") == data);
  EXPECT_EQ(ReadFile(dir + "/down/_delta_log/0.json"), "{}");
  std::filesystem::remove_all(dir);
  ExpectAlive();
}

TEST_F(RadosGwTest, Boto3ReadsWhatCurlWroteWithTheAwsEnvironment) {
  ASSERT_EQ(Put("table/_delta_log/0.json", "{\"protocol\":{}}", true).status, 200);
  // Debian's boto3 (1.26) does not read AWS_ENDPOINT_URL: the script passes it itself.
  const std::string script =
      "import os, boto3\n"
      "s3 = boto3.client('s3', endpoint_url=os.environ['AWS_ENDPOINT_URL'])\n"
      "print(s3.get_object(Bucket='" +
      bucket_ +
      "', Key='table/_delta_log/0.json')"
      "['Body'].read().decode(), end='')\n";
  ProgramOptions options;
  options.env = rgw_->Cli().AwsEnv();
  auto out = RunProgram({"/usr/bin/python3", "-c", script}, std::chrono::minutes(2), options);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->exit_code, 0) << out->err;
  EXPECT_EQ(out->out, "{\"protocol\":{}}");
}

TEST(RadosGwLifetimeTest, StopLeavesNoProcessAndNoDirectory) {
  auto server = RadosGw::Start();
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  std::vector<pid_t> pids = (*server)->pids();
  std::string dir = (*server)->dir();
  ASSERT_TRUE((*server)->Alive());
  for (pid_t pid : pids) {
    EXPECT_NE(ProcessState(pid), "") << pid;
  }
  // The gateway can be stopped and started again on its port, keeping the data.
  ASSERT_TRUE((*server)->CreateBucket("keep").ok());
  ASSERT_TRUE((*server)->Cli().Request("PUT", "/keep/k", {}, "v").ok());
  ASSERT_TRUE((*server)->StopGateway().ok());
  EXPECT_FALSE((*server)->Alive());
  auto refused = (*server)->Cli().Request("GET", "/keep/k");
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable) << refused.status().ToString();
  Status restarted = (*server)->RestartGateway();
  ASSERT_TRUE(restarted.ok()) << restarted.ToString();
  auto got = (*server)->Cli().Request("GET", "/keep/k");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->body, "v");
  pids = (*server)->pids();
  server->reset();
  for (pid_t pid : pids) {
    EXPECT_EQ(ProcessState(pid), "") << "process " << pid << " still there";
  }
  EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
}

TEST(RadosGwLifetimeTest, SeveralClustersRunAtOnce) {
  constexpr int kClusters = 2;
  std::vector<Result<std::unique_ptr<RadosGw>>> servers;
  for (int i = 0; i < kClusters; ++i) {
    servers.push_back(Internal("not started"));
  }
  // Started at once: the OSDs pick their ports from the same 6800-7300 range. The daemons die
  // with the thread that started them (PR_SET_PDEATHSIG), so each starter thread stays until
  // the checks are done and destroys its own server.
  std::latch started(kClusters);
  std::latch checked(1);
  std::vector<std::thread> starters;
  for (int i = 0; i < kClusters; ++i) {
    starters.emplace_back([&, i] {
      servers[i] = RadosGw::Start();
      started.count_down();
      checked.wait();
      servers[i] = Internal("stopped");
    });
  }
  struct ReleaseStarters {
    std::latch& checked;
    std::vector<std::thread>& starters;
    ~ReleaseStarters() {
      checked.count_down();
      for (std::thread& t : starters) {
        t.join();
      }
    }
  } release{checked, starters};
  started.wait();
  std::set<int> ports;
  for (int i = 0; i < kClusters; ++i) {
    ASSERT_TRUE(servers[i].ok()) << servers[i].status().ToString();
    RadosGw& server = **servers[i];
    ports.insert(server.port());
    const std::string bucket = "b" + std::to_string(i) + "x";
    ASSERT_TRUE(server.CreateBucket(bucket).ok()) << server.Log();
    auto put = server.Cli().Request("PUT", "/" + bucket + "/k", {"If-None-Match: *"}, "v");
    ASSERT_TRUE(put.ok());
    EXPECT_EQ(put->status, 200);
  }
  EXPECT_EQ(ports.size(), static_cast<size_t>(kClusters));
  // Each cluster has its own data: a bucket of one is unknown to the others.
  auto other = (*servers[0])->Cli().Request("GET", "/b1x/k");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->status, 404);
}

}  // namespace
}  // namespace ferry::testing

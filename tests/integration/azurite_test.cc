// The Azurite test server (ferry/testing/azurite.h) and the Azure Blob behaviour ferry's store
// relies on, observed through Microsoft's own SDK (@azure/storage-blob via tests/azurite/
// blob.mjs): Put Blob with `If-None-Match: *` on an existing blob answers 409 BlobAlreadyExists
// (not 412) and keeps the blob; concurrent conditional puts of one blob have exactly one winner;
// listing and downloading a prefix. And the server leaves nothing behind.
#include "ferry/testing/azurite.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace ferry::testing {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  return lines;
}

class AzuriteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<Azurite*> server = Azurite::Shared();
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    azurite_ = *server;
    container_ = "container-" + std::to_string(++containers_);  // 3-63 characters
    Status created = azurite_->CreateContainer(container_);
    ASSERT_TRUE(created.ok()) << created.ToString() << "\n" << azurite_->Log();
  }

  void ExpectAlive() { EXPECT_TRUE(azurite_->Alive()) << azurite_->Log(); }

  // Runs blob.mjs commands in one node process (blob.mjs's header lists them).
  std::vector<std::string> Sequence(const std::vector<std::vector<std::string>>& commands) {
    Result<std::vector<std::string>> outputs = azurite_->Cli().Sequence(commands);
    EXPECT_TRUE(outputs.ok()) << outputs.status().ToString();
    return outputs.ok() ? *outputs : std::vector<std::string>(commands.size());
  }

  static inline int containers_ = 0;
  Azurite* azurite_ = nullptr;
  std::string container_;
};

TEST_F(AzuriteTest, PutBlobIfNoneMatchAnswers409BlobAlreadyExistsAndKeepsTheBlob) {
  const std::string blob = "t/_delta_log/00000000000000000000.json";
  std::vector<std::string> out = Sequence({{"put", container_, blob, "first", "--if-none-match"},
                                           {"put", container_, blob, "second", "--if-none-match"},
                                           {"get", container_, blob},
                                           // Unconditional: it overwrites, so the 409 came
                                           // from the header.
                                           {"put", container_, blob, "third"},
                                           {"get", container_, blob}});
  EXPECT_EQ(out[0], "201\n");
  EXPECT_EQ(out[1], "409 BlobAlreadyExists\n");
  EXPECT_EQ(out[2], "first");
  EXPECT_EQ(out[3], "201\n");
  EXPECT_EQ(out[4], "third");
  // The container exists now: creating it again is refused.
  EXPECT_EQ(azurite_->CreateContainer(container_).code(), StatusCode::kAlreadyExists);
  ExpectAlive();
}

TEST_F(AzuriteTest, EightConcurrentConditionalPutsOfOneBlobHaveExactlyOneWinner) {
  constexpr int kRounds = 3;
  std::vector<std::vector<std::string>> commands;
  for (int round = 0; round < kRounds; ++round) {
    const std::string blob = "t/_delta_log/" + std::to_string(round) + ".json";
    commands.push_back({"race", container_, blob, "8"});
    commands.push_back({"get", container_, blob});
  }
  std::vector<std::string> out = Sequence(commands);
  for (int round = 0; round < kRounds; ++round) {
    std::vector<std::string> outcomes = SplitLines(out[2 * round]);
    ASSERT_EQ(outcomes.size(), 8u) << out[2 * round];
    int winners = 0;
    int winner = -1;
    for (int w = 0; w < 8; ++w) {
      const std::string& outcome = outcomes[static_cast<size_t>(w)];
      if (outcome == "201") {
        ++winners;
        winner = w;
      } else {
        EXPECT_EQ(outcome, "409 BlobAlreadyExists") << "writer " << w << " round " << round;
      }
    }
    ASSERT_EQ(winners, 1) << "round " << round << ":\n" << out[2 * round];
    EXPECT_TRUE(out[2 * round + 1] == AzureBlobCli::RaceBody(winner))
        << "the stored bytes are not the winner's";
  }
  ExpectAlive();
}

TEST_F(AzuriteTest, ListsAndDownloadsAPrefix) {
  char big[] = "/tmp/ferry-azurite-test-XXXXXX";
  int fd = mkstemp(big);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(big) << std::string(300000, 'p');
  std::vector<std::string> out =
      Sequence({{"put", container_, "table/_delta_log/0.json", "{\"commitInfo\":{}}"},
                {"put", container_, "table/part-0.parquet", std::string("@") + big},
                {"put", container_, "other/x", "x"}});
  unlink(big);
  EXPECT_EQ(out, std::vector<std::string>(3, "201\n"));
  auto names = azurite_->Cli().List(container_, "table/");
  ASSERT_TRUE(names.ok()) << names.status().ToString();
  EXPECT_EQ(*names, (std::vector<std::string>{"table/_delta_log/0.json", "table/part-0.parquet"}));
  const std::string dir = azurite_->dir() + "/download-" + container_;
  Status downloaded = azurite_->Cli().DownloadPrefix(container_, "table/", dir);
  ASSERT_TRUE(downloaded.ok()) << downloaded.ToString();
  EXPECT_EQ(ReadFile(dir + "/_delta_log/0.json"), "{\"commitInfo\":{}}");
  EXPECT_EQ(ReadFile(dir + "/part-0.parquet"), std::string(300000, 'p'));
  EXPECT_FALSE(std::filesystem::exists(dir + "/x"));
  std::filesystem::remove_all(dir);
  ExpectAlive();
}

TEST(AzuriteLifetimeTest, StopLeavesNoProcessAndNoDirectory) {
  auto server = Azurite::Start();
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  pid_t pid = (*server)->pid();
  std::string dir = (*server)->dir();
  ASSERT_TRUE((*server)->Alive());
  ASSERT_TRUE((*server)->CreateContainer("lifetime").ok()) << (*server)->Log();
  // A wrong key is refused: the emulator checks Shared Key signatures.
  std::string wrong = (*server)->connection_string();
  wrong.replace(wrong.find("AccountKey=") + 11, 4, "AAAA");
  auto refused = AzureBlobCli(wrong).Put("lifetime", "b", "x", true);
  ASSERT_TRUE(refused.ok()) << refused.status().ToString();
  EXPECT_EQ(refused->substr(0, 3), "403") << *refused;
  ASSERT_TRUE((*server)->Stop().ok());
  EXPECT_FALSE((*server)->Alive());
  EXPECT_EQ(ProcessState(pid), "");
  server->reset();
  EXPECT_EQ(ProcessState(pid), "");
  EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
}

}  // namespace
}  // namespace ferry::testing

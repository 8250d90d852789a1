#include "ferry/app/logging.h"

#include <gtest/gtest.h>

#include "ferry/base/log.h"

namespace ferry::app {
namespace {

TEST(LoggingTest, RedactReplacesEveryOccurrence) {
  EXPECT_EQ(Redact("pw=hunter2 again hunter2", {"hunter2"}), "pw=*** again ***");
  EXPECT_EQ(Redact("nothing", {"", "x"}), "nothing");
}

TEST(LoggingTest, SecretsNeverReachStderr) {
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(SetupLogging({.format = "json", .level = "info", .secrets = {"s3cr3t"}}).ok());
  FERRY_LOG_INFO("connecting with password {} to \"{}\"", "s3cr3t", "nats://x");
  FERRY_LOG_DEBUG("not shown");
  std::string out = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(out.find("s3cr3t"), std::string::npos);
  EXPECT_NE(out.find("\"level\":\"info\""), std::string::npos) << out;
  EXPECT_NE(out.find("connecting with password *** to \\\"nats://x\\\""), std::string::npos) << out;
  EXPECT_EQ(out.find("not shown"), std::string::npos);
  EXPECT_FALSE(SetupLogging({.format = "xml"}).ok());
  EXPECT_FALSE(SetupLogging({.level = "loud"}).ok());
}

}  // namespace
}  // namespace ferry::app

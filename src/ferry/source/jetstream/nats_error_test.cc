#include "ferry/source/jetstream/nats_error.h"

#include <gtest/gtest.h>
#include <nats/nats.h>

namespace ferry::source::jetstream {
namespace {

// A JetStream API refusal is a configuration error unless the cluster is between leaders: then
// the pipeline must retry (a stream leader SIGKILLed while ferry creates its consumer answered
// 10008 "JetStream system temporarily unavailable", which stopped ferry with exit 1).
TEST(NatsErrorTest, ClusterBetweenLeadersIsUnavailable) {
  for (jsErrCode code : {JSClusterNotAvailErr, JSClusterNotLeaderErr, JSClusterIncompleteErr}) {
    Status st = NatsError(NATS_ERR, "create ordered consumer on stream 'orders'", code);
    EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
    EXPECT_NE(st.message().find("[JetStream error " + std::to_string(static_cast<int>(code))),
              std::string::npos)
        << st.ToString();
  }
}

TEST(NatsErrorTest, RefusedRequestsStayConfigurationErrors) {
  EXPECT_EQ(NatsError(NATS_ERR, "create consumer", JSConsumerCreateErr).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(NatsError(NATS_ERR, "create consumer", JSNotEnabledErr).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(NatsError(NATS_ERR, "stream info", JSStreamNotFoundErr).code(), StatusCode::kNotFound);
  EXPECT_EQ(NatsError(NATS_TIMEOUT, "stream info").code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace ferry::source::jetstream

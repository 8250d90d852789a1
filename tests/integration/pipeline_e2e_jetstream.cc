// StartNatsServer (pipeline_e2e_support.h), apart from the rest so that the Kafka tests that
// link the library do not pull in nats.c.
#include <gtest/gtest.h>

#include "jetstream_test_client.h"
#include "pipeline_e2e_support.h"

#include "ferry/testing/nats_server.h"

namespace ferry::e2e {

void StartNatsServer(std::unique_ptr<testing::NatsServer>* server,
                     std::unique_ptr<testing::JetStreamTestClient>* client,
                     const std::string& server_name) {
  testing::NatsServer::Options options;
  options.server = server_name;
  auto started = testing::NatsServer::Start(options);
  if (!started.ok() && started.status().code() == StatusCode::kNotFound && server_name.empty()) {
    GTEST_SKIP() << "SKIPPED LOUDLY: no nats-server binary installed (make setup-deb installs "
                    "it): "
                 << started.status().ToString();
  }
  ASSERT_TRUE(started.ok()) << "nats-server '" << server_name
                            << "': " << started.status().ToString();
  *server = std::move(*started);
  auto connected = testing::JetStreamTestClient::Connect((*server)->url());
  ASSERT_TRUE(connected.ok()) << connected.status().ToString();
  *client = std::move(*connected);
}

}  // namespace ferry::e2e

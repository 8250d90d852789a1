// librdkafka configuration and errors, ferry-style: building an rd_kafka_conf_t from key/value
// properties (errors name the key, never the value: values may be secrets), turning
// rd_kafka_resp_err_t into a Status whose code says what the caller must do, and routing
// librdkafka's own log lines into ferry's log.
//
// Thread-safety: free functions; the log callback may run on librdkafka's threads (spdlog's
// default logger is thread-safe).
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"
#include "ferry/source/kafka/kafka_handles.h"

namespace ferry::source::kafka {

using KafkaProperties = std::vector<std::pair<std::string, std::string>>;

// Sets one property; InvalidArgument naming the key (and librdkafka's reason) when rejected.
Status SetProperty(rd_kafka_conf_t* conf, std::string_view key, std::string_view value);

// A new configuration with `properties` applied in order, and librdkafka's log routed to ferry's
// log (RouteLogs).
Result<ConfPtr> NewConf(const KafkaProperties& properties);

// The integer value of property `name` in `conf` (set or librdkafka's default); 0 when unknown or
// not an integer.
int64_t ConfInteger(const rd_kafka_conf_t* conf, const char* name);

// Sends librdkafka's log lines to spdlog, mapped from syslog levels.
void RouteLogs(rd_kafka_conf_t* conf);

// Creates a client from `conf`; takes ownership of `conf` only on success (as rd_kafka_new).
Result<KafkaPtr> NewClient(rd_kafka_type_t type, ConfPtr conf);

// rd_kafka_destroy_flags(rk, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE) on a thread of its own, waited
// for at most `timeout`; false when it did not finish (the handle and its threads are then left
// behind, and the thread ends with the process). librdkafka 2.0.x can hang there forever: a
// partition reference taken on resume is never dropped, so a broker thread never ends
// (confluentinc/librdkafka issues 4362 and 4674). Seen here after a group consumer's topic was
// deleted and recreated (tests/integration/kafka_log_changes_test.cc). A consumer must be closed
// (or never started) first: no callback of its owner runs during the destroy.
bool DestroyWithin(rd_kafka_t* rk, std::chrono::milliseconds timeout);

// Unavailable for transient errors (transport, timeouts, leader or coordinator moves),
// InvalidArgument for configuration, authentication and unknown topics, Internal otherwise.
// The message is "<context>: <librdkafka's description>".
Status KafkaErrorStatus(rd_kafka_resp_err_t err, std::string_view context);

}  // namespace ferry::source::kafka

// Access refusals: the errors by which a Kafka broker (or the TLS layer in front of it) refuses
// ferry's credentials, certificate or permissions, and the one Status ferry stops with for them.
//
// librdkafka treats all of them as transient: it reconnects (a failed SASL login, a certificate
// it does not trust) or asks again (a topic or group the principal may not read) forever, and a
// consumer would log a warning every few seconds and never ingest anything. Like the Java
// consumer (which throws AuthenticationException and TopicAuthorizationException /
// GroupAuthorizationException from poll), the source stops at the first one:
// PermissionDenied, which stops the pipeline, and `ferry run` exits 2 (docs/kafka.md,
// "Security: SASL and SSL"). The message names the broker (librdkafka's broker name, or the
// bootstrap servers), the refused thing (the SASL user and mechanism, the TLS handshake, the
// topic or the group) and what to check; never a property's value beyond sasl.username.
//
// Seen from librdkafka 2.0.2 against Apache Kafka 3.9 and 4.4 (tests/integration/
// kafka_security_test.cc): a wrong password reaches the error callback as
// RD_KAFKA_RESP_ERR__AUTHENTICATION, an untrusted broker certificate as RD_KAFKA_RESP_ERR__SSL,
// a topic without READ as a consumer error TOPIC_AUTHORIZATION_FAILED, a group without READ as
// an error callback GROUP_AUTHORIZATION_FAILED (from FindCoordinator). A READ ACL removed while
// ferry runs: on the topic, a Fetch's consumer error (4.4) or first the result of the group
// offset commit (3.9: OffsetCommit needs READ on the topic); on the group, the offset commit's
// result GROUP_AUTHORIZATION_FAILED (both versions), which the commit callback turns into the
// same PermissionDenied.
//
// Thread-safety: free functions.
#pragma once

#include <librdkafka/rdkafka.h>

#include <string_view>

#include "ferry/base/status.h"
#include "ferry/source/kafka/kafka_source_options.h"

namespace ferry::source::kafka {

// Whether `err` is a refusal of ferry's credentials, certificate or permissions (SASL or TLS
// failures, SASL mechanism not enabled, topic, group or cluster authorization failed).
bool IsAccessRefusal(rd_kafka_resp_err_t err);

// PermissionDenied for `err` (REQUIRES: IsAccessRefusal(err)): "kafka: <what was refused> by
// <broker>: <librdkafka's reason> (<error name>); <what to check>". `topic` names the topic of
// a consumer error, when librdkafka said which.
Status AccessRefusal(rd_kafka_resp_err_t err, std::string_view reason, std::string_view topic,
                     const KafkaSourceOptions& options);

}  // namespace ferry::source::kafka

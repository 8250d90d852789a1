# Kafka integration tests (librdkafka's mock cluster; need localhost sockets). Included from
# tests/CMakeLists.txt.

# The same test binary again on the last 3.x line (FERRY_KAFKA_VERSION picks the cached jars of
# tests/kafka/pom.xml) as <test>_kafka3, with the 4.x run's labels and timeout.
function(ferry_kafka3_variant test)
  if(NOT TARGET ${test})
    return()
  endif()
  get_test_property(${test} LABELS labels)
  get_test_property(${test} TIMEOUT timeout)
  add_test(NAME ${test}_kafka3 COMMAND ${test} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(${test}_kafka3 PROPERTIES LABELS "${labels}" TIMEOUT ${timeout} COST 10
    ENVIRONMENT "FERRY_KAFKA_VERSION=${FERRY_KAFKA3_VERSION}")
endfunction()

add_library(ferry_kafka_test_support STATIC ${CMAKE_CURRENT_LIST_DIR}/kafka_test_support.cc)
ferry_apply_common(ferry_kafka_test_support)
target_link_libraries(ferry_kafka_test_support PUBLIC ferry_source_kafka GTest::gtest)

ferry_cc_test(NAME kafka_source_test
  SRCS ${CMAKE_CURRENT_LIST_DIR}/kafka_source_test.cc
  DEPS ferry_kafka_test_support ferry_source_kafka ferry_testing_wait
  LABELS integration TIMEOUT 600)

# The real binary: `ferry mock-kafka` in a child process, `ferry produce kafka`, kcat.
ferry_cc_test(NAME kafka_cli_test
  SRCS ${CMAKE_CURRENT_LIST_DIR}/kafka_cli_test.cc ${CMAKE_CURRENT_LIST_DIR}/kafka_child_process.cc
  DEPS ferry_source_kafka
  LABELS integration TIMEOUT 300)
add_dependencies(kafka_cli_test ferry)

# `ferry run` end to end: restarts, groups, zombies, broker faults (docs/kafka.md). The
# JetStream part (pipeline_e2e_jetstream.cc) is its own object: Kafka tests do not pull it in.
add_library(ferry_pipeline_e2e_support STATIC ${CMAKE_CURRENT_LIST_DIR}/pipeline_e2e_support.cc
  ${CMAKE_CURRENT_LIST_DIR}/config_toml.cc
  ${CMAKE_CURRENT_LIST_DIR}/pipeline_e2e_jetstream.cc ${CMAKE_CURRENT_LIST_DIR}/kafka_child_process.cc)
ferry_apply_common(ferry_pipeline_e2e_support)
target_compile_definitions(ferry_pipeline_e2e_support PRIVATE FERRY_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
target_link_libraries(ferry_pipeline_e2e_support PUBLIC ferry_testing ferry_testing_wait ferry_delta
  ferry_delta_maintenance ferry_storage ferry_testing_nats_server jetstream_test_client nlohmann_json::nlohmann_json GTest::gtest)

ferry_cc_test(NAME kafka_pipeline_test
  SRCS ${CMAKE_CURRENT_LIST_DIR}/kafka_pipeline_test.cc
  DEPS ferry_pipeline_e2e_support ferry_kafka_test_support
  LABELS integration TIMEOUT 600)
add_dependencies(kafka_pipeline_test ferry)

# What the Avro and Protobuf tests share: the mock cluster fed by a serializer script.
add_library(ferry_serializer_test_support STATIC
  ${CMAKE_CURRENT_LIST_DIR}/serializer_test_support.cc)
ferry_apply_common(ferry_serializer_test_support)
target_compile_definitions(ferry_serializer_test_support PRIVATE
  FERRY_SOURCE_DIR="${PROJECT_SOURCE_DIR}" FERRY_BINARY_DIR="${PROJECT_BINARY_DIR}")
target_link_libraries(ferry_serializer_test_support PUBLIC ferry_pipeline_e2e_support
  ferry_kafka_test_support PRIVATE PkgConfig::httplib)

# `[pipeline.decode] format = "avro"`: messages from real serializers (tests/serializers, npm),
# their registry stand-in, `ferry run`, DuckDB.
ferry_cc_test(NAME kafka_avro_test
  SRCS ${CMAKE_CURRENT_LIST_DIR}/kafka_avro_test.cc
  DEPS ferry_serializer_test_support
  LABELS integration TIMEOUT 300)
target_compile_definitions(kafka_avro_test PRIVATE FERRY_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
add_dependencies(kafka_avro_test ferry)

# Debezium change streams (debezium-json, and debezium-avro and debezium-protobuf from real
# serializers with their registry stand-in) through `ferry run` in upsert mode on the real broker, SIGKILLed once, a
# column added half-way: the table equals the replayed state (issue 42).
ferry_cc_test(NAME kafka_debezium_test
  SRCS ${CMAKE_CURRENT_LIST_DIR}/kafka_debezium_test.cc
  DEPS ferry_serializer_test_support ferry_testing_kafka_broker
  LABELS integration TIMEOUT 600 WHOLE_BINARY)
target_compile_definitions(kafka_debezium_test PRIVATE FERRY_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
add_dependencies(kafka_debezium_test ferry)

# `[pipeline.decode] format = "protobuf"`: the same with protobufjs's messages, and unframed ones
# with a descriptor set protoc writes at test time.
ferry_cc_test(NAME kafka_protobuf_test
  SRCS ${CMAKE_CURRENT_LIST_DIR}/kafka_protobuf_test.cc
  DEPS ferry_serializer_test_support
  LABELS integration TIMEOUT 300)
target_compile_definitions(kafka_protobuf_test PRIVATE FERRY_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
add_dependencies(kafka_protobuf_test ferry)

# A routed pipeline (one topic, four tables by a field) through kills (docs/decisions/routing.md).
ferry_cc_test(NAME kafka_routing_test
  SRCS ${CMAKE_CURRENT_LIST_DIR}/kafka_routing_test.cc
  DEPS ferry_pipeline_e2e_support ferry_kafka_test_support ferry_testing_nats_server
       PkgConfig::httplib
  LABELS integration TIMEOUT 600)
add_dependencies(kafka_routing_test ferry)

# The real Apache Kafka broker (ferry/testing/kafka_broker.h, `make setup-kafka`), checked with
# kcat; one broker for the binary (WHOLE_BINARY), and one of the 3.x line.
ferry_cc_test(NAME kafka_broker_test
  SRCS ${CMAKE_CURRENT_LIST_DIR}/kafka_broker_test.cc
  DEPS ferry_testing_kafka_broker
  LABELS integration TIMEOUT 600 WHOLE_BINARY)

# `ferry run` on the real broker (issue 38, proof 1): the demo scenario with a SIGKILL under
# group and manual assignment, two processes in one group; one broker for the binary.
ferry_cc_test(NAME kafka_real_broker_test
  SRCS ${CMAKE_CURRENT_LIST_DIR}/kafka_real_broker_test.cc
  DEPS ferry_pipeline_e2e_support ferry_testing_kafka_broker
  LABELS integration TIMEOUT 900 WHOLE_BINARY)
add_dependencies(kafka_real_broker_test ferry)
ferry_kafka3_variant(kafka_real_broker_test)

# Consumer groups on the real broker (issue 38, proof 2): three processes in one group joining,
# leaving and SIGKILLed, under range, roundrobin and cooperative-sticky; one broker for the binary,
# on 4.x and again on the 3.x line.
ferry_cc_test(NAME kafka_real_group_test
  SRCS ${CMAKE_CURRENT_LIST_DIR}/kafka_real_group_test.cc
  DEPS ferry_pipeline_e2e_support ferry_testing_kafka_broker
  LABELS integration TIMEOUT 900 WHOLE_BINARY)
add_dependencies(kafka_real_group_test ferry)
ferry_kafka3_variant(kafka_real_group_test)

# Transactions on the real broker (issue 38, proof 4): committed and aborted transactions of an
# independent producer (tests/kafka/txn_produce.py, Confluent's Python client in the venv of
# `make setup-kafka`), a SIGKILL and restart, and an open transaction holding the last stable
# offset. One broker for the binary.
ferry_cc_test(NAME kafka_txn_test
  SRCS ${CMAKE_CURRENT_LIST_DIR}/kafka_txn_test.cc
  DEPS ferry_pipeline_e2e_support ferry_testing_kafka_broker nlohmann_json::nlohmann_json
  LABELS integration TIMEOUT 600 WHOLE_BINARY)
add_dependencies(kafka_txn_test ferry)
if(TARGET kafka_txn_test)
  target_compile_definitions(kafka_txn_test PRIVATE FERRY_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
endif()

# Security on the real broker (issue 38, proof 7): SASL/PLAIN and SCRAM-SHA-512 over TLS and
# mutual TLS ingest; a wrong password, an untrusted certificate and missing topic or group ACLs
# end `ferry run` with exit 2, a few attempts and no password in its log, also when a READ ACL is
# removed while ferry runs (then a restart after the grant ingests the rest). One broker (with
# every security listener) for the binary; again on the 3.x line, where librdkafka 2.0.2's SCRAM
# is accepted.
ferry_cc_test(NAME kafka_security_test
  SRCS ${CMAKE_CURRENT_LIST_DIR}/kafka_security_test.cc
  DEPS ferry_pipeline_e2e_support ferry_testing_kafka_broker
  LABELS integration TIMEOUT 600 WHOLE_BINARY)
add_dependencies(kafka_security_test ferry)
ferry_kafka3_variant(kafka_security_test)

# Logs that change under a running ferry, on the real broker (issue 38, proofs 5 and 6): a
# compacted topic across a restart, retention gaps (DeleteRecords, retention.ms, retention.bytes)
# under each on_gap value, partitions added, a new topic matching a regex, a topic deleted and
# recreated. One broker for the binary; on 4.x and again on the 3.x line.
ferry_cc_test(NAME kafka_log_changes_test
  SRCS ${CMAKE_CURRENT_LIST_DIR}/kafka_log_changes_test.cc
  DEPS ferry_pipeline_e2e_support ferry_testing_kafka_broker
  LABELS integration TIMEOUT 600 WHOLE_BINARY)
add_dependencies(kafka_log_changes_test ferry)
ferry_kafka3_variant(kafka_log_changes_test)

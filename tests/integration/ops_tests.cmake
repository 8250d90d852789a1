# Operations end to end (issue 7): ferry status, metrics vs table, optimize while ingesting,
# no secrets in logs (Kafka properties, NATS password, token, URL credentials, creds files).
ferry_cc_test(NAME ops_test
  SRCS ${CMAKE_CURRENT_LIST_DIR}/ops_test.cc
  DEPS ferry_pipeline_e2e_support ferry_testing_nats_server nats_auth_fixtures PkgConfig::httplib
  LABELS integration TIMEOUT 600)
add_dependencies(ops_test ferry)

// DuckDB as an independent reader for the Delta integration and fault tests (delta_duckdb_test,
// column_mapping_duckdb_test, schema_evolution_torture_test): statements run through
// tests/duckdb/query.mjs (`make setup-npm`), the last statement's rows returned as JSON
// objects, and SQL string literals quoted. A failure of DuckDB fails the calling test.
// REQUIRES: FERRY_SOURCE_DIR defined (the tests' CMake does).
//
// Thread-safety: stateless functions; each call runs one node process.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ferry::duckdb_statements {

// Runs the statements in one DuckDB session; returns the rows of the last one.
inline std::vector<nlohmann::json> Run(const std::vector<std::string>& statements) {
  std::string cmd = "node " + std::string(FERRY_SOURCE_DIR) + "/tests/duckdb/query.mjs";
  for (const std::string& sql : statements) {
    cmd += " '";
    for (char c : sql) {
      cmd += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    cmd += "'";
  }
  cmd += " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  EXPECT_NE(p, nullptr);
  std::string out;
  if (p != nullptr) {
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0) {
      out.append(buf, n);
    }
    int rc = pclose(p);
    EXPECT_EQ(WEXITSTATUS(rc), 0) << statements.back().substr(0, 2000) << "\n"
                                  << out.substr(0, 2000);
  }
  std::vector<nlohmann::json> rows;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    // One JSON object a row; anything else node or DuckDB prints is passed over.
    nlohmann::json row = nlohmann::json::parse(line, nullptr, false);
    if (row.is_object()) {
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

// `s` as an SQL string literal.
inline std::string Literal(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    out += c == '\'' ? std::string("''") : std::string(1, c);
  }
  return out + "'";
}

}  // namespace ferry::duckdb_statements

// Test-only: a Field in one call, and a schema from DDL that fails the test (not the process)
// when the DDL does not parse.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "ferry/columnar/ddl.h"
#include "ferry/columnar/types.h"

namespace ferry::columnar {

inline Field F(std::string name, DataTypePtr type, bool nullable = true) {
  Field f;
  f.name = std::move(name);
  f.type = std::move(type);
  f.nullable = nullable;
  return f;
}

inline SchemaPtr Ddl(std::string_view ddl) {
  Result<Schema> s = ParseDdlSchema(ddl);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::make_shared<const Schema>(s.ok() ? *s : Schema());
}

}  // namespace ferry::columnar

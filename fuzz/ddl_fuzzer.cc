// libFuzzer target: the Spark DDL parser (columnar/ddl.h). Whatever parses must print and parse
// back equal; FuzzDdlRoundTrip aborts on a difference.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ferry/columnar/ddl.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ferry::columnar::FuzzDdlRoundTrip(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}

// Random (version 4) UUIDs for table ids, data file names and commit txnIds.
//
// Thread-safety: thread-safe.
#pragma once

#include <string>

namespace ferry::delta {

// "0f8fad5b-d9cb-469f-a165-70867728950e" (lowercase).
std::string RandomUuid();

}  // namespace ferry::delta

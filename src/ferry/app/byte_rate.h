// FormatByteRate: a data rate in the unit that fits it, for people to read (`ferry status
// --watch`; the status page's status.js formats the same way): three significant digits, decimal
// units (B/s, kB/s, MB/s, GB/s, TB/s), so 1,400 bytes a second reads "1.4 kB/s", not
// "0.0014 MB/s".
//
// Thread-safety: a pure function.
#pragma once

#include <string>

namespace ferry::app {

// REQUIRES: bytes_per_second is finite. Negative rates keep their sign.
std::string FormatByteRate(double bytes_per_second);

}  // namespace ferry::app

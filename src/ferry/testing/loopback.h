// TCP on 127.0.0.1 for tests: the listening sockets of fake servers and proxies, and the
// connections that probe or relay to them.
//
// Thread-safety: the functions may be called from any thread.
#pragma once

#include "ferry/base/result.h"

namespace ferry::testing {

// A socket listening on 127.0.0.1:`port` (0: a free port the kernel picks), with SO_REUSEADDR so
// that a test can listen again on a port it has just closed. The caller closes it.
Result<int> ListenOnLoopback(int port);

// The port a bound socket has.
Result<int> LocalPort(int fd);

// A socket connected to 127.0.0.1:`port`, or -1 when nothing accepts there. The caller closes it.
int ConnectToLoopback(int port);

}  // namespace ferry::testing

// What `ferry --version` prints: ferry's version, the commit it was built from, and the versions
// of librdkafka, nats.c and zstd it runs with (the shared libraries loaded at run time, which may
// differ from the headers it was compiled against): what a bug report needs. Part of the app
// layer (it names the concrete libraries). Thread-safe.
#pragma once

#include <string>

namespace ferry::app {

// The commit ferry was built from: 12 hex digits, with "-dirty" when tracked files had
// uncommitted changes, or "unknown" when the tree was not a git checkout (a tarball) or git was
// missing. Defined in a source file generated at every build (cmake/BuildCommit.cmake).
const char* BuildCommit();

// The lines printed by `ferry --version`, the first being "ferry <version>" (help2man and
// scripts read it). A build with failpoints compiled in says so on a line of its own.
std::string VersionText();

}  // namespace ferry::app

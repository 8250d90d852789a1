// The torture harness's elastic mode on JetStream (docs/RELIABILITY.md, docs/jetstream.md
// "Elastic scale-out"): several `ferry run` processes given one config with
// `partitions = { subject = "<stream>.{partition}.>", count = 16 }` share the partitions through
// leases, while 16 producers publish ids 1..N (a contiguous slice per partition). At random
// (seeded) moments a live process is SIGKILLed (its leases expire after lease_ttl), leaves
// cleanly (SIGTERM: it releases them at once), is SIGSTOPped for one to three lease TTLs and
// continued (its partitions move meanwhile; its own next commit is fenced by the Delta commit),
// or a new process joins; between one and five run at any time, each in a directory of its own
// (working directory, TMPDIR), as on hosts of their own; an optimize loop commits beside them.
// At the end the live processes catch up and leave, and `ferry verify --expect N` is clean:
// every id once, every partition's position the largest sequence its rows hold.
//
// Thread-safety: one thread.
#pragma once

#include <filesystem>
#include <string>

#include "torture_support.h"
#include "torture_table.h"

namespace ferry::fault {

// `stream` must exist on `server_url` with the subjects "<stream>.>". Ids: half the settings'
// messages, between 4,000 and 200,000; events: the settings' kills, at least 10.
void RunElasticProcesses(const TortureSettings& settings, const std::filesystem::path& dir,
                         const std::string& server_url, const std::string& stream,
                         const TableLocation& table, const std::string& label);

}  // namespace ferry::fault

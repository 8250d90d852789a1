// `ferry optimize` and `ferry vacuum`: table hygiene on a table on the local file system
// (delta/optimize.h, delta/vacuum.h; docs/OPERATIONS.md "Table hygiene"). Both are safe to run
// while `ferry run` appends to the table.
//
//   ferry optimize TABLE [--where 'col = 'v' AND ...'] [--target-size 256MB] [--dry-run] [--json]
//       bin-packs the small files of each partition into files of about the target size (one
//       commit of removes and adds with dataChange=false; rows and txn positions unchanged).
//   ferry vacuum TABLE [--retain 168h] [--dry-run] [--force] [--json]
//       deletes files no snapshot within the retention references (expired removes, orphans of
//       fenced batches); never a live file. A retention below 168h needs --force.
//
// Sizes and durations use the configuration's syntax (config.h: "256MB", "1GiB"; "168h", "7d").
// --json prints one object: optimize {version, bins, files_removed, files_added, bytes_removed,
// bytes_added, rows}; vacuum {version, dry_run, files_deleted, bytes, files_kept, deleted: [..]}.
//
// Exit codes: 0 done, 1 the command failed (a conflict with a concurrent optimize: run it
// again), 2 usage error or unreadable table (the message names the table and file).
//
// Thread-safety: run from main() only.
#pragma once

namespace CLI {
class App;
}  // namespace CLI

namespace ferry::app {

// Adds the `optimize` and `vacuum` commands to `app`; a command's exit code goes to *exit_code.
void RegisterHygieneCommands(CLI::App& app, int* exit_code);

}  // namespace ferry::app

// `ferry table ...`: commands that look at a Delta table on the local file system.
//
//   ferry table inspect PATH [--version N] [--json]
//       the snapshot at the latest version (or N): protocol and features, schema, partition
//       columns, live files, rows (from stats), bytes, and the txn positions (appId -> version).
//       --json prints one object with the keys version, timestamp, table_id, protocol {
//       minReaderVersion, minWriterVersion, readerFeatures, writerFeatures }, schema (the
//       schemaString JSON), partition_columns, configuration, num_files, num_rows (null when a
//       file has no numRecords), size_bytes, txns {appId: version}.
//   ferry table history PATH [--json]
//       one line per commit, oldest first: version, time, operation, files added and removed,
//       txns. --json prints one object per line with the keys version, timestamp, operation,
//       engine_info, files_added, files_removed, txns {appId: version}.
//
// Exit codes: 0 ok, 1 the table could not be read (the message names version and file).
//
// Thread-safety: run from main() only.
#pragma once

namespace CLI {
class App;
}  // namespace CLI

namespace ferry::app {

// Adds the `table` command group to `app`; a command's exit code goes to *exit_code.
void RegisterTableCommands(CLI::App& app, int* exit_code);

}  // namespace ferry::app

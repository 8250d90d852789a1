// `ferry verify`: checks that a table holds every id exactly once and that its committed source
// positions agree with the data (delta/verify.h; docs/verify.md).
//
//   ferry verify TABLE --id COLUMN [--expect N] [--range A..B] [--json] [--max-listed K]
//                [--partition-column C] [--offset-column C] [--topic-column C]
//                [--sequence-column C] [--subject-column C]
//   ferry verify TABLE1 TABLE2 ... --id COLUMN [--expect N] [--range A..B] [--json]
//                the tables of one routed pipeline together (delta::VerifyRoutedTables): each
//                table's own report, then every id in exactly one of them, once; --expect and
//                --range apply to the union
//   ferry verify --routing POSITIONS_TABLE [--pipeline ID] --id COLUMN ...
//                the same over every table the routed pipeline's positions table records (txns
//                "<id>/table/<table>", router.h); --pipeline when it records several pipelines
//   ferry verify --config FILE --pipeline ID --id COLUMN ...
//                the same over the pipeline's static tables (routes, fallback; left out while no
//                table is there) and the ones its positions table records (routed_status.h)
//   ferry verify TABLE --key COLUMN[,COLUMN...] [--expect N] [--json]
//   ferry verify --config FILE --pipeline ID      (an upsert pipeline: its table and key)
//                an upsert table (docs/cdc.md): one live row per key; a txn may lie past the
//                data (deletes), never behind it (delta/verify.h)
//
// Prints rows, distinct ids, duplicates (the first few with the files holding them), ids of the
// inclusive range A..B no row holds, the position checks, and whether rows and distinct ids
// equal N. --json prints one object: {table, version, files, rows, distinct, null_ids,
// duplicates, duplicate_ids, duplicates_listed: [{id, count, files}], missing, missing_ids,
// out_of_range, positions_checked, positions: [{app_id, source, txn, data_max, ok}],
// stats_mismatches: [text], expect, expect_ok, ok}; `duplicates` counts rows beyond the first of
// each id. For several tables: {tables: [the object above, per table], rows, distinct,
// in_several_tables, several_listed: [{id, tables}], missing, missing_ids, expect, expect_ok, ok}.
//
// Exit codes: 0 clean, 1 not clean, 2 usage error or the table could not be read (the message
// names the table and file).
//
// Thread-safety: run from main() only.
#pragma once

namespace CLI {
class App;
}  // namespace CLI

namespace ferry::app {

// Adds the `verify` command to `app`; its exit code goes to *exit_code.
void RegisterVerifyCommand(CLI::App& app, int* exit_code);

}  // namespace ferry::app

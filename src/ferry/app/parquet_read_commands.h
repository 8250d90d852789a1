// `ferry parquet inspect` and `ferry parquet cat`: the read side of the `parquet` command group.
// Each Register function adds one subcommand to the group; its callback runs the command and
// stores the process exit code in *exit_code (0 ok, 1 the file could not be read, 2 bad usage),
// so that no exception carries it out of our code.
//
//   ferry parquet inspect FILE [--json]   schema, row groups, column chunks (codecs, encodings,
//                                         sizes, offsets) and statistics
//   ferry parquet cat FILE [--columns a,b] [--limit N]
//                                         rows as JSON lines (parquet_cat_json.h)
//
// Thread-safety: run from main() only.
#pragma once

namespace CLI {
class App;
}  // namespace CLI

namespace ferry::app {

void RegisterParquetInspect(CLI::App* parquet, int* exit_code);
void RegisterParquetCat(CLI::App* parquet, int* exit_code);

}  // namespace ferry::app

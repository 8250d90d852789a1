// The `ferry` binary: one CLI11 app whose subcommands are registered by the command files of this
// folder. main() holds the only catch-all: a third-party exception that escaped an adapter is
// logged and turns into exit code 70 (EX_SOFTWARE).
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "ferry/app/allocator.h"
#include "ferry/app/hygiene_commands.h"
#include "ferry/app/logging.h"
#include "ferry/app/mock_kafka_command.h"
#include "ferry/app/parquet_from_json_command.h"
#include "ferry/app/parquet_read_commands.h"
#include "ferry/app/produce_kafka_command.h"
#include "ferry/app/produce_nats_command.h"
#include "ferry/app/run_command.h"
#include "ferry/app/status_command.h"
#include "ferry/app/table_commands.h"
#include "ferry/app/verify_command.h"
#include "ferry/app/version.h"

int main(int argc, char** argv) {
  ferry::app::TuneAllocator();  // before the first large allocation
  try {
    // Until a command sets up logging from its configuration (run, status), log lines go to
    // stderr as text: stdout is for command output, e.g. `ferry verify --json` (a warning about a
    // corrupt _last_checkpoint once landed in the middle of that JSON).
    if (ferry::Status logging = ferry::app::SetupLogging({}); !logging.ok()) {
      std::fprintf(stderr, "ferry: %s\n", logging.ToString().c_str());
      return 70;
    }
    CLI::App app{"ferry: Kafka and NATS JetStream into Delta Lake tables, exactly once"};
    app.set_version_flag(
        "--version", [] { return ferry::app::VersionText(); },
        "Print the version, the commit it was built from and the library versions, and exit");
    app.require_subcommand(1);
    // Commands report failure through exit_code (their callbacks never throw).
    int exit_code = 0;
    ferry::app::RegisterVerifyCommand(app, &exit_code);
    ferry::app::RegisterHygieneCommands(app, &exit_code);
    CLI::App* parquet = app.add_subcommand("parquet", "Read and write Parquet files");
    parquet->require_subcommand(1);
    ferry::app::RegisterParquetInspect(parquet, &exit_code);
    ferry::app::RegisterParquetCat(parquet, &exit_code);
    ferry::app::RegisterParquetFromJson(parquet, &exit_code);
    ferry::app::RegisterMockKafkaCommand(app, &exit_code);
    ferry::app::RegisterProduceKafkaCommand(app, &exit_code);
    ferry::app::RegisterProduceNatsCommand(app, &exit_code);
    ferry::app::RegisterTableCommands(app, &exit_code);
    ferry::app::RegisterRunCommand(app, &exit_code);
    ferry::app::RegisterConfigCommands(app, &exit_code);
    ferry::app::RegisterStatusCommand(app, &exit_code);
    CLI11_PARSE(app, argc, argv);
    return exit_code;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ferry: internal error: %s\n", e.what());
    return 70;
  }
}

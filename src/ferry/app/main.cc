// The `ferry` binary: one CLI11 app whose subcommands are registered by the command files of this
// folder. main() holds the only catch-all: a third-party exception that escaped an adapter is
// logged and turns into exit code 70 (EX_SOFTWARE).
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "ferry/app/table_commands.h"

int main(int argc, char** argv) {
  try {
    CLI::App app{"ferry: Kafka and NATS JetStream into Delta Lake tables, exactly once"};
    app.set_version_flag("--version", std::string("ferry ") + FERRY_VERSION);
    app.require_subcommand(1);
    // Each command reports its outcome here (CLI11 callbacks return nothing).
    int exit_code = 0;
    ferry::app::RegisterTableCommands(app, &exit_code);
    CLI11_PARSE(app, argc, argv);
    return exit_code;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ferry: internal error: %s\n", e.what());
    return 70;
  }
}

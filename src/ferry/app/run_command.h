// `ferry run --config FILE`: runs every pipeline of a configuration until SIGTERM/SIGINT (or,
// with --until-caught-up, until each has ingested what the broker held at start), and
// `ferry config check FILE`: validates a configuration without running it.
#pragma once

#include <CLI/CLI.hpp>

namespace ferry::app {

void RegisterRunCommand(CLI::App& app, int* exit_code);
void RegisterConfigCommands(CLI::App& app, int* exit_code);

}  // namespace ferry::app

// Registration of the `strata` client subcommands (import, status, describe, flush, compact,
// query: clients of a running server's REST API) and the top-level behaviour main.cc shares
// with `serve`: --version, "unknown subcommand NAME", usage errors as exit code 1
// (cli/exit_codes.h). main.cc only calls these.
#pragma once

#include <CLI/CLI.hpp>

namespace strata::cli {

/// Adds the client subcommands and `--version` to `app`. A command's callback runs during
/// Parse and stores its exit code in *exit_code (left untouched when none ran).
void RegisterClientCommands(CLI::App& app, int* exit_code);

/// Parses argv. Returns -1 to go on, or the exit code to return now: 0 after --help or
/// --version, 1 for a usage error or an unknown subcommand ("unknown subcommand NAME" on
/// stderr with the list of subcommands).
int Parse(CLI::App& app, int argc, char** argv);

}  // namespace strata::cli

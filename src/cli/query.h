// `strata query`: a vector, full-text or filter query on query/ (PROTOCOL.md §5.2), printed as
// an aligned table (vectors summarised), CSV (vectors as JSON arrays) or a JSON array of row
// objects (--format json or --json). The Arrow IPC file answer is read with arrow/ipc.
// Thread-safety: called once per process.
#pragma once

#include <CLI/CLI.hpp>

namespace strata::cli {

/// Registers `query` on `app`; its callback stores the exit code in *exit_code.
void AddQueryCommand(CLI::App& app, int* exit_code);

}  // namespace strata::cli

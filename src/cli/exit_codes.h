// Exit codes of the `strata` client commands (import, status, describe, flush, compact, query),
// documented in README.md "Command-line client". `strata serve` keeps its own (0, 1, 2).
#pragma once

#include "common/status.h"

namespace strata::cli {

enum ExitCode : int {
  kExitOk = 0,
  /// Bad flags, a missing argument, an unknown subcommand.
  kExitUsage = 1,
  /// The server could not be reached, or answered 5xx (unavailable, backpressure, timeout).
  kExitServer = 2,
  /// The server refused the request with a 4xx (table not found, invalid input, 401).
  kExitRefused = 3,
  /// An input file could not be read or holds a malformed row (named by file:line).
  kExitInput = 4,
  /// `strata import` stopped before the end (SIGINT/SIGTERM or --stop-after-batches); the
  /// acknowledged batches are in the state file and `--resume` continues.
  kExitInterrupted = 5,
};

/// The exit code for an error Status produced by the client code: the HTTP client marks
/// connection failures and 5xx as kExitServer, 4xx as kExitRefused (see client.h); input
/// errors (Invalid/IOError/Corruption raised while reading files) are kExitInput.
int ExitCodeFor(const Status& st);

}  // namespace strata::cli

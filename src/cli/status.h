// `strata status`: the server's health (/healthz), readiness (/readyz) and, per table of the
// database, rows, shard states, generations, MemTables waiting for flush and SSTables waiting
// for compaction (the L0 backlog), and the base table version, from GET /v1/table/,
// count_rows/ and mem_wal/describe/. --json prints one object:
// {"url","database","healthy","ready":<readyz answer>,"tables":[{"name","rows","mem_wal"}]}.
// Exit 2 when the server cannot be reached or is not healthy.
// Thread-safety: called once per process.
#pragma once

#include <CLI/CLI.hpp>

namespace strata::cli {

void AddStatusCommand(CLI::App& app, int* exit_code);

}  // namespace strata::cli

// `strata describe`, `strata flush` and `strata compact`: one table of a running server.
//   describe: describe/ (version, schema), count_rows/, index/list/ and mem_wal/describe/
//             (shards: state, writer epoch, generations, WAL positions, active and frozen
//             MemTables, SSTables waiting for compaction, MemTable indexes; the base table).
//   flush:    flush/ {"timeout_ms"}: the generation each shard sealed and waited for.
//   compact:  compact/ {"timeout_ms"}: one bounded compaction of the waiting SSTables.
// --json prints the server's answers (describe: {"describe","rows","indexes","mem_wal"}).
// Thread-safety: called once per process.
#pragma once

#include <CLI/CLI.hpp>

namespace strata::cli {

void AddDescribeCommand(CLI::App& app, int* exit_code);
void AddFlushCommand(CLI::App& app, int* exit_code);
void AddCompactCommand(CLI::App& app, int* exit_code);

}  // namespace strata::cli

// Per-table writer options of an LSM write spec (`writer_config_defaults`, PROTOCOL.md §5.6):
// the names of the server flags (README "Server flags") and DESIGN.md §4, values as strings
// (the SDK sends {"durable_write": "true", "max_memtable_rows": "100000"}):
//   durable_write           true | false          puts return once the WAL entry is durable
//   max_memtable_rows       integer [1, 2^40]     seal the active MemTable at this many rows
//   max_memtable_bytes      integer [1024, 2^40]  ... at this many bytes
//   max_memtable_age_ms     integer [1, 2^31)     ... after this long with rows in it
//   max_unflushed_bytes     integer [1024, 2^50]  backpressure: active + frozen MemTable bytes
//   max_frozen_memtables    integer [0, 2^20]     backpressure: frozen MemTables (0 = no limit)
//   write_stall_timeout_ms  integer [1, 2^31)     a put stalled longer fails with 503
// A table's values override the server flags for that table only.
// Thread-safety: stateless functions.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "shard/shard_writer.h"

namespace strata::table {

/// The option names above, in that order.
const std::vector<std::string>& WriterConfigKeys();

/// Invalid naming the key and the limit for an unknown key (listing the known ones) or a bad
/// value, e.g. "writer_config_defaults.max_memtable_rows must be an integer in [1,
/// 1099511627776], got 'abc'".
Status ValidateWriterConfig(const std::map<std::string, std::string>& config);

/// `options` with every key of `config` applied. Errors: as ValidateWriterConfig (options
/// unchanged).
Status ApplyWriterConfig(const std::map<std::string, std::string>& config,
                         shard::ShardWriterOptions* options);

}  // namespace strata::table

// The `strata` binary. Subcommands: `serve` (the LanceDB-compatible REST server), and the
// clients of a running server registered by cli/commands.h (import, status, describe, flush,
// compact, query).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>

#include "cli/commands.h"
#include "server/server.h"

int main(int argc, char** argv) {
  CLI::App app{"Strata: an LSM-tree table and vector-search server speaking the LanceDB REST API"};
  app.require_subcommand(1);

  strata::server::ServerOptions opts;
  auto* serve = app.add_subcommand("serve", "Run the REST server");
  serve->add_option("--data", opts.data_dir, "Data directory (created if missing)")
      ->capture_default_str();
  serve
      ->add_option("--store", opts.store_url,
                   "s3://BUCKET/PREFIX: keep the data on an S3-compatible store instead of "
                   "--data (credentials and region from AWS_ACCESS_KEY_ID, "
                   "AWS_SECRET_ACCESS_KEY, AWS_REGION)")
      ->check([](const std::string& v) {
        return v.rfind("s3://", 0) == 0 ? std::string() : "--store must be s3://BUCKET/PREFIX";
      });
  serve->add_option("--s3-endpoint", opts.s3_endpoint,
                    "S3 endpoint URL for --store, e.g. http://127.0.0.1:17480 (default: "
                    "STRATA_S3_ENDPOINT)");
  bool no_data_dir_lock = false;
  serve->add_flag("--no-data-dir-lock", no_data_dir_lock,
                  "Do not lock --data (~strata.lock): lets a second server open the same "
                  "directory, which then fences this one (for tests of fencing only)");
  serve->add_option("--host", opts.host, "Listen address")->capture_default_str();
  serve
      ->add_option("--port", opts.port,
                   "TCP port (0 = pick a free port; a port in use is an error)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  serve
      ->add_option("--threads", opts.threads,
                   "HTTP worker threads serving requests (0 = max(8, 2 x cores)); idle "
                   "keep-alive connections wait in the event loop, not in a worker")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  serve->add_option("--max-body-bytes", opts.max_body_bytes, "Largest request body in bytes")
      ->check(CLI::Range(int64_t{1024}, int64_t{1} << 34))
      ->capture_default_str();
  serve
      ->add_option("--read-timeout-s", opts.read_timeout_s,
                   "Seconds one socket read may wait for a client before it is dropped")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  serve
      ->add_option("--header-timeout-ms", opts.header_timeout_ms,
                   "Milliseconds a request head may take from its first byte (slow clients "
                   "are disconnected, 408)")
      ->check(CLI::Range(100, 600000))
      ->capture_default_str();
  serve
      ->add_option("--idle-timeout-ms", opts.idle_timeout_ms,
                   "Milliseconds an idle keep-alive connection is kept open")
      ->check(CLI::Range(100, 3600000))
      ->capture_default_str();
  serve
      ->add_option("--max-connections", opts.max_connections,
                   "Most open client connections (503 too_many_connections beyond)")
      ->check(CLI::Range(1, 900))
      ->capture_default_str();
  serve
      ->add_option("--max-connections-per-ip", opts.max_connections_per_ip,
                   "Most open connections from one client address")
      ->check(CLI::Range(1, 900))
      ->capture_default_str();
  serve
      ->add_option("--min-transfer-rate-bytes", opts.min_transfer_rate_bytes,
                   "After --transfer-grace-ms, a request body and then its response must move "
                   "at least this many bytes per second on average, or the connection is "
                   "dropped (0 = no minimum)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30))
      ->capture_default_str();
  serve
      ->add_option("--transfer-grace-ms", opts.transfer_grace_ms,
                   "Milliseconds before --min-transfer-rate-bytes applies")
      ->check(CLI::Range(0, 3600000))
      ->capture_default_str();

  serve
      ->add_option("--keepalive-linger-us", opts.keepalive_linger_us,
                   "After a response, microseconds a worker waits for the next request on the "
                   "same keep-alive connection while another worker is idle, instead of "
                   "handing the connection back to the event loop (0 = never)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  serve
      ->add_option("--keepalive-spin-us", opts.keepalive_spin_us,
                   "The first microseconds of that wait poll without sleeping, so a request "
                   "arriving soon is served without a wake-up (capped by --keepalive-linger-us; "
                   "0 = sleep at once)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();

  // Request limits (DESIGN.md §9, server/write_limits.h): each violation is a 4xx naming it.
  auto& limits = opts.limits;
  serve
      ->add_option("--max-rows-per-write", limits.max_rows_per_write,
                   "Most rows one create/insert/merge_insert upload or update may write")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
      ->capture_default_str();
  serve
      ->add_option("--max-vector-dim", limits.max_vector_dim,
                   "Widest vector (fixed_size_list) column a table may declare")
      ->check(CLI::Range(int64_t{1}, strata::server::RequestLimits::kHardMaxVectorDim))
      ->capture_default_str();
  serve
      ->add_option("--max-k", limits.max_k,
                   "Largest k (limit) of a vector or full-text query; plain scans are not limited")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
      ->capture_default_str();
  serve
      ->add_option("--max-filter-bytes", limits.max_filter_bytes,
                   "Longest SQL filter or predicate in bytes (at most the parser's 65536)")
      ->check(CLI::Range(int64_t{1}, int64_t{65536}))
      ->capture_default_str();
  serve
      ->add_option("--max-string-bytes", limits.max_string_bytes,
                   "Largest single string or binary value of a write, in bytes")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 34))
      ->capture_default_str();

  // Operations: API keys, request-id dedupe, logs, shutdown (server/api_keys.h,
  // server/request_dedupe.h, server/request_log.h).
  serve
      ->add_option(
          "--api-key", opts.api_keys,
          "Require x-api-key equal to this key on every route but GET /healthz, /readyz, /console/ "
          "(repeatable; united with STRATA_API_KEYS, comma-separated)")
      ->allow_extra_args(false);
  serve
      ->add_option("--dedupe-max-entries", opts.dedupe_max_entries,
                   "Most write answers remembered by x-request-id, for insert/ and for the other "
                   "writes each (0 disables the dedupe)")
      ->check(CLI::Range(size_t{0}, size_t{10000000}))
      ->capture_default_str();
  serve
      ->add_option("--dedupe-ttl-s", opts.dedupe_ttl_s,
                   "Seconds a write answer is remembered by x-request-id")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  serve->add_option("--log-format", opts.log_format, "Log lines as key=value text or JSON")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  serve
      ->add_option("--log-level", opts.log_level,
                   "trace, debug, info, warn, error, critical or off (SPDLOG_LEVEL overrides)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}))
      ->capture_default_str();
  serve
      ->add_option("--shutdown-timeout-s", opts.shutdown_timeout_s,
                   "On SIGTERM/SIGINT, seconds in-flight requests may run before the server "
                   "exits anyway (exit code 1)")
      ->check(CLI::Range(0, 3600))
      ->capture_default_str();

  // Storage engine (DESIGN.md §4): seal triggers, backpressure, durability.
  auto& shard = opts.shard;
  int64_t max_memtable_age_ms = shard.max_memtable_age.count();
  int64_t write_stall_timeout_ms = shard.write_stall_timeout.count();
  serve
      ->add_option("--max-memtable-rows", shard.max_memtable_rows,
                   "Seal the active MemTable at this many rows")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
      ->capture_default_str();
  serve
      ->add_option("--max-memtable-bytes", shard.max_memtable_bytes,
                   "Seal the active MemTable at this many bytes")
      ->check(CLI::Range(int64_t{1024}, int64_t{1} << 40))
      ->capture_default_str();
  serve
      ->add_option("--max-memtable-age-ms", max_memtable_age_ms,
                   "Seal a non-empty active MemTable after this many milliseconds")
      ->check(CLI::Range(int64_t{10}, int64_t{1} << 40))
      ->capture_default_str();
  serve
      ->add_option("--max-unflushed-bytes", shard.max_unflushed_bytes,
                   "Backpressure: puts wait while active + frozen MemTables hold this many bytes")
      ->check(CLI::Range(int64_t{1024}, int64_t{1} << 44))
      ->capture_default_str();
  serve
      ->add_option("--write-stall-timeout-ms", write_stall_timeout_ms,
                   "A put waiting on backpressure longer than this fails with 503 backpressure")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
      ->capture_default_str();

  // Compaction into the base table (DESIGN.md §7).
  auto& compaction = opts.compaction;
  serve
      ->add_option("--compaction-l0-count", compaction.l0_trigger_count,
                   "Compact a table once this many flushed SSTables (L0) wait")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  serve
      ->add_option("--compaction-l0-slowdown", compaction.l0_slowdown_count,
                   "Writes are rate-limited (to a rate derived from the measured compaction and "
                   "write rates) once this "
                   "many SSTables + frozen MemTables wait for compaction; 0 = never")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20))
      ->capture_default_str();
  serve
      ->add_option("--compaction-l0-stop", compaction.l0_stop_count,
                   "Writes wait (503 backpressure after --write-stall-timeout-ms) while this "
                   "many SSTables + frozen MemTables wait for compaction; 0 = never")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20))
      ->capture_default_str();
  serve
      ->add_option("--compaction-l0-bytes", compaction.l0_trigger_bytes,
                   "...or once the waiting SSTables hold this many bytes")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 50))
      ->capture_default_str();
  serve
      ->add_option("--compaction-max-rows", compaction.max_rows_per_compaction,
                   "Rows one compaction takes at most (whole SSTables, at least one)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
      ->capture_default_str();
  serve
      ->add_option("--background-nice", compaction.background_nice,
                   "Nice value (0-19) of each table's background threads (compaction, base "
                   "rewrite, GC, base index builds), so puts, flushes and queries get the CPU "
                   "first; 0 = the server's own priority")
      ->check(CLI::Range(0, 19))
      ->capture_default_str();
  int64_t compaction_idle_s = compaction.idle.count() / 1000;
  serve
      ->add_option("--compaction-idle-seconds", compaction_idle_s,
                   "Compact a table's remaining SSTables (below --compaction-l0-count) once it "
                   "had no write for this long, so a quiet table searches one graph; 0 = never")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30))
      ->capture_default_str();
  serve
      ->add_option("--rewrite-dead-fraction", compaction.rewrite_dead_fraction,
                   "Rewrite a table's base (copy its live rows, drop the dead ones) once dead "
                   "rows are this fraction of its rows and at least --rewrite-min-dead-rows; "
                   "0 = never (docs/COMPACTION.md \"Base rewrite\")")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  serve
      ->add_option("--rewrite-min-dead-rows", compaction.rewrite_min_dead_rows,
                   "...and once they are at least this many")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
      ->capture_default_str();
  int64_t index_load_wait_ms = compaction.index_load_wait.count();
  serve
      ->add_option("--index-load-wait-ms", index_load_wait_ms,
                   "After a restart, a vector query waits up to this long for the table's base "
                   "index checkpoints to load instead of scanning the base exactly; 0 = never")
      ->check(CLI::Range(int64_t{0}, int64_t{3600000}))
      ->capture_default_str();
  int64_t retain_versions_days = compaction.gc_options.retain_age.count() / 86400;
  int64_t gc_orphan_age_s = compaction.gc_options.orphan_min_age.count();
  int64_t gc_interval_s = compaction.gc_interval.count();
  serve
      ->add_option("--retain-versions", compaction.gc_options.retain_versions,
                   "Garbage collection keeps at least this many newest table versions")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40))
      ->capture_default_str();
  serve
      ->add_option("--retain-versions-days", retain_versions_days,
                   "...and every table version younger than this many days (whichever keeps "
                   "more; tagged versions are always kept)")
      ->check(CLI::Range(int64_t{0}, int64_t{36500}))
      ->capture_default_str();
  serve
      ->add_option("--gc-orphan-age-s", gc_orphan_age_s,
                   "Files no manifest references are removed once older than this (an "
                   "operation in flight may still commit them)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40))
      ->capture_default_str();
  serve
      ->add_option("--gc-interval-s", gc_interval_s,
                   "Garbage collection runs after each compaction and at least this often")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
      ->capture_default_str();
  // Storage failures (DESIGN.md §4 "Storage failures"): free-space floor, writer recovery.
  serve
      ->add_option("--min-free-bytes", opts.min_free_bytes,
                   "Refuse writes (507 insufficient_storage) while the data directory's "
                   "filesystem has less free space than this; flush, compaction and GC keep "
                   "running. -1 = 256 MiB or 5% of the filesystem, whichever is smaller; 0 = off")
      ->check(CLI::Range(int64_t{-1}, int64_t{1} << 50))
      ->capture_default_str();
  serve
      ->add_option("--cache-bytes", opts.cache_bytes,
                   "Most bytes of the base table's memory-mapped data kept resident in the "
                   "server process (over it, 8 MiB chunks are unmapped in clock order and "
                   "read back from the page cache on their next use). Indexes and "
                   "MemTables are not counted. -1 = a quarter of physical memory; 0 = no bound")
      ->check(CLI::Range(int64_t{-1}, int64_t{1} << 50))
      ->capture_default_str();
  serve
      ->add_option(
          "--vector-code-bytes", opts.vector_code_bytes,
          "Most bytes of the 8-bit copies of vectors that the exact plan of filtered "
          "searches builds and keeps per batch, a quarter of the float bytes, to read less "
          "memory per row; results stay exact (rows are rescored from the floats). "
          "Least recently used batches go first. -1 = a sixteenth of physical "
          "memory; 0 = off")
      ->check(CLI::Range(int64_t{-1}, int64_t{1} << 50))
      ->capture_default_str();
  serve
      ->add_option(
          "--filter-cache-bytes", opts.filter_cache_bytes,
          "Most bytes of the per-source bitmaps (a bit per row) of which rows pass a "
          "filter, kept for filters that vector searches repeat so they test a bit instead "
          "of reading the column; built the second time a filter is used on a source. "
          "Least recently used go first. -1 = 1/256 of physical memory; 0 = off")
      ->check(CLI::Range(int64_t{-1}, int64_t{1} << 50))
      ->capture_default_str();
  serve
      ->add_option("--cache-dir", opts.cache_dir,
                   "With --store s3://: local directory for copies of the SSTables and base "
                   "fragments of open tables (made with ranged GETs, memory-mapped under "
                   "--cache-bytes, removed when the table drops them). Needs local disk for "
                   "the open tables' data files. Default: $TMPDIR or /tmp")
      ->capture_default_str();
  int64_t recovery_max_backoff_ms = opts.recovery.max_backoff.count();
  serve
      ->add_option("--recovery-max-backoff-ms", recovery_max_backoff_ms,
                   "A shard writer poisoned by a storage error is reopened in the background, "
                   "retrying with a backoff doubling from 250 ms up to this")
      ->check(CLI::Range(int64_t{250}, int64_t{1} << 30))
      ->capture_default_str();
  int64_t owner_check_ms = opts.recovery.owner_check.count();
  serve
      ->add_option("--owner-check-ms", owner_check_ms,
                   "How often each table's shard writer checks that no other server took over "
                   "its shard (one manifest read); a server found fenced answers 409 to writes "
                   "and 503 on /readyz. 0 = only a write finds out")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30))
      ->capture_default_str();
  bool no_background_compaction = false;
  serve->add_flag("--no-background-compaction", no_background_compaction,
                  "Compact only on POST /v1/table/{name}/compact/");

  int client_exit = -1;  // set by a client subcommand's callback during Parse
  strata::cli::RegisterClientCommands(app, &client_exit);
  if (int rc = strata::cli::Parse(app, argc, argv); rc >= 0) return rc;
  if (client_exit >= 0) return client_exit;
  opts.lock_data_dir = !no_data_dir_lock;
  compaction.background = !no_background_compaction;
  compaction.gc_options.retain_age = std::chrono::seconds(retain_versions_days * 86400);
  compaction.gc_options.orphan_min_age = std::chrono::seconds(gc_orphan_age_s);
  compaction.gc_interval = std::chrono::seconds(gc_interval_s);
  compaction.idle = std::chrono::seconds(compaction_idle_s);
  compaction.index_load_wait = std::chrono::milliseconds(index_load_wait_ms);
  shard.max_memtable_age = std::chrono::milliseconds(max_memtable_age_ms);
  shard.write_stall_timeout = std::chrono::milliseconds(write_stall_timeout_ms);
  opts.recovery.max_backoff = std::chrono::milliseconds(recovery_max_backoff_ms);
  opts.recovery.owner_check = std::chrono::milliseconds(owner_check_ms);

  if (serve->parsed()) {
    // Defaults follow a raised --compaction-l0-count; explicit values are checked below.
    if (serve->count("--compaction-l0-slowdown") == 0 && compaction.l0_slowdown_count > 0) {
      compaction.l0_slowdown_count =
          std::max(compaction.l0_slowdown_count, compaction.l0_trigger_count);
    }
    if (serve->count("--compaction-l0-stop") == 0 && compaction.l0_stop_count > 0) {
      compaction.l0_stop_count =
          std::max(compaction.l0_stop_count, compaction.l0_trigger_count + 1);
    }
  }
  // Without background compaction the throttle is off: its thresholds do not matter.
  if (serve->parsed() && compaction.background) {
    if (compaction.l0_slowdown_count > 0 &&
        compaction.l0_slowdown_count < compaction.l0_trigger_count) {
      std::fprintf(stderr,
                   "strata serve: --compaction-l0-slowdown (%lld) must be 0 or at least "
                   "--compaction-l0-count (%lld)\n",
                   static_cast<long long>(compaction.l0_slowdown_count),
                   static_cast<long long>(compaction.l0_trigger_count));
      return 2;
    }
    if (compaction.l0_stop_count > 0 && compaction.l0_stop_count <= compaction.l0_trigger_count) {
      std::fprintf(stderr,
                   "strata serve: --compaction-l0-stop (%lld) must be 0 or above "
                   "--compaction-l0-count (%lld): a stopped backlog must trigger compaction\n",
                   static_cast<long long>(compaction.l0_stop_count),
                   static_cast<long long>(compaction.l0_trigger_count));
      return 2;
    }
  }
  if (serve->parsed()) {
    strata::Status st = strata::server::RunServer(opts);
    if (!st.ok()) {
      std::fprintf(stderr, "strata serve: %s\n", st.ToString().c_str());
      return 1;
    }
  }
  return 0;
}

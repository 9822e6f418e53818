// Options of `strata serve`. Plain data; copy freely.
#pragma once

#include <cstdint>
#include <string>

#include "shard/shard_writer.h"

namespace strata::server {

struct ServerOptions {
  /// Root data directory; databases are folders under it, tables folders under those.
  std::string data_dir = "./data";
  /// Listen address; loopback by default so a fresh install is not exposed.
  std::string host = "127.0.0.1";
  /// TCP port; 0 picks a free port (printed on start).
  int port = 8080;
  /// HTTP worker threads (0 = hardware concurrency, at least 2).
  int threads = 0;
  /// Largest accepted request body in bytes (413 payload_too_large above it).
  int64_t max_body_bytes = 256LL << 20;
  /// Seconds one socket read (headers or a piece of the body) may wait for the client before
  /// the connection is dropped (strata serve --read-timeout-s). Bounds how long a stalled
  /// client holds a worker thread per read; it is not a deadline for the whole body.
  int read_timeout_s = 30;
  /// Shard writer options of every table (MemTable sizes, durability, backpressure).
  shard::ShardWriterOptions shard;
};

}  // namespace strata::server

// State shared by every route handler of one running server.
// Thread-safety: immutable after start, except through `catalog` and `metrics`, both thread-safe
// (table::Catalog: every method may run concurrently).
#pragma once

#include <atomic>
#include <memory>

#include "server/server_metrics.h"
#include "server/server_options.h"
#include "table/catalog.h"

namespace strata::server {

struct ServerContext {
  ServerOptions options;
  std::unique_ptr<table::Catalog> catalog;
  /// Live HTTP and query metrics (GET /metrics); internally locked.
  std::shared_ptr<ServerMetrics> metrics = std::make_shared<ServerMetrics>();
  /// Set when the server starts stopping (GET /readyz answers not ready from then on).
  std::atomic<bool> shutting_down{false};
};

}  // namespace strata::server

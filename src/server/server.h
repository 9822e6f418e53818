// The REST server of PROTOCOL.md on cpp-httplib.
#pragma once

#include "common/status.h"
#include "server/server_options.h"

namespace strata::server {

/// Opens (or creates) the data directory, replays every table's WAL, and serves HTTP until
/// SIGINT/SIGTERM. Prints "strata listening on http://HOST:PORT" once it accepts connections.
/// Errors: IOError when the data directory cannot be used or the port cannot be bound.
Status RunServer(const ServerOptions& options);

}  // namespace strata::server

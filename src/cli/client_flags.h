// Flags every client command shares: --url (env STRATA_URL, default http://127.0.0.1:8080),
// --api-key (env STRATA_API_KEY; sent as x-api-key), --db (env STRATA_DB, default "default";
// sent as x-lancedb-database), --timeout-s.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/client.h"

namespace strata::cli {

void AddClientFlags(CLI::App* sub, ClientOptions* options);

/// Prints "strata CMD: message" on stderr and returns ExitCodeFor(st).
int ReportError(const char* command, const Status& st);

}  // namespace strata::cli

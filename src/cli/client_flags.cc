#include "cli/client_flags.h"

#include <cstdio>

#include "cli/exit_codes.h"

namespace strata::cli {

void AddClientFlags(CLI::App* sub, ClientOptions* options) {
  sub->add_option("--url", options->url, "Server URL (env STRATA_URL)")
      ->envname("STRATA_URL")
      ->capture_default_str();
  sub->add_option("--api-key", options->api_key, "API key sent as x-api-key (env STRATA_API_KEY)")
      ->envname("STRATA_API_KEY");
  sub->add_option("--db", options->database,
                  "Database name, sent as x-lancedb-database (env STRATA_DB)")
      ->envname("STRATA_DB")
      ->capture_default_str();
  sub->add_option("--timeout-s", options->read_timeout_s,
                  "Seconds to wait for each answer of the server")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
}

int ReportError(const char* command, const Status& st) {
  std::fprintf(stderr, "strata %s: %s\n", command, st.message().c_str());
  return ExitCodeFor(st);
}

}  // namespace strata::cli

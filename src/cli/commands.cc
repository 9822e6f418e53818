#include "cli/commands.h"

#include <cstdio>
#include <string>

#include "cli/exit_codes.h"
#include "cli/import.h"
#include "cli/query.h"
#include "cli/status.h"
#include "cli/table_commands.h"

#ifndef STRATA_VERSION
#define STRATA_VERSION "unknown"
#endif

namespace strata::cli {

void RegisterClientCommands(CLI::App& app, int* exit_code) {
  app.set_version_flag("--version", std::string("strata ") + STRATA_VERSION);
  AddImportCommand(app, exit_code);
  AddStatusCommand(app, exit_code);
  AddDescribeCommand(app, exit_code);
  AddFlushCommand(app, exit_code);
  AddCompactCommand(app, exit_code);
  AddQueryCommand(app, exit_code);
}

int Parse(CLI::App& app, int argc, char** argv) {
  if (argc >= 2 && argv[1][0] != '-') {
    const std::string name = argv[1];
    bool known = false;
    std::string names;
    for (const CLI::App* sub : app.get_subcommands({})) {
      known |= sub->get_name() == name;
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::fprintf(stderr, "strata: unknown subcommand %s (subcommands: %s; see strata --help)\n",
                   name.c_str(), names.c_str());
      return kExitUsage;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  return -1;
}

}  // namespace strata::cli

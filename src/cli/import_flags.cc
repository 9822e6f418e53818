// `strata import`'s command-line flags (README.md "Command-line client"); the import itself is
// cli/import.cc.
#include "cli/client_flags.h"
#include "cli/import.h"

namespace strata::cli {

void AddImportCommand(CLI::App& app, int* exit_code) {
  auto opts = std::make_shared<ImportOptions>();
  auto* sub = app.add_subcommand(
      "import",
      "Import CSV, JSON Lines, Arrow IPC or vector (.npy, .fvecs, .bvecs) files into a table of "
      "a running server (creating it when missing)");
  AddClientFlags(sub, &opts->client);
  sub->add_option("--table", opts->table, "Table name")->required();
  sub->add_option("files", opts->files, "Input files (.csv, .jsonl, .arrow, .npy, .fvecs, .bvecs)")
      ->required();
  sub->add_option("--format", opts->format, "Input format (auto: from the file extension)")
      ->check(CLI::IsMember({"auto", "csv", "jsonl", "arrow", "npy", "fvecs", "bvecs"}))
      ->capture_default_str();
  sub->add_option("--id-column", opts->id_column,
                  "Vector files: column of the generated int64 ids (the primary key of a table "
                  "the import creates, unless --primary-key says otherwise)")
      ->capture_default_str();
  sub->add_option("--vector-column", opts->vector_column, "Vector files: column of the vectors")
      ->capture_default_str();
  sub->add_option("--id-start", opts->id_start,
                  "Vector files: id of the first file's first row (ids run on across files)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 62))
      ->capture_default_str();
  sub->add_option("--schema", opts->schema_file,
                  "Schema of a new table: a LanceDB schema JSON file (default: inferred)");
  sub->add_option("--primary-key", opts->primary_key,
                  "Primary-key column(s), comma-separated, declared when the table is created");
  sub->add_option("--batch-rows", opts->batch_rows, "Most rows per insert/ request")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
      ->capture_default_str();
  sub->add_option(
         "--batch-bytes", opts->batch_bytes,
         "Most input bytes per insert/ request (Arrow and vector files: by their bytes per row)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 34))
      ->capture_default_str();
  sub->add_flag("--resume", opts->resume,
                "Skip the rows an earlier, interrupted import had acknowledged (state file)");
  sub->add_option("--state-file", opts->state_file,
                  "Resume state (default ./.strata-import-DB-TABLE.json)");
  sub->add_option("--stop-after-batches", opts->stop_after_batches,
                  "Testing: stop after N acknowledged batches (exit 5, resumable)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  sub->add_option("--crash-after-batches", opts->crash_after_batches,
                  "Testing: exit 137 at once when N batches are acknowledged, before the state "
                  "file records the last")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40))
      ->group("");
  sub->add_flag("--json", opts->json, "Print the summary as one JSON object");
  sub->add_flag("-q,--quiet", opts->quiet, "No progress display and no summary");
  sub->callback([opts, exit_code, sub] {
    opts->id_start_given = sub->count("--id-start") > 0;
    opts->batch_rows_given = sub->count("--batch-rows") > 0;
    opts->batch_bytes_given = sub->count("--batch-bytes") > 0;
    *exit_code = RunImport(*opts);
  });
}

}  // namespace strata::cli

#include "cli/table_commands.h"

#include <cstdio>
#include <memory>

#include "arrow/json/schema_json.h"
#include "cli/client_flags.h"
#include "cli/exit_codes.h"
#include "cli/progress.h"

namespace strata::cli {

namespace {

struct TableOptions {
  ClientOptions client;
  std::string table;
  int64_t timeout_ms = 60000;
  bool json = false;
};

CLI::App* AddTableCommand(CLI::App& app, const char* name, const char* help,
                          std::shared_ptr<TableOptions> o) {
  auto* sub = app.add_subcommand(name, help);
  AddClientFlags(sub, &o->client);
  sub->add_option("--table", o->table, "Table name")->required();
  sub->add_flag("--json", o->json, "Print the server's JSON answer");
  return sub;
}

std::string Gen(const nlohmann::json& g) { return g.is_null() ? "none" : g.dump(); }

long long Int(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<long long>() : 0;
}

// The mem_wal/describe/ answer as text (also used by `strata status`).
void PrintShards(const nlohmann::json& mw) {
  for (const auto& s : mw.value("shards", nlohmann::json::array())) {
    std::printf("shard %s: state %s", s.value("shard_id", "").c_str(),
                s.value("state", "?").c_str());
    if (!s.value("state_reason", "").empty()) {
      std::printf(" (%s)", s.value("state_reason", "").c_str());
    }
    std::printf(
        ", writer epoch %lld, current generation %lld, WAL replay after %lld (last seen "
        "%lld)\n",
        Int(s, "writer_epoch"), Int(s, "current_generation"),
        Int(s, "replay_after_wal_entry_position"), Int(s, "wal_entry_position_last_seen"));
    // The LSM write spec's values for this shard (set_lsm_write_spec/), and the writer
    // options in force.
    if (s.contains("spec") && s["spec"].is_object()) {
      const auto& sp = s["spec"];
      std::printf("  LSM write spec: %s", sp.value("mode", "?").c_str());
      if (sp.contains("column")) {
        std::printf(" on %s, bucket %lld of %lld", sp.value("column", "").c_str(),
                    Int(sp, "bucket"), Int(sp, "num_buckets"));
      }
      std::printf(", maintained indexes %s, writer options %s\n",
                  sp.value("maintained_indexes", nlohmann::json::array()).dump().c_str(),
                  sp.value("writer_config_defaults", nlohmann::json::object()).dump().c_str());
    }
    if (s.contains("writer_settings") && s["writer_settings"].is_object()) {
      const auto& w = s["writer_settings"];
      std::printf(
          "  writer: durable_write %s, max_memtable_rows %lld, max_memtable_bytes %lld, "
          "max_memtable_age_ms %lld\n",
          w.value("durable_write", true) ? "true" : "false", Int(w, "max_memtable_rows"),
          Int(w, "max_memtable_bytes"), Int(w, "max_memtable_age_ms"));
    }
    const auto& a = s.value("active", nlohmann::json::object());
    std::printf("  active MemTable: generation %lld, %lld rows, %s, age %lld ms\n",
                Int(a, "generation"), Int(a, "rows"),
                HumanBytes(static_cast<double>(Int(a, "bytes"))).c_str(), Int(a, "age_ms"));
    const auto frozen = s.value("frozen", nlohmann::json::array());
    std::printf("  frozen MemTables (waiting for flush): %zu", frozen.size());
    for (const auto& f : frozen) {
      std::printf("  [gen %lld: %lld rows]", Int(f, "generation"), Int(f, "rows"));
    }
    std::printf("\n");
    const auto ssts = s.value("sstables", nlohmann::json::array());
    std::printf("  SSTables (L0, waiting for compaction): %zu", ssts.size());
    for (const auto& t : ssts) {
      std::printf("  [gen %lld: %lld rows]", Int(t, "generation"), Int(t, "rows"));
    }
    std::printf("\n");
    for (const auto& i : s.value("indexes", nlohmann::json::array())) {
      std::printf("  MemTable index %s %s on %s: %lld rows\n", i.value("kind", "").c_str(),
                  i.value("name", "").c_str(), i.value("column", "").c_str(),
                  Int(i, "rows_indexed"));
    }
  }
  if (mw.contains("base") && mw["base"].is_object()) {
    const auto& b = mw["base"];
    std::printf(
        "base table: version %lld, %lld rows (%lld live), %lld fragments, %s, "
        "compacted generation %s\n",
        Int(b, "version"), Int(b, "rows"), Int(b, "live_rows"), Int(b, "fragments"),
        HumanBytes(static_cast<double>(Int(b, "bytes"))).c_str(),
        b.value("compacted_generation", nlohmann::json::object()).dump().c_str());
    for (const auto& i : b.value("indexes", nlohmann::json::array())) {
      std::printf("  base index %s %s on %s: %lld rows\n", i.value("kind", "").c_str(),
                  i.value("name", "").c_str(), i.value("column", "").c_str(),
                  Int(i, "rows_indexed"));
    }
  } else {
    std::printf("base table: none yet (nothing compacted)\n");
  }
}

int RunDescribe(const TableOptions& o) {
  RestClient client(o.client);
  auto d = client.PostTableJson(o.table, "describe/", nullptr);
  if (!d.ok()) return ReportError("describe", d.status());
  auto rows = client.PostTableJson(o.table, "count_rows/", nlohmann::json::object());
  if (!rows.ok()) return ReportError("describe", rows.status());
  auto idx = client.PostTableJson(o.table, "index/list/", nlohmann::json::object());
  if (!idx.ok()) return ReportError("describe", idx.status());
  auto mw = client.PostTableJson(o.table, "mem_wal/describe/", nullptr);
  if (!mw.ok()) return ReportError("describe", mw.status());
  if (o.json) {
    nlohmann::json out = {{"database", o.client.database},
                          {"table", o.table},
                          {"describe", *d},
                          {"rows", *rows},
                          {"indexes", idx->value("indexes", nlohmann::json::array())},
                          {"mem_wal", *mw}};
    std::printf("%s\n", out.dump().c_str());
    return kExitOk;
  }
  std::printf("table %s/%s: version %lld, %s rows\n", o.client.database.c_str(), o.table.c_str(),
              Int(*d, "version"), rows->dump().c_str());
  std::printf("schema:\n");
  auto schema = arrow::json::SchemaFromJson(d->value("schema", nlohmann::json::object()));
  if (schema.ok()) {
    for (const auto& f : (*schema)->fields()) {
      std::printf("  %-24s %s%s\n", f->name.c_str(), f->type->ToString().c_str(),
                  f->nullable ? "" : " not null");
    }
  } else {
    std::printf("  %s\n", d->value("schema", nlohmann::json::object()).dump().c_str());
  }
  const auto indexes = idx->value("indexes", nlohmann::json::array());
  std::printf("indexes: %zu\n", indexes.size());
  for (const auto& i : indexes) {
    std::printf("  %s %s on %s: %lld indexed, %lld unindexed rows\n",
                i.value("index_type", "").c_str(), i.value("index_name", "").c_str(),
                i.value("columns", nlohmann::json::array()).dump().c_str(),
                Int(i, "num_indexed_rows"), Int(i, "num_unindexed_rows"));
  }
  PrintShards(*mw);
  return kExitOk;
}

int RunFlush(const TableOptions& o) {
  RestClient client(o.client);
  auto r = client.PostTableJson(o.table, "flush/", {{"timeout_ms", o.timeout_ms}});
  if (!r.ok()) return ReportError("flush", r.status());
  if (o.json) {
    std::printf("%s\n", r->dump().c_str());
    return kExitOk;
  }
  std::printf("flushed %s/%s in %lld ms\n", o.client.database.c_str(), o.table.c_str(),
              Int(*r, "elapsed_ms"));
  for (const auto& s : r->value("shards", nlohmann::json::array())) {
    std::printf(
        "  shard %s: sealed generation %s, waited for generation %s, current generation "
        "%lld\n",
        s.value("shard_id", "").c_str(),
        Gen(s.value("sealed_generation", nlohmann::json())).c_str(),
        Gen(s.value("waited_generation", nlohmann::json())).c_str(), Int(s, "current_generation"));
  }
  return kExitOk;
}

int RunCompact(const TableOptions& o) {
  RestClient client(o.client);
  auto r = client.PostTableJson(o.table, "compact/", {{"timeout_ms", o.timeout_ms}});
  if (!r.ok()) return ReportError("compact", r.status());
  if (o.json) {
    std::printf("%s\n", r->dump().c_str());
    return kExitOk;
  }
  const auto gens = r->value("compacted_generations", nlohmann::json::array());
  if (gens.empty()) {
    std::printf("nothing to compact in %s/%s (%lld SSTables waiting)\n", o.client.database.c_str(),
                o.table.c_str(), Int(*r, "sstables_remaining"));
    return kExitOk;
  }
  std::printf(
      "compacted %s/%s in %lld ms: generations %s into base version %lld; %lld rows "
      "compacted, %lld rows written, %s written; %lld SSTables remaining\n",
      o.client.database.c_str(), o.table.c_str(), Int(*r, "elapsed_ms"), gens.dump().c_str(),
      Int(*r, "base_version"), Int(*r, "rows_compacted"), Int(*r, "rows_written"),
      HumanBytes(static_cast<double>(Int(*r, "bytes_written"))).c_str(),
      Int(*r, "sstables_remaining"));
  return kExitOk;
}

}  // namespace

void AddDescribeCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<TableOptions>();
  AddTableCommand(app, "describe",
                  "A table: schema, rows, indexes, shards (MemTables, generations, SSTables), "
                  "base table",
                  o)
      ->callback([o, exit_code] { *exit_code = RunDescribe(*o); });
}

void AddFlushCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<TableOptions>();
  auto* sub = AddTableCommand(
      app, "flush", "Seal the active MemTable and wait until its rows are in an SSTable", o);
  sub->add_option("--timeout-ms", o->timeout_ms, "Longest wait (the server answers 504 past it)")
      ->check(CLI::Range(int64_t{0}, int64_t{3600000}))
      ->capture_default_str();
  sub->callback([o, exit_code] { *exit_code = RunFlush(*o); });
}

void AddCompactCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<TableOptions>();
  auto* sub = AddTableCommand(app, "compact",
                              "Compact the table's waiting SSTables into the base table now", o);
  sub->add_option("--timeout-ms", o->timeout_ms,
                  "No new SSTable is taken into the compaction past this")
      ->check(CLI::Range(int64_t{0}, int64_t{3600000}))
      ->capture_default_str();
  sub->callback([o, exit_code] { *exit_code = RunCompact(*o); });
}

}  // namespace strata::cli

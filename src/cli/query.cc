#include "cli/query.h"

#include <cstdio>
#include <memory>

#include "arrow/ipc/reader.h"
#include "arrow/json/rows_json.h"
#include "cli/client_flags.h"
#include "cli/exit_codes.h"
#include "cli/output.h"

namespace strata::cli {

namespace {

struct QueryOptions {
  ClientOptions client;
  std::string table;
  std::string vector;
  std::string text;
  std::string filter;
  int64_t k = 10;
  std::vector<std::string> columns;
  std::string vector_column;
  std::string distance_type;
  int64_t ef = 0;
  std::string format = "table";
  bool json = false;
};

Result<nlohmann::json> QueryBody(const QueryOptions& o) {
  nlohmann::json body = {{"k", o.k}, {"prefilter", true}, {"version", nullptr}};
  body["vector"] = nlohmann::json::array();
  if (!o.vector.empty()) {
    nlohmann::json v = nlohmann::json::parse(o.vector, nullptr, false);
    bool ok = !v.is_discarded() && v.is_array() && !v.empty();
    if (ok) {
      for (const auto& x : v) ok &= x.is_number();
    }
    if (!ok) return Status::Invalid("usage: --vector must be a JSON array of numbers");
    body["vector"] = v;
  }
  if (!o.text.empty()) {
    body["full_text_query"] = {{"columns", nlohmann::json::array()}, {"query", o.text}};
  }
  if (!o.filter.empty()) body["filter"] = o.filter;
  if (!o.columns.empty()) body["columns"] = o.columns;
  if (!o.vector_column.empty()) body["vector_column"] = o.vector_column;
  if (!o.distance_type.empty()) body["distance_type"] = o.distance_type;
  if (o.ef > 0) body["ef"] = o.ef;
  return body;
}

int RunQuery(const QueryOptions& o) {
  auto body = QueryBody(o);
  if (!body.ok()) {
    std::fprintf(stderr, "strata query: %s\n", body.status().message().c_str() + 7);
    return kExitUsage;
  }
  RestClient client(o.client);
  auto answer = client.PostTable(o.table, "query/", body->dump(), "application/json");
  if (!answer.ok()) return ReportError("query", answer.status());
  auto holder = std::make_shared<std::string>(std::move(*answer));
  auto buf = arrow::Buffer::Wrap(holder->data(), static_cast<int64_t>(holder->size()), holder);
  auto read = arrow::ipc::ReadFile(buf);
  if (!read.ok()) {
    return ReportError("query",
                       Status::IOError("server: query/ answer: " + read.status().message()));
  }
  const auto& schema = *read->schema;
  const std::string format = o.json ? "json" : o.format;
  if (format == "json") {
    // ordered_json: a row's keys in the result's column order (json sorts them).
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto& b : read->batches) {
      for (int64_t r = 0; r < b->num_rows(); ++r) {
        nlohmann::ordered_json row = nlohmann::ordered_json::object();
        for (int c = 0; c < b->num_columns(); ++c) {
          row[schema.field(c)->name] = nlohmann::ordered_json(ValueJson(*b->column_data(c), r));
        }
        rows.push_back(std::move(row));
      }
    }
    std::printf(
        "%s\n",
        rows.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
    return kExitOk;
  }
  std::vector<std::string> header;
  for (const auto& f : schema.fields()) header.push_back(f->name);
  if (format == "csv") {
    std::string line;
    for (size_t c = 0; c < header.size(); ++c) line += (c ? "," : "") + CsvField(header[c]);
    std::printf("%s\n", line.c_str());
    for (const auto& b : read->batches) {
      for (int64_t r = 0; r < b->num_rows(); ++r) {
        line.clear();
        for (int c = 0; c < b->num_columns(); ++c) {
          nlohmann::json v = ValueJson(*b->column_data(c), r);
          std::string s = v.is_null() ? std::string()
                          : v.is_string()
                              ? v.get<std::string>()
                              : v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
          line += (c ? "," : "") + CsvField(s);
        }
        std::printf("%s\n", line.c_str());
      }
    }
    return kExitOk;
  }
  TextTable t;
  t.header = header;
  int64_t n = 0;
  for (const auto& b : read->batches) {
    for (int64_t r = 0; r < b->num_rows(); ++r) {
      std::vector<std::string> row;
      for (int c = 0; c < b->num_columns(); ++c) row.push_back(CellText(*b->column_data(c), r));
      t.rows.push_back(std::move(row));
      ++n;
    }
  }
  std::printf("%s(%lld row%s)\n", t.Render().c_str(), static_cast<long long>(n), n == 1 ? "" : "s");
  return kExitOk;
}

}  // namespace

void AddQueryCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<QueryOptions>();
  auto* sub = app.add_subcommand("query", "Vector, full-text or filter query on a table");
  AddClientFlags(sub, &o->client);
  sub->add_option("--table", o->table, "Table name")->required();
  sub->add_option("--vector", o->vector, "Query vector as a JSON array, e.g. '[0.1, 0.2]'");
  sub->add_option("--text", o->text, "Full-text query (BM25 over the table's FTS indexes)");
  sub->add_option("--filter", o->filter, "SQL filter, e.g. \"id > 10 AND label = 'a'\"");
  sub->add_option("-k,--limit", o->k, "Rows to return")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
      ->capture_default_str();
  sub->add_option("--columns", o->columns, "Columns to return (comma-separated)")->delimiter(',');
  sub->add_option("--vector-column", o->vector_column, "Vector column (when there are several)");
  sub->add_option("--distance-type", o->distance_type, "l2, cosine or dot")
      ->check(CLI::IsMember({"l2", "cosine", "dot"}));
  sub->add_option("--ef", o->ef, "HNSW search width")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  sub->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  sub->add_flag("--json", o->json, "Same as --format json: a JSON array of row objects");
  sub->callback([o, exit_code] { *exit_code = RunQuery(*o); });
}

}  // namespace strata::cli

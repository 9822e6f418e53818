#include "cli/import.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include "arrow/builder.h"
#include "arrow/ipc/reader.h"
#include "arrow/ipc/writer.h"
#include "arrow/json/rows_json.h"
#include "arrow/json/schema_json.h"
#include "cli/client_flags.h"
#include "cli/exit_codes.h"
#include "cli/import_state.h"
#include "cli/infer_schema.h"
#include "cli/progress.h"
#include "cli/text_input.h"
#include "cli/vector_file.h"

namespace strata::cli {

namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void OnSignal(int) { g_interrupted.store(true); }

enum class Format { kCsv, kJsonl, kArrow, kNpy, kFvecs, kBvecs };

bool IsVectorFormat(Format f) {
  return f == Format::kNpy || f == Format::kFvecs || f == Format::kBvecs;
}

VectorFileKind KindOf(Format f) {
  return f == Format::kNpy
             ? VectorFileKind::kNpy
             : (f == Format::kFvecs ? VectorFileKind::kFvecs : VectorFileKind::kBvecs);
}

const char* FormatName(Format f) {
  switch (f) {
    case Format::kCsv:
      return "csv";
    case Format::kJsonl:
      return "jsonl";
    case Format::kArrow:
      return "arrow";
    case Format::kNpy:
      return "npy";
    case Format::kFvecs:
      return "fvecs";
    case Format::kBvecs:
      return "bvecs";
  }
  return "?";
}

struct InputFile {
  std::string path;   // absolute
  std::string shown;  // as given on the command line
  Format format;
  int64_t size = 0;
  int64_t mtime_ns = 0;
  // Vector files: rows, dimension and the id of the first row (ids run on across the files).
  int64_t rows = 0;
  int64_t dim = 0;
  int64_t first_id = 0;
};

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         std::equal(suffix.rbegin(), suffix.rend(), s.rbegin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == b;
         });
}

Result<Format> DetectFormat(const std::string& path, const std::string& flag) {
  if (flag == "csv") return Format::kCsv;
  if (flag == "jsonl") return Format::kJsonl;
  if (flag == "arrow") return Format::kArrow;
  if (flag == "npy") return Format::kNpy;
  if (flag == "fvecs") return Format::kFvecs;
  if (flag == "bvecs") return Format::kBvecs;
  if (EndsWith(path, ".csv")) return Format::kCsv;
  if (EndsWith(path, ".npy")) return Format::kNpy;
  if (EndsWith(path, ".fvecs")) return Format::kFvecs;
  if (EndsWith(path, ".bvecs")) return Format::kBvecs;
  if (EndsWith(path, ".jsonl") || EndsWith(path, ".ndjson") || EndsWith(path, ".json")) {
    return Format::kJsonl;
  }
  if (EndsWith(path, ".arrow") || EndsWith(path, ".arrows") || EndsWith(path, ".ipc") ||
      EndsWith(path, ".feather")) {
    return Format::kArrow;
  }
  return Status::Invalid(path +
                         ": unknown format (extension .csv, .jsonl/.ndjson/.json, "
                         ".arrow/.arrows/.ipc/.feather, .npy, .fvecs or .bvecs), pass --format");
}

Result<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::IOError("cannot read " + path);
  return ss.str();
}

// An Arrow IPC file ("ARROW1" magic) or stream, read whole.
Result<arrow::ipc::ReadResult> ReadArrowInput(const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(std::string bytes, ReadWholeFile(path));
  auto holder = std::make_shared<std::string>(std::move(bytes));
  auto buf = arrow::Buffer::Wrap(holder->data(), static_cast<int64_t>(holder->size()), holder);
  const bool is_file = holder->size() >= 6 && holder->compare(0, 6, "ARROW1") == 0;
  auto r = is_file ? arrow::ipc::ReadFile(buf) : arrow::ipc::ReadStream(buf);
  if (!r.ok()) return r.status().WithContext(path);
  return r;
}

// "row 3, column 'x': ..." from rows_json.h -> "FILE:LINE: column 'x': ...".
Status AtLine(const Status& st, const std::string& path, const std::vector<int64_t>& lines) {
  const std::string& m = st.message();
  if (m.rfind("row ", 0) == 0) {
    size_t end = 4;
    while (end < m.size() && std::isdigit(static_cast<unsigned char>(m[end]))) ++end;
    const size_t r = std::stoul(m.substr(4, end - 4));
    if (r < lines.size()) {
      std::string rest = m.substr(end);
      if (rest.rfind(", ", 0) == 0 || rest.rfind(": ", 0) == 0) rest = rest.substr(2);
      return Status::Invalid(path + ":" + std::to_string(lines[r]) + ": " + rest);
    }
  }
  return Status::Invalid(path + ": " + m);
}

class Importer {
 public:
  explicit Importer(const ImportOptions& o) : o_(o), client_(o.client) {}

  int Run();

 private:
  Status Prepare();
  Status EnsureTable();
  Result<std::optional<arrow::SchemaPtr>> DescribeSchema();
  Result<arrow::SchemaPtr> SchemaForCreate();
  Status ImportText(const InputFile& f, FileProgress* fp);
  Status ImportArrow(const InputFile& f, FileProgress* fp);
  Status ImportVectors(const InputFile& f, FileProgress* fp);
  arrow::SchemaPtr VectorSchema(int64_t dim) const;
  Status CheckVectorTable() const;
  Status Send(const arrow::Schema& schema, const arrow::RecordBatchPtr& batch);
  // After an acknowledged batch: records it, saves the state, updates the progress display.
  Status Acknowledged(FileProgress* fp, int64_t rows, int64_t file_bytes_done);
  bool ShouldStop() const;

  const ImportOptions& o_;
  RestClient client_;
  std::vector<InputFile> files_;
  std::string state_path_;
  ImportState state_;
  arrow::SchemaPtr schema_;
  bool created_ = false;
  std::unique_ptr<Progress> progress_;
  int64_t total_bytes_ = 0;
  int64_t bytes_before_file_ = 0;  // bytes of the files done before the current one
  int64_t file_bytes_ = 0;         // bytes of the current file done
  int64_t rows_sent_ = 0;          // rows acknowledged in this run
  int64_t rows_skipped_ = 0;       // rows acknowledged in earlier runs (--resume)
  int64_t batches_ = 0;            // batches acknowledged in this run
  int64_t wire_bytes_ = 0;         // IPC bytes sent
  int64_t retries_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

Status Importer::Prepare() {
  if (o_.files.empty()) return Status::Invalid("no input FILE given");
  for (const auto& given : o_.files) {
    InputFile f;
    f.shown = given;
    std::error_code ec;
    f.path = std::filesystem::absolute(given, ec).lexically_normal().string();
    if (ec) f.path = given;
    STRATA_ASSIGN_OR_RETURN(f.format, DetectFormat(given, o_.format));
    struct stat st;
    if (::stat(f.path.c_str(), &st) != 0) {
      return Status::IOError("cannot open " + given + ": " + std::strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) return Status::IOError(given + " is not a regular file");
    f.size = st.st_size;
    f.mtime_ns = int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
    total_bytes_ += f.size;
    files_.push_back(std::move(f));
  }
  // Vector files: one matrix each; ids run on from --id-start across the files in order.
  const bool vectors = IsVectorFormat(files_.front().format);
  for (InputFile& f : files_) {
    if (IsVectorFormat(f.format) != vectors) {
      return Status::Invalid(
          "usage: vector files (.npy, .fvecs, .bvecs) cannot be imported together with CSV, "
          "JSON Lines or Arrow files; import them separately");
    }
    if (!vectors) continue;
    STRATA_ASSIGN_OR_RETURN(VectorFile vf, VectorFile::Open(f.path, KindOf(f.format)));
    f.rows = vf.rows();
    f.dim = vf.dim();
    if (f.dim != 0 && files_.front().dim != 0 && f.dim != files_.front().dim) {
      return Status::Invalid(f.shown + " holds vectors of dimension " + std::to_string(f.dim) +
                             ", " + files_.front().shown + " of dimension " +
                             std::to_string(files_.front().dim));
    }
  }
  if (vectors && files_.front().dim == 0) {
    return Status::Invalid(files_.front().shown + " holds no vector (its dimension is unknown)");
  }
  state_path_ =
      o_.state_file.empty() ? DefaultStatePath(o_.client.database, o_.table) : o_.state_file;
  STRATA_ASSIGN_OR_RETURN(std::optional<ImportState> loaded, LoadImportState(state_path_));
  if (loaded) {
    if (!o_.resume) {
      bool unfinished = false;
      for (const auto& fp : loaded->files) unfinished |= !fp.complete;
      if (unfinished) {
        return Status::Invalid("usage: an interrupted import of this table left " + state_path_ +
                               ": pass --resume to continue it, or delete it to start over");
      }
    } else {
      if (loaded->database != o_.client.database || loaded->table != o_.table) {
        return Status::Invalid("usage: " + state_path_ + " records an import into " +
                               loaded->database + "/" + loaded->table + ", not " +
                               o_.client.database + "/" + o_.table);
      }
      state_ = std::move(*loaded);
    }
  }
  state_.url = o_.client.url;
  state_.database = o_.client.database;
  state_.table = o_.table;
  if (vectors) {
    // A resumed import keeps the ids its first run gave: the state file records id_start.
    if (state_.id_start >= 0 && o_.id_start_given && o_.id_start != state_.id_start) {
      return Status::Invalid("usage: " + state_path_ + " records an import with --id-start " +
                             std::to_string(state_.id_start) + ", not " +
                             std::to_string(o_.id_start));
    }
    if (state_.id_start < 0) state_.id_start = o_.id_start;
    int64_t next_id = state_.id_start;
    for (InputFile& f : files_) {
      f.first_id = next_id;
      next_id += f.rows;
    }
  }
  return Status::OK();
}

Result<std::optional<arrow::SchemaPtr>> Importer::DescribeSchema() {
  STRATA_ASSIGN_OR_RETURN(HttpAnswer a, client_.PostTableRaw(o_.table, "describe/", "", ""));
  if (a.status == 404) return std::optional<arrow::SchemaPtr>();
  if (a.status < 200 || a.status >= 300) {
    return HttpError("describe/ of table '" + o_.table + "'", a);
  }
  nlohmann::json j = nlohmann::json::parse(a.body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("schema")) {
    return Status::IOError("server: describe/ answered without a schema");
  }
  auto schema = arrow::json::SchemaFromJson(j["schema"]);
  if (!schema.ok())
    return Status::IOError("server: describe/ schema: " + schema.status().message());
  return std::optional<arrow::SchemaPtr>(*schema);
}

Result<arrow::SchemaPtr> Importer::SchemaForCreate() {
  if (!o_.schema_file.empty()) {
    STRATA_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(o_.schema_file));
    auto s = arrow::json::ParseSchemaJson(text);
    if (!s.ok()) return s.status().WithContext(o_.schema_file);
    return *s;
  }
  const InputFile& f = files_.front();
  if (IsVectorFormat(f.format)) return VectorSchema(f.dim);
  if (f.format == Format::kArrow) {
    STRATA_ASSIGN_OR_RETURN(arrow::ipc::ReadResult r, ReadArrowInput(f.path));
    return r.schema;
  }
  if (f.format == Format::kCsv) {
    CsvReader reader;
    STRATA_RETURN_IF_ERROR(reader.Open(f.shown));
    std::vector<CsvRecord> sample;
    CsvRecord rec;
    while (static_cast<int>(sample.size()) < kInferRows) {
      STRATA_ASSIGN_OR_RETURN(bool got, reader.Next(&rec));
      if (!got) break;
      sample.push_back(rec);
    }
    return InferCsvSchema(reader.header(), sample, f.shown);
  }
  JsonlReader reader;
  STRATA_RETURN_IF_ERROR(reader.Open(f.shown));
  std::vector<JsonlRecord> sample;
  JsonlRecord rec;
  while (static_cast<int>(sample.size()) < kInferRows) {
    STRATA_ASSIGN_OR_RETURN(bool got, reader.Next(&rec));
    if (!got) break;
    sample.push_back(rec);
  }
  return InferJsonlSchema(sample, f.shown);
}

Status Importer::EnsureTable() {
  STRATA_ASSIGN_OR_RETURN(std::optional<arrow::SchemaPtr> existing, DescribeSchema());
  const bool vectors = IsVectorFormat(files_.front().format);
  if (existing) {
    schema_ = *existing;
    if (!vectors) return Status::OK();
    STRATA_RETURN_IF_ERROR(CheckVectorTable());
    // Generated ids from 0 would replace the rows of an existing table (or add a second row
    // per id without a primary key): appending needs a chosen --id-start.
    if (!o_.id_start_given && !o_.resume) {
      STRATA_ASSIGN_OR_RETURN(nlohmann::json rows, client_.PostTableJson(o_.table, "count_rows/",
                                                                         nlohmann::json::object()));
      if (!rows.is_number_integer() || rows.get<int64_t>() != 0) {
        return Status::Invalid("usage: table '" + o_.table + "' already has " + rows.dump() +
                               " rows: pass --id-start to choose the first generated id (ids "
                               "from 0 could replace existing rows)");
      }
    }
    return Status::OK();
  }
  STRATA_ASSIGN_OR_RETURN(arrow::SchemaPtr schema, SchemaForCreate());
  STRATA_ASSIGN_OR_RETURN(arrow::RecordBatchPtr empty, arrow::RecordBatchBuilder(schema).Finish());
  STRATA_ASSIGN_OR_RETURN(std::string body, arrow::ipc::WriteStream(*schema, {empty}));
  std::string query = "?mode=exist_ok";
  // Generated ids are unique, so a table made for vector files has them as its primary key
  // unless told otherwise: a batch re-sent on --resume is then an upsert, never a duplicate.
  const std::string pk = !o_.primary_key.empty() ? o_.primary_key : (vectors ? o_.id_column : "");
  if (!pk.empty()) query += "&primary_key=" + EncodePathSegment(pk);
  STRATA_RETURN_IF_ERROR(client_.PostTableArrow(o_.table, "create/", query, body).status());
  created_ = true;
  STRATA_ASSIGN_OR_RETURN(existing, DescribeSchema());
  if (!existing) return Status::IOError("server: the table is missing right after create/");
  schema_ = *existing;
  if (vectors) STRATA_RETURN_IF_ERROR(CheckVectorTable());
  if (!o_.quiet && !o_.json) {
    std::fprintf(stderr, "created table %s/%s: %s\n", o_.client.database.c_str(), o_.table.c_str(),
                 arrow::json::SchemaToJsonString(*schema_).c_str());
  }
  return Status::OK();
}

Status Importer::Send(const arrow::Schema& schema, const arrow::RecordBatchPtr& batch) {
  arrow::ipc::WriteOptions wo;
  wo.compression = arrow::ipc::Compression::kLz4Frame;
  STRATA_ASSIGN_OR_RETURN(std::string body, arrow::ipc::WriteStream(schema, {batch}, wo));
  // 503 (backpressure, writer_poisoned) and 429 commit nothing (PROTOCOL.md §0 rule 4): retry.
  for (int attempt = 0;; ++attempt) {
    STRATA_ASSIGN_OR_RETURN(
        HttpAnswer a,
        client_.PostTableRaw(o_.table, "insert/", body, "application/vnd.apache.arrow.stream"));
    if (a.status >= 200 && a.status < 300) break;
    if ((a.status == 503 || a.status == 429) && attempt < 20 && !g_interrupted.load()) {
      ++retries_;
      std::this_thread::sleep_for(
          std::chrono::milliseconds(std::min(5000, 250 << std::min(attempt, 5))));
      continue;
    }
    return HttpError("insert/ of table '" + o_.table + "'", a);
  }
  wire_bytes_ += static_cast<int64_t>(body.size());
  return Status::OK();
}

Status Importer::Acknowledged(FileProgress* fp, int64_t rows, int64_t file_bytes_done) {
  fp->rows += rows;
  fp->batches += 1;
  rows_sent_ += rows;
  batches_ += 1;
  file_bytes_ = file_bytes_done;
  STRATA_RETURN_IF_ERROR(SaveImportState(state_path_, state_));
  if (progress_) progress_->Update(rows_sent_ + rows_skipped_, bytes_before_file_ + file_bytes_);
  return Status::OK();
}

bool Importer::ShouldStop() const {
  return g_interrupted.load() || (o_.stop_after_batches > 0 && batches_ >= o_.stop_after_batches);
}

Status Importer::ImportText(const InputFile& f, FileProgress* fp) {
  CsvReader csv;
  JsonlReader jsonl;
  const bool is_csv = f.format == Format::kCsv;
  if (is_csv) {
    STRATA_RETURN_IF_ERROR(csv.Open(f.shown, fp->offset, fp->line));
  } else {
    STRATA_RETURN_IF_ERROR(jsonl.Open(f.shown, fp->offset, fp->line));
  }
  CsvRecord crec;
  JsonlRecord jrec;
  nlohmann::json rows = nlohmann::json::array();
  std::vector<int64_t> lines;
  for (;;) {
    rows.clear();
    lines.clear();
    const int64_t batch_start = is_csv ? csv.offset() : jsonl.offset();
    while (static_cast<int64_t>(lines.size()) < o_.batch_rows) {
      if (is_csv) {
        STRATA_ASSIGN_OR_RETURN(bool got, csv.Next(&crec));
        if (!got) break;
        STRATA_ASSIGN_OR_RETURN(nlohmann::json row,
                                CsvRecordToJson(csv.header(), crec, *schema_, f.shown));
        rows.push_back(std::move(row));
        lines.push_back(crec.line);
        if (csv.offset() - batch_start >= o_.batch_bytes) break;
      } else {
        STRATA_ASSIGN_OR_RETURN(bool got, jsonl.Next(&jrec));
        if (!got) break;
        rows.push_back(std::move(jrec.row));
        lines.push_back(jrec.line);
        if (jsonl.offset() - batch_start >= o_.batch_bytes) break;
      }
    }
    if (lines.empty()) return Status::OK();
    auto batch = arrow::json::RowsFromJson(rows, schema_);
    if (!batch.ok()) return AtLine(batch.status(), f.shown, lines);
    STRATA_RETURN_IF_ERROR(Send(*schema_, *batch));
    fp->offset = is_csv ? csv.offset() : jsonl.offset();
    fp->line = is_csv ? csv.next_line() : jsonl.next_line();
    STRATA_RETURN_IF_ERROR(Acknowledged(fp, static_cast<int64_t>(lines.size()), fp->offset));
    if (ShouldStop()) return Status::OK();
  }
}

Status Importer::ImportArrow(const InputFile& f, FileProgress* fp) {
  STRATA_ASSIGN_OR_RETURN(arrow::ipc::ReadResult r, ReadArrowInput(f.path));
  int64_t total_rows = 0;
  for (const auto& b : r.batches) total_rows += b->num_rows();
  auto bytes_at = [&](int64_t rows) {
    return total_rows == 0 ? f.size : static_cast<int64_t>(double(f.size) * rows / total_rows);
  };
  int64_t skip = fp->rows;
  if (skip > total_rows) {
    return Status::Invalid(f.shown + ": the state file records " + std::to_string(skip) +
                           " rows done, the file has " + std::to_string(total_rows));
  }
  int64_t done = skip;
  for (const auto& b : r.batches) {
    int64_t pos = 0;
    if (skip >= b->num_rows()) {
      skip -= b->num_rows();
      continue;
    }
    pos = skip;
    skip = 0;
    while (pos < b->num_rows()) {
      const int64_t n = std::min(o_.batch_rows, b->num_rows() - pos);
      STRATA_RETURN_IF_ERROR(Send(*r.schema, b->Slice(pos, n)));
      pos += n;
      done += n;
      STRATA_RETURN_IF_ERROR(Acknowledged(fp, n, bytes_at(done)));
      if (ShouldStop()) return Status::OK();
    }
  }
  return Status::OK();
}

arrow::SchemaPtr Importer::VectorSchema(int64_t dim) const {
  return std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field(o_.id_column, arrow::int64(), false),
      arrow::field(o_.vector_column, arrow::fixed_size_list(arrow::field("item", arrow::float32()),
                                                            static_cast<int32_t>(dim)))});
}

// An existing table must have the id column (an integer) and the vector column of the files'
// dimension; the server converts the rest (float32 into float16/float64 vectors).
Status Importer::CheckVectorTable() const {
  const int64_t dim = files_.front().dim;
  std::string names;
  for (int i = 0; i < schema_->num_fields(); ++i) {
    names += (i ? ", " : "") + schema_->field(i)->name;
  }
  const int id = schema_->GetFieldIndex(o_.id_column);
  if (id < 0 || !schema_->field(id)->type->is_integer()) {
    return Status::Invalid("table '" + o_.table + "' has no integer column '" + o_.id_column +
                           "' for the generated ids (its columns: " + names +
                           "); pass --id-column");
  }
  const int vec = schema_->GetFieldIndex(o_.vector_column);
  if (vec < 0 || schema_->field(vec)->type->id() != arrow::TypeId::kFixedSizeList) {
    return Status::Invalid("table '" + o_.table + "' has no vector column '" + o_.vector_column +
                           "' (its columns: " + names + "); pass --vector-column");
  }
  if (schema_->field(vec)->type->list_size() != dim) {
    return Status::Invalid("table '" + o_.table + "' column '" + o_.vector_column +
                           "' has dimension " +
                           std::to_string(schema_->field(vec)->type->list_size()) +
                           ", the files' vectors " + std::to_string(dim));
  }
  return Status::OK();
}

Status Importer::ImportVectors(const InputFile& f, FileProgress* fp) {
  STRATA_ASSIGN_OR_RETURN(VectorFile vf, VectorFile::Open(f.path, KindOf(f.format)));
  if (vf.rows() != f.rows || vf.dim() != f.dim) {
    return Status::Invalid(f.shown + " changed while it was being imported");
  }
  if (fp->rows > vf.rows()) {
    return Status::Invalid(f.shown + ": the state file records " + std::to_string(fp->rows) +
                           " rows done, the file has " + std::to_string(vf.rows()));
  }
  const arrow::SchemaPtr schema = VectorSchema(vf.dim());
  const int64_t row_bytes = vf.dim() * static_cast<int64_t>(sizeof(float));
  const int64_t per_batch =
      std::max<int64_t>(1, std::min(o_.batch_rows, o_.batch_bytes / row_bytes));
  std::vector<float> values;
  for (int64_t done = fp->rows; done < vf.rows();) {
    const int64_t n = std::min(per_batch, vf.rows() - done);
    STRATA_RETURN_IF_ERROR(vf.Read(done, n, &values));
    arrow::RecordBatchBuilder b(schema);
    for (int64_t r = 0; r < n; ++r) {
      STRATA_RETURN_IF_ERROR(b.column(0)->AppendInt(f.first_id + done + r));
      STRATA_RETURN_IF_ERROR(
          b.column(1)->child(0)->AppendFloats(values.data() + r * vf.dim(), vf.dim()));
      STRATA_RETURN_IF_ERROR(b.column(1)->AppendValid());
    }
    STRATA_ASSIGN_OR_RETURN(arrow::RecordBatchPtr batch, b.Finish());
    STRATA_RETURN_IF_ERROR(Send(*schema, batch));
    done += n;
    STRATA_RETURN_IF_ERROR(Acknowledged(fp, n, vf.OffsetAfter(done)));
    if (ShouldStop()) return Status::OK();
  }
  return Status::OK();
}

int Importer::Run() {
  Status st = Prepare();
  if (st.ok()) st = EnsureTable();
  if (!st.ok()) {
    if (st.message().rfind("usage: ", 0) == 0) {
      std::fprintf(stderr, "strata import: %s\n", st.message().c_str() + 7);
      return kExitUsage;
    }
    return ReportError("import", st);
  }
  progress_ = std::make_unique<Progress>(!o_.quiet && !o_.json, total_bytes_);
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);

  nlohmann::json file_summaries = nlohmann::json::array();
  for (const InputFile& f : files_) {
    FileProgress* fp = state_.Find(f.path);
    if (fp == nullptr) {
      state_.files.push_back(FileProgress{f.path, f.size, f.mtime_ns});
      fp = &state_.files.back();
    } else if (fp->size != f.size || fp->mtime_ns != f.mtime_ns) {
      std::fprintf(stderr,
                   "strata import: warning: %s changed since the state file was written; "
                   "resuming after its first %lld rows (line %lld)\n",
                   f.shown.c_str(), static_cast<long long>(fp->rows),
                   static_cast<long long>(fp->line));
      fp->size = f.size;
      fp->mtime_ns = f.mtime_ns;
    }
    const int64_t before = fp->rows;
    rows_skipped_ += before;
    file_bytes_ = 0;
    if (!fp->complete && !ShouldStop()) {
      st = f.format == Format::kArrow ? ImportArrow(f, fp)
           : IsVectorFormat(f.format) ? ImportVectors(f, fp)
                                      : ImportText(f, fp);
      if (st.ok() && !ShouldStop()) {
        fp->complete = true;
        st = SaveImportState(state_path_, state_);
      }
    }
    file_summaries.push_back({{"path", f.shown},
                              {"format", FormatName(f.format)},
                              {"rows_imported", fp->rows - before},
                              {"rows_skipped", before},
                              {"complete", fp->complete}});
    if (!st.ok()) break;
    bytes_before_file_ += f.size;
  }
  progress_->Finish();
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  bool complete = st.ok();
  for (const auto& fp : state_.files) complete &= fp.complete;
  if (complete) std::filesystem::remove(state_path_);
  const bool stopped = st.ok() && !complete;

  if (o_.json) {
    nlohmann::json out = {
        {"database", o_.client.database},
        {"table", o_.table},
        {"created", created_},
        {"rows_imported", rows_sent_},
        {"rows_skipped", rows_skipped_},
        {"batches", batches_},
        {"bytes_sent", wire_bytes_},
        {"retries", retries_},
        {"seconds", secs},
        {"rows_per_second", secs > 0 ? rows_sent_ / secs : 0.0},
        {"complete", complete},
        {"state_file", complete ? nlohmann::json(nullptr) : nlohmann::json(state_path_)},
        {"files", file_summaries}};
    if (!st.ok()) out["error"] = st.message();
    std::printf("%s\n", out.dump().c_str());
  } else if (!o_.quiet || !st.ok()) {
    std::printf("%s %lld rows into %s/%s in %.2f s (%.0f rows/s, %lld batch%s, %s sent)",
                complete ? "imported" : "imported (partially)", static_cast<long long>(rows_sent_),
                o_.client.database.c_str(), o_.table.c_str(), secs,
                secs > 0 ? rows_sent_ / secs : 0.0, static_cast<long long>(batches_),
                batches_ == 1 ? "" : "es", HumanBytes(static_cast<double>(wire_bytes_)).c_str());
    if (rows_skipped_ > 0) {
      std::printf("; skipped %lld rows acknowledged before", static_cast<long long>(rows_skipped_));
    }
    std::printf("\n");
  }
  std::fflush(stdout);
  if (!st.ok()) {
    int code = ReportError("import", st);
    if (!complete) {
      std::fprintf(stderr,
                   "strata import: acknowledged batches are recorded in %s; fix the "
                   "cause and rerun with --resume\n",
                   state_path_.c_str());
    }
    return code;
  }
  if (stopped) {
    std::fprintf(stderr,
                 "strata import: stopped (%s); %lld rows acknowledged; rerun with "
                 "--resume to continue (state: %s)\n",
                 g_interrupted.load() ? "interrupted" : "--stop-after-batches",
                 static_cast<long long>(rows_sent_ + rows_skipped_), state_path_.c_str());
    return kExitInterrupted;
  }
  return kExitOk;
}

}  // namespace

int RunImport(const ImportOptions& options) { return Importer(options).Run(); }

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
  sub->add_option("--batch-bytes", opts->batch_bytes,
                  "Most input bytes per insert/ request (text files)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 34))
      ->capture_default_str();
  sub->add_flag("--resume", opts->resume,
                "Skip the rows an earlier, interrupted import had acknowledged (state file)");
  sub->add_option("--state-file", opts->state_file,
                  "Resume state (default ./.strata-import-DB-TABLE.json)");
  sub->add_option("--stop-after-batches", opts->stop_after_batches,
                  "Testing: stop after N acknowledged batches (exit 5, resumable)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  sub->add_flag("--json", opts->json, "Print the summary as one JSON object");
  sub->add_flag("-q,--quiet", opts->quiet, "No progress display and no summary");
  sub->callback([opts, exit_code, sub] {
    opts->id_start_given = sub->count("--id-start") > 0;
    *exit_code = RunImport(*opts);
  });
}

}  // namespace strata::cli

#include "cli/import.h"

#include <fcntl.h>
#include <sys/file.h>
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
#include "cli/import_input.h"
#include "cli/import_state.h"
#include "cli/importer.h"
#include "cli/infer_schema.h"
#include "cli/progress.h"
#include "cli/text_input.h"
#include "cli/vector_file.h"
#include "format/ids.h"

namespace strata::cli {

namespace {

std::atomic<bool> g_interrupted{false};

// Exit code of the --crash-after-batches test hook (as a shell reports a SIGKILLed process).
constexpr int kExitCrashHook = 137;

extern "C" void OnSignal(int) { g_interrupted.store(true); }

}  // namespace

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
  // One import per state file at a time: a second one would send the same rows again.
  const std::string lock_path = state_path_ + ".lock";
  lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) {
    return Status::IOError("cannot open " + lock_path + ": " + std::strerror(errno));
  }
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    return Status::Invalid("usage: another import with the state file " + state_path_ +
                           " is running (" + lock_path +
                           " is locked); wait for it or pass another --state-file");
  }
  STRATA_ASSIGN_OR_RETURN(std::optional<ImportState> loaded, LoadImportState(state_path_));
  if (loaded) {
    // The file is removed when an import completes (or never acknowledged a row), so one that
    // exists belongs to an unfinished import, even when it lists no file yet: its first batch
    // may have committed.
    if (!o_.resume) {
      return Status::Invalid("usage: an interrupted import of this table left " + state_path_ +
                             ": pass --resume to continue it, or delete it to start over");
    } else {
      if (loaded->database != o_.client.database || loaded->table != o_.table) {
        return Status::Invalid("usage: " + state_path_ + " records an import into " +
                               loaded->database + "/" + loaded->table + ", not " +
                               o_.client.database + "/" + o_.table);
      }
      state_ = std::move(*loaded);
      resumed_ = true;
    }
  } else if (o_.resume) {
    std::fprintf(stderr,
                 "strata import: no state file %s: nothing to resume, starting a new import\n",
                 state_path_.c_str());
  }
  state_.url = o_.client.url;
  state_.database = o_.client.database;
  state_.table = o_.table;
  if (state_.import_id.empty()) state_.import_id = format::RandomHex(32);
  // A resumed import re-sends the batch that was in flight with the same rows (its x-request-id
  // names its first row): the batch sizes are the first run's.
  struct BatchFlag {
    const char* name;
    int64_t given;
    bool explicitly;
    int64_t* recorded;
    int64_t* used;
  };
  for (BatchFlag f : {BatchFlag{"--batch-rows", o_.batch_rows, o_.batch_rows_given,
                                &state_.batch_rows, &batch_rows_},
                      BatchFlag{"--batch-bytes", o_.batch_bytes, o_.batch_bytes_given,
                                &state_.batch_bytes, &batch_bytes_}}) {
    if (*f.recorded > 0 && f.explicitly && f.given != *f.recorded) {
      return Status::Invalid("usage: " + state_path_ + " records an import with " + f.name + " " +
                             std::to_string(*f.recorded) + ", not " + std::to_string(f.given) +
                             " (a resumed import sends its batches as the first run did)");
    }
    if (*f.recorded <= 0) *f.recorded = f.given;
    *f.used = *f.recorded;
  }
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
      // Ids follow the files' order: a resume that lists them in another order would give a
      // file's rows other ids (and overwrite rows of another file).
      const FileProgress* fp = state_.Find(f.path);
      if (fp != nullptr && fp->first_id >= 0 && fp->first_id != f.first_id) {
        return Status::Invalid(
            "usage: " + state_path_ + " records " + f.shown + " with ids from " +
            std::to_string(fp->first_id) + "; this command line would give it ids from " +
            std::to_string(f.first_id) + ": list the vector files as the first run did");
      }
    }
  }
  // Every file is recorded before the first batch is sent (with its first id for vector
  // files).
  for (const InputFile& f : files_) {
    FileProgress* fp = state_.Find(f.path);
    if (fp == nullptr) {
      FileProgress n{f.path, f.size, f.mtime_ns};
      n.first_id = vectors ? f.first_id : -1;
      state_.files.push_back(std::move(n));
    } else if (vectors && fp->first_id < 0) {
      fp->first_id = f.first_id;
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
    if (!o_.id_start_given && !resumed_) {
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

std::string Importer::BatchRequestId(const FileProgress* fp) const {
  return "strata-import-" + state_.import_id + "-" + std::to_string(fp - state_.files.data()) +
         "-" + std::to_string(fp->rows);
}

Status Importer::Send(const arrow::Schema& schema, const arrow::RecordBatchPtr& batch,
                      const std::string& request_id) {
  arrow::ipc::WriteOptions wo;
  wo.compression = arrow::ipc::Compression::kLz4Frame;
  STRATA_ASSIGN_OR_RETURN(std::string body, arrow::ipc::WriteStream(schema, {batch}, wo));
  // 503 (backpressure, writer_poisoned) and 429 commit nothing (PROTOCOL.md §0 rule 4): retry.
  for (int attempt = 0;; ++attempt) {
    Result<HttpAnswer> answer = client_.PostTableRaw(
        o_.table, "insert/", body, "application/vnd.apache.arrow.stream", request_id);
    if (!answer.ok()) {
      in_doubt_ = true;
      return answer.status();
    }
    const HttpAnswer& a = *answer;
    if (a.status >= 200 && a.status < 300) {
      last_replayed_ = a.replayed;
      break;
    }
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
  if (o_.crash_after_batches > 0 && batches_ + 1 == o_.crash_after_batches) {
    std::_Exit(kExitCrashHook);  // test hook: acknowledged, not yet recorded
  }
  fp->rows += rows;
  fp->batches += 1;
  // A batch the server answered from its dedupe was imported by an earlier run.
  (last_replayed_ ? rows_skipped_ : rows_sent_) += rows;
  batches_ += 1;
  file_bytes_ = file_bytes_done;
  STRATA_RETURN_IF_ERROR(SaveImportState(state_path_, state_));
  if (progress_) progress_->Update(rows_sent_ + rows_skipped_, bytes_before_file_ + file_bytes_);
  return Status::OK();
}

bool Importer::ShouldStop() const {
  return g_interrupted.load() || (o_.stop_after_batches > 0 && batches_ >= o_.stop_after_batches);
}

void Importer::RemoveLockWithoutState() const {
  if (lock_fd_ < 0) return;
  std::error_code ec;
  if (!std::filesystem::exists(state_path_, ec)) {
    std::filesystem::remove(state_path_ + ".lock", ec);  // still held by us until exit
  }
}

int Importer::Run() {
  Status st = Prepare();
  if (st.ok()) st = EnsureTable();
  if (!st.ok()) {
    RemoveLockWithoutState();
    const bool usage = st.message().rfind("usage: ", 0) == 0;
    if (o_.json) {  // the summary's shape, so a script reads `error` whatever failed
      nlohmann::json out = {{"database", o_.client.database},
                            {"table", o_.table},
                            {"rows_imported", 0},
                            {"complete", false},
                            {"error", usage ? st.message().substr(7) : st.message()}};
      std::printf("%s\n", out.dump().c_str());
      std::fflush(stdout);
    }
    if (usage) {
      std::fprintf(stderr, "strata import: %s\n", st.message().c_str() + 7);
      return kExitUsage;
    }
    return ReportError("import", st);
  }
  progress_ = std::make_unique<Progress>(!o_.quiet && !o_.json, total_bytes_);
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);

  // Recorded before the first batch, so that a batch in flight when the import dies is re-sent
  // by --resume under the same import id.
  st = SaveImportState(state_path_, state_);
  if (!st.ok()) return ReportError("import", st);

  nlohmann::json file_summaries = nlohmann::json::array();
  for (InputFile& f : files_) {
    FileProgress* fp = state_.Find(f.path);  // every file was recorded by Prepare
    if (fp->size != f.size || fp->mtime_ns != f.mtime_ns) {
      std::fprintf(stderr,
                   "strata import: warning: %s changed since the state file was written; "
                   "resuming after its first %lld rows\n",
                   f.shown.c_str(), static_cast<long long>(fp->rows));
      fp->size = f.size;
      fp->mtime_ns = f.mtime_ns;
      f.changed = true;
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
  bool nothing_done = !in_doubt_;
  for (const auto& fp : state_.files) {
    complete &= fp.complete;
    nothing_done &= fp.rows == 0 && !fp.complete;
  }
  // Kept while it records acknowledged rows or a batch that may have committed (its import id
  // lets --resume re-send it under the same x-request-id).
  const bool keep_state = !complete && !nothing_done;
  if (!keep_state) std::filesystem::remove(state_path_);
  RemoveLockWithoutState();
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
        {"state_file", keep_state ? nlohmann::json(state_path_) : nlohmann::json(nullptr)},
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
    if (keep_state) {
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

int RunImport(const ImportOptions& options) { return Importer(options).Run(); }

}  // namespace strata::cli

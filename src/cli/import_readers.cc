// The per-format readers of `strata import` (cli/importer.h): text files (CSV, JSON Lines)
// cut by --batch-rows / --batch-bytes of input, Arrow IPC files and vector files cut by their
// average bytes per row; each batch is sent and acknowledged through the Importer.
#include <algorithm>
#include <vector>

#include "arrow/builder.h"
#include "arrow/json/rows_json.h"
#include "cli/importer.h"
#include "cli/infer_schema.h"
#include "cli/text_input.h"
#include "cli/vector_file.h"

namespace strata::cli {

Status Importer::ImportText(const InputFile& f, FileProgress* fp) {
  CsvReader csv;
  JsonlReader jsonl;
  const bool is_csv = f.format == Format::kCsv;
  CsvRecord crec;
  JsonlRecord jrec;
  if (!f.changed) {
    if (is_csv) {
      STRATA_RETURN_IF_ERROR(csv.Open(f.shown, fp->offset, fp->line));
    } else {
      STRATA_RETURN_IF_ERROR(jsonl.Open(f.shown, fp->offset, fp->line));
    }
  } else {
    // Changed since the state was written (e.g. a malformed row fixed): the recorded byte
    // offset may now fall inside a record, so skip the acknowledged records from the start.
    if (is_csv) {
      STRATA_RETURN_IF_ERROR(csv.Open(f.shown));
    } else {
      STRATA_RETURN_IF_ERROR(jsonl.Open(f.shown));
    }
    for (int64_t r = 0; r < fp->rows; ++r) {
      STRATA_ASSIGN_OR_RETURN(bool got, is_csv ? csv.Next(&crec) : jsonl.Next(&jrec));
      if (!got) {
        return Status::Invalid(f.shown + " now holds " + std::to_string(r) +
                               " rows; the state file records " + std::to_string(fp->rows) +
                               " of them imported");
      }
    }
  }
  nlohmann::json rows = nlohmann::json::array();
  std::vector<int64_t> lines;
  for (;;) {
    rows.clear();
    lines.clear();
    const int64_t batch_start = is_csv ? csv.offset() : jsonl.offset();
    while (static_cast<int64_t>(lines.size()) < batch_rows_) {
      if (is_csv) {
        STRATA_ASSIGN_OR_RETURN(bool got, csv.Next(&crec));
        if (!got) break;
        STRATA_ASSIGN_OR_RETURN(nlohmann::json row,
                                CsvRecordToJson(csv.header(), crec, *schema_, f.shown));
        rows.push_back(std::move(row));
        lines.push_back(crec.line);
        if (csv.offset() - batch_start >= batch_bytes_) break;
      } else {
        STRATA_ASSIGN_OR_RETURN(bool got, jsonl.Next(&jrec));
        if (!got) break;
        JsonRowToStrings(&jrec.row, *schema_);
        rows.push_back(std::move(jrec.row));
        lines.push_back(jrec.line);
        if (jsonl.offset() - batch_start >= batch_bytes_) break;
      }
    }
    if (lines.empty()) return Status::OK();
    auto batch = arrow::json::RowsFromJson(rows, schema_);
    if (!batch.ok()) return AtLine(batch.status(), f.shown, lines);
    STRATA_RETURN_IF_ERROR(Send(*schema_, *batch, BatchRequestId(fp)));
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
  // --batch-bytes counts input bytes here too: the file's bytes per row, on average.
  const int64_t row_bytes = total_rows == 0 ? 1 : std::max<int64_t>(1, f.size / total_rows);
  const int64_t per_batch = std::max<int64_t>(1, std::min(batch_rows_, batch_bytes_ / row_bytes));
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
      const int64_t n = std::min(per_batch, b->num_rows() - pos);
      STRATA_RETURN_IF_ERROR(Send(*r.schema, b->Slice(pos, n), BatchRequestId(fp)));
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
  const int64_t per_batch = std::max<int64_t>(1, std::min(batch_rows_, batch_bytes_ / row_bytes));
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
    STRATA_RETURN_IF_ERROR(Send(*schema, batch, BatchRequestId(fp)));
    done += n;
    STRATA_RETURN_IF_ERROR(Acknowledged(fp, n, vf.OffsetAfter(done)));
    if (ShouldStop()) return Status::OK();
  }
  return Status::OK();
}

}  // namespace strata::cli

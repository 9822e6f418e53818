#include "cli/text_input.h"

#include <cerrno>
#include <cstring>

namespace strata::cli {

namespace {
constexpr size_t kBufferBytes = size_t{1} << 20;
}

FileBuffer::~FileBuffer() {
  if (f_ != nullptr) std::fclose(f_);
}

Status FileBuffer::Open(const std::string& path, int64_t offset) {
  if (f_ != nullptr) std::fclose(f_);
  pos_ = len_ = 0;
  status_ = Status::OK();
  path_ = path;
  f_ = std::fopen(path.c_str(), "rb");
  if (f_ == nullptr) return Status::IOError("cannot open " + path + ": " + std::strerror(errno));
  if (offset > 0 && fseeko(f_, static_cast<off_t>(offset), SEEK_SET) != 0) {
    return Status::IOError("cannot seek " + path + ": " + std::strerror(errno));
  }
  offset_ = offset;
  buf_.resize(kBufferBytes);
  return Status::OK();
}

bool FileBuffer::Fill() {
  if (f_ == nullptr) return false;
  len_ = std::fread(buf_.data(), 1, buf_.size(), f_);
  pos_ = 0;
  if (len_ == 0) {
    if (std::ferror(f_)) status_ = Status::IOError("cannot read " + path_);
    return false;
  }
  return true;
}

Status CsvReader::Open(const std::string& path, int64_t offset, int64_t line) {
  path_ = path;
  STRATA_RETURN_IF_ERROR(in_.Open(path, 0));
  int64_t header_line = 0;
  STRATA_ASSIGN_OR_RETURN(bool got, ReadRecord(&header_, &header_line));
  if (!got) return Status::Invalid(path + ": empty CSV file (no header line)");
  if (!header_.empty() && header_[0].rfind("\xEF\xBB\xBF", 0) == 0) header_[0].erase(0, 3);
  for (size_t i = 0; i < header_.size(); ++i) {
    if (header_[i].empty()) {
      return Status::Invalid(path + ":" + std::to_string(header_line) + ": header column " +
                             std::to_string(i + 1) + " has no name");
    }
  }
  if (offset > in_.offset()) {
    STRATA_RETURN_IF_ERROR(in_.Open(path, offset));
    line_ = line;
  }
  return Status::OK();
}

Result<bool> CsvReader::ReadRecord(std::vector<std::string>* fields, int64_t* start_line) {
  fields->clear();
  // Skip empty lines.
  for (;;) {
    int c = in_.Peek();
    if (c == '\r') {
      in_.Get();
      continue;
    }
    if (c == '\n') {
      in_.Get();
      ++line_;
      continue;
    }
    break;
  }
  if (in_.Peek() < 0) {
    STRATA_RETURN_IF_ERROR(in_.status());
    return false;
  }
  *start_line = line_;
  std::string field;
  bool quoted = false;      // inside a quoted field
  bool was_quoted = false;  // the current field was quoted (only spaces may follow)
  for (;;) {
    int c = in_.Get();
    if (quoted) {
      if (c < 0) {
        return Status::Invalid(path_ + ":" + std::to_string(*start_line) +
                               ": unterminated quoted field");
      }
      if (c == '"') {
        if (in_.Peek() == '"') {
          in_.Get();
          field.push_back('"');
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line_;
        field.push_back(static_cast<char>(c));
      }
      continue;
    }
    if (c == ',' || c == '\n' || c < 0) {
      fields->push_back(std::move(field));
      field.clear();
      was_quoted = false;
      if (c == ',') continue;
      if (c == '\n') ++line_;
      STRATA_RETURN_IF_ERROR(in_.status());
      return true;
    }
    if (c == '\r' && (in_.Peek() == '\n' || in_.Peek() < 0)) continue;
    if (c == '"' && field.empty() && !was_quoted) {
      quoted = true;
      was_quoted = true;
      continue;
    }
    if (was_quoted) {
      if (c == ' ' || c == '\t') continue;
      return Status::Invalid(path_ + ":" + std::to_string(line_) +
                             ": unexpected character after a closing quote");
    }
    field.push_back(static_cast<char>(c));
  }
}

Result<bool> CsvReader::Next(CsvRecord* out) {
  STRATA_ASSIGN_OR_RETURN(bool got, ReadRecord(&out->fields, &out->line));
  if (!got) return false;
  if (out->fields.size() != header_.size()) {
    return Status::Invalid(path_ + ":" + std::to_string(out->line) + ": " +
                           std::to_string(out->fields.size()) + " fields, the header has " +
                           std::to_string(header_.size()));
  }
  return true;
}

Status JsonlReader::Open(const std::string& path, int64_t offset, int64_t line) {
  path_ = path;
  line_ = offset > 0 ? line : 1;
  return in_.Open(path, offset);
}

Result<bool> JsonlReader::Next(JsonlRecord* out) {
  for (;;) {
    text_.clear();
    int c;
    bool any = false;
    while ((c = in_.Get()) >= 0 && c != '\n') {
      text_.push_back(static_cast<char>(c));
      any = true;
    }
    const int64_t line = line_;
    if (c == '\n') ++line_;
    if (!any && c < 0) {
      STRATA_RETURN_IF_ERROR(in_.status());
      return false;
    }
    if (text_.find_first_not_of(" \t\r") == std::string::npos) continue;
    out->line = line;
    out->row = nlohmann::json::parse(text_, nullptr, false);
    if (out->row.is_discarded()) {
      return Status::Invalid(path_ + ":" + std::to_string(line) + ": not valid JSON");
    }
    if (!out->row.is_object()) {
      return Status::Invalid(path_ + ":" + std::to_string(line) + ": expected a JSON object, got " +
                             out->row.type_name());
    }
    return true;
  }
}

}  // namespace strata::cli

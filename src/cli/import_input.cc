#include "cli/import_input.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <memory>
#include <sstream>

namespace strata::cli {

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

namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         std::equal(suffix.rbegin(), suffix.rend(), s.rbegin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == b;
         });
}

}  // namespace

Result<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::IOError("cannot read " + path);
  return ss.str();
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

Result<arrow::ipc::ReadResult> ReadArrowInput(const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(std::string bytes, ReadWholeFile(path));
  auto holder = std::make_shared<std::string>(std::move(bytes));
  auto buf = arrow::Buffer::Wrap(holder->data(), static_cast<int64_t>(holder->size()), holder);
  const bool is_file = holder->size() >= 6 && holder->compare(0, 6, "ARROW1") == 0;
  auto r = is_file ? arrow::ipc::ReadFile(buf) : arrow::ipc::ReadStream(buf);
  if (!r.ok()) return r.status().WithContext(path);
  return r;
}

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

}  // namespace strata::cli

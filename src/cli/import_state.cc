#include "cli/import_state.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace strata::cli {

namespace {

std::string SafeName(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[4];
      std::snprintf(buf, sizeof(buf), "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

}  // namespace

FileProgress* ImportState::Find(const std::string& path) {
  for (auto& f : files) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

std::string DefaultStatePath(const std::string& database, const std::string& table) {
  return ".strata-import-" + SafeName(database) + "-" + SafeName(table) + ".json";
}

Result<std::optional<ImportState>> LoadImportState(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return std::optional<ImportState>();
    return Status::IOError("cannot read the state file " + path + ": " + std::strerror(errno));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("files") || !j["files"].is_array()) {
    return Status::Invalid(path + " is not a strata import state file");
  }
  ImportState st;
  try {
    st.url = j.value("url", "");
    st.database = j.value("database", "");
    st.table = j.value("table", "");
    st.id_start = j.value("id_start", int64_t{-1});
    st.import_id = j.value("import_id", "");
    st.batch_rows = j.value("batch_rows", int64_t{0});
    st.batch_bytes = j.value("batch_bytes", int64_t{0});
    for (const auto& f : j["files"]) {
      FileProgress p;
      p.path = f.at("path").get<std::string>();
      p.size = f.value("size", int64_t{0});
      p.mtime_ns = f.value("mtime_ns", int64_t{0});
      p.rows = f.value("rows", int64_t{0});
      p.offset = f.value("offset", int64_t{0});
      p.line = f.value("line", int64_t{1});
      p.batches = f.value("batches", int64_t{0});
      p.complete = f.value("complete", false);
      p.first_id = f.value("first_id", int64_t{-1});
      st.files.push_back(std::move(p));
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::Invalid(path + " is not a strata import state file: " + e.what());
  }
  return std::optional<ImportState>(std::move(st));
}

Status SaveImportState(const std::string& path, const ImportState& state) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : state.files) {
    files.push_back({{"path", f.path},
                     {"size", f.size},
                     {"mtime_ns", f.mtime_ns},
                     {"rows", f.rows},
                     {"offset", f.offset},
                     {"line", f.line},
                     {"batches", f.batches},
                     {"complete", f.complete},
                     {"first_id", f.first_id}});
  }
  nlohmann::json j = {{"url", state.url},
                      {"database", state.database},
                      {"table", state.table},
                      {"id_start", state.id_start},
                      {"import_id", state.import_id},
                      {"batch_rows", state.batch_rows},
                      {"batch_bytes", state.batch_bytes},
                      {"files", files}};
  const std::string text = j.dump(1) + "\n";
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError("cannot write " + tmp + ": " + std::strerror(errno));
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      return Status::IOError("cannot write " + tmp + ": " + std::strerror(e));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    return Status::IOError("cannot sync " + tmp + ": " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return Status::IOError("cannot rename " + tmp + " to " + path + ": " + std::strerror(errno));
  }
  return Status::OK();
}

}  // namespace strata::cli

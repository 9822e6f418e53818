#include "server/request_context.h"

#include <vector>

#include "table/table_name.h"

namespace strata::server {

namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

constexpr std::string_view kTablePrefix = "/v1/table/";

// Actions made of two segments: {first}/{second}.
bool IsTwoSegmentAction(std::string_view first, std::string_view second) {
  if (first == "mem_wal") return second == "describe";
  if (first == "index") return second == "list";
  if (first == "version") return second == "list";
  if (first == "tags") {
    return second == "list" || second == "version" || second == "create" || second == "update" ||
           second == "delete";
  }
  if (first == "multipart_write") {
    return second == "create" || second == "complete" || second == "abort";
  }
  if (first == "page_cache") return second == "prewarm";
  if (first == "branches") return second == "list" || second == "create" || second == "delete";
  return false;
}

}  // namespace

Result<std::string> PercentDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    if (i + 2 >= s.size()) {
      return Status::Invalid("path: truncated percent escape at byte " + std::to_string(i));
    }
    const int hi = HexValue(s[i + 1]);
    const int lo = HexValue(s[i + 2]);
    if (hi < 0 || lo < 0) {
      return Status::Invalid("path: invalid percent escape at byte " + std::to_string(i));
    }
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

Result<TableRoute> ParseTableRoute(std::string_view raw_path) {
  if (raw_path.substr(0, kTablePrefix.size()) != kTablePrefix) {
    return Status::NotFound("no route for " + std::string(raw_path));
  }
  std::string_view rest = raw_path.substr(kTablePrefix.size());
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  std::vector<std::string_view> segs;
  size_t start = 0;
  while (start <= rest.size()) {
    const size_t slash = rest.find('/', start);
    const size_t end = slash == std::string_view::npos ? rest.size() : slash;
    segs.push_back(rest.substr(start, end - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (segs.size() < 2) {
    return Status::NotFound("no route for " + std::string(raw_path) +
                            " (expected /v1/table/{id}/{action}/)");
  }
  TableRoute route;
  size_t action_segs = 1;
  const size_t n = segs.size();
  if (n >= 4 && segs[n - 3] == "index" &&
      (segs[n - 1] == "stats" || segs[n - 1] == "drop" || segs[n - 1] == "prewarm")) {
    action_segs = 3;
    STRATA_ASSIGN_OR_RETURN(route.index_name, PercentDecode(segs[n - 2]));
    route.action = "index/{n}/" + std::string(segs[n - 1]);
  } else if (n >= 3 && IsTwoSegmentAction(segs[n - 2], segs[n - 1])) {
    action_segs = 2;
    route.action = std::string(segs[n - 2]) + "/" + std::string(segs[n - 1]);
  } else {
    route.action = std::string(segs[n - 1]);
  }
  std::string id;
  for (size_t i = 0; i + action_segs < n; ++i) {
    if (i > 0) id.push_back('/');
    id.append(segs[i]);
  }
  if (id.empty()) {
    return Status::NotFound("no route for " + std::string(raw_path) + " (empty table id)");
  }
  STRATA_ASSIGN_OR_RETURN(route.table, PercentDecode(id));
  return route;
}

Result<std::string> DatabaseOf(const httplib::Request& req) {
  if (!req.has_header(kDatabaseHeader)) return std::string(kDefaultDatabase);
  std::string db = req.get_header_value(kDatabaseHeader);
  STRATA_RETURN_IF_ERROR(table::ValidateTableName(db, "database name (header x-lancedb-database)"));
  return db;
}

std::string_view RawPath(const httplib::Request& req) {
  std::string_view target = req.target;
  const size_t q = target.find('?');
  return q == std::string_view::npos ? target : target.substr(0, q);
}

}  // namespace strata::server

#include "cli/output.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>

#include "arrow/json/rows_json.h"
#include "query/filter/temporal.h"

namespace strata::cli {

namespace {

// Display width of UTF-8 text (code points; wide characters count as one).
size_t Width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string Number(const nlohmann::json& v) {
  if (v.is_number_float()) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.6g", v.get<double>());
    return buf;
  }
  return v.dump();
}

// True when the values of `type` (or of its nested lists) are float32.
bool HoldsFloat32(const arrow::DataType& type) {
  if (type.id() == arrow::TypeId::kFloat32) return true;
  if (type.is_list_like()) return HoldsFloat32(*type.value_type());
  return false;
}

void ShortenFloats(nlohmann::json& v) {
  if (v.is_number_float()) {
    char buf[32];
    auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), static_cast<float>(v.get<double>()));
    if (ec == std::errc()) {
      *p = '\0';
      v = std::strtod(buf, nullptr);
    }
  } else if (v.is_array()) {
    for (auto& x : v) ShortenFloats(x);
  }
}

}  // namespace

nlohmann::json ValueJson(const arrow::ArrayData& data, int64_t i) {
  nlohmann::json v = arrow::json::ValueToJson(data, i);
  // Dates and timestamps as text that `strata import` (and JSON insert/) read back; REST JSON
  // answers keep the numbers.
  if (v.is_number_integer()) {
    switch (data.type->id()) {
      case arrow::TypeId::kDate32:
        return query::filter::internal::FormatDate(v.get<int64_t>());
      case arrow::TypeId::kDate64:
        return query::filter::internal::FormatDate(
            v.get<int64_t>() >= 0 ? v.get<int64_t>() / 86400000
                                  : -((-v.get<int64_t>() + 86399999) / 86400000));
      case arrow::TypeId::kTimestamp:
        return query::filter::internal::FormatTimestamp(v.get<int64_t>(), data.type->unit());
      default:
        break;
    }
  }
  if (HoldsFloat32(*data.type)) ShortenFloats(v);
  return v;
}

std::string TextTable::Render() const {
  std::vector<size_t> w(header.size(), 0);
  for (size_t c = 0; c < header.size(); ++c) w[c] = Width(header[c]);
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size() && c < w.size(); ++c) w[c] = std::max(w[c], Width(r[c]));
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (size_t c = 0; c < w.size(); ++c) {
      const std::string& s = c < cells.size() ? cells[c] : std::string();
      l += s;
      if (c + 1 < w.size()) l += std::string(w[c] - Width(s) + 2, ' ');
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(header);
  std::vector<std::string> dashes;
  for (size_t c = 0; c < w.size(); ++c) dashes.push_back(std::string(w[c], '-'));
  line(dashes);
  for (const auto& r : rows) line(r);
  return out;
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string CellText(const arrow::ArrayData& data, int64_t i, int max_values) {
  nlohmann::json v = ValueJson(data, i);
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return Number(v);
  if (v.is_array()) {
    std::string s = "[";
    const size_t n = v.size();
    for (size_t k = 0; k < n && k < static_cast<size_t>(max_values); ++k) {
      if (k > 0) s += ", ";
      s += v[k].is_number() ? Number(v[k]) : v[k].dump();
    }
    if (n > static_cast<size_t>(max_values)) s += ", ... dim " + std::to_string(n);
    return s + "]";
  }
  return v.dump();
}

}  // namespace strata::cli

#include "query/predicate.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace strata::query {

namespace {

constexpr size_t kMaxFilterBytes = 64 * 1024;

std::string Unsupported(std::string_view sql, const std::string& what) {
  return "filter '" + std::string(sql) + "' is not supported yet: only `column = literal` is (" +
         what + ")";
}

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

class Parser {
 public:
  explicit Parser(std::string_view sql) : sql_(sql) {}

  Result<EqualsPredicate> Parse() {
    EqualsPredicate out;
    SkipSpace();
    STRATA_ASSIGN_OR_RETURN(out.column, ParseIdentifier());
    SkipSpace();
    if (AtEnd()) return Status::Invalid(Unsupported(sql_, "missing '=' and a literal"));
    if (sql_[pos_] != '=' || (pos_ + 1 < sql_.size() && sql_[pos_ + 1] == '=')) {
      return Status::Invalid(Unsupported(sql_, "found '" + std::string(Rest(2)) + "'"));
    }
    ++pos_;
    SkipSpace();
    STRATA_ASSIGN_OR_RETURN(out.value, ParseLiteral());
    SkipSpace();
    if (!AtEnd()) {
      return Status::Invalid(
          Unsupported(sql_, "found '" + std::string(Rest(16)) + "' after the literal"));
    }
    return out;
  }

 private:
  bool AtEnd() const { return pos_ >= sql_.size(); }
  void SkipSpace() {
    while (!AtEnd() && std::isspace(static_cast<unsigned char>(sql_[pos_]))) ++pos_;
  }
  std::string_view Rest(size_t n) const { return sql_.substr(pos_, n); }

  Result<std::string> ParseIdentifier() {
    if (AtEnd()) return Status::Invalid("filter is empty: expected `column = literal`");
    const char c = sql_[pos_];
    if (c == '`' || c == '"') {
      std::string name;
      ++pos_;
      while (!AtEnd()) {
        if (sql_[pos_] == c) {
          if (pos_ + 1 < sql_.size() && sql_[pos_ + 1] == c) {
            name.push_back(c);
            pos_ += 2;
            continue;
          }
          ++pos_;
          if (name.empty())
            return Status::Invalid("filter '" + std::string(sql_) + "': empty column name");
          return name;
        }
        name.push_back(sql_[pos_++]);
      }
      return Status::Invalid("filter '" + std::string(sql_) + "': unterminated quoted column name");
    }
    if (!IsIdentStart(c)) {
      return Status::Invalid(
          Unsupported(sql_, "expected a column name at '" + std::string(Rest(16)) + "'"));
    }
    const size_t start = pos_;
    while (!AtEnd() && IsIdentChar(sql_[pos_])) ++pos_;
    std::string name(sql_.substr(start, pos_ - start));
    const std::string lower = Lower(name);
    if (lower == "not" || lower == "true" || lower == "false" || lower == "null") {
      return Status::Invalid(
          Unsupported(sql_, "found keyword '" + name + "' where a column was expected"));
    }
    return name;
  }

  Result<Literal> ParseLiteral() {
    Literal lit;
    if (AtEnd()) return Status::Invalid(Unsupported(sql_, "missing literal after '='"));
    const char c = sql_[pos_];
    if (c == '\'') {
      ++pos_;
      while (!AtEnd()) {
        if (sql_[pos_] == '\'') {
          if (pos_ + 1 < sql_.size() && sql_[pos_ + 1] == '\'') {
            lit.string_value.push_back('\'');
            pos_ += 2;
            continue;
          }
          ++pos_;
          lit.kind = Literal::Kind::kString;
          return lit;
        }
        lit.string_value.push_back(sql_[pos_++]);
      }
      return Status::Invalid("filter '" + std::string(sql_) + "': unterminated string literal");
    }
    if (IsIdentStart(c)) {
      const size_t start = pos_;
      while (!AtEnd() && IsIdentChar(sql_[pos_])) ++pos_;
      const std::string word = Lower(sql_.substr(start, pos_ - start));
      if (word == "true" || word == "false") {
        lit.kind = Literal::Kind::kBool;
        lit.bool_value = word == "true";
        return lit;
      }
      if (word == "null") {
        return Status::Invalid(
            Unsupported(sql_, "comparison with NULL; IS NULL is not supported yet"));
      }
      return Status::Invalid(Unsupported(sql_, "the right side '" +
                                                   std::string(sql_.substr(start, pos_ - start)) +
                                                   "' is not a literal"));
    }
    // Number: [+-]digits[.digits][e[+-]digits]
    const size_t start = pos_;
    if (sql_[pos_] == '-' || sql_[pos_] == '+') ++pos_;
    bool digits = false, is_float = false;
    while (!AtEnd() && std::isdigit(static_cast<unsigned char>(sql_[pos_]))) ++pos_, digits = true;
    if (!AtEnd() && sql_[pos_] == '.') {
      is_float = true;
      ++pos_;
      while (!AtEnd() && std::isdigit(static_cast<unsigned char>(sql_[pos_])))
        ++pos_, digits = true;
    }
    if (digits && !AtEnd() && (sql_[pos_] == 'e' || sql_[pos_] == 'E')) {
      is_float = true;
      ++pos_;
      if (!AtEnd() && (sql_[pos_] == '-' || sql_[pos_] == '+')) ++pos_;
      bool exp_digits = false;
      while (!AtEnd() && std::isdigit(static_cast<unsigned char>(sql_[pos_])))
        ++pos_, exp_digits = true;
      if (!exp_digits) digits = false;
    }
    if (!digits) {
      return Status::Invalid(
          Unsupported(sql_, "expected a literal at '" + std::string(sql_.substr(start, 16)) + "'"));
    }
    std::string text(sql_.substr(start, pos_ - start));
    if (!is_float) {
      const char* first = text.data() + (text[0] == '+' ? 1 : 0);
      auto [p, ec] = std::from_chars(first, text.data() + text.size(), lit.int_value);
      if (ec != std::errc() || p != text.data() + text.size()) {
        return Status::Invalid("filter '" + std::string(sql_) + "': integer literal " + text +
                               " does not fit in int64");
      }
      lit.kind = Literal::Kind::kInt;
      return lit;
    }
    char* end = nullptr;
    lit.float_value = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() || !std::isfinite(lit.float_value)) {
      return Status::Invalid("filter '" + std::string(sql_) + "': float literal " + text +
                             " is not a finite float64");
    }
    lit.kind = Literal::Kind::kFloat;
    return lit;
  }

  std::string_view sql_;
  size_t pos_ = 0;
};

template <typename T>
void CompareFixed(const arrow::Array& arr, const Literal& lit, uint8_t* out) {
  const T* values = arr.raw_values<T>();
  const int64_t n = arr.length();
  if (lit.kind == Literal::Kind::kInt) {
    if constexpr (std::is_floating_point_v<T>) {
      const double want = static_cast<double>(lit.int_value);
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<double>(values[i]) == want;
    } else if constexpr (std::is_signed_v<T>) {
      const int64_t want = lit.int_value;
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<int64_t>(values[i]) == want;
    } else {
      if (lit.int_value < 0) {
        for (int64_t i = 0; i < n; ++i) out[i] = 0;
        return;
      }
      const uint64_t want = static_cast<uint64_t>(lit.int_value);
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<uint64_t>(values[i]) == want;
    }
  } else {
    const double want = lit.float_value;
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<double>(values[i]) == want;
  }
}

}  // namespace

std::string Literal::ToString() const {
  switch (kind) {
    case Kind::kInt:
      return std::to_string(int_value);
    case Kind::kFloat: {
      char buf[32];
      auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), float_value);
      (void)ec;
      return std::string(buf, p);
    }
    case Kind::kString: {
      std::string out = "'";
      for (char c : string_value) {
        if (c == '\'') out.push_back('\'');
        out.push_back(c);
      }
      out.push_back('\'');
      return out;
    }
    case Kind::kBool:
      return bool_value ? "true" : "false";
  }
  return "?";
}

std::string EqualsPredicate::ToString() const { return column + " = " + value.ToString(); }

Result<EqualsPredicate> ParsePredicate(std::string_view sql) {
  if (sql.size() > kMaxFilterBytes) {
    return Status::Invalid("filter is " + std::to_string(sql.size()) + " bytes; the limit is " +
                           std::to_string(kMaxFilterBytes));
  }
  return Parser(sql).Parse();
}

Result<BoundPredicate> BindPredicate(const EqualsPredicate& predicate,
                                     const arrow::Schema& schema) {
  int index = schema.GetFieldIndex(predicate.column);
  if (index < 0) {
    const std::string want = Lower(predicate.column);
    for (int i = 0; i < schema.num_fields(); ++i) {
      if (Lower(schema.field(i)->name) == want) {
        if (index >= 0) {
          return Status::Invalid("filter column '" + predicate.column +
                                 "' is ambiguous: several columns match it case-insensitively");
        }
        index = i;
      }
    }
  }
  if (index < 0) {
    std::string names;
    for (const auto& f : schema.fields()) names += (names.empty() ? "" : ", ") + f->name;
    return Status::Invalid("filter column '" + predicate.column +
                           "' is not in the table schema (columns: " + names + ")");
  }
  const auto& field = schema.field(index);
  const arrow::DataType& type = *field->type;
  const Literal::Kind kind = predicate.value.kind;
  bool ok = false;
  switch (type.id()) {
    case arrow::TypeId::kInt8:
    case arrow::TypeId::kInt16:
    case arrow::TypeId::kInt32:
    case arrow::TypeId::kInt64:
    case arrow::TypeId::kUInt8:
    case arrow::TypeId::kUInt16:
    case arrow::TypeId::kUInt32:
    case arrow::TypeId::kUInt64:
    case arrow::TypeId::kFloat32:
    case arrow::TypeId::kFloat64:
      ok = kind == Literal::Kind::kInt || kind == Literal::Kind::kFloat;
      break;
    case arrow::TypeId::kUtf8:
    case arrow::TypeId::kLargeUtf8:
      ok = kind == Literal::Kind::kString;
      break;
    case arrow::TypeId::kBool:
      ok = kind == Literal::Kind::kBool;
      break;
    default:
      return Status::Invalid("filter on column '" + field->name + "' of type " + type.ToString() +
                             " is not supported yet (supported: integers, floats, strings, bool)");
  }
  if (!ok) {
    return Status::Invalid("filter compares column '" + field->name + "' of type " +
                           type.ToString() + " with literal " + predicate.value.ToString() +
                           " of another type");
  }
  BoundPredicate bound;
  bound.predicate = predicate;
  bound.column_index = index;
  return bound;
}

void EvaluatePredicate(const BoundPredicate& predicate, const arrow::RecordBatch& batch,
                       std::vector<uint8_t>* mask) {
  const arrow::Array arr = batch.column(predicate.column_index);
  const int64_t n = batch.num_rows();
  mask->assign(static_cast<size_t>(n), 0);
  uint8_t* out = mask->data();
  const Literal& lit = predicate.predicate.value;
  switch (arr.type_id()) {
    case arrow::TypeId::kInt8:
      CompareFixed<int8_t>(arr, lit, out);
      break;
    case arrow::TypeId::kInt16:
      CompareFixed<int16_t>(arr, lit, out);
      break;
    case arrow::TypeId::kInt32:
      CompareFixed<int32_t>(arr, lit, out);
      break;
    case arrow::TypeId::kInt64:
      CompareFixed<int64_t>(arr, lit, out);
      break;
    case arrow::TypeId::kUInt8:
      CompareFixed<uint8_t>(arr, lit, out);
      break;
    case arrow::TypeId::kUInt16:
      CompareFixed<uint16_t>(arr, lit, out);
      break;
    case arrow::TypeId::kUInt32:
      CompareFixed<uint32_t>(arr, lit, out);
      break;
    case arrow::TypeId::kUInt64:
      CompareFixed<uint64_t>(arr, lit, out);
      break;
    case arrow::TypeId::kFloat32:
      CompareFixed<float>(arr, lit, out);
      break;
    case arrow::TypeId::kFloat64:
      CompareFixed<double>(arr, lit, out);
      break;
    case arrow::TypeId::kUtf8:
    case arrow::TypeId::kLargeUtf8:
      for (int64_t i = 0; i < n; ++i) out[i] = arr.GetView(i) == lit.string_value;
      break;
    case arrow::TypeId::kBool:
      for (int64_t i = 0; i < n; ++i) out[i] = arr.BoolValue(i) == lit.bool_value;
      break;
    default:
      break;  // BindPredicate rejected every other type.
  }
  if (!arr.data()->buffers.empty() && arr.data()->buffers[0] != nullptr) {
    for (int64_t i = 0; i < n; ++i) {
      if (arr.IsNull(i)) out[i] = 0;
    }
  }
}

Result<int64_t> CountMatching(const EqualsPredicate& predicate,
                              const table::TableSnapshot& snapshot) {
  STRATA_ASSIGN_OR_RETURN(BoundPredicate bound, BindPredicate(predicate, *snapshot.schema));
  int64_t count = 0;
  std::vector<uint8_t> mask;
  for (const auto& batch : snapshot.batches) {
    EvaluatePredicate(bound, *batch, &mask);
    for (uint8_t m : mask) count += m;
  }
  return count;
}

}  // namespace strata::query

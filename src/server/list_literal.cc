#include "server/list_literal.h"

#include "arrow/builder.h"
#include "query/filter/parser.h"

namespace strata::server {

namespace {

using query::filter::Literal;

size_t SkipBlanks(std::string_view s, size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  return i;
}

Status AppendItem(arrow::ArrayBuilder* child, const Literal& item, const std::string& what,
                  size_t index) {
  const std::string where = what + " element " + std::to_string(index);
  switch (item.kind) {
    case Literal::Kind::kNull:
      return child->AppendNull();
    case Literal::Kind::kBool:
      return child->AppendBool(item.bool_value).WithContext(where);
    case Literal::Kind::kInt:
      if (child->type()->id() == arrow::TypeId::kFloat32 ||
          child->type()->id() == arrow::TypeId::kFloat64 ||
          child->type()->id() == arrow::TypeId::kFloat16) {
        return child->AppendDouble(static_cast<double>(item.int_value)).WithContext(where);
      }
      return child->AppendInt(item.int_value).WithContext(where);
    case Literal::Kind::kFloat:
      return child->AppendDouble(item.float_value).WithContext(where);
    case Literal::Kind::kString:
      return child->AppendBytes(item.string_value).WithContext(where);
    default:
      return Status::Invalid(where + ": " + item.ToString() + " is not supported in an array");
  }
}

}  // namespace

bool IsListLiteral(std::string_view sql) {
  const size_t i = SkipBlanks(sql, 0);
  return i < sql.size() && sql[i] == '[';
}

Result<std::vector<Literal>> ParseListLiteral(std::string_view sql, const std::string& context) {
  std::vector<Literal> out;
  size_t i = SkipBlanks(sql, 0);
  if (i >= sql.size() || sql[i] != '[') {
    return Status::Invalid(context + ": expected '[' at position " + std::to_string(i));
  }
  i = SkipBlanks(sql, i + 1);
  if (i < sql.size() && sql[i] == ']') {
    if (SkipBlanks(sql, i + 1) != sql.size()) {
      return Status::Invalid(context + ": unexpected text after ']' at position " +
                             std::to_string(i + 1));
    }
    return out;
  }
  while (true) {
    // One element: up to the next ',' or ']' outside a 'string'.
    const size_t start = i;
    bool quoted = false;
    while (i < sql.size() && (quoted || (sql[i] != ',' && sql[i] != ']'))) {
      if (sql[i] == '\'') quoted = !quoted;  // '' inside a string toggles twice
      ++i;
    }
    if (i >= sql.size()) {
      return Status::Invalid(context + ": missing ']' at position " + std::to_string(i) +
                             " (end of input)");
    }
    query::filter::ParseOptions options;
    options.context = context;
    Result<query::filter::ExprPtr> e =
        query::filter::ParseExpression(sql.substr(start, i - start), options);
    if (!e.ok() || (*e)->kind != query::filter::ExprKind::kLiteral) {
      return Status::Invalid(context + ": array element at position " + std::to_string(start) +
                             " must be a literal (a number, 'string', TRUE, FALSE or NULL)");
    }
    out.push_back((*e)->literal);
    if (sql[i] == ']') {
      if (SkipBlanks(sql, i + 1) != sql.size()) {
        return Status::Invalid(context + ": unexpected text after ']' at position " +
                               std::to_string(i + 1));
      }
      return out;
    }
    i = SkipBlanks(sql, i + 1);  // past ','
  }
}

Result<arrow::ArrayDataPtr> RepeatListLiteral(const std::vector<Literal>& items,
                                              const arrow::DataTypePtr& type, int64_t rows,
                                              const std::string& what) {
  const arrow::TypeId id = type->id();
  if (id != arrow::TypeId::kList && id != arrow::TypeId::kLargeList &&
      id != arrow::TypeId::kFixedSizeList) {
    return Status::Invalid(what + " has type " + type->ToString() +
                           "; an array value fits only list and vector columns");
  }
  if (id == arrow::TypeId::kFixedSizeList &&
      static_cast<int64_t>(items.size()) != type->list_size()) {
    return Status::Invalid(what + " holds vectors of dimension " +
                           std::to_string(type->list_size()) + " but the array has " +
                           std::to_string(items.size()) + " elements");
  }
  arrow::ArrayBuilder builder(type);
  builder.Reserve(rows);
  for (int64_t r = 0; r < rows; ++r) {
    for (size_t j = 0; j < items.size(); ++j) {
      STRATA_RETURN_IF_ERROR(AppendItem(builder.child(0), items[j], what, j));
    }
    STRATA_RETURN_IF_ERROR(id == arrow::TypeId::kFixedSizeList ? builder.AppendValid()
                                                               : builder.AppendListEnd());
  }
  return builder.Finish();
}

}  // namespace strata::server

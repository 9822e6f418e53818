#include "query/projection.h"

#include <cctype>
#include <optional>
#include <unordered_set>
#include <utility>

#include "common/strings.h"
#include "query/projection_alias.h"

namespace strata::query {

namespace {

// Index of column `name` (exact, then a unique case-insensitive match), or -1.
int FindColumn(const arrow::Schema& schema, const std::string& name) {
  const int exact = schema.GetFieldIndex(name);
  if (exact >= 0) return exact;
  int found = -1;
  for (int i = 0; i < schema.num_fields(); ++i) {
    if (!EqualsIgnoreCase(schema.field(i)->name, name)) continue;
    if (found >= 0) return -1;
    found = i;
  }
  return found;
}

// Whether `name` is a plain identifier (then an unknown one is reported as an unknown column,
// not as an expression error).
bool IsIdentifier(const std::string& name) {
  if (name.empty()) return false;
  if (!std::isalpha(static_cast<unsigned char>(name[0])) && name[0] != '_') return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

}  // namespace

std::optional<std::pair<std::string, std::string>> SplitTrailingAlias(const std::string& text) {
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return std::nullopt;
  size_t start = end + 1;
  while (start > 0 &&
         (std::isalnum(static_cast<unsigned char>(text[start - 1])) || text[start - 1] == '_')) {
    --start;
  }
  std::string alias = text.substr(start, end + 1 - start);
  if (!IsIdentifier(alias) || start == 0 ||
      !std::isspace(static_cast<unsigned char>(text[start - 1]))) {
    return std::nullopt;
  }
  size_t as_end = text.find_last_not_of(" \t\r\n", start - 1);
  if (as_end == std::string::npos || as_end < 1) return std::nullopt;
  if (!EqualsIgnoreCase(text.substr(as_end - 1, 2), "as")) return std::nullopt;
  if (as_end < 2 || !std::isspace(static_cast<unsigned char>(text[as_end - 2])))
    return std::nullopt;
  const size_t expr_end = text.find_last_not_of(" \t\r\n", as_end - 2);
  if (expr_end == std::string::npos) return std::nullopt;
  const size_t expr_start = text.find_first_not_of(" \t\r\n");
  return std::make_pair(text.substr(expr_start, expr_end + 1 - expr_start), std::move(alias));
}

Result<Projection> ResolveProjection(const arrow::SchemaPtr& schema,
                                     const std::vector<ColumnRef>& columns) {
  Projection out;
  if (columns.empty()) {
    for (int i = 0; i < schema->num_fields(); ++i) {
      out.indices.push_back(i);
      out.exprs.push_back(nullptr);
    }
    out.schema = schema;
    return out;
  }
  std::vector<arrow::FieldPtr> fields;
  std::unordered_set<std::string> seen;
  for (const ColumnRef& given : columns) {
    ColumnRef ref = given;
    if (ref.alias.empty() && FindColumn(*schema, ref.name) < 0) {
      if (auto split = SplitTrailingAlias(ref.name)) {
        ref.name = std::move(split->first);
        ref.alias = std::move(split->second);
      }
    }
    const std::string& out_name = ref.alias.empty() ? ref.name : ref.alias;
    const int index = FindColumn(*schema, ref.name);
    if (index >= 0) {
      out.indices.push_back(index);
      out.exprs.push_back(nullptr);
      const auto& src = schema->field(index);
      fields.push_back(arrow::field(out_name, src->type, src->nullable, src->metadata));
    } else if (IsIdentifier(ref.name) && ref.name != filter::kRowIdName &&
               ref.name != filter::kRowOffsetName) {
      std::string names;
      for (const auto& f : schema->fields()) names += (names.empty() ? "" : ", ") + f->name;
      return Status::Invalid("column '" + ref.name +
                             "' is not in the table schema (columns: " + names + ")");
    } else {
      filter::BindOptions options;
      options.context = "columns: '" + out_name + "'";
      options.require_bool = false;
      STRATA_ASSIGN_OR_RETURN(filter::BoundExprPtr expr,
                              filter::ParseAndBind(ref.name, *schema, options));
      out.indices.push_back(-1);
      fields.push_back(arrow::field(out_name, expr->type(), /*nullable=*/true));
      out.exprs.push_back(std::move(expr));
    }
    if (!seen.insert(out_name).second) {
      return Status::Invalid("columns: output column '" + out_name + "' is selected twice");
    }
  }
  out.schema = std::make_shared<arrow::Schema>(std::move(fields));
  return out;
}

Result<arrow::RecordBatchPtr> ApplyProjection(const Projection& projection,
                                              const arrow::RecordBatch& batch) {
  std::vector<arrow::ArrayDataPtr> columns;
  columns.reserve(projection.indices.size());
  for (size_t c = 0; c < projection.indices.size(); ++c) {
    const filter::BoundExprPtr& expr =
        c < projection.exprs.size() ? projection.exprs[c] : filter::BoundExprPtr();
    if (expr == nullptr) {
      columns.push_back(batch.column_data(projection.indices[c]));
      continue;
    }
    STRATA_ASSIGN_OR_RETURN(arrow::ArrayDataPtr col, filter::Evaluate(*expr, batch));
    columns.push_back(std::move(col));
  }
  return std::make_shared<arrow::RecordBatch>(projection.schema, batch.num_rows(),
                                              std::move(columns));
}

}  // namespace strata::query

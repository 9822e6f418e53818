#include "index/index_spec.h"

namespace strata::index {

const char* IndexKindName(IndexKind kind) {
  switch (kind) {
    case IndexKind::kHnsw:
      return "HNSW";
    case IndexKind::kBTree:
      return "BTREE";
    case IndexKind::kFts:
      return "FTS";
  }
  return "?";
}

namespace {

bool IsScalarKeyType(arrow::TypeId id) {
  switch (id) {
    case arrow::TypeId::kNull:
    case arrow::TypeId::kList:
    case arrow::TypeId::kLargeList:
    case arrow::TypeId::kFixedSizeList:
    case arrow::TypeId::kStruct:
      return false;
    default:
      return true;
  }
}

}  // namespace

Status ValidateIndexSpec(const IndexSpec& spec, const arrow::Schema& schema) {
  if (spec.name.empty() || spec.name.size() > 256) {
    return Status::Invalid("index name must be 1 to 256 bytes, got " +
                           std::to_string(spec.name.size()));
  }
  const int c = schema.GetFieldIndex(spec.column);
  if (c < 0) {
    return Status::Invalid("index column '" + spec.column + "' is not in the table schema");
  }
  const arrow::DataType& type = *schema.field(c)->type;
  const std::string what = std::string(IndexKindName(spec.kind)) + " index '" + spec.name +
                           "' on column '" + spec.column + "' (" + type.ToString() + ")";
  switch (spec.kind) {
    case IndexKind::kHnsw:
      if (type.id() != arrow::TypeId::kFixedSizeList ||
          type.value_type()->id() != arrow::TypeId::kFloat32) {
        return Status::Invalid(what + ": a vector index needs a fixed_size_list<float32> column");
      }
      if (type.list_size() < 1 || type.list_size() > 65536) {
        return Status::Invalid(what + ": vector dimension must be in [1, 65536]");
      }
      if (spec.hnsw.m < 2 || spec.hnsw.m > 128) {
        return Status::Invalid(what + ": m must be in [2, 128], got " +
                               std::to_string(spec.hnsw.m));
      }
      if (spec.hnsw.ef_construction < spec.hnsw.m || spec.hnsw.ef_construction > 4096) {
        return Status::Invalid(what + ": ef_construction must be in [m, 4096], got " +
                               std::to_string(spec.hnsw.ef_construction));
      }
      return Status::OK();
    case IndexKind::kBTree:
      if (!IsScalarKeyType(type.id())) {
        return Status::Invalid(what + ": a BTREE index needs a scalar column");
      }
      return Status::OK();
    case IndexKind::kFts:
      if (type.id() != arrow::TypeId::kUtf8 && type.id() != arrow::TypeId::kLargeUtf8) {
        return Status::Invalid(what + ": an FTS index needs a utf8 or large_utf8 column");
      }
      if (spec.fts.max_token_length < 1 || spec.fts.max_token_length > 1024) {
        return Status::Invalid(what + ": max_token_length must be in [1, 1024], got " +
                               std::to_string(spec.fts.max_token_length));
      }
      return Status::OK();
  }
  return Status::Invalid(what + ": unknown index kind");
}

}  // namespace strata::index

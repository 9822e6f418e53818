#include "index/column_index.h"

#include <cstring>

#include <nlohmann/json.hpp>

namespace strata::index {
namespace {

constexpr char kMagic[8] = {'S', 'T', 'I', 'D', 'X', '0', '0', '1'};
// The file's kind field: IndexKind values, and this for the base's IVF form of kind HNSW.
constexpr uint32_t kIvfPayload = 3;

void PutU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

}  // namespace

std::string IndexSpecToJson(const IndexSpec& spec) {
  nlohmann::json j;
  j["name"] = spec.name;
  j["column"] = spec.column;
  j["kind"] = IndexKindName(spec.kind);
  j["requested_type"] = spec.requested_type;
  j["params_json"] = spec.params_json;
  if (spec.base_ivf) j["base_ivf"] = true;
  j["uuid"] = spec.uuid;
  j["created_at_micros"] = spec.created_at_micros;
  j["hnsw"] = {{"m", spec.hnsw.m},
               {"ef_construction", spec.hnsw.ef_construction},
               {"distance", DistanceTypeName(spec.hnsw.distance)}};
  j["fts"] = {{"base_tokenizer", spec.fts.base_tokenizer},
              {"language", spec.fts.language},
              {"with_position", spec.fts.with_position},
              {"max_token_length", spec.fts.max_token_length},
              {"lower_case", spec.fts.lower_case},
              {"stem", spec.fts.stem},
              {"remove_stop_words", spec.fts.remove_stop_words},
              {"ascii_folding", spec.fts.ascii_folding}};
  return j.dump();
}

Result<IndexSpec> IndexSpecFromJson(std::string_view json) {
  try {
    const nlohmann::json j = nlohmann::json::parse(json);
    IndexSpec s;
    s.name = j.at("name").get<std::string>();
    s.column = j.at("column").get<std::string>();
    const std::string kind = j.at("kind").get<std::string>();
    if (kind == "HNSW") {
      s.kind = IndexKind::kHnsw;
    } else if (kind == "BTREE") {
      s.kind = IndexKind::kBTree;
    } else if (kind == "FTS") {
      s.kind = IndexKind::kFts;
    } else {
      return Status::Corruption("index spec has unknown kind '" + kind + "'");
    }
    s.requested_type = j.at("requested_type").get<std::string>();
    s.params_json = j.at("params_json").get<std::string>();
    s.base_ivf = j.value("base_ivf", false);
    s.uuid = j.at("uuid").get<std::string>();
    s.created_at_micros = j.at("created_at_micros").get<int64_t>();
    const auto& h = j.at("hnsw");
    s.hnsw.m = h.at("m").get<int>();
    s.hnsw.ef_construction = h.at("ef_construction").get<int>();
    auto dist = ParseDistanceType(h.at("distance").get<std::string>());
    if (!dist.ok()) return Status::Corruption("index spec: " + dist.status().message());
    s.hnsw.distance = *dist;
    const auto& f = j.at("fts");
    s.fts.base_tokenizer = f.at("base_tokenizer").get<std::string>();
    s.fts.language = f.at("language").get<std::string>();
    s.fts.with_position = f.at("with_position").get<bool>();
    s.fts.max_token_length = f.at("max_token_length").get<int>();
    s.fts.lower_case = f.at("lower_case").get<bool>();
    s.fts.stem = f.at("stem").get<bool>();
    s.fts.remove_stop_words = f.at("remove_stop_words").get<bool>();
    s.fts.ascii_folding = f.at("ascii_folding").get<bool>();
    return s;
  } catch (const std::exception& e) {
    return Status::Corruption(std::string("index spec JSON is malformed: ") + e.what());
  }
}

Result<std::shared_ptr<ColumnIndex>> ColumnIndex::Make(const IndexSpec& spec,
                                                       const arrow::Schema& schema,
                                                       int64_t initial_capacity) {
  STRATA_RETURN_IF_ERROR(ValidateIndexSpec(spec, schema));
  std::shared_ptr<ColumnIndex> ci(new ColumnIndex());
  ci->spec_ = spec;
  ci->column_ = schema.GetFieldIndex(spec.column);
  const auto& type = schema.field(ci->column_)->type;
  switch (spec.kind) {
    case IndexKind::kHnsw: {
      STRATA_ASSIGN_OR_RETURN(ci->hnsw_, HnswIndex::Make(type->list_size(), spec.hnsw,
                                                         std::max<int64_t>(initial_capacity, 16)));
      break;
    }
    case IndexKind::kBTree: {
      STRATA_ASSIGN_OR_RETURN(ci->btree_, BTreeIndex::Make(type, spec.column));
      break;
    }
    case IndexKind::kFts: {
      STRATA_ASSIGN_OR_RETURN(ci->fts_, InvertedIndex::Make(spec.fts));
      break;
    }
  }
  return ci;
}

Result<std::shared_ptr<ColumnIndex>> ColumnIndex::MakeIvf(const IndexSpec& spec,
                                                          const arrow::Schema& schema,
                                                          std::unique_ptr<IvfIndex> ivf,
                                                          int64_t trained_rows) {
  STRATA_RETURN_IF_ERROR(ValidateIndexSpec(spec, schema));
  if (spec.kind != IndexKind::kHnsw || ivf == nullptr) {
    return Status::Invalid("index '" + spec.name + "': an IVF index needs a vector definition");
  }
  std::shared_ptr<ColumnIndex> ci(new ColumnIndex());
  ci->spec_ = spec;
  ci->column_ = schema.GetFieldIndex(spec.column);
  if (ivf->dim() != schema.field(ci->column_)->type->list_size()) {
    return Status::Invalid("index '" + spec.name + "': IVF dimension " +
                           std::to_string(ivf->dim()) + " differs from the column's");
  }
  ci->ivf_ = std::move(ivf);
  ci->ivf_trained_rows_ = trained_rows;
  return ci;
}

Result<std::shared_ptr<ColumnIndex>> ColumnIndex::Build(
    const IndexSpec& spec, const arrow::Schema& schema,
    const std::vector<arrow::RecordBatchPtr>& batches) {
  int64_t rows = 0;
  for (const auto& b : batches) rows += b->num_rows();
  STRATA_ASSIGN_OR_RETURN(auto ci, Make(spec, schema, rows));
  int64_t pos = 0;
  for (const auto& b : batches) {
    STRATA_RETURN_IF_ERROR(ci->IndexBatch(*b, pos));
    pos += b->num_rows();
  }
  return ci;
}

Status ColumnIndex::IndexBatch(const arrow::RecordBatch& batch, int64_t first_position) {
  if (column_ >= batch.num_columns()) {
    return Status::Invalid("index '" + spec_.name + "': batch has no column " +
                           std::to_string(column_));
  }
  arrow::Array col = batch.column(column_);
  switch (spec_.kind) {
    case IndexKind::kHnsw:
      if (ivf_ != nullptr) {
        STRATA_RETURN_IF_ERROR(ivf_->AddColumn(col, first_position).status());
      } else {
        STRATA_RETURN_IF_ERROR(hnsw_->AddColumn(col, first_position).status());
      }
      break;
    case IndexKind::kBTree:
      STRATA_RETURN_IF_ERROR(btree_->AddColumn(col, first_position));
      break;
    case IndexKind::kFts:
      STRATA_RETURN_IF_ERROR(fts_->AddColumn(col, first_position));
      break;
  }
  rows_indexed_.fetch_add(batch.num_rows(), std::memory_order_acq_rel);
  return Status::OK();
}

int64_t ColumnIndex::rows_indexed() const { return rows_indexed_.load(std::memory_order_acquire); }

int64_t ColumnIndex::memory_bytes() const {
  if (hnsw_) return hnsw_->memory_bytes();
  if (ivf_) return ivf_->memory_bytes();
  if (btree_) return btree_->memory_bytes();
  if (fts_) return fts_->memory_bytes();
  return 0;
}

Result<std::string> ColumnIndex::Serialize() const {
  std::string payload;
  uint32_t kind = static_cast<uint32_t>(spec_.kind);
  if (hnsw_) {
    STRATA_ASSIGN_OR_RETURN(payload, hnsw_->Serialize());
  } else if (ivf_) {
    kind = kIvfPayload;
    PutU32(&payload, static_cast<uint32_t>(ivf_trained_rows_ & 0xffffffff));
    PutU32(&payload, static_cast<uint32_t>(static_cast<uint64_t>(ivf_trained_rows_) >> 32));
    STRATA_ASSIGN_OR_RETURN(std::string bytes, ivf_->Serialize());
    payload += bytes;
  } else if (btree_) {
    STRATA_ASSIGN_OR_RETURN(payload, btree_->Serialize());
  } else if (fts_) {
    STRATA_ASSIGN_OR_RETURN(payload, fts_->Serialize());
  }
  const std::string spec = IndexSpecToJson(spec_);
  std::string out(kMagic, sizeof(kMagic));
  PutU32(&out, kind);
  PutU32(&out, static_cast<uint32_t>(spec.size()));
  out += spec;
  // Rows handed to IndexBatch (nulls included) = rows of the source it covers.
  const int64_t rows = rows_indexed();
  PutU32(&out, static_cast<uint32_t>(rows & 0xffffffff));
  PutU32(&out, static_cast<uint32_t>(static_cast<uint64_t>(rows) >> 32));
  out += payload;
  return out;
}

Result<std::shared_ptr<ColumnIndex>> ColumnIndex::Clone(const arrow::Schema& schema) const {
  STRATA_ASSIGN_OR_RETURN(std::string bytes, Serialize());
  return Deserialize(bytes, schema);
}

Result<std::shared_ptr<ColumnIndex>> ColumnIndex::Deserialize(std::string_view bytes,
                                                              const arrow::Schema& schema) {
  if (bytes.size() < sizeof(kMagic) + 16 || std::memcmp(bytes.data(), kMagic, 8) != 0) {
    return Status::Corruption("index file: bad magic or too short (" +
                              std::to_string(bytes.size()) + " bytes)");
  }
  const uint32_t kind = GetU32(bytes.data() + 8);
  const uint32_t spec_len = GetU32(bytes.data() + 12);
  if (kind > kIvfPayload || spec_len > bytes.size() - 24) {
    return Status::Corruption("index file: bad kind or spec length");
  }
  STRATA_ASSIGN_OR_RETURN(IndexSpec spec, IndexSpecFromJson(bytes.substr(16, spec_len)));
  const bool ivf = kind == kIvfPayload;
  if (static_cast<uint32_t>(spec.kind) != (ivf ? static_cast<uint32_t>(IndexKind::kHnsw) : kind)) {
    return Status::Corruption("index file: kind does not match its spec");
  }
  const char* p = bytes.data() + 16 + spec_len;
  const int64_t rows =
      static_cast<int64_t>(GetU32(p)) | (static_cast<int64_t>(GetU32(p + 4)) << 32);
  const std::string_view payload = bytes.substr(16 + spec_len + 8);
  const int c = schema.GetFieldIndex(spec.column);
  if (c < 0) {
    return Status::Invalid("index '" + spec.name + "': column '" + spec.column +
                           "' is not in the schema");
  }
  std::shared_ptr<ColumnIndex> ci(new ColumnIndex());
  ci->spec_ = std::move(spec);
  ci->column_ = c;
  switch (ci->spec_.kind) {
    case IndexKind::kHnsw: {
      if (ivf) {
        if (payload.size() < 8) return Status::Corruption("index file: IVF payload too short");
        ci->ivf_trained_rows_ = static_cast<int64_t>(GetU32(payload.data())) |
                                (static_cast<int64_t>(GetU32(payload.data() + 4)) << 32);
        STRATA_ASSIGN_OR_RETURN(ci->ivf_, IvfIndex::Deserialize(payload.substr(8)));
      } else {
        STRATA_ASSIGN_OR_RETURN(ci->hnsw_, HnswIndex::Deserialize(payload));
      }
      break;
    }
    case IndexKind::kBTree: {
      STRATA_ASSIGN_OR_RETURN(ci->btree_, BTreeIndex::Deserialize(payload));
      break;
    }
    case IndexKind::kFts: {
      STRATA_ASSIGN_OR_RETURN(ci->fts_, InvertedIndex::Deserialize(payload));
      break;
    }
  }
  ci->rows_indexed_.store(rows);
  return ci;
}

}  // namespace strata::index

#include "memtable/index_store.h"

namespace strata::memtable {

IndexStore::IndexStore(std::vector<std::string> key_column_names)
    : key_column_names_(std::move(key_column_names)) {
  if (!key_column_names_.empty()) pk_ = std::make_unique<PrimaryKeyIndex>();
}

std::vector<IndexDescription> IndexStore::describe() const {
  std::vector<IndexDescription> out;
  if (pk_) {
    IndexDescription d;
    d.kind = "PK";
    for (size_t i = 0; i < key_column_names_.size(); ++i) {
      if (i > 0) d.column += ",";
      d.column += key_column_names_[i];
    }
    d.name = "pk";
    d.rows_indexed = pk_->rows();
    out.push_back(std::move(d));
  }
  for (const auto& e : entries_) {
    IndexDescription d;
    d.kind = index::IndexKindName(e->index->spec().kind);
    d.column = e->index->spec().column;
    d.name = e->index->spec().name;
    d.rows_indexed = e->index->rows_indexed();
    out.push_back(std::move(d));
  }
  return out;
}

int64_t IndexStore::memory_bytes() const { return pk_ ? pk_->memory_bytes() : 0; }

int64_t IndexStore::entries_memory_bytes() const {
  int64_t n = 0;
  for (const auto& e : entries_) n += e->index->memory_bytes();
  return n;
}

}  // namespace strata::memtable

#include "sstable/sstable_reader.h"

#include "sstable/index_files.h"

#include <algorithm>

#include "arrow/ipc/reader.h"
#include "io/fetched_file.h"
#include "io/local_object_store.h"
#include "io/mapped_file.h"
#include "sstable/sstable_writer.h"

namespace strata::sstable {

Result<std::shared_ptr<const SSTableReader>> SSTableReader::Open(io::ObjectStore& store,
                                                                 const std::string& shard_prefix,
                                                                 const std::string& dir_name,
                                                                 bool load_indexes) {
  STRATA_ASSIGN_OR_RETURN(uint64_t generation, ParseSSTableDirName(dir_name));
  std::shared_ptr<SSTableReader> r(new SSTableReader());
  r->generation_ = generation;
  r->dir_name_ = dir_name;
  const std::string where = "SSTable " + shard_prefix + "/" + dir_name;
  auto get = [&](const char* file) -> Result<std::string> {
    auto bytes = store.Get(SSTableFileKey(shard_prefix, dir_name, file));
    if (!bytes.ok()) return bytes.status().WithContext(where + "/" + file);
    r->num_bytes_ += static_cast<int64_t>(bytes->size());
    return bytes;
  };

  // data.arrow is memory-mapped (io/mapped_file.h): in place on a local disk, as a local copy
  // made with ranged GETs on any other store (io/fetched_file.h), so --cache-bytes bounds it
  // either way. Uncompressed bodies (the base's fragments) are used in place, so their rows
  // live in the page cache, not the heap; compressed ones are decoded into the heap and the
  // mapping (and a copy) goes with the reader's buffer.
  arrow::BufferPtr data_buf;
  {
    const std::string key = SSTableFileKey(shard_prefix, dir_name, kDataFile);
    auto* local = dynamic_cast<io::LocalObjectStore*>(&store);
    auto mapped = local != nullptr ? io::MappedFile::Open(local->PathOf(key))
                                   : io::FetchedFiles::Global().FetchAndMap(store, key);
    if (!mapped.ok()) return mapped.status().WithContext(where + "/" + kDataFile);
    r->num_bytes_ += (*mapped)->size();
    data_buf = arrow::Buffer::Wrap((*mapped)->data(), (*mapped)->size(), *mapped);
  }
  auto read = arrow::ipc::ReadFile(std::move(data_buf));
  if (!read.ok()) return read.status().WithContext(where + "/" + kDataFile);
  r->schema_ = read->schema;
  r->batches_ = std::move(read->batches);
  for (const auto& b : r->batches_) {
    r->batch_starts_.push_back(r->num_rows_);
    r->num_rows_ += b->num_rows();
  }
  int t = r->schema_->GetFieldIndex(kTombstoneColumn);
  if (t >= 0 && r->schema_->field(t)->type->id() == arrow::TypeId::kBool) r->tombstone_column_ = t;

  STRATA_ASSIGN_OR_RETURN(std::string dv_bytes, get(kDeletionsFile));
  auto dv = format::DeletionVector::Deserialize(dv_bytes);
  if (!dv.ok()) return dv.status().WithContext(where + "/" + kDeletionsFile);
  r->deletions_ = std::move(*dv);

  STRATA_ASSIGN_OR_RETURN(std::string pk_bytes, get(kPkIndexFile));
  auto pk = PkIndex::Deserialize(pk_bytes);
  if (!pk.ok()) return pk.status().WithContext(where + "/" + kPkIndexFile);
  r->pk_index_ = std::move(*pk);

  STRATA_ASSIGN_OR_RETURN(std::string bloom_bytes, get(kBloomFilterFile));
  auto bloom = format::BloomFilter::Deserialize(bloom_bytes);
  if (!bloom.ok()) return bloom.status().WithContext(where + "/" + kBloomFilterFile);
  r->bloom_ = std::move(*bloom);

  auto sup_bytes = store.Get(SSTableFileKey(shard_prefix, dir_name, kSupersedesFile));
  if (sup_bytes.ok()) {
    r->num_bytes_ += static_cast<int64_t>(sup_bytes->size());
    auto sup = format::Supersedes::Deserialize(*sup_bytes);
    if (!sup.ok()) return sup.status().WithContext(where + "/" + kSupersedesFile);
    for (const auto& [gen, dv] : sup->generations) {
      if (gen >= generation) {
        return Status::Corruption(where + "/" + kSupersedesFile + ": lists generation " +
                                  std::to_string(gen) + ", not older than " +
                                  std::to_string(generation));
      }
    }
    r->supersedes_ = std::move(*sup);
  } else if (!sup_bytes.status().IsNotFound()) {
    return sup_bytes.status().WithContext(where + "/" + kSupersedesFile);
  }

  // Cross-file consistency: every position refers to a row; each row is either the newest
  // of its key (pk index) or superseded (deletion vector), never both.
  if (!r->deletions_.empty()) {
    auto rows = r->deletions_.ToVector();
    if (static_cast<int64_t>(rows.back()) >= r->num_rows_) {
      return Status::Corruption(where + ": deletion vector marks row " +
                                std::to_string(rows.back()) + " of " +
                                std::to_string(r->num_rows_));
    }
  }
  if (r->pk_index_.size() + static_cast<int64_t>(r->deletions_.cardinality()) != r->num_rows_) {
    return Status::Corruption(where + ": " + std::to_string(r->pk_index_.size()) + " keys + " +
                              std::to_string(r->deletions_.cardinality()) +
                              " superseded rows != " + std::to_string(r->num_rows_) + " rows");
  }
  for (int64_t i = 0; i < r->pk_index_.size(); ++i) {
    int64_t pos = r->pk_index_.position(i);
    if (pos >= r->num_rows_ || r->deletions_.Contains(static_cast<uint32_t>(pos))) {
      return Status::Corruption(where + ": pk index entry " + std::to_string(i) +
                                " points at row " + std::to_string(pos) +
                                ", which is missing or superseded");
    }
  }
  // Maintained indexes: a file that fails to load is skipped (the SSTable is then scanned).
  if (load_indexes) {
    STRATA_ASSIGN_OR_RETURN(r->indexes_,
                            LoadIndexFiles(store, shard_prefix, dir_name, *r->schema_));
  }
  return std::shared_ptr<const SSTableReader>(std::move(r));
}

std::vector<std::shared_ptr<const index::ColumnIndex>> SSTableReader::indexes() const {
  std::lock_guard<std::mutex> lock(indexes_mu_);
  return indexes_;
}

void SSTableReader::AttachIndex(std::shared_ptr<const index::ColumnIndex> index) const {
  std::lock_guard<std::mutex> lock(indexes_mu_);
  for (auto& i : indexes_) {
    if (i->spec().name == index->spec().name) {
      i = std::move(index);
      return;
    }
  }
  indexes_.push_back(std::move(index));
}

Result<std::shared_ptr<const SSTableReader>> SSTableReader::Open(io::ObjectStore& store,
                                                                 const std::string& shard_prefix,
                                                                 const format::SSTableEntry& entry,
                                                                 bool load_indexes) {
  STRATA_ASSIGN_OR_RETURN(auto r, Open(store, shard_prefix, entry.path(), load_indexes));
  if (r->generation() != entry.generation() || r->num_rows() != entry.rows()) {
    return Status::Corruption("SSTable " + shard_prefix + "/" + entry.path() +
                              ": manifest says generation " + std::to_string(entry.generation()) +
                              " with " + std::to_string(entry.rows()) + " rows, files hold " +
                              "generation " + std::to_string(r->generation()) + " with " +
                              std::to_string(r->num_rows()) + " rows");
  }
  return r;
}

std::optional<SSTableLookup> SSTableReader::Lookup(std::string_view key) const {
  if (!bloom_.MayContain(key)) return std::nullopt;
  auto pos = pk_index_.Find(key);
  if (!pos) return std::nullopt;
  return SSTableLookup{*pos, IsTombstone(*pos)};
}

std::pair<int64_t, int64_t> SSTableReader::Locate(int64_t position) const {
  if (position < 0 || position >= num_rows_) return {-1, -1};
  auto it = std::upper_bound(batch_starts_.begin(), batch_starts_.end(), position);
  int64_t b = static_cast<int64_t>(it - batch_starts_.begin()) - 1;
  return {b, position - batch_starts_[static_cast<size_t>(b)]};
}

bool SSTableReader::IsTombstone(int64_t position) const {
  if (tombstone_column_ < 0) return false;
  auto [b, row] = Locate(position);
  if (b < 0) return false;
  arrow::Array col = batches_[static_cast<size_t>(b)]->column(tombstone_column_);
  return col.IsValid(row) && col.BoolValue(row);
}

}  // namespace strata::sstable

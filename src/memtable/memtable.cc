#include "memtable/memtable.h"

#include <algorithm>
#include <mutex>

#include <spdlog/spdlog.h>

namespace strata::memtable {

int64_t ArrayDataBytes(const arrow::ArrayData& data) {
  int64_t n = 0;
  for (const auto& b : data.buffers) {
    if (b) n += b->size();
  }
  for (const auto& c : data.children) {
    if (c) n += ArrayDataBytes(*c);
  }
  return n;
}

namespace {

std::vector<std::string> KeyNames(const arrow::Schema& schema, const std::vector<int>& columns) {
  std::vector<std::string> names;
  for (int c : columns) names.push_back(schema.field(c)->name);
  return names;
}

}  // namespace

MemTable::MemTable(arrow::SchemaPtr schema) : MemTable(std::move(schema), {}, std::nullopt) {}

MemTable::MemTable(arrow::SchemaPtr schema, MemTableOptions options,
                   std::optional<format::KeyEncoder> encoder)
    : schema_(std::move(schema)),
      options_(std::move(options)),
      encoder_(std::move(encoder)),
      indexes_(encoder_ ? KeyNames(*schema_, options_.key_columns) : std::vector<std::string>{}) {}

Result<std::shared_ptr<MemTable>> MemTable::Make(arrow::SchemaPtr schema, MemTableOptions options) {
  if (schema == nullptr) return Status::Invalid("MemTable schema is null");
  std::optional<format::KeyEncoder> encoder;
  if (!options.key_columns.empty()) {
    STRATA_ASSIGN_OR_RETURN(auto e, format::KeyEncoder::Make(*schema, options.key_columns));
    encoder = std::move(e);
  }
  if (options.tombstone_column >= 0) {
    if (options.tombstone_column >= schema->num_fields() ||
        schema->field(options.tombstone_column)->type->id() != arrow::TypeId::kBool) {
      return Status::Invalid("MemTable tombstone column " +
                             std::to_string(options.tombstone_column) +
                             " is not a bool column of the schema");
    }
  }
  std::vector<std::shared_ptr<MemIndexEntry>> entries;
  for (const auto& spec : options.indexes) {
    // Small at first (grows by doubling): an empty MemTable should hold little memory.
    STRATA_ASSIGN_OR_RETURN(auto ci, index::ColumnIndex::Make(spec, *schema, 64));
    auto e = std::make_shared<MemIndexEntry>();
    e->index = std::move(ci);
    e->complete = true;
    entries.push_back(std::move(e));
  }
  std::shared_ptr<MemTable> mt(
      new MemTable(std::move(schema), std::move(options), std::move(encoder)));
  mt->indexes_.entries() = std::move(entries);
  mt->RefreshEntriesBytes();
  return mt;
}

void MemTable::RefreshEntriesBytes() const {
  int64_t n = 0;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    n = indexes_.entries_memory_bytes();
  }
  entries_bytes_.store(n, std::memory_order_release);
}

Result<RowRange> MemTable::Insert(const std::vector<arrow::RecordBatchPtr>& batches) {
  return Insert(batches, false);
}

void MemTable::Release(int64_t end) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  for (auto& p : pending_) {
    if (p.end == end) p.released = true;
    if (p.end >= end) break;
  }
  AdvanceLocked();
}

Result<RowRange> MemTable::Insert(const std::vector<arrow::RecordBatchPtr>& batches, bool hold) {
  int64_t rows = 0, bytes = 0;
  for (const auto& b : batches) {
    rows += b->num_rows();
    for (const auto& c : b->columns()) bytes += ArrayDataBytes(*c);
  }
  // Encode keys before taking the lock (pure work on immutable batches).
  std::vector<std::string> keys;
  if (encoder_) {
    keys.reserve(static_cast<size_t>(rows));
    for (const auto& b : batches) {
      for (int64_t i = 0; i < b->num_rows(); ++i) keys.push_back(encoder_->Encode(*b, i));
    }
  }
  std::unique_lock<std::shared_mutex> lock(mu_);
  if (frozen_) {
    return Status::Invalid("MemTable of generation " + std::to_string(options_.generation) +
                           " is frozen: it takes no more rows");
  }
  const int64_t first = num_rows_.load(std::memory_order_relaxed);
  int64_t start = first;
  for (const auto& b : batches) {
    if (b->num_rows() == 0) continue;
    batches_.push_back(b);
    batch_starts_.push_back(start);
    log_batches_->Append(b);
    log_starts_->Append(start);
    start += b->num_rows();
  }
  if (PrimaryKeyIndex* pk = indexes_.primary_key()) {
    int64_t pos = first;
    for (auto& k : keys) pk->Insert(std::move(k), pos++);
  }
  if (rows > 0) {
    if (!first_insert_) first_insert_ = std::chrono::steady_clock::now();
    pending_.push_back({first + rows, false, indexes_.entries().empty(), !hold, 0});
  }
  num_bytes_.fetch_add(bytes, std::memory_order_release);
  index_bytes_.store(indexes_.memory_bytes(), std::memory_order_release);
  num_rows_.store(first + rows, std::memory_order_release);
  return RowRange{first, first + rows};
}

void MemTable::AdvanceLocked() {
  while (!pending_.empty() && pending_.front().durable && pending_.front().indexed &&
         pending_.front().released) {
    const PendingRange& p = pending_.front();
    if (p.end > watermark_.load(std::memory_order_relaxed)) {
      watermark_.store(p.end, std::memory_order_release);
    }
    if (p.wal_position > last_wal_position_) last_wal_position_ = p.wal_position;
    pending_.pop_front();
  }
}

void MemTable::MarkDurable(int64_t end, uint64_t wal_position) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  for (auto& p : pending_) {
    if (p.end > end) break;
    p.durable = true;
    p.wal_position = std::max(p.wal_position, wal_position);
  }
  AdvanceLocked();
}

void MemTable::IndexRows(RowRange range) {
  if (range.end <= range.begin) return;
  std::vector<std::shared_ptr<MemIndexEntry>> entries;
  std::vector<std::pair<arrow::RecordBatchPtr, int64_t>> pieces;  // batch, first position
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    for (const auto& e : indexes_.entries()) {
      if (e->created_at_row <= range.begin) entries.push_back(e);
    }
    if (!entries.empty()) {
      auto it = std::upper_bound(batch_starts_.begin(), batch_starts_.end(), range.begin);
      for (size_t k = static_cast<size_t>(it - batch_starts_.begin()) - 1;
           k < batches_.size() && batch_starts_[k] < range.end; ++k) {
        pieces.emplace_back(batches_[k], batch_starts_[k]);
      }
    }
  }
  for (const auto& e : entries) {
    if (e->failed.load()) continue;
    for (const auto& [batch, start] : pieces) {
      Status st = e->index->IndexBatch(*batch, start);
      if (!st.ok()) {
        spdlog::error("MemTable gen {}: index '{}' failed; queries scan this MemTable: {}",
                      options_.generation, e->index->spec().name, st.ToString());
        e->failed = true;
        e->complete = false;
        break;
      }
    }
  }
  if (!entries.empty()) RefreshEntriesBytes();
  std::unique_lock<std::shared_mutex> lock(mu_);
  for (auto& p : pending_) {
    if (p.end == range.end) {
      p.indexed = true;
      break;
    }
  }
  AdvanceLocked();
}

Result<RowRange> MemTable::InsertVisible(const std::vector<arrow::RecordBatchPtr>& batches,
                                         uint64_t wal_position) {
  STRATA_ASSIGN_OR_RETURN(RowRange r, Insert(batches));
  IndexRows(r);
  MarkDurable(r.end, wal_position);
  return r;
}

Result<std::shared_ptr<MemIndexEntry>> MemTable::AddIndex(const index::IndexSpec& spec) {
  STRATA_ASSIGN_OR_RETURN(
      auto ci, index::ColumnIndex::Make(spec, *schema_, std::max<int64_t>(num_rows(), 64)));
  auto e = std::make_shared<MemIndexEntry>();
  e->index = std::move(ci);
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    auto& entries = indexes_.entries();
    entries.erase(std::remove_if(entries.begin(), entries.end(),
                                 [&](const auto& x) { return x->index->spec().name == spec.name; }),
                  entries.end());
    e->created_at_row = num_rows_.load(std::memory_order_relaxed);
    e->complete = e->created_at_row == 0;
    entries.push_back(e);
  }
  RefreshEntriesBytes();
  return e;
}

Status MemTable::Backfill(const std::shared_ptr<MemIndexEntry>& entry) {
  std::vector<std::pair<arrow::RecordBatchPtr, int64_t>> pieces;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    const auto& entries = indexes_.entries();
    if (std::find(entries.begin(), entries.end(), entry) == entries.end()) return Status::OK();
    for (size_t k = 0; k < batches_.size() && batch_starts_[k] < entry->created_at_row; ++k) {
      pieces.emplace_back(batches_[k], batch_starts_[k]);
    }
  }
  for (const auto& [batch, start] : pieces) {
    Status st = entry->index->IndexBatch(*batch, start);
    if (!st.ok()) {
      entry->failed = true;
      RefreshEntriesBytes();
      return st;
    }
  }
  entry->complete = !entry->failed.load();
  RefreshEntriesBytes();
  return Status::OK();
}

void MemTable::DropIndex(const std::string& name) {
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    auto& entries = indexes_.entries();
    entries.erase(std::remove_if(entries.begin(), entries.end(),
                                 [&](const auto& x) { return x->index->spec().name == name; }),
                  entries.end());
  }
  RefreshEntriesBytes();
}

std::vector<std::shared_ptr<const index::ColumnIndex>> MemTable::CompleteIndexes() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<std::shared_ptr<const index::ColumnIndex>> out;
  for (const auto& e : indexes_.entries()) {
    if (e->complete.load() && !e->failed.load()) out.push_back(e->index);
  }
  return out;
}

std::vector<std::shared_ptr<MemIndexEntry>> MemTable::IndexEntries() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return indexes_.entries();
}

int64_t MemTable::Append(const std::vector<arrow::RecordBatchPtr>& batches, uint64_t wal_position) {
  auto r = InsertVisible(batches, wal_position);
  return r.ok() ? r->begin : -1;
}

int64_t MemTable::TruncateInvisible() {
  std::unique_lock<std::shared_mutex> lock(mu_);
  const int64_t w = watermark_.load(std::memory_order_relaxed);
  const int64_t n = num_rows_.load(std::memory_order_relaxed);
  if (n <= w) return 0;
  int64_t bytes = 0;
  while (!batch_starts_.empty() && batch_starts_.back() >= w) {
    for (const auto& c : batches_.back()->columns()) bytes += ArrayDataBytes(*c);
    batches_.pop_back();
    batch_starts_.pop_back();
  }
  // Every Insert is covered by one MarkDurable, so the watermark sits on a batch boundary;
  // should it not, the partly visible batch is kept whole.
  const int64_t kept = batches_.empty() ? 0 : batch_starts_.back() + batches_.back()->num_rows();
  log_batches_->Truncate(batches_.size());
  log_starts_->Truncate(batches_.size());
  if (PrimaryKeyIndex* pk = indexes_.primary_key()) pk->TruncateTo(kept);
  pending_.clear();
  // Maintained indexes cannot remove rows: rebuild them over the kept rows, so positions
  // reused by later Inserts are not indexed twice.
  for (auto& e : indexes_.entries()) {
    auto rebuilt = index::ColumnIndex::Build(e->index->spec(), *schema_, batches_);
    auto fresh = std::make_shared<MemIndexEntry>();
    if (rebuilt.ok()) {
      fresh->index = std::move(*rebuilt);
      fresh->complete = true;
    } else {
      fresh->index = e->index;
      fresh->failed = true;
    }
    e = std::move(fresh);
  }
  num_bytes_.fetch_sub(bytes, std::memory_order_release);
  index_bytes_.store(indexes_.memory_bytes(), std::memory_order_release);
  num_rows_.store(kept, std::memory_order_release);
  if (kept == 0) first_insert_.reset();
  return n - kept;
}

void MemTable::Freeze() {
  std::unique_lock<std::shared_mutex> lock(mu_);
  frozen_ = true;
}

bool MemTable::frozen() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return frozen_;
}

MemTableSnapshot MemTable::Snapshot() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  MemTableSnapshot s;
  const int64_t w = watermark_.load(std::memory_order_acquire);
  for (size_t k = 0; k < batches_.size() && batch_starts_[k] < w; ++k) {
    const auto& b = batches_[k];
    if (batch_starts_[k] + b->num_rows() <= w) {
      s.batches.push_back(b);
    } else {
      s.batches.push_back(b->Slice(0, w - batch_starts_[k]));
    }
    for (const auto& c : s.batches.back()->columns()) s.num_bytes += ArrayDataBytes(*c);
  }
  s.num_rows = w;
  s.last_wal_position = last_wal_position_;
  s.generation = options_.generation;
  s.frozen = frozen_;
  return s;
}

MemTableView MemTable::View() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  MemTableView v;
  const int64_t w = watermark_.load(std::memory_order_acquire);
  v.num_rows = w;
  v.last_wal_position = last_wal_position_;
  // Batches starting below the watermark.
  const size_t n = static_cast<size_t>(
      std::lower_bound(batch_starts_.begin(), batch_starts_.end(), w) - batch_starts_.begin());
  if (n > 0 && batch_starts_[n - 1] + batches_[n - 1]->num_rows() > w) {
    // The watermark inside a batch (never expected: every Insert is one range): own a copy
    // whose last batch is sliced at the watermark.
    for (size_t k = 0; k < n; ++k) {
      v.batches.push_back(k + 1 < n ? batches_[k] : batches_[k]->Slice(0, w - batch_starts_[k]));
      v.batch_starts.push_back(batch_starts_[k]);
    }
    return v;
  }
  v.batches = LogView<arrow::RecordBatchPtr>(log_batches_, n);
  v.batch_starts = LogView<int64_t>(log_starts_, n);
  return v;
}

std::optional<int64_t> MemTable::Lookup(std::string_view key) const {
  return Lookup(key, watermark_.load(std::memory_order_acquire));
}

std::optional<int64_t> MemTable::Lookup(std::string_view key, int64_t watermark) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  const PrimaryKeyIndex* pk = indexes_.primary_key();
  if (pk == nullptr) return std::nullopt;
  return pk->Lookup(key, std::min(watermark, watermark_.load(std::memory_order_acquire)));
}

std::optional<int64_t> MemTable::LookupBefore(std::string_view key, int64_t limit) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  const PrimaryKeyIndex* pk = indexes_.primary_key();
  if (pk == nullptr) return std::nullopt;
  return pk->Lookup(key, limit);
}

std::vector<int64_t> MemTable::SupersededRows(int64_t watermark) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  const PrimaryKeyIndex* pk = indexes_.primary_key();
  if (pk == nullptr) return {};
  return pk->SupersededRows(std::min(watermark, watermark_.load(std::memory_order_acquire)));
}

std::vector<std::string> MemTable::RowKeys(int64_t begin, int64_t end) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  const PrimaryKeyIndex* pk = indexes_.primary_key();
  std::vector<std::string> out;
  if (pk == nullptr) return out;
  begin = std::max<int64_t>(begin, 0);
  end = std::min(end, pk->rows());
  for (int64_t r = begin; r < end; ++r) out.push_back(pk->key(r));
  return out;
}

bool MemTable::IsTombstone(int64_t position) const {
  if (options_.tombstone_column < 0) return false;
  auto [k, i] = Locate(position);
  if (k < 0) return false;
  arrow::RecordBatchPtr b;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    b = batches_[static_cast<size_t>(k)];
  }
  arrow::Array col = b->column(options_.tombstone_column);
  return col.IsValid(i) && col.BoolValue(i);
}

std::pair<int64_t, int64_t> MemTable::Locate(int64_t position) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  if (position < 0 || position >= num_rows_.load(std::memory_order_acquire)) return {-1, -1};
  auto it = std::upper_bound(batch_starts_.begin(), batch_starts_.end(), position);
  int64_t k = (it - batch_starts_.begin()) - 1;
  return {k, position - batch_starts_[static_cast<size_t>(k)]};
}

std::vector<IndexDescription> MemTable::DescribeIndexes() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return indexes_.describe();
}

int64_t MemTable::num_batches() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return static_cast<int64_t>(batches_.size());
}

uint64_t MemTable::last_wal_position() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return last_wal_position_;
}

std::chrono::steady_clock::duration MemTable::age() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  if (!first_insert_) return std::chrono::steady_clock::duration::zero();
  return std::chrono::steady_clock::now() - *first_insert_;
}

}  // namespace strata::memtable

#include "index/scalar/btree_index.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "format/key_encoding.h"
#include "index/scalar/btree_index_impl.h"

namespace strata::index {
namespace {

using btree_detail::kNullKey;

template <typename T>
std::string S(T v) {
  return std::to_string(v);
}

}  // namespace

BTreeIndex::BTreeIndex(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BTreeIndex::~BTreeIndex() = default;

Result<std::unique_ptr<BTreeIndex>> BTreeIndex::Make(arrow::DataTypePtr type,
                                                     const std::string& column_name) {
  if (type == nullptr) {
    return Status::Invalid("btree index on column '" + column_name + "': no type given");
  }
  Status st = format::ValidateKeyType(*type, column_name);
  if (!st.ok()) {
    return Status::NotSupported("btree index on column '" + column_name + "': type " +
                                type->ToString() +
                                " cannot be indexed; a BTree needs a scalar type (integer, "
                                "float, bool, string, binary, date/time, decimal)");
  }
  auto impl = std::make_unique<Impl>();
  impl->type = std::move(type);
  impl->column_name = column_name;
  return std::unique_ptr<BTreeIndex>(new BTreeIndex(std::move(impl)));
}

const arrow::DataTypePtr& BTreeIndex::type() const { return impl_->type; }
const std::string& BTreeIndex::column_name() const { return impl_->column_name; }

Status BTreeIndex::AddColumn(const arrow::Array& column, int64_t first_position) {
  if (!column.type()->Equals(*impl_->type)) {
    return Status::Invalid("btree index on column '" + impl_->column_name + "' has type " +
                           impl_->type->ToString() + " but the column added has type " +
                           column.type()->ToString());
  }
  const int64_t n = column.length();
  if (first_position < 0 || first_position > INT64_MAX - n) {
    return Status::Invalid("btree index on column '" + impl_->column_name + "': first_position " +
                           S(first_position) + " with " + S(n) +
                           " rows must be >= 0 and end at most at " + S(INT64_MAX));
  }
  // Encode outside the lock: readers are blocked only while the map changes.
  std::vector<std::string> keys(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    STRATA_RETURN_IF_ERROR(format::AppendValueComponent(column, i, &keys[static_cast<size_t>(i)]));
  }
  std::unique_lock lock(impl_->mu_);
  for (int64_t i = 0; i < n; ++i) {
    impl_->Insert(std::move(keys[static_cast<size_t>(i)]), first_position + i);
  }
  return Status::OK();
}

std::vector<int64_t> BTreeIndex::Equal(std::string_view key) const {
  if (key == kNullKey) return {};
  std::shared_lock lock(impl_->mu_);
  auto it = impl_->map.find(key);
  if (it == impl_->map.end()) return {};
  return it->second;
}

std::vector<int64_t> BTreeIndex::NotEqual(std::string_view key) const {
  std::shared_lock lock(impl_->mu_);
  return Impl::Collect(impl_->map.begin(), impl_->map.end(), key, true);
}

std::vector<int64_t> BTreeIndex::Range(const std::optional<KeyBound>& lower,
                                       const std::optional<KeyBound>& upper) const {
  std::shared_lock lock(impl_->mu_);
  const auto [first, last] = impl_->Bounds(lower, upper);
  if (first == last) return {};
  return Impl::Collect(first, last, {}, false);
}

std::vector<int64_t> BTreeIndex::In(const std::vector<std::string>& keys) const {
  std::vector<std::string_view> sorted(keys.begin(), keys.end());
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::vector<int64_t> out;
  std::vector<size_t> runs;
  std::shared_lock lock(impl_->mu_);
  for (std::string_view k : sorted) {
    if (k == kNullKey) continue;
    auto it = impl_->map.find(k);
    if (it == impl_->map.end() || it->second.empty()) continue;
    runs.push_back(out.size());
    out.insert(out.end(), it->second.begin(), it->second.end());
  }
  lock.unlock();
  if (runs.size() > 1) MergeSortedRuns(&out, std::move(runs));
  return out;
}

int64_t BTreeIndex::CountRange(const std::optional<KeyBound>& lower,
                               const std::optional<KeyBound>& upper, int64_t limit) const {
  std::shared_lock lock(impl_->mu_);
  const auto [first, last] = impl_->Bounds(lower, upper);
  int64_t n = 0;
  for (auto it = first; it != last && n < limit; ++it) {
    if (it->first != kNullKey) n += static_cast<int64_t>(it->second.size());
  }
  return n;
}

int64_t BTreeIndex::CountNotEqual(std::string_view key, int64_t limit) const {
  std::shared_lock lock(impl_->mu_);
  int64_t n = 0;
  for (auto it = impl_->map.begin(); it != impl_->map.end() && n < limit; ++it) {
    if (it->first != kNullKey && it->first != key) n += static_cast<int64_t>(it->second.size());
  }
  return n;
}

int64_t BTreeIndex::CountIn(const std::vector<std::string>& keys) const {
  std::vector<std::string_view> sorted(keys.begin(), keys.end());
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  int64_t n = 0;
  std::shared_lock lock(impl_->mu_);
  for (std::string_view k : sorted) {
    if (k == kNullKey) continue;
    auto it = impl_->map.find(k);
    if (it != impl_->map.end()) n += static_cast<int64_t>(it->second.size());
  }
  return n;
}

int64_t BTreeIndex::CountIsNull() const {
  std::shared_lock lock(impl_->mu_);
  auto it = impl_->map.find(kNullKey);
  return it == impl_->map.end() ? 0 : static_cast<int64_t>(it->second.size());
}

std::vector<int64_t> BTreeIndex::IsNull() const {
  std::shared_lock lock(impl_->mu_);
  auto it = impl_->map.find(kNullKey);
  if (it == impl_->map.end()) return {};
  return it->second;
}

int64_t BTreeIndex::size() const {
  std::shared_lock lock(impl_->mu_);
  return impl_->entries;
}

int64_t BTreeIndex::memory_bytes() const {
  std::shared_lock lock(impl_->mu_);
  return static_cast<int64_t>(sizeof(Impl)) + impl_->memory_bytes;
}

}  // namespace strata::index

#include "shard/tier_merge.h"

#include <unordered_set>

#include "arrow/compute/filter.h"
#include "format/key_encoding.h"

namespace strata::shard {
namespace {

/// One batch of some source, with its keep bitmap.
struct Piece {
  arrow::RecordBatchPtr batch;
  std::vector<uint8_t> keep;  // bitmap, LSB order
  int64_t kept = 0;
  size_t source = 0;  // index into the output's sources
};

void SetBit(std::vector<uint8_t>& bits, int64_t i) {
  bits[static_cast<size_t>(i >> 3)] |= static_cast<uint8_t>(1u << (i & 7));
}

bool IsTombstoneRow(const arrow::Array& col, int64_t i) {
  return col.IsValid(i) && col.BoolValue(i);
}

}  // namespace

Result<ShardSnapshot> MergeTiers(const memtable::StorageLayout& layout,
                                 const TierSources& sources) {
  // Pieces oldest first: SSTables ascending, then MemTables ascending.
  std::vector<Piece> pieces;
  std::vector<SourceView> views;
  uint64_t wal_position = sources.base_wal_position;
  auto add_source = [&](SourceView v, const std::vector<arrow::RecordBatchPtr>& batches) {
    for (const auto& b : batches) {
      if (b->num_rows() == 0) continue;
      pieces.push_back({b, {}, 0, views.size()});
      v.batches.push_back(b);
      v.batch_starts.push_back(v.num_rows);
      v.num_rows += b->num_rows();
    }
    views.push_back(std::move(v));
  };
  for (const auto& t : sources.sstables) {
    SourceView v;
    v.name = "sstable gen " + std::to_string(t->generation());
    v.generation = t->generation();
    if (layout.rowid_column < 0) {
      v.key_columns = layout.key_columns;
      v.find_key = [t](std::string_view key) -> std::optional<int64_t> {
        auto hit = t->Lookup(key);
        if (!hit) return std::nullopt;
        return hit->position;
      };
    }
    add_source(std::move(v), t->batches());
  }
  for (size_t i = 0; i < sources.memtables.size(); ++i) {
    const auto& m = sources.memtables[i];
    wal_position = std::max(wal_position, m.last_wal_position);
    SourceView v;
    v.memtable = true;
    v.generation = m.generation;
    v.name = "memtable gen " + std::to_string(m.generation) +
             (i + 1 == sources.memtables.size() ? " (active)" : " (frozen)");
    if (layout.rowid_column < 0 && i < sources.memtable_handles.size() &&
        sources.memtable_handles[i] != nullptr) {
      v.key_columns = layout.key_columns;
      // The MemTable keeps growing: read its index at this snapshot's watermark.
      v.find_key = [mt = sources.memtable_handles[i],
                    watermark = m.num_rows](std::string_view key) -> std::optional<int64_t> {
        return mt->Lookup(key, watermark);
      };
    } else if (layout.rowid_column < 0) {
      v.key_columns = layout.key_columns;
    }
    add_source(std::move(v), m.batches);
  }
  const int ts = layout.tombstone_column;
  auto init_keep = [](Piece& p) {
    p.keep.assign(static_cast<size_t>((p.batch->num_rows() + 7) / 8), 0);
  };

  {
    // Newest first, the first sighting of a key decides: the declared primary key, or the
    // hidden `_rowid` of tables without one (update/ and merge_insert/ write new versions
    // that keep the row's `_rowid`, and tombstones name it).
    const arrow::Schema& storage = *layout.storage_schema;
    const bool int_key =
        layout.key_columns.size() == 1 &&
        (storage.field(layout.key_columns[0])->type->id() == arrow::TypeId::kInt64 ||
         storage.field(layout.key_columns[0])->type->id() == arrow::TypeId::kUInt64);
    std::unordered_set<uint64_t> seen_int;
    std::unordered_set<std::string> seen;
    if (int_key) {
      size_t total = 0;
      for (const auto& p : pieces) total += static_cast<size_t>(p.batch->num_rows());
      seen_int.reserve(total);
    }
    STRATA_ASSIGN_OR_RETURN(auto encoder, format::KeyEncoder::Make(storage, layout.key_columns));
    std::string key;
    for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) {
      Piece& p = *it;
      init_keep(p);
      arrow::Array t = p.batch->column(ts);
      arrow::Array k0 = p.batch->column(layout.key_columns[0]);
      for (int64_t i = p.batch->num_rows() - 1; i >= 0; --i) {
        bool first;
        if (int_key && k0.IsValid(i)) {
          first = seen_int.insert(k0.Value<uint64_t>(i)).second;
        } else {
          key.clear();
          encoder.AppendKey(*p.batch, i, &key);
          first = seen.insert(key).second;
        }
        if (!first || IsTombstoneRow(t, i)) continue;
        SetBit(p.keep, i);
        ++p.kept;
      }
    }
  }

  ShardSnapshot out;
  out.schema = layout.user_schema;
  out.last_wal_position = wal_position;
  for (const auto& p : pieces) {
    SourceView& v = views[p.source];
    v.live.push_back(p.keep);
    v.live_rows += p.kept;
  }
  out.sources = std::move(views);
  const int user_cols = layout.user_schema->num_fields();
  for (auto& p : pieces) {
    if (p.kept == 0) continue;
    arrow::RecordBatchPtr live = p.batch;
    if (p.kept != p.batch->num_rows()) {
      STRATA_ASSIGN_OR_RETURN(live, arrow::compute::FilterBatch(*p.batch, p.keep.data(), 0));
    }
    std::vector<arrow::ArrayDataPtr> cols(live->columns().begin(),
                                          live->columns().begin() + user_cols);
    out.batches.push_back(
        std::make_shared<arrow::RecordBatch>(layout.user_schema, live->num_rows(), cols));
    if (layout.rowid_column >= 0) out.row_ids.push_back(live->column_data(layout.rowid_column));
    out.storage_batches.push_back(std::move(live));
    out.num_rows += p.kept;
  }
  return out;
}

}  // namespace strata::shard

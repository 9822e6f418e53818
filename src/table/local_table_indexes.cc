// LocalTable's index definitions (DESIGN.md §7): create and drop commit a manifest with the
// changed definition list (a new table version) and hand it to the base and the shard writer;
// ListIndexes reports each definition's progress and what the base built for it. Locking as
// local_table.h says (mu_ exclusive for changes, shared for the list).
#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/wall_clock.h"
#include "format/ids.h"
#include "index/column_index.h"
#include "table/local_table.h"

namespace strata::table {

Status LocalTable::CommitIndexSpecsLocked(const std::vector<index::IndexSpec>& specs) {
  format::TableManifest m = manifest_;
  m.set_version(manifest_.version() + 1);
  m.clear_index_specs_json();
  for (const auto& spec : specs) m.add_index_specs_json(index::IndexSpecToJson(spec));
  m.set_created_at_micros(WallClockMicros());
  // An index change is a new table version (PROTOCOL.md §5.4: every write returns a higher
  // one): version = base_version + WAL position, so bump base_version by one. Writers hold
  // mu_ shared while they compute their version, so none straddles this commit.
  m.set_base_version(manifest_.base_version() + 1);
  STRATA_RETURN_IF_ERROR(CommitNextManifest(m, "index change of table '" + name_ + "'"));
  manifest_ = std::move(m);
  NoteCommit();
  base_->SetIndexes(specs);
  Status applied;
  for (const auto& w : shards_) {
    if (applied.ok()) applied = w->SetIndexes(specs);
  }
  if (!applied.ok()) {
    // The manifest holds the definitions: a reopen applies them.
    spdlog::error("table '{}': index definitions committed but not applied: {}", name_,
                  applied.ToString());
  }
  return Status::OK();
}

Result<index::IndexSpec> LocalTable::CreateIndex(index::IndexSpec spec) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  STRATA_RETURN_IF_ERROR(CheckNotDropped());
  STRATA_RETURN_IF_ERROR(index::ValidateIndexSpec(spec, *schema_));
  spec.uuid = format::RandomUuid();
  spec.created_at_micros = WallClockMicros();
  std::vector<index::IndexSpec> specs;
  for (const auto& j : manifest_.index_specs_json()) {
    STRATA_ASSIGN_OR_RETURN(auto s, index::IndexSpecFromJson(j));
    if (s.name != spec.name) specs.push_back(std::move(s));
  }
  specs.push_back(spec);
  STRATA_RETURN_IF_ERROR(CommitIndexSpecsLocked(specs));
  return spec;
}

Status LocalTable::DropIndex(const std::string& name) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  STRATA_RETURN_IF_ERROR(CheckNotDropped());
  std::vector<index::IndexSpec> specs;
  bool found = false;
  for (const auto& j : manifest_.index_specs_json()) {
    STRATA_ASSIGN_OR_RETURN(auto s, index::IndexSpecFromJson(j));
    if (s.name == name) {
      found = true;
    } else {
      specs.push_back(std::move(s));
    }
  }
  if (!found) {
    return Status::NotFound("index '" + name + "' was not found on table '" + name_ + "'");
  }
  return CommitIndexSpecsLocked(specs);
}

std::vector<shard::IndexProgress> LocalTable::IndexProgressLocked() const {
  if (!SharedBaseLocked()) return shards_[0]->IndexProgressAll();
  // Several shards leave the shared base out of their own progress: sum theirs, then count
  // the base's live rows as indexed when its index of the definition covers every base row.
  std::vector<shard::IndexProgress> out;
  for (const auto& w : shards_) {
    for (auto& p : w->IndexProgressAll()) {
      auto it = std::find_if(out.begin(), out.end(), [&](const shard::IndexProgress& o) {
        return o.spec.name == p.spec.name && o.spec.uuid == p.spec.uuid;
      });
      if (it == out.end()) {
        out.push_back(std::move(p));
        continue;
      }
      it->num_indexed_rows += p.num_indexed_rows;
      it->num_unindexed_rows += p.num_unindexed_rows;
      it->size_bytes += p.size_bytes;
    }
  }
  const int64_t base_rows = base_->source()->rows();
  const int64_t base_live = base_->stats().live_rows;
  for (auto& p : out) {
    bool complete = false;
    for (const auto& idx : base_->source()->indexes()) {
      if (idx->spec().name == p.spec.name && idx->spec().uuid == p.spec.uuid &&
          idx->rows_indexed() >= base_rows) {
        complete = true;
        p.size_bytes += idx->memory_bytes();
      }
    }
    (complete ? p.num_indexed_rows : p.num_unindexed_rows) += base_live;
  }
  return out;
}

std::vector<IndexStatus> LocalTable::ListIndexes() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<IndexStatus> out;
  if (dropped_) return out;
  for (auto& p : IndexProgressLocked()) {
    IndexStatus st;
    st.spec = std::move(p.spec);
    st.num_indexed_rows = p.num_indexed_rows;
    st.num_unindexed_rows = p.num_unindexed_rows;
    st.size_bytes = p.size_bytes;
    for (const auto& idx : base_->source()->indexes()) {
      if (idx->spec().name != st.spec.name || idx->spec().uuid != st.spec.uuid) continue;
      BaseIndexBuilt b;
      b.rows = idx->rows_indexed();
      b.memory_bytes = idx->memory_bytes();
      if (const index::IvfIndex* ivf = idx->ivf()) {
        const index::IvfParams& ip = ivf->params();
        b.type = index::IvfTypeName(ip.type);
        b.num_partitions = ip.num_partitions;
        b.num_sub_vectors = ip.type == index::IvfType::kIvfPq ? ip.num_sub_vectors : 0;
        b.num_bits = ip.type == index::IvfType::kIvfPq ? ip.nbits : 0;
        b.trained_rows = idx->ivf_trained_rows();
      } else if (const index::HnswIndex* h = idx->hnsw()) {
        b.type = "HNSW";
        b.m = h->params().m;
        b.ef_construction = h->params().ef_construction;
      } else {
        b.type = index::IndexKindName(idx->spec().kind);
      }
      st.base = std::move(b);
    }
    out.push_back(std::move(st));
  }
  return out;
}

}  // namespace strata::table

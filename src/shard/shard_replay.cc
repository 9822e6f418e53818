// ShardWriter's WAL replay at open (shard_writer.h; DESIGN.md §4 rule 9): entries into
// MemTables split at their recorded generations, parts of multi-shard writes only when their
// write committed (ShardWriterOptions::txn_committed), and the torn-tail / tip checks.
#include <spdlog/spdlog.h>

#include "shard/batch_conformance.h"
#include "shard/shard_writer_impl.h"
#include "wal/wal_entry.h"
#include "wal/wal_reader.h"
#include "wal/wal_writer.h"

namespace strata::shard {

Status ShardWriter::Impl::Replay(uint64_t start) {
  // Entries go into MemTables split at their recorded generations. A generation at or below
  // an already published one is in an SSTable (its entries precede replay_after only when the
  // flush committed; tolerated and skipped for safety).
  GenPtr cur;
  uint64_t cur_gen = 0;
  const uint64_t published_below = manifest.current_generation();
  wal::WalReplaySummary summary;
  for (int attempt = 0;; ++attempt) {
    auto visit = [&](wal::WalEntry&& entry) -> Status {
      if (entry.writer_epoch > epoch) {
        return Status::Fenced("WAL entry " + std::to_string(entry.position) + " of '" +
                              shard_prefix + "' has writer_epoch " +
                              std::to_string(entry.writer_epoch) + " above ours (" +
                              std::to_string(epoch) + ")");
      }
      if (entry.fence_sentinel || entry.num_rows == 0) return Status::OK();
      if (!entry.txn.empty()) {
        // A part of a multi-shard write counts only when the write committed.
        if (!options.txn_committed) {
          return Status::Corruption("WAL entry " + std::to_string(entry.position) + " of '" +
                                    shard_prefix + "' is a part of multi-shard write '" +
                                    entry.txn.id + "' and no transaction log was given");
        }
        auto committed = options.txn_committed(entry.txn.id, entry.position);
        if (!committed.ok()) {
          return committed.status().WithContext("WAL entry " + std::to_string(entry.position) +
                                                " of '" + shard_prefix + "'");
        }
        if (!*committed) {
          spdlog::info(
              "WAL entry {} of '{}' ({} rows): multi-shard write '{}' did not commit; "
              "skipped",
              entry.position, shard_prefix, entry.num_rows, entry.txn.id);
          return Status::OK();
        }
      }
      if (!entry.schema->Equals(*layout.storage_schema)) {
        return Status::Corruption("WAL entry " + std::to_string(entry.position) + " of '" +
                                  shard_prefix + "' has schema " + entry.schema->ToString() +
                                  ", the shard stores " + layout.storage_schema->ToString());
      }
      if (entry.generation < published_below) {
        spdlog::warn("WAL entry {} of '{}' has published generation {}; skipped", entry.position,
                     shard_prefix, entry.generation);
        return Status::OK();
      }
      if (cur == nullptr || entry.generation != cur_gen) {
        if (cur != nullptr && entry.generation < cur_gen) {
          return Status::Corruption("WAL entry " + std::to_string(entry.position) + " of '" +
                                    shard_prefix + "' has generation " +
                                    std::to_string(entry.generation) + " after generation " +
                                    std::to_string(cur_gen));
        }
        if (cur != nullptr) {
          cur->mt->Freeze();
          frozen.push_back(cur);
        }
        // Replayed rows are visible at once; their indexes are built afterwards, in the
        // background (queries scan the MemTable exactly meanwhile), so a restart answers
        // its first query after reading the WAL, not after rebuilding an HNSW row by row.
        STRATA_ASSIGN_OR_RETURN(cur, NewGen(entry.generation, /*with_indexes=*/false));
        cur_gen = entry.generation;
      }
      auto conformed = ConformBatches(layout.storage_schema, entry.batches);
      if (!conformed.ok()) {
        return Status::Corruption("WAL entry " + std::to_string(entry.position) + " of '" +
                                  shard_prefix + "': " + conformed.status().message());
      }
      STRATA_ASSIGN_OR_RETURN(auto range, cur->mt->InsertVisible(*conformed, entry.position));
      // No reader exists yet: marking after the rows became visible is safe here.
      MarkRows(*cur, *conformed, range.begin, range.end - range.begin);
      cur->rows += range.end - range.begin;
      cur->last_wal_position.store(entry.position);
      if (layout.rowid_column >= 0) {
        for (const auto& b : *conformed) {
          arrow::Array ids = b->column(layout.rowid_column);
          for (int64_t i = 0; i < ids.length(); ++i) {
            next_rowid = std::max(next_rowid, ids.Value<uint64_t>(i) + 1);
          }
        }
      }
      return Status::OK();
    };
    STRATA_ASSIGN_OR_RETURN(summary, wal::WalReader::Replay(*store, shard_prefix, start, visit));
    if (!summary.torn_position && summary.max_position_present > summary.last_position) {
      return Status::Corruption("WAL of '" + shard_prefix + "' has a gap: position " +
                                std::to_string(summary.last_position + 1) +
                                " is missing but entries up to " +
                                std::to_string(summary.max_position_present) + " exist");
    }
    if (summary.entries > 0 || summary.torn_position) {
      spdlog::info("replayed {} WAL entries ({} rows) of '{}'{}", summary.entries, summary.rows,
                   shard_prefix,
                   summary.torn_position
                       ? " (torn tail from position " + std::to_string(*summary.torn_position) + ")"
                       : std::string());
    }
    // The active MemTable: the newest replayed generation, or a fresh one.
    if (active == nullptr) {
      if (cur != nullptr) {
        active = cur;
      } else {
        STRATA_ASSIGN_OR_RETURN(active, NewGen(std::max<uint64_t>(published_below, 1)));
      }
    } else if (cur != nullptr && cur != active) {
      // A second round found more entries (an older writer appended during our claim).
      active->mt->Freeze();
      frozen.push_back(active);
      active = cur;
    }
    uint64_t next = std::max({summary.max_position_present, summary.last_position,
                              manifest.replay_after_wal_entry_position(), start - 1}) +
                    1;
    wal::WalWriterOptions wo;
    wo.writer_epoch = epoch;
    wo.generation = active->generation;
    wo.group_commit = options.group_commit;
    wo.max_wal_entry_bytes = options.max_wal_entry_bytes;
    wal = std::make_unique<wal::WalWriter>(store, shard_prefix, layout.storage_schema, next, wo);
    auto sentinel = wal->WriteFenceSentinel(active->generation,
                                            summary.torn_position ? *summary.torn_position : 0);
    if (sentinel.ok()) return Status::OK();
    if (sentinel.status().code() != StatusCode::kFenced || attempt >= 16) {
      return sentinel.status().WithContext("fence sentinel of shard '" + shard_id + "'");
    }
    // The tip moved: an older writer appended after our replay, or a newer writer claimed.
    STRATA_ASSIGN_OR_RETURN(auto latest, manifests->LoadLatest());
    if (latest && latest->writer_epoch() != epoch) {
      return Status::Fenced("shard '" + shard_id + "' was claimed by writer epoch " +
                            std::to_string(latest->writer_epoch()) + " while opening");
    }
    start = summary.last_position + 1;
    if (summary.torn_position) {
      return Status::Corruption("WAL of '" + shard_prefix +
                                "' changed behind a torn entry while opening");
    }
  }
}

}  // namespace strata::shard

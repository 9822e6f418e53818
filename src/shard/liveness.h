// Liveness of the rows of one read source (DESIGN.md §6): which rows of an SSTable or a
// MemTable are superseded by a newer version of their key, or deleted by a tombstone, as seen
// by a given read view. Maintained incrementally at write time (merge-on-write), never by
// re-merging the tiers:
//
//  - Every row has a "superseded by" mark, a 64-bit sequence number: kNone (never superseded),
//    kDead (dead in every view: a within-generation duplicate or a tombstone of a published
//    SSTable, or a row superseded by a published generation, read from disk at open), or the
//    address `generation << 32 | position` of the row version that superseded it (a newer
//    row of the same key, or the tombstone itself for a tombstone row). Row addresses grow
//    with insert order, so the marks of one source arrive in ascending order.
//  - A mark is written once (kNone -> sequence) by the shard's single writer, under the shard
//    lock, BEFORE the superseding row becomes visible (the MemTable watermark is published
//    after it under the MemTable lock), so a reader that saw that row visible also sees the
//    mark.
//  - A read view (Visibility) says which row addresses are visible: every row of a published
//    generation, and for each MemTable generation the rows below its watermark. A row is live
//    in a view iff its mark is kNone or names a row the view does not see. So a view is a
//    consistent snapshot of liveness without copying anything: building one costs
//    O(number of sources), and a later write never changes what an earlier view sees.
//  - Live counts: marks other than kDead are also appended to an ascending log; the dead rows
//    of a view are the kDead count plus the log entries the view sees, counted with one binary
//    search per MemTable generation: O(MemTables x log(marks)) per source, no row scan.
//
// The durable form: a flush writes, with the SSTable of generation g, the rows of older
// generations that g's rows superseded (sstable/sstable_writer.h supersedes.bin); opening a
// shard marks them kDead again, with the SSTable's deletion vector and tombstones.
//
//
// Lanes (a base shared by the shards of a table, docs/SHARDING.md): every shard's writer marks
// the base rows of its own keys with addresses of ITS generations, which only its visibility
// can judge. So a mark carries the lane (the shard's index in the table) it was made in, each
// lane has its own ascending log, and a view of such a source is a Visibility whose `lanes`
// holds one visibility per lane. Lane 0 costs nothing extra; the per-row lanes (8 bytes a
// row) and lane logs exist only once a lane above 0 marks. A lane is written before its mark
// (release) and read after it (acquire), so a reader that sees a mark sees its lane.
//
// Storage: marks and log live in segments of 1,024 entries allocated on demand behind a
// directory that grows by doubling, so readers index them without a lock while the writer
// appends. Memory: 8 bytes per row plus 8 per mark (rounded up to 8 KiB segments).
// Thread-safety: Supersede / EnsureRows are for one writer at a time (serialised by the caller:
// a shard's lock, or the shared base's mark lock);
// every const method may run concurrently with them and with each other.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace strata::shard {

/// Which row addresses one read view sees.
struct Visibility {
  struct MemGen {
    uint64_t generation = 0;
    int64_t watermark = 0;  // rows [0, watermark) of that MemTable are visible
  };
  /// MemTable generations of the view, ascending (frozen ones, then the active one). Every
  /// generation below the first is published (an SSTable of the view) and wholly visible;
  /// generations above the last are not visible. Empty: every address is visible.
  std::vector<MemGen> memtables;
  /// A view of a source marked in several lanes (a shared base): the view of each lane, by
  /// lane; empty for a source of one shard. A lane past the end sees no address.
  std::vector<std::shared_ptr<const Visibility>> lanes;

  /// Whether the row at address `seq` (generation << 32 | position, or 0) is visible (in the
  /// view of a one-shard source; Liveness picks the lane's view for laned marks).
  bool Visible(uint64_t seq) const;
  /// The view a mark of `lane` is judged by: lanes[lane], or this view when lanes is empty;
  /// nullptr for a lane past the end of `lanes`.
  const Visibility* ForLane(int lane) const {
    if (lanes.empty()) return this;
    return lane < static_cast<int>(lanes.size()) ? lanes[static_cast<size_t>(lane)].get() : nullptr;
  }
};

/// How many of `sorted` (ascending row addresses) `view` sees: one binary search per MemTable
/// generation of the view.
int64_t CountVisible(const std::vector<uint64_t>& sorted, const Visibility& view);

/// A sequence number's parts.
inline uint64_t RowAddress(uint64_t generation, int64_t position) {
  return (generation << 32) | (static_cast<uint64_t>(position) & 0xffffffffULL);
}

class Liveness {
 public:
  static constexpr uint64_t kNone = ~0ULL;
  static constexpr uint64_t kDead = 0;

  Liveness();
  ~Liveness();
  Liveness(const Liveness&) = delete;
  Liveness& operator=(const Liveness&) = delete;

  /// A liveness of `rows` rows, every one live except `dead` (for tests and sources built by
  /// hand).
  static std::shared_ptr<Liveness> WithDeadRows(int64_t rows, const std::vector<int64_t>& dead);

  /// Writer: makes rows [0, rows) addressable (new rows start kNone).
  void EnsureRows(int64_t rows);
  /// Most lanes a Liveness takes (the most shards a table has: num_buckets <= 1024).
  static constexpr int kMaxLanes = 1024;

  /// Writer: marks row `position` superseded by `by` (kDead or a row address of `lane`) when
  /// it is not marked yet; returns whether it changed. A mark is never changed later.
  /// `position` must be below EnsureRows; `lane` in [0, kMaxLanes) (false otherwise).
  bool Supersede(int64_t position, uint64_t by, int lane = 0);

  /// Writer: sets the mark of row `position` to the row address `by` WITHOUT logging it (so
  /// DeadIn does not count it): for marks that arrive out of address order, counted by the
  /// caller (shard/base_source.h). Returns whether it changed (false when already marked).
  bool SetMarkUnlogged(int64_t position, uint64_t by, int lane = 0);

  /// The mark of row `position` (kNone when out of range).
  uint64_t Mark(int64_t position) const;
  /// The lane of row `position`'s mark (0 when unmarked, kDead, or marked in lane 0).
  int Lane(int64_t position) const;
  /// Whether row `position` is live in `view`.
  bool IsLive(int64_t position, const Visibility& view) const {
    const uint64_t m = Mark(position);
    if (m == kNone) return true;
    if (m == kDead) return false;
    if (view.lanes.empty()) return !view.Visible(m);
    const Visibility* v = view.ForLane(Lane(position));
    return v == nullptr || !v->Visible(m);
  }
  /// Rows marked dead that `view` sees as dead (kDead marks plus visible log entries of every
  /// lane, each judged by its lane's view).
  int64_t DeadIn(const Visibility& view) const;
  /// Marks set so far (any kind).
  int64_t marks() const;

 private:
  static constexpr int kSegBits = 10;  // 1,024 entries (8 KiB) per segment
  static constexpr int64_t kSegSize = int64_t{1} << kSegBits;
  /// A growable array of atomics readable without a lock: a directory of fixed segments;
  /// growing publishes a larger directory (older ones are kept until destruction, at most
  /// as many pointers again as the newest holds).
  struct Segments {
    struct Dir {
      int64_t capacity = 0;  // segments
      std::unique_ptr<std::atomic<std::atomic<uint64_t>*>[]> segs;
    };
    std::atomic<Dir*> dir{nullptr};
    std::vector<std::unique_ptr<Dir>> dirs;                       // writer only
    std::vector<std::unique_ptr<std::atomic<uint64_t>[]>> owned;  // writer only
    /// Allocates segments so that [0, n) exist, new entries set to `fill`.
    void Ensure(int64_t n, uint64_t fill);
    std::atomic<uint64_t>* Slot(int64_t i) const;  // nullptr when not allocated
  };
  /// One lane's ascending log of address marks.
  struct Log {
    Segments entries;
    std::atomic<int64_t> size{0};
    /// Writer: stores `seq` past the published size; Publish makes it count. A mark is
    /// stored between the two, so a reader that counts the entry also sees the mark.
    void Stage(uint64_t seq);
    void Publish();
    /// Entries with sequence < `seq`.
    int64_t Below(uint64_t seq) const;
    /// Entries `view` sees.
    int64_t VisibleIn(const Visibility& view) const;
  };
  /// Lanes above 0, allocated when first marked: per-row lanes and one log per lane.
  struct Lanes {
    Segments row_lane;  // the lane of each marked row (0 where never set)
    std::unique_ptr<std::atomic<Log*>[]> logs { new std::atomic<Log*>[ kMaxLanes ]() };
    std::vector<std::unique_ptr<Log>> owned;  // writer only
    std::atomic<int> max_lane{0};             // highest lane with a log
  };
  const Log* LaneLog(int lane) const;

  Segments marks_;
  int64_t rows_ = 0;  // writer only
  Log log_;           // lane 0
  std::atomic<Lanes*> lanes_{nullptr};
  std::unique_ptr<Lanes> lanes_owned_;  // writer only
  std::atomic<int64_t> dead_count_{0};  // kDead marks
};

}  // namespace strata::shard

#include "table/multi_shard_group.h"

#include <algorithm>

#include "memtable/memtable.h"

namespace strata::table {

namespace {

int64_t RowsOf(const std::vector<arrow::RecordBatchPtr>& batches) {
  int64_t n = 0;
  for (const auto& b : batches) n += b->num_rows();
  return n;
}

int64_t BytesOf(const std::vector<arrow::RecordBatchPtr>& batches) {
  int64_t n = 0;
  for (const auto& b : batches) {
    for (const auto& c : b->columns()) n += memtable::ArrayDataBytes(*c);
  }
  return n;
}

}  // namespace

Status MultiShardWriteGroup::Write(std::vector<ShardWrite> parts, const Run& run,
                                   const std::string& what, std::chrono::milliseconds timeout,
                                   int64_t* group_size) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  Pending me;
  for (const auto& p : parts) {
    me.rows += RowsOf(p.storage_rows) + RowsOf(p.user_rows);
    me.bytes += BytesOf(p.storage_rows) + BytesOf(p.user_rows);
  }
  me.parts = std::move(parts);
  std::unique_lock<std::mutex> lock(mu_);
  queue_.push_back(&me);
  auto my_turn = [&] { return me.done || (!running_ && queue_.front() == &me); };
  if (!cv_.wait_until(lock, deadline, my_turn) && !me.taken) {
    queue_.erase(std::find(queue_.begin(), queue_.end(), &me));
    cv_.notify_all();  // the next write may lead now
    return Status::Backpressure(what + " waited longer than the write stall timeout (" +
                                std::to_string(timeout.count()) +
                                " ms) for the multi-shard writes ahead of it; retry");
  }
  cv_.wait(lock, my_turn);  // taken into a running group: wait for its outcome
  if (me.done) {
    if (group_size != nullptr) *group_size = me.group_size;
    return me.status;
  }
  // Lead: take the writes that can join, in queue order.
  running_ = true;
  std::vector<Pending*> group;
  // Whatever happens below (an exception included), every member gets an outcome and the
  // next write may lead: a member left waiting would hold the table's locks for good.
  struct Finish {
    MultiShardWriteGroup* g;
    std::unique_lock<std::mutex>* lock;
    std::vector<Pending*>* group;
    Status status = Status::Internal("multi-shard write group: the leader failed");
    ~Finish() {
      if (!lock->owns_lock()) lock->lock();
      for (Pending* w : *group) {
        w->status = status;
        w->group_size = static_cast<int64_t>(group->size());
        w->done = true;
      }
      g->running_ = false;
      lock->unlock();
      g->cv_.notify_all();
    }
  } finish{this, &lock, &group};
  const size_t shards = me.parts.size();
  std::vector<bool> has_user(shards, false);
  int64_t rows = 0, bytes = 0;  // past the first write
  while (!queue_.empty() && group.size() < kMaxGroupWrites) {
    Pending* w = queue_.front();
    if (!group.empty() && (rows + w->rows > kMaxGroupRows || bytes + w->bytes > kMaxGroupBytes)) {
      break;
    }
    bool joins = w->parts.size() == shards;
    for (size_t s = 0; joins && s < shards; ++s) {
      joins = w->parts[s].writer == me.parts[s].writer &&
              !(has_user[s] && !w->parts[s].storage_rows.empty());
    }
    if (!joins) break;  // keeps queue order: it leads the next group
    for (size_t s = 0; s < shards; ++s) has_user[s] = has_user[s] || !w->parts[s].user_rows.empty();
    if (!group.empty()) {
      rows += w->rows;
      bytes += w->bytes;
    }
    w->taken = true;
    group.push_back(w);
    queue_.pop_front();
  }
  lock.unlock();
  std::vector<ShardWrite> merged(shards);
  for (size_t s = 0; s < shards; ++s) {
    merged[s].writer = me.parts[s].writer;
    for (const Pending* w : group) {
      const ShardWrite& p = w->parts[s];
      merged[s].storage_rows.insert(merged[s].storage_rows.end(), p.storage_rows.begin(),
                                    p.storage_rows.end());
      merged[s].user_rows.insert(merged[s].user_rows.end(), p.user_rows.begin(), p.user_rows.end());
    }
  }
  const Status st = run(std::move(merged));
  finish.status = st;
  if (group_size != nullptr) *group_size = static_cast<int64_t>(group.size());
  return st;  // `finish` hands `st` to every member as it goes out of scope
}

}  // namespace strata::table

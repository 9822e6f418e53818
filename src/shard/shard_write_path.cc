// ShardWriter's write path (shard_writer.h): Put, Apply and Delete append to the WAL and
// insert into the active MemTable; the syncer thread group-commits non-durable appends.
#include "shard/shard_writer.h"

#include <spdlog/spdlog.h>

#include "arrow/builder.h"
#include "memtable/hidden_columns.h"
#include "memtable/memtable.h"
#include "shard/batch_conformance.h"
#include "shard/shard_writer_impl.h"
#include "wal/wal_entry.h"
#include "wal/wal_writer.h"

namespace strata::shard {

// ----------------------------------------------------------------------------------------
// Write path

Result<PutResult> ShardWriter::Impl::Write(std::vector<arrow::RecordBatchPtr> storage_rows,
                                           std::vector<arrow::RecordBatchPtr> user_rows,
                                           const wal::TxnTag* txn, GenPtr* held,
                                           int64_t* held_begin, int64_t* held_end) {
  PutResult result;
  for (const auto& b : storage_rows) result.num_rows += b->num_rows();
  for (const auto& b : user_rows) result.num_rows += b->num_rows();
  // The free-space floor first, probed without mu (a statvfs): nothing is written below it.
  // The bytes still to be flushed from this shard's MemTables are reserved out of the free space.
  Status space = Status::OK();
  std::unique_lock<std::mutex> lock(mu);
  if (result.num_rows > 0 && options.free_space != nullptr) {
    const int64_t reserved = FlushReserveBytes();
    lock.unlock();
    space = options.free_space->Check(reserved);
    lock.lock();
  }
  STRATA_RETURN_IF_ERROR(CheckWritable());
  if (result.num_rows == 0) return result;
  last_write = Clock::now();  // refused or stalled writes count: the table is not quiet
  if (!space.ok()) {
    ++stats.space_refusals;
    return space;
  }

  // Backpressure: wait (without holding mu) until the unflushed set is under the limits.
  if (OverLimit()) {
    ++stats.backpressure_waits;
    const Deadline deadline = Clock::now() + options.write_stall_timeout;
    while (OverLimit()) {
      // Make the active MemTable flushable so the stall can clear.
      if (active->rows > 0 && frozen.empty() && active->txn_held == 0) {
        STRATA_RETURN_IF_ERROR(SealActive());
      }
      if (cv.wait_until(lock, deadline) == std::cv_status::timeout && OverLimit()) {
        ++stats.backpressure_timeouts;
        return Status::Backpressure("shard '" + shard_id + "': writes stalled for " +
                                    std::to_string(options.write_stall_timeout.count()) +
                                    " ms: " + std::to_string(UnflushedBytes()) +
                                    " unflushed bytes in " + std::to_string(frozen.size()) +
                                    " frozen MemTables (max_unflushed_bytes " +
                                    std::to_string(options.max_unflushed_bytes) + "); retry later");
      }
      STRATA_RETURN_IF_ERROR(CheckWritable());
    }
  }
  if (txn != nullptr && seal_barrier > 0) {
    // A force_seal_active waits for the active MemTable's parts: this one goes after its seal.
    cv.wait(lock, [&] { return seal_barrier == 0 || !sticky.ok() || closed; });
    STRATA_RETURN_IF_ERROR(CheckWritable());
  }
  if (SealDue()) STRATA_RETURN_IF_ERROR(SealActive());

  if (layout.rowid_column >= 0) {
    // A storage row keeps its `_rowid`: it must be one this shard assigned (a key from the
    // future would later collide with a fresh insert). Checked under mu, before any change.
    for (const auto& b : storage_rows) {
      arrow::Array ids = b->column(layout.rowid_column);
      for (int64_t i = 0; i < ids.length(); ++i) {
        if (ids.Value<uint64_t>(i) >= next_rowid) {
          return Status::Invalid("storage row " + std::to_string(i) + ": _rowid " +
                                 std::to_string(ids.Value<uint64_t>(i)) +
                                 " was never assigned by shard '" + shard_id + "' (next is " +
                                 std::to_string(next_rowid) + ")");
        }
      }
    }
  }
  // Hidden columns are added under mu so _rowid values follow insert order.
  std::vector<arrow::RecordBatchPtr> batches = std::move(storage_rows);
  uint64_t rowid = next_rowid;
  for (const auto& b : user_rows) {
    STRATA_ASSIGN_OR_RETURN(auto with_hidden, memtable::AddHiddenColumns(layout, *b, rowid, false));
    if (layout.rowid_column >= 0) rowid += static_cast<uint64_t>(b->num_rows());
    batches.push_back(std::move(with_hidden));
  }
  GenPtr g = active;
  STRATA_ASSIGN_OR_RETURN(memtable::RowRange range, g->mt->Insert(batches, txn != nullptr));
  next_rowid = rowid;  // assigned only once the rows are in the MemTable
  // Liveness before visibility (shard/liveness.h): storage rows and every row of a
  // primary-key table may supersede an older version; fresh `_rowid` rows cannot.
  int64_t storage_count = 0;
  for (size_t i = 0; i + user_rows.size() < batches.size(); ++i) {
    storage_count += batches[i]->num_rows();
  }
  MarkRows(*g, batches, range.begin,
           layout.rowid_column >= 0 ? storage_count : range.end - range.begin);
  // A multi-shard part must be durable before its write commits, whatever durable_write says.
  const bool durable = options.durable_write || txn != nullptr;
  if (!durable) g->mt->MarkDurable(range.end, 0);
  std::atomic<uint64_t>* epoch_ptr = &visible_epoch;
  auto on_durable = [g, end = range.end, durable, epoch_ptr](uint64_t position) {
    if (durable) g->mt->MarkDurable(end, position);
    uint64_t prev = g->last_wal_position.load();
    while (prev < position && !g->last_wal_position.compare_exchange_weak(prev, position)) {
    }
    epoch_ptr->fetch_add(1);
  };
  auto handle = txn != nullptr ? wal->Enqueue(batches, g->generation, std::move(on_durable), *txn)
                               : wal->Enqueue(batches, g->generation, std::move(on_durable));
  if (!handle.ok()) {
    FailWrites(handle.status());
    return sticky;
  }
  g->rows += result.num_rows;
  // A part is counted in txn_held only: the syncer zeroes `pending` after a Sync in
  // non-durable mode, while a part always waits for its own entry.
  if (txn != nullptr) {
    ++g->txn_held;
  } else {
    ++g->pending;
  }
  ++g->indexing;
  ++stats.puts;
  stats.rows += static_cast<uint64_t>(result.num_rows);
  result.generation = g->generation;
  if (!durable) ++nondurable_pending;  // the syncer thread makes it durable
  lock.unlock();

  // Index outside every lock (concurrently with other puts and the WAL fsync); the rows
  // become visible once durable and indexed.
  g->mt->IndexRows(range);
  lock.lock();
  --g->indexing;
  visible_epoch.fetch_add(1);
  cv.notify_all();
  if (!durable) {
    AwaitVisibleBehindHeld(lock, g, range.end);
    return result;
  }
  lock.unlock();

  Result<uint64_t> position = wal->Wait(*handle);

  lock.lock();
  if (txn == nullptr) --g->pending;
  if (!position.ok()) FailWrites(position.status());
  cv.notify_all();
  if (!position.ok()) {
    if (txn != nullptr) --g->txn_held;  // the writer is poisoned: nothing will publish it
    return sticky.ok() ? position.status() : sticky;
  }
  result.wal_position = *position;
  if (txn != nullptr) {
    *held = g;
    *held_begin = range.begin;
    *held_end = range.end;
    return result;
  }
  AwaitVisibleBehindHeld(lock, g, range.end);
  return result;
}

void ShardWriter::Impl::SyncerLoop() {
  std::unique_lock<std::mutex> lock(mu);
  while (true) {
    cv.wait(lock, [&] { return closed || nondurable_pending > 0; });
    if (nondurable_pending == 0 && closed) return;
    const int64_t n = nondurable_pending;
    lock.unlock();
    Status st = wal->Sync();
    lock.lock();
    // Every append queued before Sync is settled now (durable or failed).
    nondurable_pending -= n;
    for (auto& f : frozen) f->pending = 0;
    active->pending = 0;
    if (!st.ok()) FailWrites(st);
    cv.notify_all();
    if (closed) return;
  }
}

namespace {

// Invalid naming the column and the first row when a user batch (conforming to
// layout.user_schema) holds a null primary-key value. Declared keys are the first user
// columns' storage indexes, which equal their user-schema indexes; the hidden _rowid key of
// keyless tables is not in user batches. A nullable key column must not let a null key in: a
// null-key row could never be deleted or updated (Apply refuses null keys in storage rows).
Status CheckNoNullKeys(const memtable::StorageLayout& layout,
                       const std::vector<arrow::RecordBatchPtr>& user_batches, const char* what) {
  if (layout.rowid_column >= 0) return Status::OK();
  int64_t row_base = 0;
  for (const auto& b : user_batches) {
    for (int c : layout.key_columns) {
      const arrow::Array key = b->column(c);
      if (key.null_count() == 0) continue;
      for (int64_t i = 0; i < key.length(); ++i) {
        if (key.IsNull(i)) {
          return Status::Invalid(std::string(what) + ": row " + std::to_string(row_base + i) +
                                 ", primary-key column '" + layout.user_schema->field(c)->name +
                                 "' is null; primary-key values may not be null");
        }
      }
    }
    row_base += b->num_rows();
  }
  return Status::OK();
}

}  // namespace

Result<PutResult> ShardWriter::Put(const std::vector<arrow::RecordBatchPtr>& batches) {
  STRATA_ASSIGN_OR_RETURN(auto conformed, ConformBatches(impl_->layout.user_schema, batches));
  STRATA_RETURN_IF_ERROR(CheckNoNullKeys(impl_->layout, conformed, "put"));
  std::vector<arrow::RecordBatchPtr> nonempty;
  for (auto& b : conformed) {
    if (b->num_rows() > 0) nonempty.push_back(std::move(b));
  }
  return impl_->Write({}, std::move(nonempty));
}

namespace {

// Apply's validation: storage rows conformed to the storage schema with non-null keys, user
// rows to the user schema without null primary keys; 0-row batches dropped.
Status ConformApply(const memtable::StorageLayout& layout,
                    const std::vector<arrow::RecordBatchPtr>& storage_rows,
                    const std::vector<arrow::RecordBatchPtr>& user_rows,
                    std::vector<arrow::RecordBatchPtr>* storage,
                    std::vector<arrow::RecordBatchPtr>* user) {
  auto conformed_storage = ConformBatches(layout.storage_schema, storage_rows);
  if (!conformed_storage.ok()) {
    return conformed_storage.status().WithContext("storage rows");
  }
  for (auto& b : *conformed_storage) {
    if (b->num_rows() == 0) continue;
    for (int c : layout.key_columns) {
      if (b->column(c).null_count() > 0) {
        return Status::Invalid("storage rows: key column '" +
                               layout.storage_schema->field(c)->name + "' has " +
                               std::to_string(b->column(c).null_count()) + " nulls");
      }
    }
    storage->push_back(std::move(b));
  }
  auto conformed_user = ConformBatches(layout.user_schema, user_rows);
  if (!conformed_user.ok()) return conformed_user.status().WithContext("new rows");
  STRATA_RETURN_IF_ERROR(CheckNoNullKeys(layout, *conformed_user, "new rows"));
  for (auto& b : *conformed_user) {
    if (b->num_rows() > 0) user->push_back(std::move(b));
  }
  return Status::OK();
}

}  // namespace

Status ShardWriter::CheckApply(const std::vector<arrow::RecordBatchPtr>& storage_rows,
                               const std::vector<arrow::RecordBatchPtr>& user_rows) const {
  std::vector<arrow::RecordBatchPtr> storage, user;
  return ConformApply(impl_->layout, storage_rows, user_rows, &storage, &user);
}

Result<PutResult> ShardWriter::Apply(const std::vector<arrow::RecordBatchPtr>& storage_rows,
                                     const std::vector<arrow::RecordBatchPtr>& user_rows) {
  std::vector<arrow::RecordBatchPtr> storage, user;
  STRATA_RETURN_IF_ERROR(ConformApply(impl_->layout, storage_rows, user_rows, &storage, &user));
  return impl_->Write(std::move(storage), std::move(user));
}

Result<std::vector<arrow::RecordBatchPtr>> ShardWriter::TombstoneRows(
    const std::vector<arrow::RecordBatchPtr>& keys) const {
  const auto& layout = impl_->layout;
  const arrow::Schema& storage = *layout.storage_schema;
  std::vector<arrow::RecordBatchPtr> rows;
  for (const auto& kb : keys) {
    if (kb->num_rows() == 0) continue;
    std::vector<arrow::ArrayDataPtr> columns;
    for (int c = 0; c < storage.num_fields(); ++c) {
      const auto& field = storage.field(c);
      const bool is_key = std::find(layout.key_columns.begin(), layout.key_columns.end(), c) !=
                          layout.key_columns.end();
      if (is_key) {
        int idx = kb->schema()->GetFieldIndex(field->name);
        if (idx < 0) return Status::Invalid("delete: key column '" + field->name + "' missing");
        const auto& data = kb->column_data(idx);
        if (!data->type->Equals(*field->type)) {
          return Status::Invalid("delete: key column '" + field->name + "' has type " +
                                 data->type->ToString() + ", the table's is " +
                                 field->type->ToString());
        }
        if (kb->column(idx).null_count() > 0) {
          return Status::Invalid("delete: key column '" + field->name + "' has nulls");
        }
        columns.push_back(data);
      } else if (c == layout.tombstone_column) {
        columns.push_back(memtable::MakeConstantBoolArray(true, kb->num_rows()));
      } else {
        arrow::ArrayBuilder nulls(field->type);
        STRATA_RETURN_IF_ERROR(nulls.AppendNulls(kb->num_rows()));
        STRATA_ASSIGN_OR_RETURN(auto arr, nulls.Finish());
        columns.push_back(std::move(arr));
      }
    }
    rows.push_back(std::make_shared<arrow::RecordBatch>(layout.storage_schema, kb->num_rows(),
                                                        std::move(columns)));
  }
  return rows;
}

Result<PutResult> ShardWriter::Delete(const std::vector<arrow::RecordBatchPtr>& keys) {
  STRATA_ASSIGN_OR_RETURN(auto rows, TombstoneRows(keys));
  return impl_->Write(std::move(rows), {});
}

// ----------------------------------------------------------------------------------------
// Multi-shard parts

Result<PreparedWrite> ShardWriter::Prepare(const wal::TxnTag& txn,
                                           const std::vector<arrow::RecordBatchPtr>& storage_rows,
                                           const std::vector<arrow::RecordBatchPtr>& user_rows) {
  if (txn.empty() || txn.shards < 2) {
    return Status::Invalid("prepare on shard '" + impl_->shard_id +
                           "': a multi-shard write needs a txn id and at least 2 shards (got " +
                           std::to_string(txn.shards) + ")");
  }
  std::vector<arrow::RecordBatchPtr> storage, user;
  STRATA_RETURN_IF_ERROR(ConformApply(impl_->layout, storage_rows, user_rows, &storage, &user));
  PreparedWrite out;
  out.state = std::make_shared<PreparedState>();
  STRATA_ASSIGN_OR_RETURN(out.put,
                          impl_->Write(std::move(storage), std::move(user), &txn, &out.state->gen,
                                       &out.state->begin, &out.state->end));
  if (out.state->gen == nullptr) out.state->done = true;  // 0 rows: nothing held
  return out;
}

namespace {

// The state of `write` when it is still pending (marks it done), else nullptr. Holds mu.
PreparedState* TakePending(const PreparedWrite& write) {
  if (write.state == nullptr || write.state->done) return nullptr;
  write.state->done = true;
  return write.state.get();
}

}  // namespace

Status ShardWriter::AwaitPublishable(const PreparedWrite& write, Deadline deadline) {
  Impl& s = *impl_;
  std::unique_lock<std::mutex> lock(s.mu);
  if (write.state == nullptr || write.state->done || write.state->gen == nullptr) {
    return Status::OK();
  }
  const PreparedState& p = *write.state;
  // Rows ahead become visible as their puts finish indexing (which notifies) or turn durable
  // (which does not): poll briefly as well.
  while (p.gen->mt->visible_rows() < p.begin && s.sticky.ok() && !s.closed) {
    if (Clock::now() >= deadline) {
      return Status::Backpressure("shard '" + s.shard_id +
                                  "': rows ahead of a multi-shard write's part did not become "
                                  "visible before the write stall timeout");
    }
    s.cv.wait_for(lock, std::chrono::milliseconds(2));
  }
  if (!s.sticky.ok()) return s.sticky;
  if (s.closed) return Status::Invalid("shard '" + s.shard_id + "' is closed");
  return Status::OK();
}

void ShardWriter::Publish(const PreparedWrite& write) {
  Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mu);
  PreparedState* p = TakePending(write);
  if (p == nullptr) return;
  p->gen->mt->Release(p->end);
  --p->gen->txn_held;
  s.visible_epoch.fetch_add(1);
  s.cv.notify_all();
}

void ShardWriter::Abort(const PreparedWrite& write, const Status& why) {
  Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mu);
  PreparedState* p = TakePending(write);
  if (p == nullptr) return;
  // Its rows stay held (never visible) in this writer; the reopen's replay skips the entry.
  s.FailWrites(Status::IOError("multi-shard write aborted: " + why.ToString()));
  --p->gen->txn_held;
  s.cv.notify_all();
}

}  // namespace strata::shard

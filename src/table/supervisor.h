// TableSupervisor: the catalog's background thread for storage health (issue 19).
// Every `options.poll` (200 ms) it refreshes the free-space floor (so entering and leaving it
// is logged even when no write arrives), retries opening tables whose open failed, and calls
// LocalTable::Supervise on every open table, which reopens a poisoned shard writer with
// backoff (table/writer_recovery.h).
// Thread-safety: constructed and destroyed by one owner (LocalCatalog); the thread calls only
// `tables` (which takes the catalog's lock briefly) and the tables' own thread-safe methods.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "io/free_space.h"
#include "table/local_table.h"
#include "table/writer_recovery.h"

namespace strata::table {

class TableSupervisor {
 public:
  using TablesFn = std::function<std::vector<std::shared_ptr<LocalTable>>()>;
  /// Starts the thread. `retry_opens` (may be null) retries tables whose open failed;
  /// `floor` may be null.
  TableSupervisor(TablesFn tables, std::function<void()> retry_opens,
                  std::shared_ptr<io::FreeSpaceFloor> floor, RecoveryOptions options);
  /// Stops and joins the thread (a recovery in progress finishes first).
  ~TableSupervisor();
  TableSupervisor(const TableSupervisor&) = delete;
  TableSupervisor& operator=(const TableSupervisor&) = delete;

 private:
  void Loop();

  const TablesFn tables_;
  const std::function<void()> retry_opens_;
  const std::shared_ptr<io::FreeSpaceFloor> floor_;
  const RecoveryOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;  // with mu_: stop
  bool stop_ = false;           // guarded by mu_
  std::thread thread_;
};

}  // namespace strata::table

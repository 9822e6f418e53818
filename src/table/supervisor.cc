#include "table/supervisor.h"

namespace strata::table {

TableSupervisor::TableSupervisor(TablesFn tables, std::function<void()> retry_opens,
                                 std::shared_ptr<io::FreeSpaceFloor> floor, RecoveryOptions options)
    : tables_(std::move(tables)),
      retry_opens_(std::move(retry_opens)),
      floor_(std::move(floor)),
      options_(options) {
  if (floor_) floor_->Refresh();  // describe and /metrics have figures from the start
  thread_ = std::thread([this] { Loop(); });
}

TableSupervisor::~TableSupervisor() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void TableSupervisor::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, options_.poll, [this] { return stop_; });
    if (stop_) break;
    lock.unlock();
    if (floor_) floor_->Refresh();
    if (retry_opens_ && options_.enabled) retry_opens_();
    for (const auto& t : tables_()) {
      t->Supervise(RecoveryBackoff::Clock::now(), options_);
      std::lock_guard<std::mutex> check(mu_);
      if (stop_) break;
    }
    lock.lock();
  }
}

}  // namespace strata::table

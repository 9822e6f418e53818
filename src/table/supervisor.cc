#include "table/supervisor.h"

namespace strata::table {

TableSupervisor::TableSupervisor(TablesFn tables, std::shared_ptr<io::FreeSpaceFloor> floor,
                                 RecoveryOptions options)
    : tables_(std::move(tables)), floor_(std::move(floor)), options_(options) {
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
    for (const auto& t : tables_()) {
      t->Supervise(RecoveryBackoff::Clock::now(), options_);
      std::lock_guard<std::mutex> check(mu_);
      if (stop_) break;
    }
    lock.lock();
  }
}

}  // namespace strata::table

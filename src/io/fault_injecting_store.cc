#include "io/fault_injecting_store.h"

#include <thread>
#include <utility>

namespace strata::io {
namespace {

bool KeyMatches(const PutFault& f, const std::string& key) {
  if (!f.key_prefix.empty() && key.compare(0, f.key_prefix.size(), f.key_prefix) != 0) {
    return false;
  }
  if (!f.key_contains.empty() && key.find(f.key_contains) == std::string::npos) return false;
  return true;
}

}  // namespace

FaultInjectingStore::FaultInjectingStore(std::shared_ptr<ObjectStore> inner)
    : inner_(std::move(inner)) {}

FaultInjectingStore::~FaultInjectingStore() { ClearFaults(); }

int FaultInjectingStore::AddFault(PutFault fault) {
  std::lock_guard<std::mutex> lock(mu_);
  int id = next_id_++;
  rules_.push_back(Rule{id, std::move(fault), 0});
  return id;
}

void FaultInjectingStore::RemoveFault(int id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = rules_.begin(); it != rules_.end(); ++it) {
      if (it->id == id) {
        rules_.erase(it);
        break;
      }
    }
    ++hold_epoch_;
  }
  hold_cv_.notify_all();
}

void FaultInjectingStore::ClearFaults() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    rules_.clear();
    remove_fail_at_ = 0;
    ++hold_epoch_;
  }
  hold_cv_.notify_all();
}

void FaultInjectingStore::ReleaseHolds() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& r : rules_) r.fault.hold = false;
    ++hold_epoch_;
  }
  hold_cv_.notify_all();
}

int FaultInjectingStore::FailNthPut(int64_t n, Status error) {
  PutFault f;
  f.skip = n > 0 ? n - 1 : 0;
  f.times = 1;
  f.error = std::move(error);
  return AddFault(std::move(f));
}

int FaultInjectingStore::FailPutsUnder(std::string prefix, int64_t times, Status error) {
  PutFault f;
  f.key_prefix = std::move(prefix);
  f.times = times;
  f.error = std::move(error);
  return AddFault(std::move(f));
}

int FaultInjectingStore::DelayPutsContaining(std::string substring,
                                             std::chrono::milliseconds delay) {
  PutFault f;
  f.key_contains = std::move(substring);
  f.delay = delay;
  f.fail = false;
  return AddFault(std::move(f));
}

void FaultInjectingStore::SetFailAllPuts(bool on, Status error) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    fail_all_error_ = std::move(error);
  }
  fail_all_.store(on, std::memory_order_release);
}

FaultInjectingStats FaultInjectingStore::stats() const {
  FaultInjectingStats s;
  s.puts = puts_.load();
  s.puts_failed = puts_failed_.load();
  s.puts_injected = puts_injected_.load();
  s.puts_delayed = puts_delayed_.load();
  s.removes = removes_.load();
  s.removes_injected = removes_injected_.load();
  s.gets = gets_.load();
  s.get_ranges = get_ranges_.load();
  s.heads = heads_.load();
  s.lists = lists_.load();
  return s;
}

void FaultInjectingStore::ResetCounters() {
  puts_ = 0;
  puts_failed_ = 0;
  puts_injected_ = 0;
  puts_delayed_ = 0;
  removes_ = 0;
  removes_injected_ = 0;
  gets_ = 0;
  get_ranges_ = 0;
  heads_ = 0;
  lists_ = 0;
}

void FaultInjectingStore::FailNthRemove(int64_t n, Status error) {
  std::lock_guard<std::mutex> lock(mu_);
  remove_fail_at_ = n >= 1 ? remove_seq_ + static_cast<uint64_t>(n) : 0;
  remove_error_ = error.ok() ? Status::IOError("injected fault: nth remove") : std::move(error);
}

std::vector<std::string> FaultInjectingStore::successful_put_keys() const {
  std::lock_guard<std::mutex> lock(mu_);
  return put_log_;
}

template <typename WriteFn>
Status FaultInjectingStore::DoPut(const std::string& key, WriteFn&& write) {
  puts_.fetch_add(1);
  if (fail_all_.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(mu_);
    puts_failed_.fetch_add(1);
    puts_injected_.fetch_add(1);
    return fail_all_error_.ok() ? Status::IOError("injected fault: all puts") : fail_all_error_;
  }

  // Decide under the lock which armed rules apply to this put (each rule counts its match).
  struct Effect {
    int id;
    bool hold;
    std::chrono::milliseconds delay;
    bool fail;
    bool after_write;
    Status error;
  };
  std::vector<Effect> effects;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& r : rules_) {
      if (!KeyMatches(r.fault, key)) continue;
      int64_t n = ++r.matches;  // 1-based match number
      bool armed = n > r.fault.skip && (r.fault.times < 0 || n <= r.fault.skip + r.fault.times);
      if (!armed) continue;
      effects.push_back(Effect{r.id, r.fault.hold, r.fault.delay, r.fault.fail, r.fault.after_write,
                               r.fault.error});
    }
  }

  Status injected;
  bool write_then_fail = false;
  for (const auto& e : effects) {
    if (e.hold) {
      puts_delayed_.fetch_add(1);
      held_.fetch_add(1);
      std::unique_lock<std::mutex> lock(mu_);
      hold_cv_.wait(lock, [&] {
        for (const auto& r : rules_) {
          if (r.id == e.id) return !r.fault.hold;
        }
        return true;  // rule removed
      });
      held_.fetch_sub(1);
    }
    if (e.delay.count() > 0) {
      puts_delayed_.fetch_add(1);
      std::this_thread::sleep_for(e.delay);
    }
    if (e.fail && injected.ok()) {
      injected = e.error.ok() ? Status::IOError("injected fault") : e.error;
      write_then_fail = e.after_write;
    }
  }

  if (!injected.ok() && !write_then_fail) {
    puts_failed_.fetch_add(1);
    puts_injected_.fetch_add(1);
    return injected;
  }
  Status st = write();
  if (st.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    put_log_.push_back(key);
  }
  if (!injected.ok()) {
    puts_failed_.fetch_add(1);
    puts_injected_.fetch_add(1);
    return injected;
  }
  if (!st.ok()) puts_failed_.fetch_add(1);
  return st;
}

Status FaultInjectingStore::Put(const std::string& key, std::string_view data) {
  return DoPut(key, [&] { return inner_->Put(key, data); });
}

Status FaultInjectingStore::PutIfAbsent(const std::string& key, std::string_view data) {
  return DoPut(key, [&] { return inner_->PutIfAbsent(key, data); });
}

Result<std::string> FaultInjectingStore::Get(const std::string& key) {
  gets_.fetch_add(1);
  return inner_->Get(key);
}

Result<std::string> FaultInjectingStore::GetRange(const std::string& key, int64_t offset,
                                                  int64_t length) {
  get_ranges_.fetch_add(1);
  return inner_->GetRange(key, offset, length);
}

Result<ObjectMeta> FaultInjectingStore::Head(const std::string& key) {
  heads_.fetch_add(1);
  return inner_->Head(key);
}

Result<std::vector<ObjectMeta>> FaultInjectingStore::List(const std::string& prefix) {
  lists_.fetch_add(1);
  return inner_->List(prefix);
}

Result<std::vector<std::string>> FaultInjectingStore::ListChildren(const std::string& prefix) {
  lists_.fetch_add(1);
  return inner_->ListChildren(prefix);
}

Status FaultInjectingStore::Remove(const std::string& key) {
  removes_.fetch_add(1);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++remove_seq_;
    if (remove_fail_at_ != 0 && remove_seq_ == remove_fail_at_) {
      remove_fail_at_ = 0;
      removes_injected_.fetch_add(1);
      return remove_error_;
    }
  }
  return inner_->Remove(key);
}

Status FaultInjectingStore::RenamePrefix(const std::string& from, const std::string& to) {
  return inner_->RenamePrefix(from, to);
}

}  // namespace strata::io

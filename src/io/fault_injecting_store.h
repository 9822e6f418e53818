// FaultInjectingStore: an ObjectStore wrapper for tests that fails, delays or holds puts
// (Put and PutIfAbsent) chosen by rules: the Nth put, puts whose key starts with a prefix
// and/or contains a substring, the first `times` matching puts after skipping `skip`, or every
// put while a switch is on. Reads (Get, GetRange, Head, List, ListChildren) pass through
// unchanged; Remove passes through unless FailNthRemove armed a one-shot remove failure.
// Counters record every put attempt, every remove and every read call by kind (tests check
// that a path makes no store request, e.g. that reads never list).
//
// Rule semantics (per put, in rule insertion order): every rule whose key filter matches
// counts the put as one of its matches; a rule is "armed" for the match numbers
// (skip, skip + times] (times < 0: every match after `skip`). An armed rule first holds
// (blocks until the rule is removed or ClearFaults/ReleaseHolds is called), then sleeps
// `delay`, then, when `fail` is set, returns `error` — before the write, or after performing
// the write when `after_write` (an "unknown outcome" failure: the object exists but the caller
// was told it failed). Several armed rules apply in order; the first failure wins.
// Thread-safety: every method may be called from many threads at once. `mu_` guards the rule
// list and the key log; the switch and counters are atomics.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "io/object_store.h"

namespace strata::io {

/// One fault rule. Default: fail every put with IOError("injected fault").
struct PutFault {
  std::string key_prefix;              // matches keys starting with this ("" = any key)
  std::string key_contains;            // and containing this substring ("" = no condition)
  int64_t skip = 0;                    // let the first `skip` matching puts through untouched
  int64_t times = -1;                  // then affect this many matching puts (< 0 = all later ones)
  bool hold = false;                   // block the put until the rule is removed / holds released
  std::chrono::milliseconds delay{0};  // sleep before the put
  bool fail = true;                    // return `error` instead of (or after) writing
  bool after_write = false;            // write first, then return `error` (unknown outcome)
  Status error = Status::IOError("injected fault");
};

/// Put, remove and read counters since construction or ResetCounters().
struct FaultInjectingStats {
  uint64_t puts = 0;              // Put + PutIfAbsent calls
  uint64_t puts_failed = 0;       // calls that returned an error (injected or from the inner store)
  uint64_t puts_injected = 0;     // calls that returned an injected error
  uint64_t puts_delayed = 0;      // calls that were delayed or held by a rule
  uint64_t removes = 0;           // Remove calls
  uint64_t removes_injected = 0;  // Remove calls that returned an injected error
  uint64_t gets = 0;              // Get calls
  uint64_t get_ranges = 0;        // GetRange calls
  uint64_t heads = 0;             // Head calls
  uint64_t lists = 0;             // List + ListChildren calls
};

class FaultInjectingStore final : public ObjectStore {
 public:
  explicit FaultInjectingStore(std::shared_ptr<ObjectStore> inner);
  ~FaultInjectingStore() override;

  // --- Rules ---------------------------------------------------------------------------------
  /// Adds a rule; returns its id (for RemoveFault).
  int AddFault(PutFault fault);
  /// Removes rule `id` (releasing puts it holds). Unknown ids are ignored.
  void RemoveFault(int id);
  /// Removes every rule, disarms FailNthRemove and releases every held put. The switch is
  /// left as it is.
  void ClearFaults();
  /// Releases every put currently held and disarms `hold` in every rule (other effects stay).
  void ReleaseHolds();

  /// Convenience: fail the `n`-th put (1-based) counted from now, over all keys. Returns the id.
  int FailNthPut(int64_t n, Status error = Status::IOError("injected fault: nth put"));
  /// Convenience: fail puts under `prefix` (`times` of them, < 0 = all). Returns the id.
  int FailPutsUnder(std::string prefix, int64_t times = -1,
                    Status error = Status::IOError("injected fault: prefix"));
  /// Convenience: delay every put whose key contains `substring` by `delay`. Returns the id.
  int DelayPutsContaining(std::string substring, std::chrono::milliseconds delay);

  /// One-shot remove fault: the `n`-th Remove call (1-based) counted from now returns `error`
  /// without removing anything; later removes pass through. Replaces an earlier arming.
  void FailNthRemove(int64_t n, Status error = Status::IOError("injected fault: nth remove"));

  /// The switch: while on, every put fails with `error` before writing (checked before rules).
  void SetFailAllPuts(bool on, Status error = Status::IOError("injected fault: all puts"));
  bool fail_all_puts() const { return fail_all_.load(std::memory_order_acquire); }

  // --- Observation ---------------------------------------------------------------------------
  FaultInjectingStats stats() const;
  void ResetCounters();
  /// Keys of successful puts, in completion order (tests use it to check write ordering).
  std::vector<std::string> successful_put_keys() const;
  /// Number of puts currently blocked by a `hold` rule.
  int held_puts() const { return held_.load(std::memory_order_acquire); }

  const std::shared_ptr<ObjectStore>& inner() const { return inner_; }

  // --- ObjectStore ---------------------------------------------------------------------------
  Status Put(const std::string& key, std::string_view data) override;
  Status PutIfAbsent(const std::string& key, std::string_view data) override;
  Result<std::string> Get(const std::string& key) override;
  Result<std::string> GetRange(const std::string& key, int64_t offset, int64_t length) override;
  Result<ObjectMeta> Head(const std::string& key) override;
  Result<std::vector<ObjectMeta>> List(const std::string& prefix) override;
  Result<std::vector<std::string>> ListChildren(const std::string& prefix) override;
  Status Remove(const std::string& key) override;
  /// Passes through to the wrapped store (no faults).
  Status RenamePrefix(const std::string& from, const std::string& to) override;
  bool SupportsRenamePrefix() const override { return inner_->SupportsRenamePrefix(); }

 private:
  struct Rule {
    int id = 0;
    PutFault fault;
    int64_t matches = 0;  // matching puts seen so far
  };
  template <typename WriteFn>
  Status DoPut(const std::string& key, WriteFn&& write);

  const std::shared_ptr<ObjectStore> inner_;

  mutable std::mutex mu_;  // guards rules_, next_id_, hold_epoch_, put_log_, fail_all_error_,
                           // remove_seq_, remove_fail_at_, remove_error_
  std::condition_variable hold_cv_;  // signalled when rules are removed or holds released
  std::vector<Rule> rules_;
  int next_id_ = 1;
  uint64_t hold_epoch_ = 0;  // bumped on every release (for debugging/inspection)
  std::vector<std::string> put_log_;
  Status fail_all_error_;        // guarded by mu_
  uint64_t remove_seq_ = 0;      // guarded by mu_: Remove calls since construction
  uint64_t remove_fail_at_ = 0;  // guarded by mu_: value of remove_seq_ to fail at (0 = none)
  Status remove_error_;          // guarded by mu_

  std::atomic<bool> fail_all_{false};
  std::atomic<int> held_{0};
  std::atomic<uint64_t> puts_{0}, puts_failed_{0}, puts_injected_{0}, puts_delayed_{0};
  std::atomic<uint64_t> removes_{0}, removes_injected_{0};
  std::atomic<uint64_t> gets_{0}, get_ranges_{0}, heads_{0}, lists_{0};
};

}  // namespace strata::io

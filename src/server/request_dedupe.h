// Request-id dedupe (PROTOCOL.md §0 rule 4, §2.2): the LanceDB client retries update/,
// delete/, create_index/ (and add_columns/, alter_columns/, drop_columns/, index drop,
// restore, tags) on 409/429/5xx with the SAME `x-request-id`. RequestDedupe remembers the
// answer of recent requests keyed by (database, table, action, x-request-id):
//  - a repeat gets the first answer (status, body, content type) without running again;
//  - a repeat arriving while the first is still running waits for it, then gets its answer;
//  - a repeat whose body differs (XXH3-128 digest and length) is a conflict (the router
//    answers 400 naming x-request-id);
//  - an answer with status >= 500 is not remembered (nothing committed: the retry runs), and
//    requests waiting for it run themselves, one at a time.
// Bounds: at most `max_entries` entries (least recently used evicted first) and an answer is
// forgotten `ttl` after it was recorded.
// Locks: `mu_` guards the map, the LRU list and every Entry's fields; `cv_` (with mu_) is
// signalled whenever an entry finishes or is abandoned.
// Thread-safety: every method may be called from many threads at once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace strata::server {

/// A remembered HTTP answer.
struct DedupeAnswer {
  int status = 200;
  std::string body;
  std::string content_type;
};

struct RequestDedupeOptions {
  /// Most remembered requests (LRU eviction beyond); 0 disables dedupe.
  size_t max_entries = 10000;
  /// How long an answer is remembered after it was recorded.
  std::chrono::milliseconds ttl{std::chrono::minutes(10)};
};

class RequestDedupe {
 public:
  explicit RequestDedupe(RequestDedupeOptions options = {});
  RequestDedupe(const RequestDedupe&) = delete;
  RequestDedupe& operator=(const RequestDedupe&) = delete;

  /// The dedupe key of one request: the four parts joined with NUL bytes (which none of
  /// them may contain: header values and decoded names are checked elsewhere).
  static std::string Key(std::string_view database, std::string_view table, std::string_view action,
                         std::string_view request_id);

  struct Entry;

  enum class Outcome {
    kExecute,   // first (or retried after a 5xx): run the request, then Finish the ticket
    kReplay,    // a repeat: send `answer`
    kConflict,  // a repeat with a different body
  };

  /// What Begin decided. A kExecute ticket must be finished with Finish(); destroying it
  /// unfinished abandons it (like a 5xx answer). Move-only.
  class Ticket {
   public:
    Ticket() = default;
    Ticket(Ticket&& other) noexcept;
    Ticket& operator=(Ticket&& other) noexcept;
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;
    ~Ticket();

    Outcome outcome = Outcome::kExecute;
    DedupeAnswer answer;  // kReplay only

   private:
    friend class RequestDedupe;
    RequestDedupe* owner_ = nullptr;  // set while a kExecute ticket is unfinished
    std::string key_;
    std::shared_ptr<Entry> entry_;
  };

  /// Looks up `key` with the request `body`. Blocks while an identical request with the same
  /// key is running. With max_entries == 0 always returns kExecute (nothing remembered).
  Ticket Begin(const std::string& key, std::string_view body);

  /// Records `answer` for a kExecute ticket (status >= 500: forgets the key instead and lets a
  /// waiting repeat run). Ignored for other tickets and on a second call.
  void Finish(Ticket& ticket, const DedupeAnswer& answer);

  /// Entries currently held (running and finished).
  size_t size() const;

 private:
  void Release(Ticket& ticket, const DedupeAnswer* answer);
  void EvictLocked(std::chrono::steady_clock::time_point now);

  struct Slot {
    std::shared_ptr<Entry> entry;
    std::list<std::string>::iterator lru;  // position in lru_
  };

  const RequestDedupeOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;                 // with mu_: an entry finished or was abandoned
  std::unordered_map<std::string, Slot> map_;  // guarded by mu_
  std::list<std::string> lru_;                 // guarded by mu_: most recently used first
};

}  // namespace strata::server

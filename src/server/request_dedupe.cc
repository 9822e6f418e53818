#include "server/request_dedupe.h"

#include <xxhash.h>

namespace strata::server {

using SteadyClock = std::chrono::steady_clock;

// Every field is guarded by RequestDedupe::mu_.
struct RequestDedupe::Entry {
  XXH128_hash_t digest{};
  uint64_t body_size = 0;
  bool done = false;       // answer recorded
  bool abandoned = false;  // the executor answered >= 500 or gave up: not remembered
  SteadyClock::time_point done_at;
  DedupeAnswer answer;
};

RequestDedupe::Ticket::Ticket(Ticket&& other) noexcept { *this = std::move(other); }

RequestDedupe::Ticket& RequestDedupe::Ticket::operator=(Ticket&& other) noexcept {
  if (this != &other) {
    if (owner_ != nullptr) owner_->Release(*this, nullptr);
    outcome = other.outcome;
    answer = std::move(other.answer);
    owner_ = other.owner_;
    key_ = std::move(other.key_);
    entry_ = std::move(other.entry_);
    other.owner_ = nullptr;
  }
  return *this;
}

RequestDedupe::Ticket::~Ticket() {
  if (owner_ != nullptr) owner_->Release(*this, nullptr);
}

RequestDedupe::RequestDedupe(RequestDedupeOptions options) : options_(options) {}

std::string RequestDedupe::Key(std::string_view database, std::string_view table,
                               std::string_view action, std::string_view request_id) {
  std::string key;
  key.reserve(database.size() + table.size() + action.size() + request_id.size() + 3);
  key.append(database).push_back('\0');
  key.append(table).push_back('\0');
  key.append(action).push_back('\0');
  key.append(request_id);
  return key;
}

void RequestDedupe::EvictLocked(SteadyClock::time_point now) {
  // Expired answers at the cold end go first, then whatever exceeds the capacity.
  while (!lru_.empty()) {
    auto it = map_.find(lru_.back());
    const Entry& e = *it->second.entry;
    const bool expired = e.done && now - e.done_at > options_.ttl;
    if (!expired && map_.size() <= options_.max_entries) break;
    map_.erase(it);
    lru_.pop_back();
  }
}

RequestDedupe::Ticket RequestDedupe::Begin(const std::string& key, std::string_view body) {
  Ticket ticket;
  if (options_.max_entries == 0) return ticket;
  const XXH128_hash_t digest = XXH3_128bits(body.data(), body.size());
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    const auto now = SteadyClock::now();
    auto it = map_.find(key);
    if (it != map_.end() && it->second.entry->done &&
        now - it->second.entry->done_at > options_.ttl) {
      lru_.erase(it->second.lru);
      map_.erase(it);
      it = map_.end();
    }
    if (it == map_.end()) {
      auto entry = std::make_shared<Entry>();
      entry->digest = digest;
      entry->body_size = body.size();
      lru_.push_front(key);
      map_.emplace(key, Slot{entry, lru_.begin()});
      EvictLocked(now);
      ticket.outcome = Outcome::kExecute;
      ticket.owner_ = this;
      ticket.key_ = key;
      ticket.entry_ = std::move(entry);
      return ticket;
    }
    std::shared_ptr<Entry> entry = it->second.entry;
    lru_.splice(lru_.begin(), lru_, it->second.lru);  // most recently used
    if (!XXH128_isEqual(entry->digest, digest) || entry->body_size != body.size()) {
      ticket.outcome = Outcome::kConflict;
      return ticket;
    }
    if (entry->done) {
      ticket.outcome = Outcome::kReplay;
      ticket.answer = entry->answer;
      return ticket;
    }
    // The first request is still running: wait for its answer (or its abandonment, then
    // look again: the key is free and this request may run).
    cv_.wait(lock, [&] { return entry->done || entry->abandoned; });
    if (entry->done) {
      ticket.outcome = Outcome::kReplay;
      ticket.answer = entry->answer;
      return ticket;
    }
  }
}

void RequestDedupe::Finish(Ticket& ticket, const DedupeAnswer& answer) {
  if (ticket.owner_ != this) return;
  Release(ticket, &answer);
}

void RequestDedupe::Release(Ticket& ticket, const DedupeAnswer* answer) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry& e = *ticket.entry_;
  if (answer != nullptr && answer->status < 500) {
    e.done = true;
    e.done_at = SteadyClock::now();
    e.answer = *answer;
  } else {
    e.abandoned = true;
    auto it = map_.find(ticket.key_);
    // The key may have been evicted (and even taken by a newer request) meanwhile.
    if (it != map_.end() && it->second.entry == ticket.entry_) {
      lru_.erase(it->second.lru);
      map_.erase(it);
    }
  }
  ticket.owner_ = nullptr;
  cv_.notify_all();
}

size_t RequestDedupe::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return map_.size();
}

}  // namespace strata::server

#include "server/request_dedupe.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace strata::server {
namespace {

using namespace std::chrono_literals;
using Outcome = RequestDedupe::Outcome;

DedupeAnswer Answer(int status, std::string body) {
  return DedupeAnswer{status, std::move(body), "application/json"};
}

TEST(RequestDedupe, KeyKeepsThePartsApart) {
  EXPECT_NE(RequestDedupe::Key("db", "t", "delete", "r1"),
            RequestDedupe::Key("db", "t", "update", "r1"));
  EXPECT_NE(RequestDedupe::Key("a", "bc", "delete", "r"),
            RequestDedupe::Key("ab", "c", "delete", "r"));
  EXPECT_EQ(RequestDedupe::Key("db", "t", "delete", "r1"), std::string("db\0t\0delete\0r1", 14));
}

TEST(RequestDedupe, RepeatGetsTheFirstAnswer) {
  RequestDedupe d;
  const std::string key = RequestDedupe::Key("default", "t", "delete", "id-1");
  auto first = d.Begin(key, R"({"predicate":"id < 5"})");
  ASSERT_EQ(first.outcome, Outcome::kExecute);
  d.Finish(first, Answer(200, R"({"version":7})"));
  auto repeat = d.Begin(key, R"({"predicate":"id < 5"})");
  ASSERT_EQ(repeat.outcome, Outcome::kReplay);
  EXPECT_EQ(repeat.answer.status, 200);
  EXPECT_EQ(repeat.answer.body, R"({"version":7})");
  EXPECT_EQ(repeat.answer.content_type, "application/json");
  // A 4xx answer is remembered too (the client does not retry it, a replay is identical).
  const std::string key2 = RequestDedupe::Key("default", "t", "update", "id-2");
  auto bad = d.Begin(key2, "{}");
  ASSERT_EQ(bad.outcome, Outcome::kExecute);
  d.Finish(bad, Answer(400, R"({"error":"invalid_input"})"));
  auto bad_repeat = d.Begin(key2, "{}");
  ASSERT_EQ(bad_repeat.outcome, Outcome::kReplay);
  EXPECT_EQ(bad_repeat.answer.status, 400);
  EXPECT_EQ(d.size(), 2u);
}

TEST(RequestDedupe, DifferentBodyIsAConflictAndOtherKeysAreIndependent) {
  RequestDedupe d;
  const std::string key = RequestDedupe::Key("default", "t", "delete", "id-1");
  auto first = d.Begin(key, "body-a");
  d.Finish(first, Answer(200, "{}"));
  EXPECT_EQ(d.Begin(key, "body-b").outcome, Outcome::kConflict);
  EXPECT_EQ(d.Begin(key, "body-a ").outcome, Outcome::kConflict);  // length differs
  // Same id on another table / action / database runs.
  auto other = d.Begin(RequestDedupe::Key("default", "t2", "delete", "id-1"), "body-b");
  EXPECT_EQ(other.outcome, Outcome::kExecute);
  auto other_db = d.Begin(RequestDedupe::Key("db2", "t", "delete", "id-1"), "body-b");
  EXPECT_EQ(other_db.outcome, Outcome::kExecute);
}

TEST(RequestDedupe, ServerErrorsAreNotRememberedAndUnfinishedTicketsAbandon) {
  RequestDedupe d;
  const std::string key = RequestDedupe::Key("default", "t", "update", "id-9");
  auto first = d.Begin(key, "x");
  d.Finish(first, Answer(503, R"({"error":"backpressure"})"));
  EXPECT_EQ(d.size(), 0u);
  auto retry = d.Begin(key, "x");
  ASSERT_EQ(retry.outcome, Outcome::kExecute);
  {
    RequestDedupe::Ticket dropped = std::move(retry);  // destroyed unfinished
  }
  EXPECT_EQ(d.size(), 0u);
  auto again = d.Begin(key, "x");
  EXPECT_EQ(again.outcome, Outcome::kExecute);
  d.Finish(again, Answer(200, "ok"));
  d.Finish(again, Answer(200, "second finish ignored"));
  EXPECT_EQ(d.Begin(key, "x").answer.body, "ok");
}

TEST(RequestDedupe, LruEvictionAndTtl) {
  RequestDedupeOptions o;
  o.max_entries = 3;
  o.ttl = 200ms;
  RequestDedupe d(o);
  auto key = [](int i) { return RequestDedupe::Key("db", "t", "delete", std::to_string(i)); };
  for (int i = 0; i < 3; ++i) {
    auto t = d.Begin(key(i), "b");
    d.Finish(t, Answer(200, "answer " + std::to_string(i)));
  }
  // Touch 0 so that 1 is the least recently used, then add 3: 1 is evicted.
  EXPECT_EQ(d.Begin(key(0), "b").answer.body, "answer 0");
  auto t3 = d.Begin(key(3), "b");
  d.Finish(t3, Answer(200, "answer 3"));
  EXPECT_EQ(d.size(), 3u);
  EXPECT_EQ(d.Begin(key(0), "b").outcome, Outcome::kReplay);
  EXPECT_EQ(d.Begin(key(2), "b").outcome, Outcome::kReplay);
  EXPECT_EQ(d.Begin(key(3), "b").outcome, Outcome::kReplay);
  auto t1 = d.Begin(key(1), "b");
  EXPECT_EQ(t1.outcome, Outcome::kExecute);  // forgotten: runs again
  d.Finish(t1, Answer(200, "answer 1 again"));
  // After the TTL every answer is forgotten.
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(d.Begin(key(1), "b").outcome, Outcome::kExecute);
}

TEST(RequestDedupe, DisabledWithZeroEntries) {
  RequestDedupeOptions o;
  o.max_entries = 0;
  RequestDedupe d(o);
  const std::string key = RequestDedupe::Key("db", "t", "delete", "r");
  auto a = d.Begin(key, "b");
  d.Finish(a, Answer(200, "x"));
  EXPECT_EQ(d.Begin(key, "b").outcome, Outcome::kExecute);
  EXPECT_EQ(d.size(), 0u);
}

// Eight concurrent repeats of one request: exactly one runs, the others wait and get its
// answer; the wait really waits (they start before the first finishes).
TEST(RequestDedupe, ConcurrentRepeatsRunOnceAndWait) {
  RequestDedupe d;
  const std::string key = RequestDedupe::Key("default", "t", "delete", "same-id");
  std::atomic<int> executions{0}, replays{0};
  std::atomic<int> started{0};
  std::vector<std::string> bodies(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      started.fetch_add(1);
      auto t = d.Begin(key, "predicate");
      if (t.outcome == Outcome::kExecute) {
        executions.fetch_add(1);
        // Hold the "request" until every thread has at least started.
        while (started.load() < 8) std::this_thread::yield();
        std::this_thread::sleep_for(100ms);
        d.Finish(t, Answer(200, R"({"version":3})"));
        bodies[i] = R"({"version":3})";
      } else if (t.outcome == Outcome::kReplay) {
        replays.fetch_add(1);
        bodies[i] = t.answer.body;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(executions.load(), 1);
  EXPECT_EQ(replays.load(), 7);
  for (const auto& b : bodies) EXPECT_EQ(b, R"({"version":3})");
}

// A first attempt failing with 5xx while repeats wait: exactly one waiter runs next, the rest
// get that waiter's answer.
TEST(RequestDedupe, WaitersRunOneAtATimeAfterAServerError) {
  RequestDedupe d;
  const std::string key = RequestDedupe::Key("default", "t", "update", "rid");
  auto first = d.Begin(key, "b");
  ASSERT_EQ(first.outcome, Outcome::kExecute);
  std::atomic<int> executions{0}, replays{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      auto t = d.Begin(key, "b");
      if (t.outcome == Outcome::kExecute) {
        executions.fetch_add(1);
        std::this_thread::sleep_for(50ms);
        d.Finish(t, Answer(200, "second attempt"));
      } else if (t.outcome == Outcome::kReplay) {
        EXPECT_EQ(t.answer.body, "second attempt");
        replays.fetch_add(1);
      }
    });
  }
  std::this_thread::sleep_for(100ms);  // let them block on the running first attempt
  EXPECT_EQ(executions.load(), 0);
  d.Finish(first, Answer(500, "internal"));
  for (auto& th : threads) th.join();
  EXPECT_EQ(executions.load(), 1);
  EXPECT_EQ(replays.load(), 3);
}

}  // namespace
}  // namespace strata::server

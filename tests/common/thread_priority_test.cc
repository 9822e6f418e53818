// Background thread priority (common/thread_priority.h): a thread's nice value is its own, so
// lowering the maintenance threads' priority leaves the caller's untouched.
#include "common/thread_priority.h"

#include <gtest/gtest.h>

#include <thread>

namespace strata {
namespace {

TEST(ThreadPriority, NiceChangesOnlyTheCallingThread) {
  const int before = CurrentThreadNice();
  int inside = -1, inherited = -1;
  Status st;
  std::thread t([&] {
    st = SetCurrentThreadNice(std::max(before, 7));
    inside = CurrentThreadNice();
    // A thread started from it inherits its value (OpenMP workers of an index build).
    std::thread child([&] { inherited = CurrentThreadNice(); });
    child.join();
  });
  t.join();
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(inside, std::max(before, 7));
  EXPECT_EQ(inherited, std::max(before, 7));
  EXPECT_EQ(CurrentThreadNice(), before);
}

TEST(ThreadPriority, OutOfRangeIsRefusedNamingTheValue) {
  const Status st = SetCurrentThreadNice(20);
  ASSERT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("20 is outside [0, 19]"), std::string::npos) << st.message();
  EXPECT_EQ(SetCurrentThreadNice(-1).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace strata

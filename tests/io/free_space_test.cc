// The free-space floor (io/free_space.h) with a reservation: the bytes a shard still has to
// flush count against the free space, so a write is refused once free - reserved < floor and
// the flush of every acknowledged row always fits above the floor.
#include "io/free_space.h"

#include <gtest/gtest.h>

#include <atomic>

namespace strata::io {
namespace {

TEST(FreeSpaceFloor, ReservedFlushBytesCountAgainstTheFreeSpace) {
  std::atomic<int64_t> free_bytes{10ll << 20};
  FreeSpaceFloor floor(
      [&]() -> Result<FreeSpaceFloor::Space> {
        return FreeSpaceFloor::Space{free_bytes.load(), 1ll << 30};
      },
      /*floor_bytes=*/6ll << 20, "test-disk");
  // 10 MiB free, floor 6 MiB: writes pass with nothing (or 4 MiB) to flush.
  EXPECT_TRUE(floor.Check().ok());
  EXPECT_TRUE(floor.Check(4ll << 20).ok());
  EXPECT_FALSE(floor.state().below);
  // 5 MiB waiting for a flush leaves 5 MiB usable, under the floor: refused, and says why.
  const Status st = floor.Check(5ll << 20);
  ASSERT_EQ(st.code(), StatusCode::kInsufficientStorage) << st.ToString();
  EXPECT_NE(st.message().find("10485760 bytes (5242880 of them reserved for flushing "
                              "acknowledged rows)"),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("floor of 6291456 bytes (--min-free-bytes)"), std::string::npos);
  EXPECT_TRUE(floor.state().below);
  EXPECT_EQ(floor.state().refusals, 1u);
  EXPECT_EQ(floor.state().free_bytes, 10ll << 20);
  // The supervisor's tick keeps that reservation (the flush has not run): still below.
  floor.Refresh();
  EXPECT_TRUE(floor.state().below);
  EXPECT_EQ(floor.state().state_changes, 1u);
  // The flush wrote its bytes (free 6.5 MiB) and reserves nothing now: writes pass again.
  free_bytes = (13ll << 20) / 2;
  EXPECT_TRUE(floor.Check(0).ok());
  EXPECT_FALSE(floor.state().below);
  EXPECT_EQ(floor.state().state_changes, 2u);
  // A negative reservation is treated as none.
  EXPECT_TRUE(floor.Check(-(4ll << 20)).ok());
  // Refresh keeps the last reservation (none now) and counts no refusal.
  free_bytes = 5ll << 20;
  floor.Refresh();
  EXPECT_TRUE(floor.state().below);
  EXPECT_EQ(floor.state().refusals, 1u);
}

}  // namespace
}  // namespace strata::io

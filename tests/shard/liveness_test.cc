// shard::Liveness and shard::Visibility: marks are read through a view's watermarks, so a view
// taken before a supersession keeps seeing the old row; counts agree with the marks.
#include "shard/liveness.h"

#include <gtest/gtest.h>

namespace strata::shard {
namespace {

Visibility View(std::vector<Visibility::MemGen> mems) {
  Visibility v;
  v.memtables = std::move(mems);
  return v;
}

TEST(Liveness, VisibilityOfAddresses) {
  const Visibility v = View({{5, 10}, {7, 3}});  // gens < 5 published; 6 absent; 7 active
  EXPECT_TRUE(v.Visible(Liveness::kDead));
  EXPECT_TRUE(v.Visible(RowAddress(4, 123456)));  // published generation: whole
  EXPECT_TRUE(v.Visible(RowAddress(5, 9)));
  EXPECT_FALSE(v.Visible(RowAddress(5, 10)));  // at the watermark
  EXPECT_TRUE(v.Visible(RowAddress(7, 2)));
  EXPECT_FALSE(v.Visible(RowAddress(7, 3)));
  EXPECT_FALSE(v.Visible(RowAddress(8, 0)));  // newer than the view
  EXPECT_TRUE(View({}).Visible(RowAddress(99, 99)));
}

TEST(Liveness, ViewsSeeOnlyTheirMarks) {
  Liveness l;
  l.EnsureRows(5000);  // several segments
  const Visibility before = View({{3, 0}});
  EXPECT_TRUE(l.Supersede(4200, RowAddress(3, 0)));
  EXPECT_FALSE(l.Supersede(4200, RowAddress(3, 1)));  // a mark is never changed
  EXPECT_EQ(l.Mark(4200), RowAddress(3, 0));
  EXPECT_TRUE(l.Supersede(7, Liveness::kDead));
  EXPECT_TRUE(l.Supersede(8, RowAddress(3, 1)));
  EXPECT_FALSE(l.Supersede(5000, Liveness::kDead));  // out of range
  EXPECT_TRUE(l.IsLive(4200, before));
  EXPECT_FALSE(l.IsLive(7, before));  // kDead: dead in every view
  EXPECT_EQ(l.DeadIn(before), 1);
  const Visibility one = View({{3, 1}});
  EXPECT_FALSE(l.IsLive(4200, one));
  EXPECT_TRUE(l.IsLive(8, one));
  EXPECT_EQ(l.DeadIn(one), 2);
  const Visibility published = View({{4, 0}});  // generation 3 flushed
  EXPECT_FALSE(l.IsLive(8, published));
  EXPECT_EQ(l.DeadIn(published), 3);
  EXPECT_EQ(l.DeadIn(View({})), 3);
  EXPECT_TRUE(l.IsLive(0, published));
  EXPECT_EQ(l.marks(), 3);
}

TEST(Liveness, CountsPerMemTableGeneration) {
  Liveness l;
  l.EnsureRows(100);
  // Rows 0..9 superseded by generation 2 positions 0..9, rows 10..19 by generation 4.
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(l.Supersede(i, RowAddress(2, i)));
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(l.Supersede(10 + i, RowAddress(4, i)));
  EXPECT_EQ(l.DeadIn(View({{2, 4}, {3, 100}, {4, 0}})), 4);
  EXPECT_EQ(l.DeadIn(View({{2, 10}, {3, 0}, {4, 7}})), 17);
  EXPECT_EQ(l.DeadIn(View({{3, 0}, {4, 2}})), 12);  // generation 2 published
  EXPECT_EQ(l.DeadIn(View({{1, 5}})), 0);
}

TEST(Liveness, WithDeadRows) {
  auto l = Liveness::WithDeadRows(3000, {0, 1500, 2999});
  const Visibility all;
  EXPECT_EQ(l->DeadIn(all), 3);
  EXPECT_FALSE(l->IsLive(1500, all));
  EXPECT_TRUE(l->IsLive(1501, all));
}

}  // namespace
}  // namespace strata::shard

// Random ids (format/ids.h): well-formed, and not repeated by a forked child.
#include "format/ids.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>
#include <string>

namespace strata::format {
namespace {

TEST(Ids, UuidsAreVersion4AndDistinct) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    const std::string u = RandomUuid();
    ASSERT_EQ(u.size(), 36u);
    EXPECT_EQ(u[14], '4');
    EXPECT_NE(std::string("89ab").find(u[19]), std::string::npos) << u;
    seen.insert(u);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

// A forked child's thread starts from its parent's state: without a reseed, the child's next
// id equals the parent's next id, and two children of one parent draw the same ids (two
// servers forked by a supervisor, or the crash tests' children, would then reuse "unique"
// transaction ids and file names).
std::string IdFromChild() {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    const std::string id = RandomUuid();
    const bool ok = ::write(fds[1], id.data(), id.size()) == static_cast<ssize_t>(id.size());
    _exit(ok ? 0 : 1);
  }
  ::close(fds[1]);
  std::string id(36, '\0');
  EXPECT_EQ(::read(fds[0], id.data(), id.size()), 36);
  ::close(fds[0]);
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, 0), pid);
  return id;
}

TEST(Ids, AForkedChildDoesNotRepeatItsParentsIds) {
  (void)RandomUuid();  // the parent's generator is in use before the forks
  const std::string first_child = IdFromChild();
  const std::string second_child = IdFromChild();
  const std::string parent_next = RandomUuid();
  EXPECT_NE(first_child, second_child);
  EXPECT_NE(first_child, parent_next);
  EXPECT_NE(second_child, parent_next);
}

}  // namespace
}  // namespace strata::format

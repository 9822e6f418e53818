#include "common/thread_priority.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace strata {

namespace {
id_t CurrentTid() { return static_cast<id_t>(::syscall(SYS_gettid)); }
}  // namespace

Status SetCurrentThreadNice(int nice) {
  if (nice < 0 || nice > 19) {
    return Status::Invalid("thread nice value " + std::to_string(nice) + " is outside [0, 19]");
  }
  if (::setpriority(PRIO_PROCESS, CurrentTid(), nice) != 0) {
    const int err = errno;
    return Status::IOError("setpriority(" + std::to_string(nice) +
                           ") failed: " + std::strerror(err));
  }
  return Status::OK();
}

int CurrentThreadNice() {
  errno = 0;
  const int n = ::getpriority(PRIO_PROCESS, CurrentTid());
  return errno != 0 ? 0 : n;
}

}  // namespace strata

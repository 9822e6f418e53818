// CPU priority of background threads: compaction, base rewrites, garbage collection and base
// index builds run below the threads that serve puts, flushes and queries, so on a machine
// with few cores their CPU goes to the write path first (RocksDB lowers its compaction pool
// the same way: Env::LowerThreadPoolCPUPriority). On Linux a thread's nice value is its own
// (setpriority(PRIO_PROCESS, gettid(), n) changes only the calling thread) and threads it
// creates later inherit it, so OpenMP workers started by an index build (FAISS) run at the
// builder's priority.
// Thread-safety: changes only the calling thread.
#pragma once

#include "common/status.h"

namespace strata {

/// Sets the calling thread's nice value to `nice` (0 = normal .. 19 = lowest). Raising it is
/// always allowed; lowering it below the current value needs CAP_SYS_NICE (an error then).
/// Errors: Invalid for a value outside [0, 19]; IOError naming errno when the kernel refuses.
Status SetCurrentThreadNice(int nice);

/// The calling thread's nice value (0 when it cannot be read).
int CurrentThreadNice();

}  // namespace strata

// The core's thread pool: persistent workers that sleep while idle, re-created in a
// forked child, one job at a time (a second caller runs its job on its own thread).
#pragma once

#include <cstdint>
#include <functional>

namespace margin_opt {

// Runs job(h) for h = 0 .. nthr - 1, h = 0 on the calling thread and the others on the
// pool's workers; returns when all have returned.  The result must not depend on which
// thread runs which h (every caller splits its work by h alone).  Where the pool is busy
// with another caller's job (two Python threads at once), or nthr is 1, every h runs on
// the calling thread, in order.  Exceptions are not allowed to leave job.
void parallel_for(int nthr, const std::function<void(int)>& job);

// Workers currently alive (0 before the first parallel call and after a fork).
int pool_workers();

}  // namespace margin_opt

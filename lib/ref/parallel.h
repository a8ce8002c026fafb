// parallel_for: runs fn over [0, n) on up to `threads` threads (0 = hardware
// concurrency): the caller and persistent pool threads take chunks (a multiple
// of 4 items) from a shared counter until none are left, so a late-scheduled
// thread on a busy machine does less instead of stalling the call. Small
// ranges run inline: the reference executor calls it for every matmul. Each
// item is computed by exactly one thread, so results that depend only on the
// item are the same for any thread count. A concurrent or nested call runs
// inline on its caller.
#pragma once

#include <cstdint>
#include <functional>

namespace lanec {

unsigned resolve_threads(unsigned threads);

// fn(begin, end) is called on disjoint chunks; work_per_item estimates the
// cost of one item so that small jobs stay on the calling thread.
void parallel_for(int64_t n, unsigned threads, int64_t work_per_item,
                  const std::function<void(int64_t, int64_t)>& fn);

}  // namespace lanec

// parallel_for: splits [0, n) into contiguous chunks over up to `threads`
// std::threads (0 = hardware concurrency). Small ranges run inline: the
// reference executor calls it for every matmul, and a thread start costs
// more than a few thousand multiply-adds.
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

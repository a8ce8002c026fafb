#include "lib/ref/parallel.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace lanec {

unsigned resolve_threads(unsigned threads) {
  if (threads) return threads;
  return std::max(1u, std::thread::hardware_concurrency());
}

void parallel_for(int64_t n, unsigned threads, int64_t work_per_item,
                  const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  constexpr int64_t kMinWorkPerThread = 1 << 16;
  const int64_t total_work = n * std::max<int64_t>(1, work_per_item);
  int64_t n_threads = std::min<int64_t>(resolve_threads(threads), n);
  n_threads = std::min<int64_t>(n_threads, std::max<int64_t>(1, total_work / kMinWorkPerThread));
  if (n_threads <= 1) {
    fn(0, n);
    return;
  }
  const int64_t chunk = (n + n_threads - 1) / n_threads;
  std::vector<std::thread> workers;
  for (int64_t t = 1; t < n_threads; ++t) {
    const int64_t begin = t * chunk, end = std::min(n, begin + chunk);
    if (begin < end) workers.emplace_back(fn, begin, end);
  }
  fn(0, std::min(n, chunk));
  for (std::thread& w : workers) w.join();
}

}  // namespace lanec

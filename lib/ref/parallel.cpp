#include "lib/ref/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace lanec {
namespace {

// Persistent helper threads. A job is cut into chunks that threads take from
// an atomic counter, so a helper that the OS schedules late (the machine is
// shared) takes fewer chunks instead of holding up the step; the caller
// waits only for helpers that actually joined the job, never for one that
// has not woken up yet.
class Pool {
 public:
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    work_cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  // Runs fn over [0, n) in `chunk`-sized pieces with up to `helpers` pool
  // threads besides the caller. Returns false (nothing run) when the pool is
  // busy: a concurrent or nested call, which the caller then runs inline.
  bool run(int64_t n, int64_t chunk, unsigned helpers,
           const std::function<void(int64_t, int64_t)>& fn) {
    std::unique_lock<std::mutex> busy(job_mutex_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      while (threads_.size() < helpers) threads_.emplace_back([this] { worker(); });
      fn_ = &fn;
      n_ = n;
      chunk_ = chunk;
      next_.store(0, std::memory_order_relaxed);
      helpers_wanted_ = helpers;
      open_ = true;
      ++generation_;
    }
    work_cv_.notify_all();
    take_chunks(fn, n, chunk);
    std::unique_lock<std::mutex> lock(mutex_);
    open_ = false;
    done_cv_.wait(lock, [this] { return active_ == 0; });
    fn_ = nullptr;
    return true;
  }

 private:
  void take_chunks(const std::function<void(int64_t, int64_t)>& fn, int64_t n, int64_t chunk) {
    for (;;) {
      const int64_t begin = next_.fetch_add(chunk, std::memory_order_relaxed);
      if (begin >= n) return;
      fn(begin, std::min(n, begin + chunk));
    }
  }

  void worker() {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      work_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (!open_ || helpers_wanted_ == 0) continue;
      --helpers_wanted_;
      ++active_;
      const std::function<void(int64_t, int64_t)>& fn = *fn_;
      const int64_t n = n_, chunk = chunk_;
      lock.unlock();
      take_chunks(fn, n, chunk);
      lock.lock();
      if (--active_ == 0) done_cv_.notify_all();
    }
  }

  std::mutex job_mutex_;  // one job at a time
  std::mutex mutex_;      // guards everything below but next_
  std::condition_variable work_cv_, done_cv_;
  std::vector<std::thread> threads_;
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0, chunk_ = 0;
  std::atomic<int64_t> next_{0};
  unsigned helpers_wanted_ = 0;
  unsigned active_ = 0;
  bool open_ = false;
  bool stop_ = false;
  uint64_t generation_ = 0;
};

Pool& pool() {
  static Pool instance;
  return instance;
}

}  // namespace

unsigned resolve_threads(unsigned threads) {
  if (threads) return threads;
  return std::max(1u, std::thread::hardware_concurrency());
}

void parallel_for(int64_t n, unsigned threads, int64_t work_per_item,
                  const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  constexpr int64_t kMinWorkPerThread = 1 << 16;
  constexpr int64_t kChunksPerThread = 4;
  const int64_t total_work = n * std::max<int64_t>(1, work_per_item);
  int64_t n_threads = std::min<int64_t>(resolve_threads(threads), n);
  n_threads = std::min<int64_t>(n_threads, std::max<int64_t>(1, total_work / kMinWorkPerThread));
  if (n_threads <= 1) {
    fn(0, n);
    return;
  }
  // Chunks a multiple of 4 items (matmul kernels work on 4 rows at a time).
  int64_t chunk = (n + n_threads * kChunksPerThread - 1) / (n_threads * kChunksPerThread);
  chunk = (chunk + 3) / 4 * 4;
  if (!pool().run(n, chunk, static_cast<unsigned>(n_threads - 1), fn)) fn(0, n);
}

}  // namespace lanec

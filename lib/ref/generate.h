// Greedy decoding with a step executor: the CPU reference executor on the
// unfused graph, or the CPU schedule executor on a planned schedule (both
// reach here through a StepFunctions).
//
// The prompt's tokens are stepped at positions 0..P-1; each later step feeds
// the previous step's argmax. Generating n tokens executes P + n - 1 steps
// (the last generated token is never fed back), and `on_step` sees the
// logits of every executed step in order — the rows of `lanec ref --logits`.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "lib/ref/executor.h"

namespace lanec {

struct GreedyResult {
  std::vector<int32_t> generated;  // n ids
  int64_t steps = 0;               // executed positions: prompt + n - 1
};

// One decode step and the argmax it produced: what the loop needs of an
// executor.
struct StepFunctions {
  std::function<std::vector<float>(int32_t token, int32_t pos)> step;
  std::function<int32_t()> next_token;
};

// The StepFunctions of any executor with step(token, pos) -> logits and
// next_token() (ReferenceExecutor, CpuScheduleExecutor). They hold a
// reference: the executor must outlive them.
template <class Executor>
StepFunctions step_functions_of(Executor& executor) {
  return {[&executor](int32_t token, int32_t pos) { return executor.step(token, pos); },
          [&executor] { return executor.next_token(); }};
}

// on_step(step_index, position, logits) may be empty. Throws lanec::Error for
// an empty prompt or a prompt + generation longer than max_positions (> 0).
GreedyResult generate_greedy(
    const StepFunctions& executor, const std::vector<int32_t>& prompt, int64_t n_generate,
    int64_t max_positions,
    const std::function<void(int64_t, int32_t, const std::vector<float>&)>& on_step = {});
// The same loop over the reference executor.
GreedyResult generate_greedy(
    ReferenceExecutor& executor, const std::vector<int32_t>& prompt, int64_t n_generate,
    int64_t max_positions,
    const std::function<void(int64_t, int32_t, const std::vector<float>&)>& on_step = {});

}  // namespace lanec

#include "lib/ref/generate.h"

#include <string>

#include "lib/common/error.h"

namespace lanec {

GreedyResult generate_greedy(
    const StepFunctions& executor, const std::vector<int32_t>& prompt, int64_t n_generate,
    int64_t max_positions,
    const std::function<void(int64_t, int32_t, const std::vector<float>&)>& on_step) {
  if (prompt.empty()) throw Error("prompt: expected at least one token, got none");
  if (n_generate < 1) throw Error("-n: expected at least 1 token to generate, got " +
                                  std::to_string(n_generate));
  const int64_t positions = static_cast<int64_t>(prompt.size()) + n_generate - 1;
  if (max_positions > 0 && positions > max_positions)
    throw Error("prompt of " + std::to_string(prompt.size()) + " tokens + " +
                std::to_string(n_generate) + " generated needs " + std::to_string(positions) +
                " positions, the context holds " + std::to_string(max_positions));
  GreedyResult result;
  int32_t token = prompt[0];
  for (int64_t pos = 0; pos < positions; ++pos) {
    if (pos < static_cast<int64_t>(prompt.size())) token = prompt[static_cast<size_t>(pos)];
    std::vector<float> logits = executor.step(token, static_cast<int32_t>(pos));
    if (on_step) on_step(result.steps, static_cast<int32_t>(pos), logits);
    ++result.steps;
    if (pos + 1 >= static_cast<int64_t>(prompt.size())) {
      token = executor.next_token();
      result.generated.push_back(token);
    }
  }
  return result;
}

GreedyResult generate_greedy(
    ReferenceExecutor& executor, const std::vector<int32_t>& prompt, int64_t n_generate,
    int64_t max_positions,
    const std::function<void(int64_t, int32_t, const std::vector<float>&)>& on_step) {
  return generate_greedy(step_functions_of(executor), prompt, n_generate, max_positions, on_step);
}

}  // namespace lanec

// Host-side token sampling for --temp > 0 (greedy decoding never comes here:
// its argmax runs on the device inside the step graph).
//
// Order: take the top-k logits (k = 0: all), divide by the temperature,
// softmax, keep the smallest prefix whose probability reaches top_p, draw
// from it. The random stream is std::mt19937_64 seeded with --seed and turned
// into a double in [0, 1) by hand, so a seed gives the same tokens on every
// platform. Ties in the sort break by lower token id.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace lanec::runtime {

class Sampler {
 public:
  Sampler(float temperature, int top_k, float top_p, uint64_t seed)
      : temperature_(temperature), top_k_(top_k), top_p_(top_p), rng_(seed) {}

  int32_t sample(const float* logits, int n_vocab) {
    const int k = (top_k_ <= 0 || top_k_ > n_vocab) ? n_vocab : top_k_;
    ids_.resize(static_cast<size_t>(n_vocab));
    for (int i = 0; i < n_vocab; ++i) ids_[static_cast<size_t>(i)] = i;
    auto better = [&](int a, int b) {
      // NaN logits sort last.
      const float la = logits[a], lb = logits[b];
      if (std::isnan(la) != std::isnan(lb)) return std::isnan(lb);
      return la > lb || (la == lb && a < b);
    };
    std::partial_sort(ids_.begin(), ids_.begin() + k, ids_.end(), better);
    probs_.assign(static_cast<size_t>(k), 0.0);
    const double top = logits[ids_[0]];
    double sum = 0.0;
    for (int i = 0; i < k; ++i) {
      const float l = logits[ids_[static_cast<size_t>(i)]];
      const double p = std::isnan(l) ? 0.0 : std::exp((static_cast<double>(l) - top) / temperature_);
      probs_[static_cast<size_t>(i)] = p;
      sum += p;
    }
    if (!(sum > 0.0)) return ids_[0];
    int keep = k;
    double cumulative = 0.0;
    for (int i = 0; i < k; ++i) {
      cumulative += probs_[static_cast<size_t>(i)] / sum;
      if (cumulative >= top_p_) {
        keep = i + 1;
        break;
      }
    }
    double kept = 0.0;
    for (int i = 0; i < keep; ++i) kept += probs_[static_cast<size_t>(i)];
    const double u = static_cast<double>(rng_() >> 11) * (1.0 / 9007199254740992.0) * kept;
    double acc = 0.0;
    for (int i = 0; i < keep; ++i) {
      acc += probs_[static_cast<size_t>(i)];
      if (u < acc) return ids_[static_cast<size_t>(i)];
    }
    return ids_[static_cast<size_t>(keep - 1)];
  }

 private:
  double temperature_;
  int top_k_;
  double top_p_;
  std::mt19937_64 rng_;
  std::vector<int> ids_;
  std::vector<double> probs_;
};

}  // namespace lanec::runtime

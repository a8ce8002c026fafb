// A one-line progress bar on stderr, drawn only when stderr is a terminal
// (logs and CI output stay clean). Redraws at most every 1 %.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace lanec::app {

class ProgressBar {
 public:
  ProgressBar(std::string label, bool enabled) : label_(std::move(label)), enabled_(enabled) {}
  ~ProgressBar() { finish(); }

  void update(uint64_t done, uint64_t total) {
    if (!enabled_ || total == 0) return;
    const int percent = static_cast<int>(done * 100 / total);
    if (percent == last_percent_) return;
    last_percent_ = percent;
    const int width = 40, filled = percent * width / 100;
    std::fprintf(stderr, "\r%s [%s%s] %3d%% %.2f/%.2f GB", label_.c_str(),
                 std::string(static_cast<size_t>(filled), '#').c_str(),
                 std::string(static_cast<size_t>(width - filled), '.').c_str(), percent,
                 static_cast<double>(done) / 1e9, static_cast<double>(total) / 1e9);
    std::fflush(stderr);
    drawn_ = true;
  }

  void finish() {
    if (drawn_) std::fputc('\n', stderr);
    drawn_ = false;
  }

 private:
  std::string label_;
  bool enabled_;
  int last_percent_ = -1;
  bool drawn_ = false;
};

}  // namespace lanec::app

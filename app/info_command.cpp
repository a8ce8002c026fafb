// lanec info FILE [--json]: what a GGUF file holds, from its headers alone.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "app/command.h"
#include "lib/gguf/gguf_file.h"
#include "lib/info/model_summary.h"

namespace lanec::app {
namespace {

std::string human_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", v, units[u]);
  return buf;
}

void print_pairs(const char* title, const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::printf("\n%s\n", title);
  size_t width = 0;
  for (const auto& [k, v] : pairs) width = std::max(width, k.size());
  for (const auto& [k, v] : pairs) std::printf("  %-*s  %s\n", static_cast<int>(width), k.c_str(), v.c_str());
}

void print_text(const ModelSummary& s) {
  std::printf("file          %s (GGUF v%u)\n", s.path.c_str(), s.gguf_version);
  std::printf("architecture  %s\n", s.architecture.empty() ? "(none)" : s.architecture.c_str());
  if (!s.name.empty()) std::printf("name          %s\n", s.name.c_str());
  if (!s.hyperparameters.empty()) print_pairs("hyperparameters", s.hyperparameters);
  if (!s.tokenizer.empty()) print_pairs("tokenizer", s.tokenizer);

  std::printf("\ntensors (%zu)\n", s.tensors.size());
  size_t name_w = 4, shape_w = 5;
  for (const auto& t : s.tensors) {
    name_w = std::max(name_w, t.name.size());
    shape_w = std::max(shape_w, t.shape.size());
  }
  std::printf("  %-*s  %-*s  %-6s  %12s\n", static_cast<int>(name_w), "name",
              static_cast<int>(shape_w), "shape", "format", "bytes");
  for (const auto& t : s.tensors) {
    std::printf("  %-*s  %-*s  %-6s  %12s\n", static_cast<int>(name_w), t.name.c_str(),
                static_cast<int>(shape_w), t.shape.c_str(), t.format.c_str(),
                human_bytes(t.bytes).c_str());
  }
  std::printf("\ntotals by format\n");
  for (const auto& [format, total] : s.totals_by_format) {
    std::printf("  %-6s  %5llu tensors  %12s\n", format.c_str(),
                static_cast<unsigned long long>(total.first), human_bytes(total.second).c_str());
  }
  std::printf("\nparameters              %.3f B\n", static_cast<double>(s.n_parameters) / 1e9);
  std::printf("weight bytes            %s (%llu)\n", human_bytes(s.weight_bytes).c_str(),
              static_cast<unsigned long long>(s.weight_bytes));
  std::printf("weight bytes per step   %s (%llu)\n", human_bytes(s.weight_bytes_per_step).c_str(),
              static_cast<unsigned long long>(s.weight_bytes_per_step));
}

nlohmann::ordered_json pairs_json(const std::vector<std::pair<std::string, std::string>>& pairs) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [k, v] : pairs) j[k] = v;
  return j;
}

void print_json(const ModelSummary& s) {
  nlohmann::ordered_json j;
  j["file"] = s.path;
  j["gguf_version"] = s.gguf_version;
  j["architecture"] = s.architecture;
  j["name"] = s.name;
  j["hyperparameters"] = pairs_json(s.hyperparameters);
  j["tokenizer"] = pairs_json(s.tokenizer);
  nlohmann::ordered_json tensors = nlohmann::ordered_json::array();
  for (const auto& t : s.tensors) {
    tensors.push_back({{"name", t.name}, {"shape", t.shape}, {"format", t.format},
                       {"elements", t.n_elements}, {"bytes", t.bytes},
                       {"bytes_per_step", t.bytes_per_step}});
  }
  j["tensors"] = tensors;
  nlohmann::ordered_json totals = nlohmann::ordered_json::object();
  for (const auto& [format, total] : s.totals_by_format)
    totals[format] = {{"tensors", total.first}, {"bytes", total.second}};
  j["totals_by_format"] = totals;
  j["parameters"] = s.n_parameters;
  j["weight_bytes"] = s.weight_bytes;
  j["weight_bytes_per_step"] = s.weight_bytes_per_step;
  std::printf("%s\n", j.dump(2).c_str());
}

const RegisterCommand registration(10, "info", [](CLI::App& root) {
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = root.add_subcommand("info", "Describe a GGUF file: hyperparameters, tokenizer, tensors");
  cmd->add_option("file", *path, "GGUF file")->required();
  cmd->add_flag("--json", *json, "Machine-readable output");
  cmd->callback([path, json] {
    const GgufFile file = GgufFile::open(*path);
    const ModelSummary summary = summarize_model(file);
    if (*json) {
      print_json(summary);
    } else {
      print_text(summary);
    }
  });
});

}  // namespace
}  // namespace lanec::app

// `lanec plan MODEL --knobs K -o FILE.cu`: the CLI writes the same program the
// emitter makes (the golden text), and refuses --build without -o.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "lib/synth/synth.h"
#include "tests/emit/emit_samples.h"
#include "tests/support/golden.h"

namespace {

}  // namespace

TEST_CASE("lanec plan -o writes the emitted program", "[emit]") {
  char tmpl[] = "/tmp/lanec_emit_cli_XXXXXX";
  const char* dir = mkdtemp(tmpl);
  REQUIRE(dir != nullptr);
  const std::string model = std::string(dir) + "/qwen3-tiny.gguf";
  lanec::SynthOptions synth;
  synth.shape = lanec::find_preset("qwen3-tiny");
  synth.shape.head_dim = 32;
  lanec::write_synthetic_model(synth, model);
  const std::string out = std::string(dir) + "/model.cu";
  const std::string log = std::string(dir) + "/log.txt";
  const std::string lanec_bin = LANEC_BINARY;

  const int status = std::system((lanec_bin + " plan " + model + " --knobs " + emit_test::knob_path("h200") +
                                  " -o " + out + " >" + log + " 2>&1").c_str());
  INFO(lanec::test::read_text(log));
  REQUIRE(status == 0);
  CHECK(lanec::test::read_text(log).find("wrote " + out) != std::string::npos);
  CHECK(lanec::test::read_text(out) == emit_test::emit_sample("qwen3-tiny", "h200"));

  const int refused = std::system((lanec_bin + " plan " + model + " --knobs " + emit_test::knob_path("h200") +
                                   " --build >" + log + " 2>&1").c_str());
  CHECK(WEXITSTATUS(refused) != 0);
  CHECK(lanec::test::read_text(log).find("--build needs -o") != std::string::npos);
}

// Knob files: every sample loads with its chip's figures, the canonical text
// round-trips, and every kind of mistake is an error naming file, line and key.
#include <catch2/catch.hpp>

#include <string>

#include "lib/common/error.h"
#include "lib/knobs/knobs.h"

namespace {

const std::string kSamples = std::string(LANEC_SOURCE_DIR) + "/samples/knobs/";
const std::string kBad = std::string(LANEC_TEST_DATA) + "/knobs/";

const std::string kGoodText =
    "chip: { name: test, arch: sm_89, sms: 128, smem_kib_per_block: 99 }\n"
    "cache_precision: f16\n"
    "recurrent_state: bf16\n"
    "activations: int8\n";

// The message of the lanec::Error that parsing `text` throws.
std::string error_of(const std::string& text, const std::string& label = "t.yaml") {
  try {
    lanec::parse_knobs(text, label);
  } catch (const lanec::Error& e) {
    return e.what();
  }
  FAIL("no lanec::Error for:\n" << text);
  return "";
}

// kGoodText with line `line` (1-based) replaced.
std::string with_line(int line, const std::string& replacement) {
  std::string text;
  int number = 1;
  size_t start = 0;
  while (start < kGoodText.size()) {
    const size_t end = kGoodText.find('\n', start);
    text += (number == line ? replacement : kGoodText.substr(start, end - start)) + "\n";
    start = end + 1;
    ++number;
  }
  return text;
}

std::string chip_line(const std::string& fields) { return "chip: { " + fields + " }"; }

}  // namespace

TEST_CASE("each sample knob file loads with its chip's figures", "[knobs]") {
  struct Expected {
    const char* file;
    const char* arch;
    int arch_number;
    int sms;
    int smem;
  };
  const Expected samples[] = {{"rtx4090", "sm_89", 89, 128, 99},
                              {"h200", "sm_90", 90, 132, 227},
                              {"h100", "sm_90", 90, 132, 227},
                              {"a100", "sm_80", 80, 108, 163},
                              {"l4", "sm_89", 89, 58, 99}};
  for (const Expected& expected : samples) {
    INFO(expected.file);
    const std::string path = kSamples + expected.file + ".yaml";
    const lanec::Knobs knobs = lanec::load_knobs(path);
    CHECK(knobs.chip.name == expected.file);
    CHECK(knobs.chip.arch == expected.arch);
    CHECK(knobs.arch_number() == expected.arch_number);
    CHECK(knobs.chip.sms == expected.sms);
    CHECK(knobs.chip.smem_kib_per_block == expected.smem);
    CHECK(knobs.source == path);
  }
  const lanec::Knobs h200 = lanec::load_knobs(kSamples + "h200.yaml");
  CHECK(h200.cache_precision == lanec::CachePrecision::f16);
  CHECK(h200.recurrent_state == lanec::StatePrecision::bf16);
  CHECK(h200.activations == lanec::ActivationNumerics::two_pass_int8);
}

TEST_CASE("knobs parse every allowed value and block or flow style", "[knobs]") {
  const lanec::Knobs knobs = lanec::parse_knobs(
      "# comment\n"
      "activations: two-pass-int8\n"
      "chip:\n"
      "  smem_kib_per_block: 228\n"
      "  sms: 1\n"
      "  name: my-chip_2.0\n"
      "  arch: sm_90a\n"
      "recurrent_state: f32\n"
      "cache_precision: f32\n",
      "block.yaml");
  CHECK(knobs.chip.name == "my-chip_2.0");
  CHECK(knobs.arch_number() == 90);
  CHECK(knobs.chip.sms == 1);
  CHECK(knobs.chip.smem_kib_per_block == 228);
  CHECK(knobs.cache_precision == lanec::CachePrecision::f32);
  CHECK(knobs.recurrent_state == lanec::StatePrecision::f32);
  CHECK(knobs.activations == lanec::ActivationNumerics::two_pass_int8);
  CHECK(knobs.source == "block.yaml");
  const lanec::Knobs dequant = lanec::parse_knobs(with_line(4, "activations: dequant"), "d");
  CHECK(dequant.activations == lanec::ActivationNumerics::dequant);
  CHECK(lanec::parse_knobs(with_line(1, chip_line("name: x, arch: sm_100a, sms: 148, "
                                                  "smem_kib_per_block: 227")),
                           "b")
            .arch_number() == 100);
}

TEST_CASE("to_yaml is canonical and round-trips; the summary is one line", "[knobs]") {
  const lanec::Knobs knobs = lanec::load_knobs(kSamples + "rtx4090.yaml");
  const std::string text = lanec::to_yaml(knobs);
  CHECK(text ==
        "chip: { name: rtx4090, arch: sm_89, sms: 128, smem_kib_per_block: 99 }\n"
        "cache_precision: f16\n"
        "recurrent_state: bf16\n"
        "activations: two-pass-int8\n");
  CHECK(lanec::parse_knobs(text, "again") == knobs);
  lanec::Knobs other = knobs;
  other.activations = lanec::ActivationNumerics::two_pass_int8;
  other.recurrent_state = lanec::StatePrecision::f32;
  CHECK(other != knobs);
  CHECK(lanec::parse_knobs(lanec::to_yaml(other), "again") == other);
  CHECK(lanec::knobs_summary(knobs) ==
        "chip=rtx4090 arch=sm_89 sms=128 smem_kib_per_block=99 cache_precision=f16 "
        "recurrent_state=bf16 activations=two-pass-int8");
}

TEST_CASE("knob errors from files name the file, line and key", "[knobs]") {
  const auto message_of = [](const std::string& path) -> std::string {
    try {
      lanec::load_knobs(path);
    } catch (const lanec::Error& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK(message_of(kBad + "bad_cache_precision.yaml") ==
        kBad + "bad_cache_precision.yaml:2:18: knob 'cache_precision': bad value; "
               "expected one of f32, f16, got 'f8'");
  CHECK(message_of(kBad + "unknown_key.yaml") ==
        kBad + "unknown_key.yaml:9:1: knob 'batch': unknown key; expected one of chip, "
               "cache_precision, recurrent_state, activations");
  const std::string syntax = message_of(kBad + "syntax_error.yaml");
  CHECK_THAT(syntax, Catch::StartsWith(kBad + "syntax_error.yaml:"));
  CHECK_THAT(syntax, Catch::Contains("YAML syntax error"));
  // The unclosed list opened on line 3 is reported on line 3 or 4, not elsewhere.
  CHECK_THAT(syntax, Catch::Contains(".yaml:3:") || Catch::Contains(".yaml:4:"));
  CHECK(message_of(kBad + "no_such_file.yaml") ==
        kBad + "no_such_file.yaml: cannot open knob file");
}

TEST_CASE("unknown, missing and duplicate keys are errors", "[knobs]") {
  CHECK(error_of(kGoodText + "extra: 1\n") ==
        "t.yaml:5:1: knob 'extra': unknown key; expected one of chip, cache_precision, "
        "recurrent_state, activations");
  CHECK(error_of(with_line(1, chip_line("name: x, arch: sm_89, sms: 8, smem_kib_per_block: 9, "
                                        "clock: 2"))) ==
        "t.yaml:1:62: knob 'chip.clock': unknown key; expected one of name, arch, sms, "
        "smem_kib_per_block");
  CHECK(error_of(with_line(3, "")) ==
        "t.yaml:1:1: knob 'recurrent_state': missing (every key is required)");
  CHECK(error_of(with_line(1, chip_line("name: x, arch: sm_89, smem_kib_per_block: 9"))) ==
        "t.yaml:1:7: knob 'chip.sms': missing (every key is required)");
  CHECK(error_of(kGoodText + "activations: dequant\n") ==
        "t.yaml:5:1: knob 'activations': key given twice; expected it once");
  CHECK(error_of(kGoodText + "? [a, b]\n: 1\n") ==
        "t.yaml:5:3: knob '(top level)': a key must be a plain name; expected one of chip, "
        "cache_precision, recurrent_state, activations, got a list");
}

TEST_CASE("wrong types are errors naming what was expected and found", "[knobs]") {
  CHECK(error_of(with_line(1, chip_line("name: x, arch: sm_89, sms: \"many\", "
                                        "smem_kib_per_block: 99"))) ==
        "t.yaml:1:36: knob 'chip.sms': wrong type; expected an integer in 1..1024, got 'many'");
  CHECK(error_of(with_line(1, chip_line("name: x, arch: sm_89, sms: [1, 2], "
                                        "smem_kib_per_block: 99"))) ==
        "t.yaml:1:36: knob 'chip.sms': wrong type; expected an integer in 1..1024, got a list");
  CHECK(error_of(with_line(1, chip_line("name: x, arch: sm_89, sms: \"12\", "
                                        "smem_kib_per_block: 99"))) ==
        "t.yaml:1:36: knob 'chip.sms': wrong type; expected an integer in 1..1024, got '12'");
  CHECK(error_of(with_line(1, chip_line("name: x, arch: sm_89, sms: 12.5, "
                                        "smem_kib_per_block: 99"))) ==
        "t.yaml:1:36: knob 'chip.sms': wrong type; expected an integer in 1..1024, got '12.5'");
  CHECK(error_of(with_line(1, "chip: rtx4090")) ==
        "t.yaml:1:7: knob 'chip': wrong type; expected a mapping { name, arch, sms, "
        "smem_kib_per_block }, got 'rtx4090'");
  CHECK(error_of(with_line(2, "cache_precision:")) ==
        "t.yaml:2:1: knob 'cache_precision': wrong type; expected one of f32, f16, got nothing");
  CHECK(error_of(with_line(4, "activations: { mode: int8 }")) ==
        "t.yaml:4:14: knob 'activations': wrong type; expected one of dequant, int8, "
        "two-pass-int8, got a mapping");
  CHECK(error_of(with_line(1, chip_line("name: [a], arch: sm_89, sms: 8, "
                                        "smem_kib_per_block: 99"))) ==
        "t.yaml:1:15: knob 'chip.name': wrong type; expected a name of letters, digits, _ - ., "
        "got a list");
}

TEST_CASE("bad values are errors listing the allowed values", "[knobs]") {
  CHECK(error_of(with_line(3, "recurrent_state: f16")) ==
        "t.yaml:3:18: knob 'recurrent_state': bad value; expected one of f32, bf16, got 'f16'");
  CHECK(error_of(with_line(4, "activations: int4")) ==
        "t.yaml:4:14: knob 'activations': bad value; expected one of dequant, int8, "
        "two-pass-int8, got 'int4'");
  const std::string sms_range = "expected an integer in 1..1024";
  for (const char* sms : {"0", "-4", "1025", "99999999999"}) {
    INFO(sms);
    CHECK(error_of(with_line(1, chip_line(std::string("name: x, arch: sm_89, sms: ") + sms +
                                          ", smem_kib_per_block: 99"))) ==
          "t.yaml:1:36: knob 'chip.sms': out of range; " + sms_range + ", got '" + sms + "'");
  }
  for (const char* smem : {"0", "229", "-1"}) {
    INFO(smem);
    CHECK(error_of(with_line(1, chip_line(std::string("name: x, arch: sm_89, sms: 8, "
                                                      "smem_kib_per_block: ") +
                                          smem))) ==
          std::string("t.yaml:1:59: knob 'chip.smem_kib_per_block': out of range; expected an "
                      "integer in 1..228, got '") +
              smem + "'");
  }
  for (const char* arch : {"sm89", "sm_8", "sm_1000", "sm_89b", "compute_89", "sm_08", "SM_89"}) {
    INFO(arch);
    CHECK(error_of(with_line(1, chip_line(std::string("name: x, arch: ") + arch +
                                          ", sms: 8, smem_kib_per_block: 99"))) ==
          std::string("t.yaml:1:24: knob 'chip.arch': bad value; expected sm_NN or sm_NNa "
                      "(e.g. sm_89, sm_90a), got '") +
              arch + "'");
  }
  CHECK(error_of(with_line(1, chip_line("name: \"my chip\", arch: sm_89, sms: 8, "
                                        "smem_kib_per_block: 99"))) ==
        "t.yaml:1:15: knob 'chip.name': bad value; expected a name of letters, digits, _ - ., "
        "got 'my chip'");
}

TEST_CASE("malformed documents are errors naming file and line", "[knobs]") {
  CHECK(error_of("") ==
        "t.yaml:1:1: empty knob file; expected a mapping with keys chip, cache_precision, "
        "recurrent_state, activations");
  CHECK(error_of("# only a comment\n") ==
        "t.yaml:1:1: empty knob file; expected a mapping with keys chip, cache_precision, "
        "recurrent_state, activations");
  CHECK(error_of("- chip\n- sms\n") == "t.yaml:1:1: a knob file is a mapping of keys; got a list");
  CHECK(error_of(kGoodText + "---\n" + kGoodText) ==
        "t.yaml:6:1: a knob file holds one YAML document; found a second one here");
  const std::string syntax = error_of("chip: { name: x\ncache_precision: f16\n", "s.yaml");
  CHECK_THAT(syntax, Catch::StartsWith("s.yaml:"));
  CHECK_THAT(syntax, Catch::Contains("YAML syntax error"));
  const std::string tabs = error_of(kGoodText + "\tactivations: int8\n", "tab.yaml");
  CHECK_THAT(tabs, Catch::StartsWith("tab.yaml:5:"));
}

// libFuzzer entry for the GGUF reader: parses arbitrary bytes and touches
// everything the parse produced (every metadata value, every tensor info and
// the first and last byte of its data). A lanec::Error is the expected answer
// to bad input; anything else — a crash, a sanitizer report, another
// exception, a leak — is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "lib/common/error.h"
#include "lib/gguf/gguf_file.h"

namespace {

volatile uint64_t g_sink = 0;  // keeps the touched bytes from being optimized away

void touch_metadata(const lanec::GgufFile& file) {
  for (const auto& [key, value] : file.metadata()) {
    g_sink = g_sink + key.size() + lanec::gguf_value_summary(value).size();
    // The typed accessors must answer with a value or a lanec::Error.
    try { g_sink = g_sink + file.get_uint(key); } catch (const lanec::Error&) {}
    try { g_sink = g_sink + static_cast<uint64_t>(file.get_int(key)); } catch (const lanec::Error&) {}
    try { g_sink = g_sink + static_cast<uint64_t>(file.get_float(key) != 0); } catch (const lanec::Error&) {}
    try { g_sink = g_sink + file.get_string(key).size(); } catch (const lanec::Error&) {}
    try { g_sink = g_sink + file.get_string_array(key).size(); } catch (const lanec::Error&) {}
    try { g_sink = g_sink + file.get_float_array(key).size(); } catch (const lanec::Error&) {}
    try { g_sink = g_sink + file.get_int_array(key).size(); } catch (const lanec::Error&) {}
  }
}

void touch_tensors(const lanec::GgufFile& file) {
  for (const lanec::GgufTensorInfo& t : file.tensors()) {
    g_sink = g_sink + t.rows() + t.row_bytes() + t.shape_string().size() + t.n_elements;
    if (t.n_bytes > 0) g_sink = g_sink + t.data[0] + t.data[t.n_bytes - 1];
    if (file.find_tensor(t.name) != &t) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const lanec::GgufFile file = lanec::GgufFile::parse(data, size, "fuzz.gguf");
    touch_metadata(file);
    touch_tensors(file);
  } catch (const lanec::Error&) {
    // Expected: bad input is reported, not crashed on.
  }
  return 0;
}

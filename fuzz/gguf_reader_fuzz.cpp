// libFuzzer entry for the GGUF reader: parses arbitrary bytes and touches
// everything the parse produced (every metadata value, every tensor info and
// the first and last byte of its data). A lanec::Error is the expected answer
// to bad input; anything else — a crash, a sanitizer report, another
// exception, a leak — is a finding. A file the reader accepts is also
// rewritten with GgufWriter and read again: it must come back identical
// (metadata equal, tensor names, shapes, types and bytes equal).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>
#include <string>

#include "lib/common/error.h"
#include "lib/gguf/gguf_file.h"
#include "lib/gguf/gguf_writer.h"

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

// The writer must take anything the reader accepted, and write it so that
// the reader gives it back unchanged. Any error here is a finding.
void check_round_trip(const lanec::GgufFile& file) {
  try {
    lanec::GgufWriter writer(file.version());
    for (const auto& [key, value] : file.metadata()) writer.set(key, value);
    for (const lanec::GgufTensorInfo& t : file.tensors()) {
      writer.add_tensor(t.name, t.ne, t.type, std::vector<uint8_t>(t.data, t.data + t.n_bytes));
    }
    const std::vector<uint8_t> bytes = writer.to_bytes();
    const lanec::GgufFile back = lanec::GgufFile::parse(bytes.data(), bytes.size(), "rewritten");
    if (back.version() != file.version() || back.alignment() != file.alignment() ||
        back.metadata() != file.metadata() || back.tensors().size() != file.tensors().size()) {
      __builtin_trap();
    }
    for (size_t i = 0; i < file.tensors().size(); ++i) {
      const lanec::GgufTensorInfo& a = file.tensors()[i];
      const lanec::GgufTensorInfo& b = back.tensors()[i];
      if (a.name != b.name || a.ne != b.ne || a.type != b.type || a.n_bytes != b.n_bytes ||
          (a.n_bytes > 0 && std::memcmp(a.data, b.data, a.n_bytes) != 0)) {
        __builtin_trap();
      }
    }
  } catch (const lanec::Error&) {
    __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const lanec::GgufFile file = lanec::GgufFile::parse(data, size, "fuzz.gguf");
    touch_metadata(file);
    touch_tensors(file);
    check_round_trip(file);
  } catch (const lanec::Error&) {
    // Expected: bad input is reported, not crashed on.
  }
  return 0;
}

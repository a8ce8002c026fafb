// GGUF writer. write() lays the file out first (header, metadata, tensor
// infos, each tensor at an aligned data offset), creates the file at its full
// size, maps it writable and fills tensor data in parallel: the tensors are
// cut into row chunks of about kChunkBytes that a small pool of threads takes
// in turn. The new file is all zeros, so padding costs nothing.
//
// Alignment: the default is 32 and general.alignment is then not written;
// set_alignment() (or set("general.alignment", ...)) writes the key, so a
// file with another alignment always says so.
#include "lib/gguf/gguf_writer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>

#include "lib/common/error.h"
#include "lib/gguf/gguf_bytes.h"
#include "lib/gguf/gguf_file.h"

namespace lanec {
namespace {

using gguf::append_le;

constexpr uint64_t kChunkBytes = 8ull << 20;

void put_bytes(std::vector<uint8_t>& out, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  out.insert(out.end(), p, p + n);
}

void put_string(std::vector<uint8_t>& out, const std::string& s) {
  append_le<uint64_t>(out, s.size());
  put_bytes(out, s.data(), s.size());
}

void put_value(std::vector<uint8_t>& out, const GgufValue& value, const std::string& key) {
  switch (value.type) {
    case GgufValueType::U8: append_le(out, std::get<uint8_t>(value.data)); return;
    case GgufValueType::I8: append_le(out, std::get<int8_t>(value.data)); return;
    case GgufValueType::U16: append_le(out, std::get<uint16_t>(value.data)); return;
    case GgufValueType::I16: append_le(out, std::get<int16_t>(value.data)); return;
    case GgufValueType::U32: append_le(out, std::get<uint32_t>(value.data)); return;
    case GgufValueType::I32: append_le(out, std::get<int32_t>(value.data)); return;
    case GgufValueType::F32: append_le(out, std::get<float>(value.data)); return;
    case GgufValueType::U64: append_le(out, std::get<uint64_t>(value.data)); return;
    case GgufValueType::I64: append_le(out, std::get<int64_t>(value.data)); return;
    case GgufValueType::F64: append_le(out, std::get<double>(value.data)); return;
    case GgufValueType::BOOL: append_le<uint8_t>(out, std::get<bool>(value.data) ? 1 : 0); return;
    case GgufValueType::STRING: put_string(out, std::get<std::string>(value.data)); return;
    case GgufValueType::ARRAY: {
      const auto& array = std::get<GgufArray>(value.data);
      append_le<uint32_t>(out, static_cast<uint32_t>(array.elem_type));
      append_le<uint64_t>(out, array.items.size());
      for (const GgufValue& item : array.items) put_value(out, item, key);
      return;
    }
  }
  LANEC_ASSERT(false, "metadata key '" + key + "' has an invalid value type");
}

// Checks that a value is what its type says (the variant matches, arrays
// are flat and uniform), so that the file written is one the reader accepts.
void check_value(const GgufValue& value, const std::string& key, bool in_array) {
  if (!gguf_value_type_is_valid(static_cast<uint32_t>(value.type))) {
    throw Error("gguf writer: key '" + key + "' has an invalid value type");
  }
  const size_t expected_index = static_cast<size_t>(value.type);
  if (value.data.index() != expected_index) {
    throw Error("gguf writer: key '" + key + "' is tagged " + gguf_value_type_name(value.type) +
                " but holds another type");
  }
  if (value.type != GgufValueType::ARRAY) return;
  if (in_array) throw Error("gguf writer: key '" + key + "' is an array of arrays");
  const auto& array = std::get<GgufArray>(value.data);
  if (array.elem_type == GgufValueType::ARRAY) {
    throw Error("gguf writer: key '" + key + "' is an array of arrays");
  }
  for (const GgufValue& item : array.items) {
    if (item.type != array.elem_type) {
      throw Error("gguf writer: array '" + key + "' of " + gguf_value_type_name(array.elem_type) +
                  " holds a " + gguf_value_type_name(item.type));
    }
    check_value(item, key, true);
  }
}

struct Layout {
  std::vector<uint8_t> header;  // everything before the data section
  uint64_t data_offset = 0;
  std::vector<uint64_t> tensor_offsets;  // relative to the data section
  uint64_t total_size = 0;
};

// One unit of work: rows [first_row, first_row + n_rows) of one tensor.
struct Chunk {
  size_t tensor = 0;
  uint64_t first_row = 0;
  uint64_t n_rows = 0;
  uint64_t bytes = 0;
};

// The alignment a general.alignment value asks for: like the reader, any
// integer type holding a power of two that fits in u32.
uint32_t alignment_from(const GgufValue& value) {
  const std::optional<GgufInteger> n = gguf_integer_of(value);
  if (!n) {
    throw Error("gguf writer: general.alignment must be an integer, got " +
                std::string(gguf_value_type_name(value.type)));
  }
  if (n->negative || !gguf::is_valid_alignment(n->magnitude)) {
    throw Error("gguf writer: alignment " + gguf_value_summary(value) +
                " is not a power of two that fits in u32");
  }
  return static_cast<uint32_t>(n->magnitude);
}

uint64_t checked_tensor_bytes(const std::string& name, const std::vector<uint64_t>& ne,
                              GgmlType type) {
  if (name.size() > kGgufMaxTensorNameBytes) {
    throw Error("gguf writer: tensor name '" + name.substr(0, 64) + "...' is longer than " +
                std::to_string(kGgufMaxTensorNameBytes) + " bytes");
  }
  if (ne.empty() || ne.size() > gguf::kMaxDims) {
    throw Error("gguf writer: tensor '" + name + "' has " + std::to_string(ne.size()) +
                " dimensions, expected 1 to " + std::to_string(gguf::kMaxDims));
  }
  if (ggml_type_traits(static_cast<uint32_t>(type)) == nullptr) {
    throw Error("gguf writer: tensor '" + name + "' has unknown ggml type id " +
                std::to_string(static_cast<uint32_t>(type)));
  }
  const std::optional<uint64_t> bytes = ggml_tensor_bytes(type, ne);
  if (!bytes) {
    throw Error("gguf writer: tensor '" + name + "' of type " + ggml_type_name(type) +
                ": ne[0] = " + std::to_string(ne[0]) + " is not a multiple of the block size " +
                std::to_string(ggml_traits(type).block_elems) + ", or the size overflows");
  }
  return *bytes;
}

struct TensorGeometry {
  uint64_t rows = 1;
  uint64_t row_bytes = 0;
  uint64_t bytes = 0;
};

// Serializes header, metadata and tensor infos, and places every tensor.
Layout compute_layout(uint32_t version, uint32_t alignment,
                             const std::vector<std::pair<std::string, GgufValue>>& metadata,
                             const std::vector<std::string>& names,
                             const std::vector<std::vector<uint64_t>>& shapes,
                             const std::vector<GgmlType>& types,
                             const std::vector<TensorGeometry>& geometry) {
  Layout layout;
  std::vector<uint8_t>& out = layout.header;
  append_le<uint32_t>(out, gguf::kMagic);
  append_le<uint32_t>(out, version);
  append_le<uint64_t>(out, names.size());
  append_le<uint64_t>(out, metadata.size());
  for (const auto& [key, value] : metadata) {
    put_string(out, key);
    append_le<uint32_t>(out, static_cast<uint32_t>(value.type));
    put_value(out, value, key);
  }
  uint64_t offset = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    put_string(out, names[i]);
    append_le<uint32_t>(out, static_cast<uint32_t>(shapes[i].size()));
    for (uint64_t n : shapes[i]) append_le<uint64_t>(out, n);
    append_le<uint32_t>(out, static_cast<uint32_t>(types[i]));
    append_le<uint64_t>(out, offset);
    layout.tensor_offsets.push_back(offset);
    offset = gguf::align_up(offset + geometry[i].bytes, alignment);
  }
  layout.data_offset = gguf::align_up(out.size(), alignment);
  layout.total_size = layout.data_offset + offset;
  return layout;
}

// Fills every tensor's bytes at base + data_offset + tensor offset.
void fill_tensors(uint8_t* data, const std::vector<uint64_t>& offsets,
                  const std::vector<TensorGeometry>& geometry,
                  const std::vector<const std::vector<uint8_t>*>& buffers,
                  const std::vector<const TensorFill*>& fills, unsigned threads,
                  const std::function<void(uint64_t, uint64_t)>& progress) {
  std::vector<Chunk> chunks;
  uint64_t total = 0;
  for (size_t t = 0; t < geometry.size(); ++t) {
    const TensorGeometry& g = geometry[t];
    total += g.bytes;
    if (g.bytes == 0) continue;
    const uint64_t rows_per_chunk = std::max<uint64_t>(1, kChunkBytes / g.row_bytes);
    for (uint64_t row = 0; row < g.rows; row += rows_per_chunk) {
      const uint64_t n = std::min(rows_per_chunk, g.rows - row);
      chunks.push_back(Chunk{t, row, n, n * g.row_bytes});
    }
  }
  if (progress) progress(0, total);

  std::atomic<size_t> next{0};
  std::atomic<uint64_t> done_bytes{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first_error;
  std::mutex mutex;
  std::condition_variable finished_cv;
  unsigned running = 0;

  auto work = [&] {
    while (!failed.load()) {
      const size_t i = next.fetch_add(1);
      if (i >= chunks.size()) break;
      const Chunk& c = chunks[i];
      uint8_t* dst = data + offsets[c.tensor] + c.first_row * geometry[c.tensor].row_bytes;
      try {
        if (fills[c.tensor] != nullptr) {
          (*fills[c.tensor])(dst, c.first_row, c.n_rows);
        } else {
          std::memcpy(dst, buffers[c.tensor]->data() + c.first_row * geometry[c.tensor].row_bytes,
                      c.bytes);
        }
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!first_error) first_error = std::current_exception();
        failed.store(true);
      }
      done_bytes.fetch_add(c.bytes);
    }
    std::lock_guard<std::mutex> lock(mutex);
    --running;
    finished_cv.notify_all();
  };

  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<size_t>(threads, std::max<size_t>(1, chunks.size())));
  std::vector<std::thread> pool;
  running = threads;
  for (unsigned i = 0; i < threads; ++i) pool.emplace_back(work);
  {
    // The calling thread only reports progress, so the callback never runs concurrently.
    std::unique_lock<std::mutex> lock(mutex);
    while (running > 0) {
      finished_cv.wait_for(lock, std::chrono::milliseconds(100));
      if (progress && running > 0) {
        lock.unlock();
        progress(done_bytes.load(), total);
        lock.lock();
      }
    }
  }
  for (std::thread& t : pool) t.join();
  if (first_error) std::rethrow_exception(first_error);
  if (progress) progress(total, total);
}

// Closes a file descriptor and unmaps a mapping on every path out of write().
struct OutputFile {
  int fd = -1;
  void* address = MAP_FAILED;
  size_t length = 0;
  ~OutputFile() {
    if (address != MAP_FAILED) munmap(address, length);
    if (fd >= 0) ::close(fd);
  }
};

std::string errno_text() { return std::strerror(errno); }

struct Prepared {
  Layout layout;
  std::vector<TensorGeometry> geometry;
  std::vector<const std::vector<uint8_t>*> buffers;
  std::vector<const TensorFill*> fills;
};

// Lays out a writer's metadata and tensors and collects each tensor's source
// (a buffer or a fill callback). Shared by write() and to_bytes(); a template
// only so that it can take GgufWriter's private tensor list.
template <typename PendingTensors>
Prepared prepare(uint32_t version, uint32_t alignment,
                 const std::vector<std::pair<std::string, GgufValue>>& metadata,
                 const PendingTensors& tensors) {
  Prepared p;
  std::vector<std::string> names;
  std::vector<std::vector<uint64_t>> shapes;
  std::vector<GgmlType> types;
  for (const auto& t : tensors) {
    names.push_back(t.name);
    shapes.push_back(t.ne);
    types.push_back(t.type);
    TensorGeometry g;
    g.bytes = *ggml_tensor_bytes(t.type, t.ne);  // checked by add_tensor
    g.row_bytes = *ggml_row_bytes(t.type, t.ne[0]);
    for (size_t d = 1; d < t.ne.size(); ++d) g.rows *= t.ne[d];
    p.geometry.push_back(g);
    p.buffers.push_back(t.fill ? nullptr : &t.bytes);
    p.fills.push_back(t.fill ? &t.fill : nullptr);
  }
  p.layout = compute_layout(version, alignment, metadata, names, shapes, types, p.geometry);
  return p;
}

}  // namespace

GgufWriter::GgufWriter(uint32_t version) : version_(version) {
  if (version != 2 && version != 3) {
    throw Error("gguf writer: version " + std::to_string(version) + " is not 2 or 3");
  }
}

void GgufWriter::set_alignment(uint32_t alignment) {
  set("general.alignment", GgufValue::u32(alignment));
}

void GgufWriter::set(const std::string& key, GgufValue value) {
  check_value(value, key, false);
  if (key == "general.alignment") alignment_ = alignment_from(value);
  for (auto& entry : metadata_) {
    if (entry.first == key) {
      entry.second = std::move(value);
      return;
    }
  }
  metadata_.emplace_back(key, std::move(value));
}

void GgufWriter::add_tensor(const std::string& name, std::vector<uint64_t> ne, GgmlType type,
                            std::vector<uint8_t> bytes) {
  const uint64_t n_bytes = checked_tensor_bytes(name, ne, type);
  if (bytes.size() != n_bytes) {
    throw Error("gguf writer: tensor '" + name + "' needs " + std::to_string(n_bytes) +
                " bytes, got a buffer of " + std::to_string(bytes.size()));
  }
  for (const PendingTensor& t : tensors_) {
    if (t.name == name) throw Error("gguf writer: duplicate tensor name '" + name + "'");
  }
  tensors_.push_back(PendingTensor{name, std::move(ne), type, std::move(bytes), {}});
}

void GgufWriter::add_tensor(const std::string& name, std::vector<uint64_t> ne, GgmlType type,
                            TensorFill fill) {
  checked_tensor_bytes(name, ne, type);
  if (!fill) throw Error("gguf writer: tensor '" + name + "' has an empty fill function");
  for (const PendingTensor& t : tensors_) {
    if (t.name == name) throw Error("gguf writer: duplicate tensor name '" + name + "'");
  }
  tensors_.push_back(PendingTensor{name, std::move(ne), type, {}, std::move(fill)});
}

void GgufWriter::write(const std::string& path, unsigned threads,
                       const std::function<void(uint64_t, uint64_t)>& progress) const {
  const Prepared p = prepare(version_, alignment_, metadata_, tensors_);
  if (p.layout.total_size > static_cast<uint64_t>(std::numeric_limits<off_t>::max())) {
    throw Error(path + ": the file would be " + std::to_string(p.layout.total_size) +
                " bytes, too large to create");
  }
  OutputFile file;
  file.fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (file.fd < 0) throw Error(path + ": cannot create: " + errno_text());
  if (ftruncate(file.fd, static_cast<off_t>(p.layout.total_size)) != 0) {
    throw Error(path + ": cannot size the file to " + std::to_string(p.layout.total_size) +
                " bytes: " + errno_text());
  }
  // Reserve the blocks now: a full disk is then an error here, not a SIGBUS
  // while filling the mapping. Filesystems without fallocate are let through.
  const int reserve = posix_fallocate(file.fd, 0, static_cast<off_t>(p.layout.total_size));
  if (reserve == ENOSPC || reserve == EFBIG) {
    throw Error(path + ": cannot reserve " + std::to_string(p.layout.total_size) +
                " bytes: " + std::strerror(reserve));
  }
  file.length = static_cast<size_t>(p.layout.total_size);
  file.address = mmap(nullptr, file.length, PROT_READ | PROT_WRITE, MAP_SHARED, file.fd, 0);
  if (file.address == MAP_FAILED) {
    throw Error(path + ": cannot map " + std::to_string(file.length) + " bytes for writing: " +
                errno_text());
  }
  auto* base = static_cast<uint8_t*>(file.address);
  std::memcpy(base, p.layout.header.data(), p.layout.header.size());
  fill_tensors(base + p.layout.data_offset, p.layout.tensor_offsets, p.geometry, p.buffers,
               p.fills, threads, progress);
  if (munmap(file.address, file.length) != 0) {
    throw Error(path + ": cannot unmap the written file: " + errno_text());
  }
  file.address = MAP_FAILED;
  if (::close(file.fd) != 0) {
    file.fd = -1;
    throw Error(path + ": cannot close the written file: " + errno_text());
  }
  file.fd = -1;
}

std::vector<uint8_t> GgufWriter::to_bytes() const {
  const Prepared p = prepare(version_, alignment_, metadata_, tensors_);
  std::vector<uint8_t> out(static_cast<size_t>(p.layout.total_size), 0);
  std::memcpy(out.data(), p.layout.header.data(), p.layout.header.size());
  fill_tensors(out.data() + p.layout.data_offset, p.layout.tensor_offsets, p.geometry, p.buffers,
               p.fills, 1, {});
  return out;
}

}  // namespace lanec

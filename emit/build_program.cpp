// nvcc invocation for emitted programs (build_program.h).
#include "emit/build_program.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "emit/emit_program.h"
#include "lib/common/error.h"

namespace lanec {

namespace {

std::string find_nvcc() {
  if (const char* env = std::getenv("NVCC"); env != nullptr && *env != '\0') return env;
  if (std::system("command -v nvcc >/dev/null 2>&1") == 0) return "nvcc";
  if (access("/usr/local/cuda/bin/nvcc", X_OK) == 0) return "/usr/local/cuda/bin/nvcc";
  throw Error("--build: nvcc not found (looked at $NVCC, PATH and /usr/local/cuda/bin/nvcc); "
              "install the CUDA toolkit or set NVCC");
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string program_path_for(const std::string& cu_path) {
  const std::string ext = ".cu";
  if (cu_path.size() > ext.size() && cu_path.compare(cu_path.size() - ext.size(), ext.size(), ext) == 0)
    return cu_path.substr(0, cu_path.size() - ext.size());
  return cu_path + ".bin";
}

std::string build_program(const std::string& cu_path, const std::string& arch) {
  const std::string nvcc = find_nvcc();
  const char* src_env = std::getenv("LANEC_SRC");
  const std::string src = (src_env != nullptr && *src_env != '\0') ? src_env : LANEC_SOURCE_DIR;
  if (access((src + "/kernels/lanec_kernels.cuh").c_str(), R_OK) != 0)
    throw Error("--build: " + src + "/kernels/lanec_kernels.cuh not found; set LANEC_SRC to the lanec source tree");
  std::string command = nvcc_build_command(shell_quote(src), arch, shell_quote(cu_path),
                                           shell_quote(program_path_for(cu_path)));
  command.replace(0, 4, shell_quote(nvcc));
  const int status = std::system(command.c_str());
  if (status != 0) {
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    throw Error("--build: nvcc failed (exit status " + std::to_string(code) + ") building " + cu_path +
                "; command: " + command);
  }
  return command;
}

}  // namespace lanec

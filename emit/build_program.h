// `lanec plan ... -o model.cu --build`: runs nvcc on an emitted program.
// nvcc is taken from $NVCC, else PATH, else /usr/local/cuda/bin/nvcc; the
// runtime sources come from the lanec source tree this binary was built from
// (LANEC_SOURCE_DIR) unless $LANEC_SRC names another.
#pragma once

#include <string>

namespace lanec {

// The program's file name for `cu_path` ("out/model.cu" -> "out/model").
std::string program_path_for(const std::string& cu_path);

// Builds `cu_path` into program_path_for(cu_path) for `arch` ("sm_90").
// Returns the command it ran. Throws lanec::Error when nvcc is not found or
// fails (the message has nvcc's exit status and the command; nvcc's own
// diagnostics go to stderr as it prints them).
std::string build_program(const std::string& cu_path, const std::string& arch);

}  // namespace lanec

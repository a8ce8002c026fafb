// The fuzzer's committed seed corpus: valid_* seeds parse, the others are
// rejected with a lanec::Error (so the seeds cover both paths).
#include <catch2/catch.hpp>

#include <dirent.h>

#include <string>
#include <vector>

#include "lib/common/error.h"
#include "lib/gguf/gguf_file.h"

namespace lanec {

TEST_CASE("gguf seed corpus: valid seeds parse, broken seeds are clean errors", "[gguf]") {
  const std::string dir = std::string(LANEC_SOURCE_DIR) + "/fuzz/corpus/gguf_reader";
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  REQUIRE(d != nullptr);
  while (const dirent* entry = readdir(d)) {
    const std::string name = entry->d_name;
    if (name.size() > 5 && name.substr(name.size() - 5) == ".gguf") names.push_back(name);
  }
  closedir(d);
  REQUIRE(names.size() >= 5);
  for (const std::string& name : names) {
    INFO(name);
    const std::string path = dir + "/" + name;
    if (name.rfind("valid_", 0) == 0) {
      const GgufFile f = GgufFile::open(path);
      CHECK(f.tensors().size() >= 1);
    } else {
      CHECK_THROWS_AS(GgufFile::open(path), Error);
    }
  }
  const GgufFile every = GgufFile::open(dir + "/valid_v3_every_type.gguf");
  CHECK(every.metadata().size() == 14);
  CHECK(every.get_string_array("k.arr") == std::vector<std::string>{"a", "bc"});
  CHECK(GgufFile::open(dir + "/valid_align1.gguf").alignment() == 1);
  CHECK(GgufFile::open(dir + "/valid_v2.gguf").version() == 2);
}

}  // namespace lanec

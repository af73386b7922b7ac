// PyTorch 1.13.1's sources for the HIP and coverage tests: Debian's orig tarball (apt-get source
// --download-only pytorch), of which only the parts a test needs are extracted, once, into a cache
// under the build tree. Concurrent test processes serialize on a lock file.
#pragma once

#include <filesystem>
#include <string>

#include "test_support.h"

namespace mlc::test {

// <build>/hipify-data/pytorch-1.13.1 holding torch/utils/hipify, aten/src/ATen/native/cuda and
// c10/cuda; "" with `why` set when the package cannot be had (no deb-src entry, no network).
inline std::string pytorch_sources(std::string& why) {
  namespace fs = std::filesystem;
  const fs::path data = fs::path(MLC_BINARY_DIR) / "hipify-data";
  const fs::path tree = data / "pytorch-1.13.1";
  const fs::path done = data / ".extracted";
  if (fs::exists(done)) return tree.string();
  fs::create_directories(data);
  std::string script =
      "cd " + quote(data.string()) +
      " && flock .lock sh -c '"
      "[ -e .extracted ] && exit 0; "
      "ls pytorch_1.13.1*.orig.tar.* >/dev/null 2>&1 || apt-get source --download-only pytorch >/dev/null 2>&1; "
      "orig=$(ls pytorch_1.13.1*.orig.tar.* 2>/dev/null | head -n 1); [ -n \"$orig\" ] || exit 3; "
      "tar -xf \"$orig\" --wildcards \"*/torch/utils/hipify/*\" \"*/aten/src/ATen/native/cuda/*\" \"*/c10/cuda/*\" "
      "&& touch .extracted'";
  auto r = run(script);
  if (r.status == 0 && fs::exists(tree / "torch/utils/hipify/cuda_to_hip_mappings.py")) return tree.string();
  why = r.status == 3 ? "PyTorch 1.13.1's sources cannot be had: apt-get source --download-only pytorch fetched "
                        "nothing (is there a deb-src entry? bash tools/dev.sh test adds one)"
                      : "extracting PyTorch 1.13.1's orig tarball failed: " + r.err.substr(0, 200);
  return "";
}

inline std::string hipify_map_path(const std::string& tree) {
  return tree + "/torch/utils/hipify/cuda_to_hip_mappings.py";
}

}  // namespace mlc::test

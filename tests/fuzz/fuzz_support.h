// Shared by the libFuzzer targets: a private scratch directory under the working directory (never
// /tmp), removed at exit, for the parsers that read files rather than bytes.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace mlc::fuzz {

inline const std::string& scratch_dir() {
  // Never destroyed: the exit handler that removes the directory runs after static destructors.
  static const std::string* dir = [] {
    auto* d = new std::string(std::filesystem::absolute("fuzz-scratch-" + std::to_string(getpid())).string());
    std::filesystem::create_directories(*d);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch_dir(), ec);
    });
    return d;
  }();
  return *dir;
}

inline std::string write_file(const std::string& name, std::string_view bytes) {
  std::string path = scratch_dir() + "/" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

// Splits an input into parts at a marker, so one input can describe several files.
inline std::vector<std::string_view> split_parts(std::string_view data, std::string_view marker, size_t max_parts) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < max_parts) {
    size_t at = data.find(marker);
    if (at == std::string_view::npos) break;
    parts.push_back(data.substr(0, at));
    data.remove_prefix(at + marker.size());
  }
  parts.push_back(data);
  return parts;
}

}  // namespace mlc::fuzz

// dpkg's ownership index on arbitrary bytes: a database whose info/*.list and status come from the
// input, then a cache file whose key line is right and whose body is the input. A garbled cache must
// be ignored (the index rebuilt from the database), never crash or answer with garbage paths.
#include <filesystem>
#include <fstream>

#include "environment/dpkg_index.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fs = std::filesystem;
  auto parts = mlc::fuzz::split_parts({reinterpret_cast<const char*>(data), size}, {"\0\0", 2}, 3);
  parts.resize(3);
  const std::string root = mlc::fuzz::scratch_dir() + "/dpkg";
  const std::string cache = mlc::fuzz::scratch_dir() + "/cache";
  fs::remove_all(root);
  fs::remove_all(cache);
  fs::create_directories(root + "/info");
  fs::create_directories(cache);
  mlc::fuzz::write_file("dpkg/info/libfuzz1:amd64.list", parts[0]);
  mlc::fuzz::write_file("dpkg/status", parts[1]);
  auto built = mlc::environment::load_dpkg_index(root, cache);
  if (!built || built->from_cache) __builtin_trap();  // a fresh cache directory cannot answer
  for (const auto& e : fs::directory_iterator(cache)) {
    std::ifstream in(e.path(), std::ios::binary);
    std::string key;
    std::getline(in, key);
    std::ofstream(e.path(), std::ios::binary | std::ios::trunc) << key << "\n" << parts[2];
  }
  auto again = mlc::environment::load_dpkg_index(root, cache);
  if (!again) __builtin_trap();
  for (size_t row = 0; row < again->size(); ++row) {
    if (again->path(row).empty() || again->entry(row).package.empty()) __builtin_trap();
    if (row > 0 && again->path(row) <= again->path(row - 1)) __builtin_trap();  // sorted, each path once
    if (!again->find(again->path(row))) __builtin_trap();
  }
  return 0;
}

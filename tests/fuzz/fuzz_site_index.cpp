// The site-owner index on arbitrary bytes: one dist-info RECORD, a conda-meta record and one RECORD
// row from the input, then a cache file whose magic and key are right and whose body is the input.
// Every path the index holds must name a file inside its directory, whoever wrote it (a hostile
// wheel, a garbled cache); every row record_path() accepts must be indexed; nothing may crash.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "environment/site_index.h"
#include "fuzz_support.h"

namespace {

namespace fs = std::filesystem;
using mlc::environment::SiteIndex;

void check_paths(const SiteIndex& index) {
  for (const auto& [path, owner] : index.files) {
    if (!mlc::environment::inside_record_directory(path) || !mlc::environment::site_index_covers(path))
      __builtin_trap();
    if (owner.name.empty() || (owner.kind != mlc::OwnerKind::Python && owner.kind != mlc::OwnerKind::Conda))
      __builtin_trap();
  }
}

std::string only_file(const std::string& dir) {
  std::string out;
  for (const auto& e : fs::directory_iterator(dir)) out = e.path().string();
  return out;
}

// Keeps the cache's magic and key, replaces what follows with `body`.
void garble_cache(const std::string& file, std::string_view body) {
  std::stringstream text;
  text << std::ifstream(file, std::ios::binary).rdbuf();
  std::string s = text.str();
  size_t end = s.find("endkey\n");
  if (end == std::string::npos) __builtin_trap();  // we wrote it: the key is there
  std::ofstream(file, std::ios::binary | std::ios::trunc) << s.substr(0, end + 7) << body;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using mlc::environment::RecordSource;
  auto parts = mlc::fuzz::split_parts({reinterpret_cast<const char*>(data), size}, {"\0\0", 2}, 4);
  parts.resize(4);
  const std::string scratch = mlc::fuzz::scratch_dir();
  const std::string site = scratch + "/site", conda = scratch + "/conda", cache = scratch + "/cache";
  for (const auto& d : {site, conda, cache}) fs::remove_all(d);
  fs::create_directories(site + "/pkg-1.0.dist-info");
  fs::create_directories(conda + "/conda-meta");
  fs::create_directories(cache);

  // One row alone.
  if (auto p = mlc::environment::record_path(parts[3]))
    if (!mlc::environment::inside_record_directory(*p)) __builtin_trap();

  // The RECORD: every accepted row of the shape the index covers is there, owned by the dist-info.
  mlc::fuzz::write_file("site/pkg-1.0.dist-info/RECORD", parts[0]);
  auto built = mlc::environment::load_site_index(site, RecordSource::DistInfo, cache);
  if (built.from_cache) __builtin_trap();  // a fresh cache directory cannot answer
  check_paths(built);
  std::set<std::string> want;
  for (std::string_view all = parts[0]; !all.empty();) {
    size_t nl = all.find('\n');
    auto p = mlc::environment::record_path(all.substr(0, nl));
    all.remove_prefix(nl == std::string_view::npos ? all.size() : nl + 1);
    if (p && mlc::environment::site_index_covers(*p)) want.insert(*p);
  }
  if (want.size() != built.files.size()) __builtin_trap();
  for (const auto& p : want) {
    auto it = built.files.find(p);
    if (it == built.files.end() || it->second.name != "pkg" || it->second.version != "1.0") __builtin_trap();
  }

  // The cache it wrote answers the same; a garbled one answers only with paths inside the site.
  auto again = mlc::environment::load_site_index(site, RecordSource::DistInfo, cache);
  if (!again.from_cache || again.files.size() != built.files.size()) __builtin_trap();
  garble_cache(only_file(cache), parts[1]);
  auto garbled = mlc::environment::load_site_index(site, RecordSource::DistInfo, cache);
  check_paths(garbled);
  if (!garbled.from_cache && garbled.files.size() != built.files.size()) __builtin_trap();

  // A conda prefix: the same rule for conda-meta's "files".
  mlc::fuzz::write_file("conda/conda-meta/pkg-1.0-0.json", parts[2]);
  fs::remove_all(cache);
  fs::create_directories(cache);
  check_paths(mlc::environment::load_site_index(conda, RecordSource::CondaMeta, cache));
  garble_cache(only_file(cache), parts[1]);
  check_paths(mlc::environment::load_site_index(conda, RecordSource::CondaMeta, cache));
  return 0;
}

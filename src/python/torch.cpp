// Locating torch's first-loaded extension and its version. Files are read as text or listed; nothing
// here runs.
#include "python/torch.h"

#include <dirent.h>
#include <sys/stat.h>

#include <vector>

#include "common/file_io.h"
#include "common/paths.h"
#include "common/text.h"
#include "common/walk.h"

namespace mlc::python {
namespace {

// Lines read one by one (std::regex over a whole file recurses per character in libstdc++).
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    lines.push_back(trim(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start)));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return lines;
}

// The Version: line of a dist-info METADATA (or an egg-info PKG-INFO) of `package` in `site`.
std::string version_from_metadata(const std::string& site, const std::string& package) {
  for (const auto& name : sorted_entries(site)) {
    bool dist = name.ends_with(".dist-info"), egg = name.ends_with(".egg-info");
    if ((!dist && !egg) || name.rfind(package + "-", 0) != 0) continue;
    auto text = read_text(site + "/" + name + (dist ? "/METADATA" : "/PKG-INFO"));
    if (!text) continue;
    for (const auto& l : lines_of(*text)) {
      if (l.empty()) break;  // the headers end at the first empty line
      if (l.rfind("Version:", 0) == 0) return trim(l.substr(8));
    }
  }
  return "";
}

}  // namespace

std::string version_from_text(const std::string& text) {
  for (const auto& line : lines_of(text)) {
    if (line.rfind("__version__", 0) != 0) continue;
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string value = trim(line.substr(eq + 1));
    if (value.size() >= 2 && (value[0] == '\'' || value[0] == '"')) {
      size_t close = value.find(value[0], 1);
      if (close != std::string::npos) return value.substr(1, close - 1);
    }
  }
  return "";
}

namespace {

// The torch package in `dir` (its torch/_C*.so, flags and version); nullopt without _C.
std::optional<TorchInstall> torch_in(const std::string& dir, bool rtld_global_env) {
  TorchInstall t{.dir = dir, .extension = "", .version = "", .global_deps = true, .extension_global = false};
  // `import torch` runs `from torch._C import *` before anything else needs its libraries.
  for (const auto& name : sorted_entries(dir)) {
    if (name.rfind("_C.", 0) == 0 && name.ends_with(".so") && is_file(dir + "/" + name)) {
      t.extension = dir + "/" + name;
      break;
    }
  }
  if (t.extension.empty()) return std::nullopt;
  // The flags are plain assignments (`USE_GLOBAL_DEPS = True`); read as text, nothing runs.
  if (auto text = read_text(dir + "/_utils_internal.py")) {
    for (const auto& line : lines_of(*text)) {
      std::string compact;
      for (char c : line)
        if (c != ' ' && c != '\t') compact += c;
      if (compact.rfind("USE_GLOBAL_DEPS=", 0) == 0) t.global_deps = compact != "USE_GLOBAL_DEPS=False";
      if (compact.rfind("USE_RTLD_GLOBAL_WITH_LIBTORCH=", 0) == 0)
        t.extension_global = compact == "USE_RTLD_GLOBAL_WITH_LIBTORCH=True";
    }
  }
  if (rtld_global_env) t.extension_global = true;  // torch/__init__.py: `... or os.getenv('TORCH_USE_RTLD_GLOBAL')`
  if (auto text = read_text(dir + "/version.py")) t.version = version_from_text(*text);
  if (t.version.empty()) t.version = version_from_metadata(parent_dir(dir), "torch");
  return t;
}

}  // namespace

std::optional<TorchInstall> find_torch(const Interpreter& env) {
  auto it = env.packages.find("torch");
  if (it == env.packages.end()) return std::nullopt;
  std::string dir = it->second.locations.empty() ? parent_dir(it->second.origin) : it->second.locations.front();
  return torch_in(dir, env.torch_use_rtld_global);
}

std::optional<TorchInstall> torch_beside(const std::string& file) {
  for (std::string dir = parent_dir(file); dir != "/" && !dir.empty(); dir = parent_dir(dir)) {
    if (base_name(dir) == "torch" && is_file(dir + "/__init__.py")) return std::nullopt;  // torch's own files
    if (is_file(dir + "/torch/__init__.py")) return torch_in(dir + "/torch", false);
  }
  return std::nullopt;
}

std::optional<TorchInstall> torch_in_site(const std::string& site) {
  if (!is_file(site + "/torch/__init__.py")) return std::nullopt;
  return torch_in(site + "/torch", false);
}

std::string torch_version_for(const std::string& library, std::string* where) {
  const std::string name = base_name(library);
  if (!name.starts_with("libtorch") && !name.starts_with("libc10")) return "";
  const std::string dir = dir_name(library);
  const std::string parent = dir_name(dir);
  std::vector<std::string> candidates = {parent + "/version.py"};  // site-packages/torch/lib/
  // Debian: /usr/lib/<triplet>/libtorch_cpu.so.1.13 beside /usr/lib/python3/dist-packages/torch/.
  if (parent.ends_with("/lib")) candidates.push_back(parent + "/python3/dist-packages/torch/version.py");
  candidates.push_back(dir + "/python3/dist-packages/torch/version.py");
  for (const auto& c : candidates) {
    auto text = read_text(c);
    const std::string v = text ? version_from_text(*text) : "";
    if (v.empty()) continue;
    if (where) *where = c;
    return v;
  }
  return "";
}

}  // namespace mlc::python

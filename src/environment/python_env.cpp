// Parsing the interpreter's answer and locating torch's first-loaded extension. Files are read as
// text or listed; nothing here runs (the tool runs the interpreter, the core reads its answer).
#include "environment/python_env.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "common/file_io.h"
#include "common/paths.h"
#include "common/text.h"
#include "common/walk.h"

namespace mlc::environment {
namespace {

std::string parent_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

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

std::vector<std::string> context_packages(const backend::Backend& b) {
  std::vector<std::string> packages{"torch"};
  if (!b.python_package.empty()) packages.push_back(b.python_package);
  packages.push_back("torchvision");
  return packages;
}

std::string query_program(const std::vector<std::string>& packages) {
  std::string list;
  for (const auto& p : packages) list += (list.empty() ? "'" : ", '") + p + "'";
  return "import importlib.util, json, os, sys\n"
         "out = {'executable': sys.executable, 'version': '%d.%d.%d' % sys.version_info[:3], 'prefix': sys.prefix,\n"
         "       'torch_use_rtld_global': bool(os.getenv('TORCH_USE_RTLD_GLOBAL')),\n"
         "       'site': [p for p in sys.path if p.endswith(('site-packages', 'dist-packages'))], 'packages': {}}\n"
         "for name in [" +
         list +
         "]:\n"
         "    try:\n"
         "        spec = importlib.util.find_spec(name)\n"
         "    except Exception:\n"
         "        spec = None\n"
         "    if spec is not None:\n"
         "        out['packages'][name] = {'origin': spec.origin, 'locations': list(spec.submodule_search_locations or "
         "[])}\n"
         // What the answer depends on besides the packages found (python_answers.cpp, witnesses): the whole of
         // sys.path, the user site directory whether or not it exists yet, the .pth files of the site directories, and
         // the sitecustomize and usercustomize modules imported at start-up.
         "site_mod = sys.modules.get('site')\n"
         "out['path'] = sys.path\n"
         "out['user_site'] = site_mod.USER_SITE if site_mod is not None and site_mod.ENABLE_USER_SITE else None\n"
         "out['pth'] = [os.path.join(d, f) for d in out['site'] + [out['user_site'] or ''] if d and os.path.isdir(d)\n"
         "              for f in sorted(os.listdir(d)) if f.endswith('.pth')]\n"
         "out['customize'] = [getattr(sys.modules.get(m), '__file__', None) for m in ('sitecustomize', "
         "'usercustomize') if getattr(sys.modules.get(m), '__file__', None)]\n"
         "print(json.dumps(out))\n";
}

Result<PythonEnv> parse_answer(const std::string& interpreter, const std::string& answer) {
  auto bad = InputError{interpreter, "the interpreter did not answer the package query (not a Python 3 interpreter?)"};
  auto doc = nlohmann::json::parse(answer, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("executable") || !doc["executable"].is_string())
    return bad;
  PythonEnv env;
  env.interpreter = interpreter;
  env.executable = doc["executable"].get<std::string>();
  if (doc.contains("version") && doc["version"].is_string()) env.version = doc["version"].get<std::string>();
  if (doc.contains("prefix") && doc["prefix"].is_string()) env.prefix = doc["prefix"].get<std::string>();
  if (doc.contains("torch_use_rtld_global") && doc["torch_use_rtld_global"].is_boolean())
    env.torch_use_rtld_global = doc["torch_use_rtld_global"].get<bool>();
  if (doc.contains("site") && doc["site"].is_array())
    for (const auto& s : doc["site"])
      if (s.is_string()) env.site_dirs.push_back(s.get<std::string>());
  if (doc.contains("packages") && doc["packages"].is_object()) {
    for (const auto& [name, spec] : doc["packages"].items()) {
      if (!spec.is_object()) continue;
      PythonPackage p;
      if (spec.contains("origin") && spec["origin"].is_string()) p.origin = spec["origin"].get<std::string>();
      if (spec.contains("locations") && spec["locations"].is_array())
        for (const auto& l : spec["locations"])
          if (l.is_string()) p.locations.push_back(l.get<std::string>());
      env.packages.emplace(name, std::move(p));
    }
  }
  if (env.executable.empty()) return bad;
  return env;
}

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
  if (t.version.empty()) t.version = version_from_metadata(parent_of(dir), "torch");
  return t;
}

}  // namespace

std::optional<TorchInstall> find_torch(const PythonEnv& env) {
  auto it = env.packages.find("torch");
  if (it == env.packages.end()) return std::nullopt;
  std::string dir = it->second.locations.empty() ? parent_of(it->second.origin) : it->second.locations.front();
  return torch_in(dir, env.torch_use_rtld_global);
}

std::optional<TorchInstall> torch_beside(const std::string& file) {
  for (std::string dir = parent_of(file); dir != "/" && !dir.empty(); dir = parent_of(dir)) {
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

}  // namespace mlc::environment

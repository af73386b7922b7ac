// The site directories of an interpreter, from its layout on disk (CPython's site.py getsitepackages,
// Debian's patch of it, and venv's pyvenv.cfg), as data: nothing is run.
#include "python/interpreter.h"

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>

#include "common/file_io.h"
#include "common/paths.h"
#include "common/text.h"

namespace mlc::python {
namespace {

// "3.11" from "python3.11", "3.11.2" or "3.11.2+": the first two numbers.
std::string major_minor(const std::string& text) {
  size_t at = text.find_first_of("0123456789");
  if (at == std::string::npos) return "";
  size_t dot = text.find('.', at);
  if (dot == std::string::npos) return "";
  size_t end = text.find_first_not_of("0123456789", dot + 1);
  std::string v = text.substr(at, (end == std::string::npos ? text.size() : end) - at);
  return v.size() > dot + 1 - at ? v : "";
}

// The one lib/python3.N directory of a prefix, when the program's name does not say N.
std::string version_from_prefix(const std::string& prefix) {
  std::vector<std::string> found;
  if (DIR* d = opendir((prefix + "/lib").c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.rfind("python3.", 0) == 0 && n.find_first_not_of("0123456789", 8) == std::string::npos) found.push_back(n);
    }
    closedir(d);
  }
  return found.size() == 1 ? major_minor(found.front()) : "";
}

// pyvenv.cfg's `key = value` lines.
std::string cfg_value(const std::string& text, const std::string& key) {
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    start = nl == std::string::npos ? text.size() : nl + 1;
    size_t eq = line.find('=');
    if (eq != std::string::npos && trim(line.substr(0, eq)) == key) return trim(line.substr(eq + 1));
  }
  return "";
}

void add_prefix_sites(const std::string& prefix, const std::string& version, std::vector<std::string>& out) {
  if (version.empty()) return;
  // Debian's python3 (site.py as Debian patches it): /usr/local first, then the packaged dist-packages.
  if (prefix == "/usr") {
    out.push_back("/usr/local/lib/python" + version + "/dist-packages");
    out.push_back("/usr/lib/python3/dist-packages");
    out.push_back("/usr/lib/python" + version + "/dist-packages");
  }
  out.push_back(prefix + "/lib/python" + version + "/site-packages");
}

}  // namespace

Interpreter read_sites(const std::string& executable) {
  Interpreter out;
  out.named = out.executable = executable;
  std::vector<std::string> candidates;
  // venv (PEP 405): pyvenv.cfg one directory above the directory of the program as it is named.
  const std::string venv = dir_name(dir_name(executable));
  if (auto cfg = read_text(venv + "/pyvenv.cfg")) {
    out.version = major_minor(cfg_value(*cfg, "version_info"));
    if (out.version.empty()) out.version = major_minor(cfg_value(*cfg, "version"));
    std::string home = cfg_value(*cfg, "home");
    if (out.version.empty()) out.version = major_minor(base_name(real_path(executable)));
    if (out.version.empty()) out.version = version_from_prefix(venv);
    if (!out.version.empty()) candidates.push_back(venv + "/lib/python" + out.version + "/site-packages");
    if (cfg_value(*cfg, "include-system-site-packages") == "true" && !home.empty())
      add_prefix_sites(dir_name(home), out.version, candidates);  // home: the base interpreter's bin/
  } else {
    const std::string real = real_path(executable);
    const std::string prefix = dir_name(dir_name(real));
    out.version = major_minor(base_name(real));
    if (out.version.empty()) out.version = version_from_prefix(prefix);
    add_prefix_sites(prefix, out.version, candidates);
  }
  for (const auto& c : candidates)
    if (is_dir(c) && std::find(out.site_dirs.begin(), out.site_dirs.end(), c) == out.site_dirs.end())
      out.site_dirs.push_back(c);
  return out;
}

std::string environment_interpreter(const std::string& file) {
  for (std::string dir = dir_name(file); dir.size() > 1 && dir != "."; dir = dir_name(dir)) {
    const bool venv = is_file(dir + "/pyvenv.cfg");
    if (!venv && !is_dir(dir + "/conda-meta")) continue;
    std::vector<std::string> names = {"python3", "python"};
    if (venv)
      if (auto cfg = read_text(dir + "/pyvenv.cfg")) {
        std::string v = major_minor(cfg_value(*cfg, "version_info"));
        if (v.empty()) v = major_minor(cfg_value(*cfg, "version"));
        if (!v.empty()) names.push_back("python" + v);
      }
    for (const auto& n : names)
      if (is_file(dir + "/bin/" + n)) return dir + "/bin/" + n;
    return "";  // an environment without its interpreter: the file is checked as without one
  }
  return "";
}

std::optional<ExtensionTag> extension_tag(const std::string& file) {
  std::string name = base_name(file);
  if (!name.ends_with(".so")) return std::nullopt;
  name.resize(name.size() - 3);
  const size_t dot = name.rfind('.');
  if (dot == std::string::npos) return std::nullopt;
  const std::string tag = name.substr(dot + 1);
  if (tag == "abi3")
    return ExtensionTag{
        .version = "", .tag = tag, .stable_abi = true, .free_threaded = false, .abi_flags = "", .platform = ""};
  // cpython-<major><minor>[flags]-<platform>: 311 is 3.11 (CPython's SOABI, sysconfig's EXT_SUFFIX).
  if (tag.rfind("cpython-3", 0) != 0) return std::nullopt;
  const size_t digits_end = tag.find_first_not_of("0123456789", 9);
  if (digits_end == std::string::npos || digits_end == 9) return std::nullopt;
  const std::string minor = tag.substr(9, digits_end - 9);
  const size_t dash = tag.find('-', digits_end);
  const std::string flags = tag.substr(digits_end, dash - digits_end);
  return ExtensionTag{.version = "3." + minor,
                      .tag = tag.substr(0, dash),
                      .stable_abi = false,
                      .free_threaded = flags.find('t') != std::string::npos,
                      .abi_flags = flags,
                      .platform = dash == std::string::npos ? "" : tag.substr(dash + 1)};
}

std::vector<std::string> extension_suffixes(const std::string& version, const std::string& platform,
                                            const std::string& abi_flags) {
  const std::string v = major_minor(version);
  const size_t dot = v.find('.');
  if (v.empty() || dot == std::string::npos || platform.empty()) return {};
  return {".cpython-" + v.substr(0, dot) + v.substr(dot + 1) + abi_flags + "-" + platform + ".so", ".abi3.so", ".so"};
}

std::string sibling_imported_instead(const std::string& file, const std::vector<std::string>& suffixes) {
  const size_t slash = file.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : file.substr(0, slash);
  const std::string name = base_name(file);
  const size_t dot = name.find('.');
  if (dot == std::string::npos) return "";
  const std::string module = name.substr(0, dot), suffix = name.substr(dot);
  for (const auto& s : suffixes) {
    if (s == suffix) return "";  // its own suffix comes first: nothing before it
    const std::string sibling = dir + "/" + module + s;
    if (access(sibling.c_str(), F_OK) == 0) return sibling;
  }
  return "";  // a suffix the import never tries (another Python's tag): told as extension-tag
}

bool interpreter_imports(const ExtensionTag& tag, const std::string& version, const std::string& platform,
                         const std::string& abi_flags) {
  if (tag.stable_abi) return true;
  if (!platform.empty() && !tag.platform.empty() && tag.platform != platform) return false;
  if (tag.abi_flags != abi_flags) return false;
  return version.empty() || major_minor(version) == tag.version;
}

}  // namespace mlc::python

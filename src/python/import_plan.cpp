// The import context of one file: read from its package, its DT_NEEDED and the torch installations in
// reach (torch/__init__.py's own order: _load_global_deps, then `from torch._C import *`).
#include "python/import_plan.h"

#include <unistd.h>

#include "common/paths.h"
#include "python/package.h"

namespace mlc::python {
namespace {

bool is_torch_library(const std::string& soname) {
  return soname.rfind("libc10.so", 0) == 0 || soname.rfind("libc10_", 0) == 0 || soname.rfind("libtorch", 0) == 0;
}

// `find()` once per key of `memo` (when there is one): asked and filled without a lock (a concurrent
// map); `find()` may run twice for one key in a race, and the first answer stored is kept.
template <class V, class F>
V memoized(tbb::concurrent_unordered_map<std::string, V>* memo, const std::string& key, F find) {
  if (!memo) return find();
  if (auto it = memo->find(key); it != memo->end()) return it->second;
  return memo->emplace(key, find()).first->second;
}

// The torch package that `file` is part of: the nearest directory above it named torch that holds an
// __init__.py (its lib/, bin/ and subpackages are torch's own files).
std::optional<TorchInstall> own_torch(const std::string& file, ImportMemo* memo) {
  for (std::string dir = dir_name(file); dir != "/" && dir != "."; dir = dir_name(dir))
    if (base_name(dir) == "torch" && access((dir + "/__init__.py").c_str(), F_OK) == 0)
      return memoized(memo ? &memo->torch_of_dir : nullptr, "own:" + dir, [&] { return torch_in_site(dir_name(dir)); });
  return std::nullopt;
}

// The torch another file's import would bring: --python's, else the one in the site directory holding
// the file (pip installs a package beside the torch it was built for), else the host interpreter's.
std::optional<TorchInstall> torch_in_reach(const ImportQuestion& q) {
  if (q.python) return q.python_torch ? std::optional<TorchInstall>(*q.python_torch) : std::nullopt;
  return memoized(q.memo ? &q.memo->torch_of_dir : nullptr, "reach:" + dir_name(q.file),
                  [&]() -> std::optional<TorchInstall> {
                    if (auto beside = torch_beside(q.file)) return beside;
                    if (q.host)
                      for (const auto& site : q.host->site_dirs)
                        if (auto t = torch_in_site(site)) return t;
                    return std::nullopt;
                  });
}

// A file of the system's library directories, but for Python's own (/usr/lib/python3/dist-packages).
bool in_system_directory(const std::string& file) {
  return in_system_library_dir(file) && file.find("-packages/") == std::string::npos;
}

// Whether Python is what loads the file: an extension module or a library of modules, a file of a package,
// or one in a site directory of the interpreter; with --python, every file named (the user says which process
// loads it: a kernel library in a build tree, loaded by `import torch; import pkg`). A library of the system
// (libtorch_cpu.so in /usr/lib) is loaded by whatever links it, with or without Python, so its DT_NEEDED says
// nothing of an import.
bool loaded_by_python(const ImportQuestion& q, const PackageChain& chain) {
  if (q.hosting != Hosting::None || !chain.packages.empty()) return true;
  if (q.python && !in_system_directory(q.file)) return true;
  if (q.host)
    for (const auto& site : q.host->site_dirs)
      if (q.file.rfind(site + "/", 0) == 0) return true;
  return false;
}

std::string relative_to(const std::string& path, const std::string& dir) {
  return !dir.empty() && path.rfind(dir + "/", 0) == 0 ? path.substr(dir.size() + 1) : path;
}

}  // namespace

std::optional<TorchImport> torch_imported_before(const ImportQuestion& q) {
  if (auto own = own_torch(q.file, q.memo))
    return TorchImport{.torch = std::move(*own), .reason = TorchReason::PartOfTorch, .evidence = "torch/__init__.py"};
  TorchImport out;
  const PackageChain chain = package_chain(q.file);
  const auto module = chain.packages.empty()
                          ? std::nullopt
                          : memoized(q.memo ? &q.memo->torch_importer : nullptr, chain.packages.back(),
                                     [&] { return module_importing(chain, "torch"); });
  if (module) {
    out.reason = TorchReason::PackageImportsTorch;
    out.evidence = relative_to(*module, chain.site);
  } else if (loaded_by_python(q, chain)) {
    for (const auto& n : q.needed)
      if (is_torch_library(n)) {
        out.reason = TorchReason::NeedsTorchLibraries;
        out.evidence = n;
        break;
      }
    if (out.evidence.empty()) return std::nullopt;
  } else {
    return std::nullopt;
  }
  out.torch = torch_in_reach(q);
  return out;
}

namespace {
void add_torch_loads(const ImportQuestion& q, ImportPlan& plan);
}  // namespace

ImportPlan plan_import(const ImportQuestion& q) {
  ImportPlan plan;
  if (q.program) return plan;  // glibc's dlopen refuses a program; it starts its own process
  plan.hosting = q.hosting;
  // With --python every file's process is the interpreter's (the report says so once); without, a library
  // of modules is hosted because it needs the C API, which its note says.
  plan.needs_python_api = !q.python && q.hosting == Hosting::PythonApi;
  plan.torch = torch_imported_before(q);
  const std::string host_exe = q.host ? q.host->executable : "";
  if (q.python) {
    plan.host = q.python->executable;
  } else if ((q.hosting != Hosting::None || plan.torch) && !host_exe.empty() && access(host_exe.c_str(), R_OK) == 0) {
    plan.host = host_exe;
  }
  if (!plan.host.empty()) plan.loads.push_back({.path = plan.host, .global = true});
  add_torch_loads(q, plan);
  // The extension modules the package chain's imports load first (another package's vendored library loaded
  // under a soname is the copy this file's DT_NEEDED of that name gets).
  if (!q.follow_imports || plan.host.empty() || own_torch(q.file, q.memo)) return plan;
  const PackageChain chain = package_chain(q.file);
  if (chain.packages.empty()) return plan;
  const auto all = memoized(q.memo ? &q.memo->imported_first : nullptr, chain.packages.back(), [&] {
    return extensions_imported_first(chain, q.host ? q.host->site_dirs : std::vector<std::string>{}, "", 256,
                                     q.memo ? &q.memo->imports : nullptr);
  });
  for (const auto& e : all) {
    if (e.module == q.file) break;  // what the chain imports after the file runs after it
    plan.loads.push_back({.path = e.module, .global = false, .imported_by = e.importer});
  }
  return plan;
}

namespace {

// torch's part of a plan: the loads of `import torch`, when torch is imported first.
void add_torch_loads(const ImportQuestion& q, ImportPlan& plan) {
  if (!plan.torch || !plan.torch->torch) return;
  const auto& t = *plan.torch->torch;
  const std::string deps = t.dir + "/lib/libtorch_global_deps.so";
  // torch/__init__.py: _load_global_deps() (ctypes.CDLL with RTLD_GLOBAL) unless USE_GLOBAL_DEPS is False,
  // then `from torch._C import *` (Python's RTLD_LOCAL, or RTLD_GLOBAL under USE_RTLD_GLOBAL_WITH_LIBTORCH).
  // The roots of that import are checked after what comes before them: the global deps alone, _C after them.
  if (q.file == deps) return;
  if (t.global_deps && access(deps.c_str(), F_OK) == 0) plan.loads.push_back({.path = deps, .global = true});
  if (q.file != t.extension) plan.loads.push_back({.path = t.extension, .global = t.extension_global});
}

}  // namespace

}  // namespace mlc::python

// The process a file is really loaded into, inferred from the files (nothing is run): Python hosts an
// extension module, a library of modules and any library of a package; a package that imports torch, or a
// file that needs torch's libraries, is loaded after `import torch` has loaded torch's own (its
// libtorch_global_deps with RTLD_GLOBAL, then torch/_C with Python's RTLD_LOCAL, whose whole closure is
// one scope). The pipeline turns a plan into the loader's environment for that file.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "python/hosting.h"
#include "python/interpreter.h"
#include "python/package.h"
#include "python/torch.h"
#include "report/report.h"

namespace mlc::python {

// Why the import of torch comes first: the report's kind (JSON `imported_after.reason`), one enum for both.
using TorchReason = TorchImportReason;

struct TorchImport {
  // The torch imported; nullopt when the file needs one but none is in reach (it is then checked without).
  std::optional<TorchInstall> torch;
  TorchReason reason = TorchReason::PackageImportsTorch;
  std::string evidence;
};

// One load done before the file, in order: the interpreter (the main program), then torch's.
struct PriorLoad {
  std::string path;
  bool global = true;  // RTLD_GLOBAL (the main program is always in the global scope)
  // An extension module of the package chain's imports (another package's, or an earlier one of the file's
  // own): the Python file whose module-level line imports it. "" for the host and torch's loads.
  std::string imported_by = "";
};

struct ImportPlan {
  std::string host;                 // the interpreter that is the main program of the file's process, "" for none
  Hosting hosting = Hosting::None;  // how Python hosts the file itself
  bool needs_python_api = false;    // hosted as a library of modules (Hosting::PythonApi)
  std::optional<TorchImport> torch;
  // A plugin's program (src/host/program_host.h): the host, when it is no interpreter; "" otherwise.
  std::string plugin_of;
  // host first, then libtorch_global_deps and torch/_C as `import torch` loads them, then the extension modules
  // the package chain's imports load before the file (RTLD_LOCAL, as every import)
  std::vector<PriorLoad> loads;
};

// What the plans of a run's files share, read once: the torch package found for a directory (or none), and
// the module of a package chain that imports torch (or none), by the chain's innermost package. A directory
// of 800 files (a venv) would otherwise read torch's version.py and its __init__'s chain 800 times.
struct ImportMemo {
  tbb::concurrent_unordered_map<std::string, std::optional<TorchInstall>> torch_of_dir;
  tbb::concurrent_unordered_map<std::string, std::optional<std::string>> torch_importer;
  // The extension modules the import of a package chain loads, in order, by the chain's innermost package.
  tbb::concurrent_unordered_map<std::string, std::vector<ImportedFirst>> imported_first;
  ImportCache imports;  // the import lines and module look-ups those walks share
  // (all asked and filled from the parallel plans without a lock: package.h, ImportCache)
};

struct ImportQuestion {
  std::string file;
  std::vector<std::string> needed;  // the file's DT_NEEDED
  Hosting hosting = Hosting::None;
  bool program = false;  // an executable: the main program of a process of its own, never imported
  // --python's answer (every file's main program is then that interpreter), else none; and the torch it
  // imports (find_torch of that answer, found once per run), else none.
  const Interpreter* python = nullptr;
  const TorchInstall* python_torch = nullptr;
  // The interpreter that hosts files Python loads: --python's executable, else the first ELF python3 on
  // PATH ("" for none), with its site directories.
  const Interpreter* host = nullptr;
  ImportMemo* memo = nullptr;  // the run's, or none
  // Follow the package chain's imports into the extension modules they load first (ImportPlan::loads with
  // imported_by): a walk of the packages' Python files, asked for only where its answer can matter.
  bool follow_imports = true;
};

// Whether torch is imported before the file, why, and which torch: the one --python imports, else the one
// in the site directory holding the file, else the host interpreter's. Nullopt when nothing imports torch
// before the file.
std::optional<TorchImport> torch_imported_before(const ImportQuestion& q);

// The whole plan: the host and the loads before the file.
ImportPlan plan_import(const ImportQuestion& q);

}  // namespace mlc::python

// Python's import as context: what an interpreter says about where its packages
// live, parsed from the answer the tool got by running the interpreter (never a package's code), and
// the torch installation `import torch` would load first for an extension that needs it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "common/result.h"

namespace mlc::environment {

// The interpreter's answer about one top-level package (importlib.util.find_spec, which locates a
// package without executing it).
struct PythonPackage {
  std::string origin;                  // its __init__.py (or the module file)
  std::vector<std::string> locations;  // submodule_search_locations: the package directories
};

struct PythonEnv {
  std::string interpreter;             // as the user named it (a shim, a symlink, a name on PATH)
  std::string executable;              // sys.executable: the real program (a shim resolves itself by running)
  std::string version;                 // "3.11.2"
  std::string prefix;                  // sys.prefix
  std::vector<std::string> site_dirs;  // site-packages / dist-packages directories on sys.path
  std::map<std::string, PythonPackage> packages;  // the packages asked about that the interpreter finds
  // TORCH_USE_RTLD_GLOBAL set (non-empty) in the interpreter's environment: torch/__init__.py then
  // imports _C with RTLD_GLOBAL, as USE_RTLD_GLOBAL_WITH_LIBTORCH = True does.
  bool torch_use_rtld_global = false;
};

// The packages whose shared libraries an extension may rely on being loaded by an earlier import:
// torch, the backend's own extension package (torch_musa) and torchvision.
std::vector<std::string> context_packages(const backend::Backend& b);

// The program given to `EXE -c`: prints one JSON object (sys.executable, sys.version, sys.prefix,
// site directories, and find_spec of each of `packages`). find_spec of a top-level name imports
// nothing of that package.
std::string query_program(const std::vector<std::string>& packages);

// Parses what query_program printed; an error naming the interpreter when it is not that JSON.
Result<PythonEnv> parse_answer(const std::string& interpreter, const std::string& answer);

// An interpreter's answer kept between runs, one file per question (<cache_dir>/python-answer-<hash>.tsv):
// the question is the interpreter, the program, the working directory and the environment Python reads
// (PYTHON*, PATH, HOME, TORCH_USE_RTLD_GLOBAL). It is given again while every file and directory the
// answer depends on (every sys.path entry, .pth file and package found: python_answers.cpp) has the
// identity it had; starting the interpreter is most of a --python run (72 of 90 ms on the device). Only
// an interpreter that is the program it runs (a venv's python, not a pyenv shim, whose choice depends on
// files no answer names) is kept.
std::string answer_question(const std::string& interpreter, const std::string& program);
std::optional<std::string> kept_answer(const std::string& cache_dir, const std::string& question);
void keep_answer(const std::string& cache_dir, const std::string& question, const std::string& interpreter,
                 const std::string& answer);

// The torch package that interpreter would import, with the extension module `import torch` loads
// first (torch/_C*.so): its DT_NEEDED closure is torch's libraries as the import loads them.
struct TorchInstall {
  std::string dir;        // .../site-packages/torch
  std::string extension;  // .../torch/_C.cpython-311-x86_64-linux-gnu.so
  std::string version;    // torch/version.py's __version__, else the dist-info METADATA's Version
  // torch/_utils_internal.py's flags, which torch/__init__.py obeys: USE_GLOBAL_DEPS (load
  // lib/libtorch_global_deps.so with RTLD_GLOBAL first; True unless set False) and
  // USE_RTLD_GLOBAL_WITH_LIBTORCH (import _C itself with RTLD_GLOBAL; False unless set True).
  bool global_deps = true;
  bool extension_global = false;
};
std::optional<TorchInstall> find_torch(const PythonEnv& env);

// The torch package beside `file` without asking an interpreter: torch/ in a directory above it (the
// site directory an extension is installed in). Nullopt for torch's own files, or when none is there.
std::optional<TorchInstall> torch_beside(const std::string& file);

// The torch package of a site directory (site/torch with its __init__.py and _C), nullopt when none.
std::optional<TorchInstall> torch_in_site(const std::string& site);

// The __version__ = '...' assignment of a version.py, read as text; "" when there is none.
std::string version_from_text(const std::string& text);

// The torch version installed with a libtorch/libc10 file: torch/version.py beside it (pip's
// site-packages/torch/lib/) or in Debian's /usr/lib/python3/dist-packages/torch/ for
// /usr/lib/<triplet>/; "" when neither is there. `where` gets the file it was read from.
std::string torch_version_for(const std::string& library, std::string* where = nullptr);

}  // namespace mlc::environment

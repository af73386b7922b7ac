// The torch installation `import torch` would load first, found from an interpreter's answer, beside a file,
// or in a site directory; read as text and listed, never run.
#pragma once

#include <optional>
#include <string>

#include "python/interpreter.h"

namespace mlc::python {

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
std::optional<TorchInstall> find_torch(const Interpreter& env);

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

}  // namespace mlc::python

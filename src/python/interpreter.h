// The Python interpreter, one model however it was learned (asked: query.h; read from its files: read_sites
// here), and what its files say without running it: a virtual environment's pyvenv.cfg, the site directories
// of its prefix as Debian's python3 and a plain build lay them out, and which extension modules it imports.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlc::python {

// The answer of an interpreter about one top-level package (importlib.util.find_spec, which locates a
// package without executing it).
struct PythonPackage {
  std::string origin;                  // its __init__.py (or the module file)
  std::vector<std::string> locations;  // submodule_search_locations: the package directories
};

// One Python interpreter, learned one of two ways: asked (--python: the tool ran it with query_program
// and parse_answer read what it printed, query.h) or read from its files (read_sites: pyvenv.cfg and its
// prefix's layout, nothing run). What only asking tells is empty when read.
struct Interpreter {
  std::string named;       // as the user or PATH named it (a shim, a symlink, a venv's bin/python3)
  std::string executable;  // the program its process runs: sys.executable when asked, else as named (a venv's
                           // bin/python3 is a symlink to its base; the venv is the name's)
  std::string version;     // "3.11.2" when asked; "3.11" when read (the program's name or pyvenv.cfg); "" unknown
  std::vector<std::string> site_dirs;  // site-packages / dist-packages directories, in sys.path order
  bool asked = false;                  // learned by running it; else read from its files
  // Asked only:
  std::string prefix;                             // sys.prefix
  std::map<std::string, PythonPackage> packages;  // the packages asked about that the interpreter finds
  // TORCH_USE_RTLD_GLOBAL set (non-empty) in the interpreter's environment: torch/__init__.py then
  // imports _C with RTLD_GLOBAL, as USE_RTLD_GLOBAL_WITH_LIBTORCH = True does.
  bool torch_use_rtld_global = false;
};

// The site directories `executable` (an ELF python3, found on PATH or named by --python) would put on
// sys.path: <venv>/lib/pythonX.Y/site-packages (and its base's, with include-system-site-packages =
// true), <prefix>/lib/pythonX.Y/site-packages, and for /usr Debian's /usr/local/lib/pythonX.Y/dist-packages,
// /usr/lib/python3/dist-packages, /usr/lib/pythonX.Y/dist-packages. The user's site directory is not
// included: it depends on HOME, which the core does not read.
Interpreter read_sites(const std::string& executable);

// The interpreter of the environment a file is installed in, from the file's path alone (nothing is run): the
// nearest directory above it holding a pyvenv.cfg (a venv, PEP 405) or a conda-meta/ directory (a conda
// environment), and in it bin/python3, bin/python or bin/python<version>. A file under VENV is imported by
// VENV's interpreter, whatever python3 PATH finds. "" when the file is in no such environment.
std::string environment_interpreter(const std::string& file);

// What an extension module's file name says it was built for (PEP 3149, PEP 384): "cpython-311-x86_64-linux-gnu"
// -> {version "3.11", tag "cpython-311"}; "cpython-313t-..." -> {"3.13", "cpython-313t", free_threaded};
// "abi3" -> {"", "abi3", stable_abi}. Nullopt for a name without such a tag (m.so, libfoo.so.1).
struct ExtensionTag {
  std::string version;  // "3.11"; "" for abi3
  std::string tag;      // as written in the name
  bool stable_abi = false;
  bool free_threaded = false;
  std::string abi_flags;  // "d" (a debug build's), "t" (free-threaded): what follows the version digits
  std::string platform;   // "x86_64-linux-gnu"; "" when the tag names none
};
std::optional<ExtensionTag> extension_tag(const std::string& file);

// Whether CPython `version` ("3.12", from pyvenv.cfg or the program's name) imports a module file of that tag:
// its importlib EXTENSION_SUFFIXES are .cpython-3XY-<platform>.so, .abi3.so and .so.
// `platform` is the interpreter's multiarch ("x86_64-linux-gnu", glibc's, as the loader is) and
// `abi_flags` its build's ("" for a release build, "t" for python3.13t): a debug (311d) or musl
// (x86_64-linux-musl) module is not among its suffixes either. An empty platform is not checked.
// importlib.machinery.EXTENSION_SUFFIXES of CPython `version` ("3.11") on `platform` with `abi_flags`, in the
// order its import tries them: .cpython-311-x86_64-linux-gnu.so, .abi3.so, .so. Empty for an unknown version.
std::vector<std::string> extension_suffixes(const std::string& version, const std::string& platform,
                                            const std::string& abi_flags);

// The file beside `file` that the import opens instead: the same module name with a suffix that comes
// earlier in `suffixes` (a stale _core.cpython-311-...so beside a rebuilt _core.so). "" when none does.
std::string sibling_imported_instead(const std::string& file, const std::vector<std::string>& suffixes);

bool interpreter_imports(const ExtensionTag& tag, const std::string& version, const std::string& platform = "",
                         const std::string& abi_flags = "");

}  // namespace mlc::python

// Where an interpreter imports packages from, read from its files (never run): a virtual environment's
// pyvenv.cfg, and the site directories of its prefix as Debian's python3 and a plain build lay them out.
#pragma once

#include <string>
#include <vector>

namespace mlc::python {

struct InterpreterSites {
  std::string executable;  // as named (a venv's bin/python3 is a symlink to its base; the venv is the name's)
  std::string version;     // "3.11", from the program's name or pyvenv.cfg; "" when unknown
  std::vector<std::string> site_dirs;  // existing site directories, in sys.path order
};

// The site directories `executable` (an ELF python3, found on PATH or named by --python) would put on
// sys.path: <venv>/lib/pythonX.Y/site-packages (and its base's, with include-system-site-packages =
// true), <prefix>/lib/pythonX.Y/site-packages, and for /usr Debian's /usr/local/lib/pythonX.Y/dist-packages,
// /usr/lib/python3/dist-packages, /usr/lib/pythonX.Y/dist-packages. The user's site directory is not
// included: it depends on HOME, which the core does not read.
InterpreterSites read_sites(const std::string& executable);

}  // namespace mlc::python

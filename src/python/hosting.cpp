// The Python hosting rule (python_host.h): read from the file's own dynamic section and .dynsym,
// as Python's import looks for PyInit_<name> and as ld.so would look the C API up in the interpreter.
#include "python/hosting.h"

#include <algorithm>
#include <string>
#include <vector>

#include "host/host_api.h"
#include "loader/program.h"

namespace mlc::python {

bool is_extension_module(const elf::ElfObject& o) {
  std::string file = o.path.substr(o.path.rfind('/') + 1);
  std::string init = "PyInit_" + file.substr(0, file.find('.'));
  std::vector<uint32_t> hits;
  o.find_defined(init, elf::gnu_hash(init), hits);
  return !hits.empty();
}

Hosting hosting_of(const elf::ElfObject& o) {
  if (loader::is_program(o)) return Hosting::None;  // a program is the main map of its own process
  if (is_extension_module(o)) return Hosting::ExtensionModule;
  // A libpython it links defines the C API in its own process (glibc: the link map's scope).
  if (std::any_of(o.needed.begin(), o.needed.end(), [](const std::string& n) { return n.rfind("libpython", 0) == 0; }))
    return Hosting::None;
  // A weak reference left undefined binds to 0 without failing the load: it needs no host.
  for (uint32_t i : o.undefined_dynamic_symbols()) {
    elf::Symbol s = o.dynamic_symbol(i);
    if (s.binding == elf::Binding::Weak || s.binding == elf::Binding::Local) continue;
    if (host::host_api_of(o.name_of(s)) == host::HostApi::Python) return Hosting::PythonApi;
  }
  return Hosting::None;
}

}  // namespace mlc::python

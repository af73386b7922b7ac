// Which files Python hosts: a file whose load happens inside a Python process is checked with the
// interpreter as the main program of that process (its exported C API binds the file's Py* names),
// every other file in a process of its own. One rule, read by the pipeline and the report.
#pragma once

#include "elf/elf_object.h"

namespace mlc::python {

enum class Hosting {
  None,             // loaded on its own (a program always is): every undefined name must come from what it links
  ExtensionModule,  // exports PyInit_<name> (<name>: the file name up to its first dot): Python imports it
  // Not a module but a library of modules (libtorch_python, libarrow_python, libjax_common): at least
  // one non-weak undefined .dynsym entry names the Python C API (Py[A-Z_]..., _Py[A-Z_]...) and no
  // DT_NEEDED names libpython*. Only a Python process can load it (python3 exports the C API), as
  // ctypes.CDLL does there; a library that links libpython gets the API from it and needs no host.
  PythonApi,
};

// The file's hosting, from its dynamic section and .dynsym (read with symbols).
Hosting hosting_of(const elf::ElfObject& o);

// Whether `o` exports PyInit_<its file name up to the first dot>.
bool is_extension_module(const elf::ElfObject& o);

}  // namespace mlc::python

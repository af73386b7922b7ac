// Why a load fails when no library is missing and no symbol or version is undefined: the loader's
// vocabulary shared with the report (JSON `load_failures[].kind`), a leaf header as found_how.h is.
#pragma once

#include <cstdint>
#include <string>

namespace mlc::loader {

// A load glibc fails for another reason than a library not found, a symbol undefined or a version
// node missing: each with the glibc function that fails it.
enum class FailureKind {
  BadCandidate,          // dl-load.c open_verify / _dl_map_object_from_fd: a file met on the search
                         // that is no loadable object of the process's class (empty, text, a directory,
                         // ET_REL, an executable, another byte order...) ends the search with an error
  NoOpen,                // _dl_map_object_from_fd: DF_1_NOOPEN, "shared object cannot be dlopen()ed"
  StaticTls,             // dl-reloc.c _dl_allocate_static_tls: initial-exec TLS past the surplus
  TlsMismatch,           // an initial-exec TLS relocation bound to a non-TLS symbol of an object without
                         // PT_TLS: _dl_try_allocate_static_tls divides by its zero alignment (SIGFPE)
  VersionFileUnmatched,  // dl-version.c _dl_check_map_versions: a Verneed file no loaded object answers
                         // to (a DT_NEEDED spelled with $ORIGIN/$PLATFORM) - assertion, abort
  VersionWithoutVersym,  // dl-lookup.c check_match: a versioned reference looked up in the object it
                         // names, which has no .gnu.version - assertion, abort
  ProtectedCopy,         // dl-protected.h: a copy relocation against protected data of an object
                         // marked GNU_PROPERTY_1_NEEDED_INDIRECT_EXTERN_ACCESS
  IsaLevel,              // sysdeps/x86/dl-prop.h: GNU_PROPERTY_X86_ISA_1_NEEDED above the CPU's level
  // Not glibc's: CPython's import (importlib.machinery.EXTENSION_SUFFIXES) never opens an extension module
  // whose name's tag is another Python's (cpython-311 under 3.12): "No module named ..." (ModuleNotFoundError)
  ExtensionTag,
  // Not glibc's: importing pkg.mod runs pkg/__init__.py first, and a module-level import there of an
  // extension module that fails to load fails the import of pkg.mod with it (Python's ImportError)
  PackageImport,
  // Not glibc's: a module beside a sibling of the same name whose suffix the import tries first
  // (_core.so beside _core.cpython-311-x86_64-linux-gnu.so): the import opens that one, never this file
  ShadowedModule,
};
const char* to_string(FailureKind kind);  // JSON `load_failures[].kind`

// What a failure's message and fix name, by kind (the report words them: report::failure_message,
// report::failure_fix). File names are base names unless said.
struct FailureFacts {
  std::string by = "";        // the object whose load fails (its reference, its DT_NEEDED, its TLS access)
  std::string provider = "";  // the object it binds to, or whose copy is refused (Refused: its directory, in full)
  std::string symbol = "";    // the symbol or what is accessed; StaticTls/TlsMismatch: "its own thread-local variables"
  std::string version = "";   // VersionFileUnmatched, VersionWithoutVersym: the version node
  std::string needed = "";    // VersionFileUnmatched: the Verneed file name; a refused candidate: the name searched
  std::string expanded = "";  // VersionFileUnmatched: what the loader loaded it as (full path, "" unknown)
  bool refused = false;       // NoOpen: a candidate met on the search (else an object dlopen'ed)
  // BadCandidate: glibc's own words for the file it refuses (open_verify's, _dl_map_object_from_fd's:
  // "invalid ELF header", "file too short"), quoted in the report's message.
  std::string glibc = "";
  int level = 0;  // IsaLevel: the CPU's x86-64 level
  // PackageImport: `by` the __init__.py (or module) whose line imports `needed`, the failing module's file.
  // ExtensionTag: `module` its dotted name, `needed` the tag, `version` the Python it is built for, `provider`
  // the interpreter; its version, and the Python distribution (pip) that installed the file, where known (the
  // report adds it)
  std::string python = "";
  std::string owner = "";
  std::string module = "";
  uint64_t tls_bytes = 0, tunable = 0;  // StaticTls: the block, and the optional_static_tls that fits it
};

}  // namespace mlc::loader

// What is looked up at run time (issue 15 item 5): names given to dlopen and dlsym as string
// literals, which no DT_NEEDED shows. Each object of the process that imports dlopen is searched for
// soname-shaped literals, each is looked for as dlopen from that object would, and entry-point
// literals are checked against the libraries found. Files are read, never loaded.
#pragma once

#include <string>
#include <vector>

#include "loader/loader.h"
#include "report/report.h"

namespace mlc::runtime {

// Heuristic (documented in docs/architecture.md, "Additions: run-time look-ups"):
// - Which objects: the named files, and the other objects of `objects` outside the system directories
//   (/lib, /usr/lib, /lib64, /usr/lib64): a distribution's libraries are its own concern.
// - dlopen: literals in .rodata shaped like a soname (lib<name>.so or lib<name>.so.<digits>..., no
//   '/'), in objects whose .dynsym imports dlopen or dlmopen.
// - dlsym: identifier literals ([A-Za-z_][A-Za-z0-9_]*) with an API prefix (lowercase letters then an
//   uppercase one: muInit -> "mu"), in objects that import dlsym or dlvsym. Guard against false
//   positives: an identifier is checked only against a library that this object dlopens by a literal,
//   that was found, and that exports at least one other literal of the same prefix; it is reported
//   when that library does not export it.
std::vector<RuntimeLookup> check_runtime_lookups(const loader::Process& process, const std::vector<int>& objects,
                                                 const loader::LoaderEnv& env);

// Whether a literal is shaped like a soname dlopen would search for.
bool is_soname_literal(const std::string& s);
// The API prefix of an entry-point literal ("" when it has none).
std::string api_prefix(const std::string& s);

}  // namespace mlc::runtime

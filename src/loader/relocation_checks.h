// The relocations that bind more than a name, checked after the look-ups (relocation_checks.cpp):
// the main program's copy relocations and the initial-exec TLS of what each dlopen maps. Internal to
// src/loader: bind() runs them.
#pragma once

#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "loader/binding.h"

namespace mlc::loader {

// Where a look-up of `referencing`'s reference to `name` (with `version`, or none) binds: the object
// and its .dynsym index; object -1 when nothing matches, aborted_in >= 0 when check_match's assertion
// stops the process there. `skip`: an object the look-up passes over (a copy relocation's program).
struct Definition {
  int object = -1;
  uint32_t symbol = 0;
  int aborted_in = -1;
};
Definition find_definition(const Process& p, int referencing, std::string_view name,
                           const elf::VersionRequirement* version, int skip = -1);

// check_match's assertion (a versioned reference of `referencing` met in `provider`, which has no
// .gnu.version), said for the report.
LoadFailure version_without_versym(const Process& p, int referencing, int provider, std::string_view symbol,
                                   std::string_view version);

// dl-lookup.c do_lookup_x with ELF_RTYPE_CLASS_COPY: the main program's copy relocations are looked
// up in every object but the program; one that finds nothing is an undefined symbol, one that finds
// protected data of an object marked GNU_PROPERTY_1_NEEDED_INDIRECT_EXTERN_ACCESS fails the start
// (dl-protected.h _dl_check_protected_symbol).
void check_copy_relocations(const Process& p, const std::vector<int>& checked, BindOutcome& out);

// dl-tls.c and dl-reloc.c: the static TLS block the process starts with holds the TLS of what it
// loaded at start and a surplus (_dl_tls_static_surplus_init: 1664 bytes with the default
// glibc.rtld.nns and glibc.rtld.optional_static_tls); every object dlopen maps whose block an
// initial-exec relocation (R_X86_64_TPOFF64) reaches takes its place in that surplus
// (_dl_try_allocate_static_tls) or fails the load. An initial-exec relocation bound to an object
// without a TLS block ends the process (a division by its zero alignment there).
// `providers`: where each reference (object, .dynsym index) binds, the provider or -1; those it holds are not
// looked up again, those looked up are added (bind() keeps them between runs).
using TlsProviders = std::map<std::pair<int, uint32_t>, int>;
void check_static_tls(const Process& p, const LoaderEnv& env, BindOutcome& out, TlsProviders& providers);

}  // namespace mlc::loader

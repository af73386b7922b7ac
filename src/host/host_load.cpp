// The host interpreter's own load, read as the loader would map it (the executable first, then its
// DT_NEEDED closure), and the still-unknown symbols of its extensions that it defines. Looked up
// through each object's hash table, as ld.so would find them in the host's global scope.
#include "host/host_load.h"
#include "host/host_api.h"
#include "report/said.h"
#include "verdict/verdict.h"

#include <algorithm>
#include <set>

namespace mlc::host {
namespace {

// The loaded object of the host's process defining `name` (with `version` when the reference asks
// for one) as an exported symbol, or -1.
int defining_object(const loader::Process& host, const std::string& name, const std::optional<std::string>& version) {
  const uint32_t hash = elf::gnu_hash(name);
  std::vector<uint32_t> found;
  for (size_t i = 0; i < host.objects.size(); ++i) {
    const elf::ElfObject& o = host.objects[i].elf;
    found.clear();
    o.find_defined(name, hash, found);
    for (uint32_t index : found) {
      elf::Symbol s = o.dynamic_symbol(index);
      if (s.binding == elf::Binding::Local || s.visibility == elf::Visibility::Hidden ||
          s.visibility == elf::Visibility::Internal)
        continue;
      if (version) {
        const elf::VersionDefinition* d = o.definition(s.version_index);
        if (!d || d->name != *version) continue;
      }
      return static_cast<int>(i);
    }
  }
  return -1;
}

std::string soname_of(const loader::LoadedObject& o) {
  if (!o.elf.soname.empty()) return std::string(o.elf.soname);
  return o.path.substr(o.path.rfind('/') + 1);
}

}  // namespace

std::vector<UnresolvedSymbol*> find_host_load_symbols(const std::vector<UnresolvedSymbol*>& traced,
                                                      const std::vector<UnresolvedSymbol*>& unknown,
                                                      const std::string& interpreter, const loader::LoaderEnv& env,
                                                      CauseList& causes) {
  Cause* cause = nullptr;
  for (auto& c : causes)
    if (c.kind == CauseKind::Host && c.library == executable_of(HostApi::Python)) cause = &c;
  if (!cause || interpreter.empty()) return unknown;
  // The objects that get the Python C API from their host: they are loaded into a Python process.
  std::set<std::string> extensions;
  for (const UnresolvedSymbol* u : traced)
    if (u->cause == cause->id)
      for (const auto& r : u->referenced_by) extensions.insert(r.library);
  std::vector<UnresolvedSymbol*> candidates, rest;
  for (UnresolvedSymbol* u : unknown) {
    bool theirs = std::any_of(u->referenced_by.begin(), u->referenced_by.end(),
                              [&](const Reference& r) { return extensions.count(r.library) > 0; });
    if (theirs && verdict::current(*u) == Classification::Unknown && !u->origin) candidates.push_back(u);
    else rest.push_back(u);
  }
  if (candidates.empty()) return unknown;
  // The interpreter is the main program: nothing is loaded before it (--with objects come after).
  loader::LoaderEnv host_env = env;
  host_env.with.clear();
  auto host = loader::load_process(interpreter, host_env);
  if (!host) return unknown;  // an unreadable interpreter explains nothing; the symbols stay unknown
  const size_t api = cause->symbols - cause->from_host_load;
  for (UnresolvedSymbol* u : candidates) {
    int at = defining_object(host.value(), u->symbol, u->version);
    if (at < 0) {
      rest.push_back(u);
      continue;
    }
    const auto& o = host.value().objects[static_cast<size_t>(at)];
    std::string soname = soname_of(o);
    if (std::find(cause->host_libraries.begin(), cause->host_libraries.end(), soname) == cause->host_libraries.end())
      cause->host_libraries.push_back(soname);
    ++cause->symbols;
    ++cause->from_host_load;
    u->cause = cause->id;
    verdict::claim(*u, EvidencePass::HostLoad, Classification::HostProvided);
    say(*u, said::DefinedByHostLoad{.soname = soname, .path = o.path, .interpreter = interpreter});
    u->fix = cause_fix(*cause, FixKind::None);
    u->suggestions.clear();
  }
  // The headline counts the two kinds apart: the Python C API, and the interpreter's own libraries.
  if (cause->from_host_load > 0)
    cause->headline_why = saying(
        said::HostApiAndOwnLibraries{.api = api, .own = cause->from_host_load, .libraries = cause->host_libraries});
  // In the order given (the report sorts later; callers may rely on the order of the rest).
  std::vector<UnresolvedSymbol*> ordered;
  for (UnresolvedSymbol* u : unknown)
    if (verdict::current(*u) != Classification::HostProvided || u->cause != cause->id ||
        std::find(candidates.begin(), candidates.end(), u) == candidates.end())
      ordered.push_back(u);
  return ordered;
}

}  // namespace mlc::host

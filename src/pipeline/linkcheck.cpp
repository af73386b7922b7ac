// The pass sequence, in one place (style.md: "the pipeline reads as a list of passes").
#include "pipeline/linkcheck.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "demangle/demangle.h"
#include "loader/binding.h"

namespace mlc {
namespace {

void collect_dir(const std::string& dir, std::vector<std::string>& out, int depth) {
  if (depth > 64) return;
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> names;
  while (dirent* de = readdir(d)) {
    if (std::strcmp(de->d_name, ".") && std::strcmp(de->d_name, "..")) names.push_back(de->d_name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    std::string path = dir + (dir.back() == '/' ? "" : "/") + n;
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      collect_dir(path, out, depth + 1);
    } else if (S_ISREG(st.st_mode)) {
      // Symlinks (libfoo.so -> libfoo.so.1) are skipped: the file they name is listed itself.
      auto ident = elf::read_ident(path);
      if (ident && (ident->kind == elf::ObjectKind::SharedObject || ident->kind == elf::ObjectKind::Executable)) {
        out.push_back(path);
      }
    }
  }
}

const char* type_name(elf::SymbolType t) {
  switch (t) {
    case elf::SymbolType::Func:
    case elf::SymbolType::GnuIfunc: return "func";
    case elf::SymbolType::Object:
    case elf::SymbolType::Common: return "object";
    case elf::SymbolType::Tls: return "tls";
    default: return "notype";
  }
}

// Pass: classify what the loader saw. Later passes (origin tracing) refine Unknown.
void classify_loader_miss(const loader::Process& p, const loader::UnresolvedRef& ref, UnresolvedSymbol& u) {
  auto lib_of = [&](int i) { return p.objects[i].path; };
  switch (ref.miss) {
    case loader::Miss::LibraryMissing:
      u.classification = Classification::MissingLibrary;
      u.reason = "required from " + std::string(ref.version_file) + ", which was not found";
      break;
    case loader::Miss::WrongVersion:
      u.classification = Classification::VersionMismatch;
      u.reason = "defined in " + lib_of(ref.near_definitions.front()) + ", but not with version " +
                 (ref.version.empty() ? std::string("(default)") : std::string(ref.version));
      u.fix = Fix{"use-library", {}, {}, {}, lib_of(ref.near_definitions.front()),
                  "rebuild against the library that is loaded at run time, or load the one it was linked against"};
      break;
    case loader::Miss::HiddenVersion:
      u.classification = Classification::Hidden;
      u.reason = "defined in " + lib_of(ref.near_definitions.front()) +
                 " only under a hidden (non-default) version, invisible to an unversioned reference";
      u.fix = Fix{"export-symbol", {}, {}, {}, lib_of(ref.near_definitions.front()),
                  "make the version the default (@@) in the provider's version script"};
      break;
    case loader::Miss::HiddenVisibility:
      u.classification = Classification::Hidden;
      u.reason = "defined in " + lib_of(ref.near_definitions.front()) + " with hidden or internal visibility";
      u.fix = Fix{"export-symbol", {}, {}, {}, lib_of(ref.near_definitions.front()),
                  "give the definition default visibility (or list it in the export map)"};
      break;
    case loader::Miss::NoDefinition: {
      const auto& refobj = p.objects[ref.object];
      size_t missing = 0;
      for (const auto& need : refobj.needed) missing += need.object < 0 ? 1 : 0;
      if (missing > 0) {
        u.classification = Classification::MissingLibrary;
        u.reason = "no loaded object defines it, and " + std::to_string(missing) + " needed librar" +
                   (missing == 1 ? "y was" : "ies were") + " not found";
      } else {
        u.classification = Classification::Unknown;
        u.reason = "no object in the global scope (" + std::to_string(p.objects.size()) + " loaded) defines it";
      }
      break;
    }
  }
}

// Pass: a definition present only in a .symtab (not exported) explains a NoDefinition miss.
void find_unexported(const loader::Process& p, std::vector<std::pair<const loader::UnresolvedRef*, UnresolvedSymbol*>>& open) {
  std::vector<std::pair<const loader::UnresolvedRef*, UnresolvedSymbol*>> unknown;
  for (auto& o : open)
    if (o.first->miss == loader::Miss::NoDefinition) unknown.push_back(o);
  if (unknown.empty()) return;
  for (const auto& obj : p.objects) {
    if (!obj.elf.has_static_symtab) continue;  // stripped: nothing more to learn
    auto full = elf::read_object(obj.path, elf::ReadOptions{true, false});
    if (!full || full->static_symbols.empty()) continue;
    std::set<std::string_view> local;
    for (const auto& s : full->static_symbols)
      if (!s.is_undefined() && s.type != elf::SymbolType::Section && s.type != elf::SymbolType::File) local.insert(s.name);
    for (auto& [ref, u] : unknown) {
      if (u->classification == Classification::Hidden || !local.count(ref->name)) continue;
      u->classification = Classification::Hidden;
      u->reason = "defined in " + obj.path + " but not exported (local or hidden in its symbol table)";
      u->origin = Origin{obj.path, std::nullopt, "library", obj.path, std::nullopt};
      u->fix = Fix{"export-symbol", {}, {}, {}, obj.path,
                   "give the definition default visibility (or list it in the export map)"};
    }
  }
}

LibraryReport report_object(const loader::Process& p, int index) {
  const auto& o = p.objects[index];
  LibraryReport lib;
  lib.path = o.path;
  lib.soname = o.elf.soname;
  for (const auto& need : o.needed) {
    if (need.object >= 0) {
      const auto& found = p.objects[need.object];
      // A name satisfied by an already-loaded object reports how that object was found.
      std::string how = loader::to_string(need.how == loader::FoundHow::AlreadyLoaded ? found.how : need.how);
      lib.needed.push_back(NeededLibrary{need.name, found.path, how, {}, {}});
      continue;
    }
    NeededLibrary n{need.name, std::nullopt, "not-found", {}, {}};
    for (const auto& step : need.searched) {
      std::string where = step.path;
      if (step.how != loader::FoundHow::LdSoCache && step.how != loader::FoundHow::LdSoConf && step.path.front() != '(') {
        where = step.path.substr(0, step.path.rfind('/'));
      }
      n.searched.push_back(where);
      n.search.push_back({step.path, loader::to_string(step.how), step.outcome});
    }
    lib.needed.push_back(std::move(n));
  }
  return lib;
}

}  // namespace

std::vector<std::string> expand_inputs(const std::vector<std::string>& inputs, std::vector<InputError>& errors) {
  std::vector<std::string> files;
  for (const auto& in : inputs) {
    struct stat st;
    if (stat(in.c_str(), &st) != 0) {
      errors.push_back({in, std::string("cannot open: ") + std::strerror(errno)});
    } else if (S_ISDIR(st.st_mode)) {
      size_t before = files.size();
      collect_dir(in, files, 0);
      if (files.size() == before) errors.push_back({in, "no ELF shared object or executable in this directory"});
    } else {
      files.push_back(in);
    }
  }
  return files;
}

Report run_linkcheck(const std::vector<std::string>& inputs, const LinkcheckOptions& options) {
  Report report;
  std::set<std::string> reported;
  for (const auto& file : expand_inputs(inputs, report.errors)) {
    // Pass 1+2: read the ELF file and emulate the loader's mapping phase.
    auto process = loader::load_process(file, options.env);
    if (!process) {
      report.errors.push_back(process.error());
      continue;
    }
    const loader::Process& p = process.value();
    for (const auto& e : p.errors) report.errors.push_back(e);

    std::vector<int> checked;
    if (options.closure) {
      for (size_t i = 0; i < p.objects.size(); ++i) checked.push_back(static_cast<int>(i));
    } else {
      checked.push_back(p.target);
    }
    // Pass 3: bind every relocated reference in the global scope; check version requirements.
    loader::BindOutcome binding = loader::bind(p, checked);

    // Pass 4+5: demangle and classify, per referencing library.
    std::map<int, LibraryReport> libs;
    for (int i : checked) libs.emplace(i, report_object(p, i));
    std::vector<std::pair<const loader::UnresolvedRef*, UnresolvedSymbol*>> open;
    for (const auto& ref : binding.unresolved) {
      const auto& sym = p.objects[ref.object].elf.dynamic_symbols[ref.symbol_index];
      UnresolvedSymbol u;
      u.symbol = std::string(ref.name);
      u.demangled = demangle::demangle(ref.name);
      if (!ref.version.empty()) u.version = std::string(ref.version);
      u.type = type_name(sym.type);
      u.binding = sym.binding == elf::Binding::Weak ? "weak" : "global";
      u.referenced_by.push_back({p.objects[ref.object].path, std::nullopt, std::nullopt, std::nullopt});
      classify_loader_miss(p, ref, u);
      libs[ref.object].unresolved.push_back(std::move(u));
    }
    for (const auto& mv : binding.missing_versions) {
      if (mv.weak) continue;  // glibc: a weak version reference only warns
      libs[mv.object].missing_versions.push_back({mv.version, mv.file, p.objects[mv.provider].path, mv.weak});
    }
    // Pointers into libs are stable from here on (no more insertions).
    std::map<int, size_t> next;
    for (const auto& ref : binding.unresolved) open.push_back({&ref, &libs[ref.object].unresolved[next[ref.object]++]});
    find_unexported(p, open);

    // Pass 6: report, in load order, symbols sorted by mangled name.
    for (int i : checked) {
      auto& lib = libs[i];
      if (!reported.insert(lib.path).second) continue;
      std::stable_sort(lib.unresolved.begin(), lib.unresolved.end(), [](const auto& a, const auto& b) {
        return std::tie(a.symbol, a.version) < std::tie(b.symbol, b.version);
      });
      report.libraries.push_back(std::move(lib));
    }
  }
  return report;
}

}  // namespace mlc

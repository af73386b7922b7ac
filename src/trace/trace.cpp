// The decision tree, in the order that settles each question with the strongest evidence first:
// a library that defines the symbol (shadowed, unlinked), a source that defines it (missing
// source), an SDK header that only declares it, a CUDA library that has its counterpart.
#include "trace/trace.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>
#include <unordered_map>

#include "backend/backend.h"
#include "backend/cuda_api.h"
#include "build/setuptools/setup_py.h"
#include "common/file_io.h"
#include "common/paths.h"
#include "demangle/demangle.h"
#include "demangle/symbol_name.h"
#include "python/hosting.h"
#include "python/torch.h"
#include "report/said.h"
#include "source/scanner.h"
#include "trace/stand_in.h"
#include "verdict/verdict.h"

namespace mlc::trace {
namespace {

using demangle::NameKind;
using demangle::SymbolName;
using source::EntityKind;
using source::IndexedEntity;

bool under(const std::string& path, const std::string& dir) {
  return !dir.empty() && path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/';
}

std::string relative_to(const std::string& path, const std::string& dir) { return path.substr(dir.size() + 1); }

bool is_function_kind(EntityKind k) {
  return k == EntityKind::FunctionDefinition || k == EntityKind::FunctionDeclaration ||
         k == EntityKind::ExplicitInstantiation;
}
bool is_variable_kind(EntityKind k) {
  return k == EntityKind::VariableDefinition || k == EntityKind::VariableDeclaration;
}

// The spec's ranking: a (non-template) definition in a compiled source, then an explicit
// instantiation, then a template or inline definition, then a declaration.
int kind_rank(const IndexedEntity& e, const std::string& path) {
  switch (e.kind) {
    case EntityKind::FunctionDefinition:
    case EntityKind::VariableDefinition:
      return (!e.is_template && !e.is_inline && source::is_compiled_source(path, backend::file_kinds())) ? 3 : 1;
    case EntityKind::ExplicitInstantiation: return 2;
    default: return 0;
  }
}

OriginKind origin_kind(const IndexedEntity& e) {
  if (e.kind == EntityKind::ExplicitInstantiation) return OriginKind::ExplicitInstantiation;
  if (e.kind == EntityKind::FunctionDefinition || e.kind == EntityKind::VariableDefinition)
    return OriginKind::Definition;
  return OriginKind::Declaration;
}

std::vector<std::string> normalized(const std::vector<std::string>& types, const porting::NameMap* rename) {
  std::vector<std::string> out;
  for (const auto& t : types)
    out.push_back(source::normalize_type(rename ? porting::map_identifiers(t, *rename) : t, false));
  return out;
}

struct Candidate {
  const IndexedEntity* entity = nullptr;
  bool exact = false;       // parameters (and const) agree
  bool same_arity = false;  // as many parameters as the symbol, types not matched
  int rank = 0;
  bool in_porting_tree = false;
};

class Tracer {
 public:
  Tracer(const loader::Process* p, int referencing, const TraceContext& ctx, UnresolvedSymbol& u)
      : p_(p),
        ref_(referencing),
        ctx_(ctx),
        u_(u),
        sym_(demangle::is_mangled(u.symbol) ? demangle::parse_symbol(u.symbol) : demangle::parse_demangled(u.symbol)) {
    sym_.name = source::canonical_operator_name(sym_.name);  // spelled as the scanner spells it
  }

  void run() {
    if (check_out_of_scope()) return;
    if (check_libraries()) return;
    if (check_import_context()) return;
    // An extension module defines it: the source its setup.py lists (before the sources pass, which counts
    // what a loaded sibling compiles as built, as it is for a sibling library one links).
    if (check_sibling_module()) return;
    if (check_archives()) return;
    if (check_sources()) return;
    if (check_codegen()) return;  // a kernel a torchgen backend yaml lists, implemented nowhere
    if (check_sdk_headers()) return;
    if (check_stand_in(sym_, ctx_, declared_only_, u_)) return;  // c10::musa::musaX, torch_musa's stand-ins
    if (check_cuda()) return;
    if (check_cuda_api()) return;
    // A declaration is the verdict only where the user named the trees: in the sources the library's own
    // DWARF points to, a prototype of an API it calls (the Python C API, a driver's) says nothing of where
    // that API is defined, and the host and provider passes that come later do.
    if (declared_only_ && !ctx_.compiled_units) {
      say(u_, said::DeclaredNotDefined{
                  .file = declared_only_->file,
                  .line = declared_only_->line ? std::optional<size_t>(*declared_only_->line) : std::nullopt});
      u_.origin = declared_only_;
      u_.fix = Fix{FixKind::Stub, {}, {}, {}, {}, {}, saying(said::StubOrFindSource{})};
    }
  }

 private:
  // --- generated registration code: a kernel the backend yaml lists that no source implements -------
  bool check_codegen() {
    if (!ctx_.codegen) return false;
    codegen::KernelMatch m = codegen::match_kernel(*ctx_.codegen, sym_);
    if (m.entries.empty()) return false;
    const codegen::KernelEntry& e = *m.entries.front();
    auto at = [&](const codegen::KernelEntry& k) { return m.yaml->path + ":" + std::to_string(k.line); };
    verdict::claim(u_, EvidencePass::Trace, Classification::UnimplementedKernel);
    said::KernelListed listed{.entries = {},
                              .backend = m.yaml->backend,
                              .qualified = sym_.qualified(),
                              .declaration = m.declaration
                                                 ? m.declaration->file + ":" + std::to_string(m.declaration->line) +
                                                       " (" + m.declaration->text + ")"
                                                 : "",
                              .other_signature = ""};
    for (const auto* k : m.entries) listed.entries.push_back({.op = k->op, .at = at(*k)});
    const std::vector<std::string> others = other_signatures();
    if (!others.empty()) listed.other_signature = others.front();
    say(u_, std::move(listed));
    u_.origin = Origin{m.yaml->path, static_cast<int>(e.line), OriginKind::Declaration, std::nullopt, std::nullopt};
    u_.fix = Fix{FixKind::Stub,
                 {},
                 {},
                 {},
                 {},
                 {},
                 saying(said::ImplementKernel{.other_signature = !others.empty(),
                                              .qualified = sym_.qualified(),
                                              .op = e.op,
                                              .at = at(e),
                                              .backend = m.yaml->backend})};
    return true;
  }

  // The same function the referencing library defines with other parameters (a kernel written with a
  // signature other than the generated declaration's compiles, and defines another symbol).
  std::vector<std::string> other_signatures() const {
    std::vector<std::string> out;
    if (!p_ || ref_ < 0 || !demangle::is_mangled(u_.symbol)) return out;
    const std::string last = std::to_string(sym_.name.size()) + sym_.name + "E";  // _ZN...3addE: the nested name
    size_t at = u_.symbol.find(last);
    if (at == std::string::npos) return out;
    const std::string prefix = u_.symbol.substr(0, at + last.size());
    const auto& o = p_->objects[ref_].elf;
    for (size_t i = 1; i < o.dynamic_symbol_count(); ++i) {
      elf::Symbol s = o.dynamic_symbol(i);
      if (s.is_undefined()) continue;
      std::string_view name = o.name_of(s);
      if (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0 && name != u_.symbol)
        out.push_back(demangle::demangle(name));
    }
    return out;
  }

  // --- libraries: shadowed copies and libraries that are not linked --------------------------------
  // The top package of a file: the topmost directory above it holding an __init__.py ("" for none).
  static std::string top_package(const std::string& file) {
    std::string top;
    for (std::string dir = dir_name(file); dir.size() > 1 && is_file(dir + "/__init__.py"); dir = dir_name(dir))
      top = dir;
    return top.empty() ? "" : base_name(top);
  }

  // The copy `o` was brought in by another package's extension module that the file's import runs first (a
  // load of its plan, RTLD_LOCAL: not the host, not torch's): that module and both packages; else nothing.
  said::ImportedFirstBy imported_first_by(const loader::LoadedObject& o) const {
    if (o.root < 0 || !o.is_with) return {};
    const auto& root = p_->objects[o.root];
    if (root.global || root.is_target || !python::torch_version_for(root.path).empty()) return {};
    const std::string package = top_package(root.path);
    const std::string own = top_package(p_->objects[p_->target].path);
    if (package.empty() || package == own || package == "torch") return {};
    return {.module = root.path,
            .package = package,
            .own_package = own.empty() ? base_name(p_->objects[p_->target].path) : own};
  }

  bool check_libraries() {
    for (const sdk::SdkIndex* index : {ctx_.sdk(), ctx_.search_path}) {
      if (!index) continue;
      auto it = index->exports.find(u_.symbol);
      if (it == index->exports.end()) continue;
      for (const auto& ex : it->second) {
        const sdk::SdkLibrary& lib = index->libraries[ex.library];
        if (exports_module_init(*index, ex.library)) {
          module_definer_ = lib.path;
          continue;
        }
        int loaded = loaded_with_soname(lib.soname);
        if (loaded >= 0 && !same_file(p_->objects[loaded].path, lib.path)) {
          const auto& o = p_->objects[loaded];
          // What the build produces comes first: when the loaded copy is this build's own product and one
          // of its uncompiled sources defines the symbol, that source is the cause; the installed copy
          // (libtorch-dev's libc10.so beside a c10 build) is mentioned, not blamed.
          if (own_product(o.path) && own_source_defines(lib.path)) return true;
          // The copy torch itself loads is never stale: the object was built against another torch
          // (provider-mismatch, decided later), and removing that copy would break torch.
          if (!python::torch_version_for(o.path).empty()) continue;
          verdict::claim(u_, EvidencePass::Trace, Classification::Shadowed);
          const said::ImportedFirstBy first = imported_first_by(o);
          say(u_, said::StaleCopyTaken{
                      .taken = o.path, .how = o.how, .soname = lib.soname, .definer = lib.path, .first = first});
          u_.origin = Origin{lib.path, std::nullopt, OriginKind::Library, lib.path, std::nullopt};
          u_.fix = Fix{FixKind::UseLibrary,
                       {},
                       {},
                       {},
                       lib.path,
                       {},
                       saying(said::LoadInstead{
                           .definer = lib.path, .taken = o.path, .how = o.how, .soname = lib.soname, .first = first})};
          return true;
        }
        if (loaded >= 0) continue;  // that very file is loaded: the symbol must be hidden or versioned
        verdict::claim(u_, EvidencePass::Trace, Classification::UnlinkedLibrary);
        say(u_, said::DefinedInUnlinked{.library = lib.path});
        u_.origin = Origin{lib.path, std::nullopt, OriginKind::Library, lib.path, std::nullopt};
        Fix fix{FixKind::LinkLibrary, {}, {}, lib.link_name, lib.path, {}};
        std::string target = target_name();
        if (auto where = target_cmake_file(target)) fix.cmake_file = *where;
        fix.why =
            saying(said::LinkIt{.soname = lib.soname.empty() ? lib.path.substr(lib.path.rfind('/') + 1) : lib.soname,
                                .line = link_line(target, lib.link_name)});
        u_.fix = fix;
        return true;
      }
    }
    return false;
  }

  // A library of the process defines it, but one the referencing object's scope does not reach:
  // loaded by another import with RTLD_LOCAL (torch/_C's libtorch_cpu), so its symbols bind only
  // what links it (glibc's l_scope). The definition is there; the link is what is missing. This is
  // the strongest evidence there is: any source that defines it too would make a second copy.
  bool check_out_of_scope() {
    if (!p_ || ref_ < 0 || u_.symbol.empty()) return false;
    const std::vector<int> scope = loader::lookup_scope(*p_, p_->objects[ref_].root);
    std::vector<char> in_scope(p_->objects.size(), 0);
    for (int i : scope) in_scope[i] = 1;
    const uint32_t hash = elf::gnu_hash(u_.symbol);
    std::vector<uint32_t> hits;
    for (size_t i = 0; i < p_->objects.size(); ++i) {
      if (in_scope[i]) continue;
      const auto& o = p_->objects[i];
      hits.clear();
      o.elf.find_defined(u_.symbol, hash, hits);
      bool exported = std::any_of(hits.begin(), hits.end(), [&](uint32_t s) {
        elf::Symbol sym = o.elf.dynamic_symbol(s);
        return (sym.binding == elf::Binding::Global || sym.binding == elf::Binding::Weak ||
                sym.binding == elf::Binding::GnuUnique) &&
               (sym.visibility == elf::Visibility::Default || sym.visibility == elf::Visibility::Protected);
      });
      if (!exported) continue;
      if (python::is_extension_module(o.elf)) {
        module_definer_ = o.path;
        continue;
      }
      std::string by = o.root >= 0 ? p_->objects[o.root].path : o.path;
      unlinked(o, saying(said::DefinedOutOfScope{.library = o.path, .loaded_by = by, .soname = soname_of(o)}));
      return true;
    }
    return false;
  }

  // A library of the import context defines it (torch/lib of the torch the import finds, the target's
  // package): not loaded by this load, and not linked - --as-needed may have dropped it, or it never
  // was on the link line. The definition is the evidence; linking the library is the fix.
  bool check_import_context() {
    const ImportContext* ic = ctx_.import_context();
    if (!ic || u_.symbol.empty()) return false;
    int i = import_definition(*ic, u_.symbol);
    if (i < 0) return false;
    if (python::is_extension_module(ic->libraries.objects[i].elf)) {
      module_definer_ = ic->libraries.objects[i].path;
      return false;
    }
    unlinked(ic->libraries.objects[i],
             saying(said::DefinedInImportContext{.label = ic->labels[i], .module = referencing_module()}));
    return true;
  }

  static std::string soname_of(const loader::LoadedObject& o) {
    return o.elf.soname.empty() ? o.path.substr(o.path.rfind('/') + 1) : o.elf.soname;
  }

  // unlinked-library: `o` defines the symbol; the fix links it to the referencing library's target.
  void unlinked(const loader::LoadedObject& o, SaidPtr reason) {
    std::string soname = soname_of(o);
    std::string link = soname.rfind("lib", 0) == 0 ? soname.substr(3, soname.find(".so") - 3) : soname;
    verdict::claim(u_, EvidencePass::Trace, Classification::UnlinkedLibrary);
    say(u_, std::move(reason));
    u_.origin = Origin{o.path, std::nullopt, OriginKind::Library, o.path, std::nullopt};
    Fix fix{FixKind::LinkLibrary, {}, {}, link, o.path, {}};
    std::string target = target_name();
    if (auto where = target_cmake_file(target)) fix.cmake_file = *where;
    fix.why = saying(said::LinkIt{.soname = soname, .line = link_line(target, link)});
    u_.fix = fix;
  }

  // Whether the referencing object is a Python extension module (it exports PyInit_<its name>).
  bool referencing_module() const {
    if (!p_ || ref_ < 0) return false;
    const auto& o = p_->objects[ref_];
    std::string file = o.path.substr(o.path.rfind('/') + 1);
    std::string init = "PyInit_" + file.substr(0, file.find('.'));
    std::vector<uint32_t> hits;
    o.elf.find_defined(init, elf::gnu_hash(init), hits);
    return !hits.empty();
  }

  // Whether the index's library `library` is a Python extension module: it exports PyInit_<its name>.
  static bool exports_module_init(const sdk::SdkIndex& index, size_t library) {
    const std::string file = base_name(index.libraries[library].path);
    auto it = index.exports.find("PyInit_" + file.substr(0, file.find('.')));
    return it != index.exports.end() &&
           std::any_of(it->second.begin(), it->second.end(), [&](const auto& ex) { return ex.library == library; });
  }

  // An extension module defines the symbol, and no library does. Python imports a module and nothing
  // links one (its name is no soname, and each import is RTLD_LOCAL), so the definition is a source
  // the module's setup.py compiles into the sibling: of the sibling's sources that this module's do
  // not list, the one that defines the name goes into this module's sources.
  bool check_sibling_module() {
    if (module_definer_.empty() || !p_ || ref_ < 0) return false;
    auto sibling = build::setuptools::find_extension(module_definer_, "");
    if (!sibling) return false;
    const std::string dir = dir_name(sibling->setup.path);
    auto own = build::setuptools::find_extension(p_->objects[ref_].path, "");
    std::set<std::string> listed;
    if (own)
      for (const auto& e : own->extension().sources)
        listed.insert(e.value.starts_with("/") ? e.value : dir_name(own->setup.path) + "/" + e.value);
    std::vector<said::DefinitionAt> defs;
    for (const auto& e : sibling->extension().sources) {
      const std::string file = e.value.starts_with("/") ? e.value : dir + "/" + e.value;
      if (listed.count(file)) continue;
      auto text = read_text(file);
      if (!text) continue;
      for (const auto& entity : source::scan_source(*text)) {
        if (entity.kind != EntityKind::FunctionDefinition && entity.kind != EntityKind::VariableDefinition) continue;
        if (entity.qualified != (sym_.kind == NameKind::CName ? sym_.name : sym_.qualified())) continue;
        defs.push_back({.file = file,
                        .line = entity.line,
                        .key_function = "",
                        .inexact_params = "",
                        .template_body = false,
                        .included_from = ""});
        break;
      }
    }
    if (defs.size() != 1) return false;  // none, or several: the sources pass and the rest decide
    u_.origin =
        Origin{defs[0].file, static_cast<int>(defs[0].line), OriginKind::Definition, std::nullopt, std::nullopt};
    return missing_source(defs[0].file, defs[0], defs[0].file, std::nullopt);
  }

  // Only a static archive of the SDK defines it: it can be linked into the library, not loaded.
  bool check_archives() {
    const sdk::SdkIndex* sdk = ctx_.sdk();
    if (!sdk) return false;
    auto it = sdk->archive_definitions.find(u_.symbol);
    if (it == sdk->archive_definitions.end()) return false;
    const auto& def = it->second;
    verdict::claim(u_, EvidencePass::Trace, Classification::StaticArchive);
    say(u_, said::OnlyInArchive{.archive = def.archive, .member = def.member});
    u_.origin =
        Origin{def.archive, std::nullopt, OriginKind::Library, def.archive + "(" + def.member + ")", std::nullopt};
    Fix fix{FixKind::LinkLibrary, {}, {}, def.archive, def.archive, {}};
    std::string target = target_name();
    if (auto where = target_cmake_file(target)) fix.cmake_file = *where;
    fix.why = saying(said::LinkArchive{.line = link_line(target, def.archive)});
    u_.fix = fix;
    return true;
  }

  bool own_product(const std::string& path) const {
    if (!ctx_.build) return false;
    if (ctx_.build->target_for_artifact(path)) return true;
    // Without the File API: a file under the build tree is the build's.
    const std::string& dir = ctx_.build->build_dir;
    return !dir.empty() && path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/';
  }

  // check_sources, kept only when it finds an uncompiled source of this build: the other copy is named.
  bool own_source_defines(const std::string& other_copy) {
    UnresolvedSymbol saved = u_;
    std::optional<Origin> saved_declared = declared_only_;
    if (check_sources() && verdict::current(u_) == Classification::MissingSource) {
      also(u_, said::OtherCopyDefinesToo{.other_copy = other_copy});
      return true;
    }
    u_ = std::move(saved);
    declared_only_ = std::move(saved_declared);
    return false;
  }

  int loaded_with_soname(const std::string& soname) const {
    if (!p_ || soname.empty()) return -1;
    for (size_t i = 0; i < p_->objects.size(); ++i) {
      const auto& o = p_->objects[i];
      if (o.elf.soname == soname || std::find(o.names.begin(), o.names.end(), soname) != o.names.end()) {
        return static_cast<int>(i);
      }
    }
    return -1;
  }

  // The referencing library's path when its file is older than `source` (it was built before the
  // source changed or appeared); "" otherwise.
  // The library, when the configure already compiles `source` into it and only a rebuild is behind.
  std::string library_awaiting(const std::string& source) const {
    if (!ctx_.build || !p_ || ref_ < 0) return "";
    const std::string& lib = p_->objects[ref_].path;
    return ctx_.build->awaits_rebuild(source, lib) ? lib : "";
  }

  std::string library_older_than(const std::string& source) const {
    if (!p_ || ref_ < 0) return "";
    const std::string& lib = p_->objects[ref_].path;
    struct stat ls, ss;
    if (stat(lib.c_str(), &ls) != 0 || stat(source.c_str(), &ss) != 0) return "";
    return std::tie(ls.st_mtim.tv_sec, ls.st_mtim.tv_nsec) < std::tie(ss.st_mtim.tv_sec, ss.st_mtim.tv_nsec) ? lib : "";
  }

  static bool same_file(const std::string& a, const std::string& b) {
    struct stat sa, sb;
    return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  }

  // The CMake target that builds the referencing library, when the build model knows one: a target
  // with that artifact, or one the build creates under the library's name. "" otherwise: a file name
  // is no target (ext.cpython-311-x86_64-linux-gnu), so a fix says the target is not known.
  std::string target_name() const {
    if (!p_ || ref_ < 0 || !ctx_.build) return "";
    std::string t = build::target_of_library(ctx_.build, p_->objects[ref_].path);
    if (t.empty()) return "";
    for (const auto& target : ctx_.build->targets)
      if (target.name == t) return t;
    for (const auto& l : ctx_.build->lists)
      if (l.variable == t && build::creates_library(l.command)) return t;
    return "";
  }

  // The link a fix asks for, in CMake's words; without a known target, the line says whose it is.
  said::LinkLine link_line(const std::string& target, const std::string& link) const {
    return {.target = target,
            .link = link,
            .library = p_ && ref_ >= 0 ? base_name(p_->objects[ref_].path) : std::string("the library"),
            .build_known = ctx_.build != nullptr};
  }

  std::optional<std::string> target_cmake_file(const std::string& target) const {
    if (!ctx_.build || target.empty()) return std::nullopt;
    for (const auto& t : ctx_.build->targets)
      if (t.name == target && !t.cmake_file.empty()) return t.cmake_file;
    for (const auto& l : ctx_.build->lists)
      if (l.variable == target && build::creates_library(l.command)) return l.cmake_file;
    return std::nullopt;
  }

  // --- sources ------------------------------------------------------------------------------------
  bool qualified_matches(const IndexedEntity& e, bool in_porting_tree) const {
    std::string want = sym_.qualified();
    if (sym_.kind == NameKind::CName) return e.name() == sym_.name && (e.extern_c || !e.qualified.empty());
    if (e.qualified == want) return true;
    if (!in_porting_tree && ctx_.mapping)
      return e.qualified == porting::to_cuda_name(want, *ctx_.mapping, ctx_.backend->port_naming);
    return false;
  }

  bool params_match(const IndexedEntity& e, bool in_porting_tree) const {
    if (sym_.kind == NameKind::Data) return enclosing_args_match(e);
    if (sym_.kind == NameKind::CName) return true;
    const auto* rename = (!in_porting_tree && ctx_.mapping) ? &ctx_.mapping->to_cuda : nullptr;
    std::vector<std::string> want = normalized(sym_.params, rename);
    if (want.size() == 1 && want[0] == "void") want.clear();
    std::vector<std::string> have = source::split_list(e.params);
    if (have.size() != want.size()) return false;
    // Template parameters take the symbol's template arguments, in order.
    porting::NameMap subst;  // views into tparams and targs, which outlive it
    auto tparams = source::split_list(e.template_params);
    auto targs = normalized(sym_.template_args, rename);
    auto explicit_args = source::split_list(e.template_args);
    if (!explicit_args.empty() && explicit_args != targs) return false;
    size_t offset = tparams.size() > targs.size() ? tparams.size() - targs.size() : 0;
    for (size_t k = 0; k + offset < tparams.size() && k < targs.size(); ++k) subst[tparams[k + offset]] = targs[k];
    for (size_t k = 0; k < have.size(); ++k) {
      std::string h = subst.empty() ? have[k] : source::normalize_type(porting::map_identifiers(have[k], subst), false);
      if (h == want[k]) continue;
      // A typedef spelled by name in the source, looked up from the function's own scope.
      std::string_view scope = std::string_view(e.qualified).substr(0, e.qualified.size() - e.name().size());
      if (scope.size() >= 2) scope.remove_suffix(2);
      std::string alias = ctx_.sources->alias(h, scope);
      if (!alias.empty() && alias == want[k]) continue;
      // Aliases inside a compound type ("SelfType const&"), alias templates, conditional_t.
      if (ctx_.sources->expand_aliases(h, scope) == want[k]) continue;
      return false;
    }
    bool want_const = sym_.method_qualifiers.find("const") != std::string::npos;
    return want_const == e.const_method;
  }

  // A static data member of a class template specialisation (REGISTER_DISPATCH's
  // DispatchStub<void (*)(...), add_stub>::DEFAULT): the entity's template_args, when it has any,
  // are the trailing arguments of the symbol's innermost scope (the stub; its FnPtr typedef the
  // source does not spell).
  bool enclosing_args_match(const IndexedEntity& e) const {
    if (e.template_args.empty() || !is_variable_kind(e.kind)) return true;
    if (sym_.scopes.empty()) return false;
    std::string_view scope = sym_.scopes.back();
    size_t lt = scope.find('<');
    if (lt == std::string_view::npos || scope.back() != '>') return false;
    std::vector<std::string> args =
        normalized(demangle::split_top_level(scope.substr(lt + 1, scope.size() - lt - 2)), nullptr);
    std::vector<std::string> want = source::split_list(e.template_args);
    if (want.size() > args.size()) return false;
    return std::equal(want.begin(), want.end(), args.end() - static_cast<long>(want.size()));
  }

  bool same_arity(const IndexedEntity& e) const {
    if (!is_function_kind(e.kind)) return false;
    size_t want = sym_.params.size() == 1 && sym_.params[0] == "void" ? 0 : sym_.params.size();
    return source::split_list(e.params).size() == want;
  }

  std::vector<Candidate> candidates(const std::string& name, bool functions) const {
    std::vector<Candidate> out;
    if (!ctx_.sources) return out;
    for (const IndexedEntity* e : ctx_.sources->lookup(name)) {
      if (functions ? !is_function_kind(e->kind) : !(is_variable_kind(e->kind) || is_function_kind(e->kind))) continue;
      const std::string& path = ctx_.sources->file_of(*e).path;
      bool ported = under(path, ctx_.porting_dir);
      if (!qualified_matches(*e, ported)) continue;
      Candidate c{.entity = e,
                  .exact = params_match(*e, ported),
                  .same_arity = false,
                  .rank = kind_rank(*e, path),
                  .in_porting_tree = ported};
      c.same_arity = c.exact || same_arity(*e);
      out.push_back(c);
    }
    // hipify leaves the CUDA originals beside their ports: of two equal definitions, the one in the
    // backend's own source kind (.hip, .mu) is what the build should compile.
    auto backend_source = [this](const Candidate& c) {
      const std::string& path = ctx_.sources->file_of(*c.entity).path;
      for (const auto& ext : ctx_.backend->source_extensions)
        if (path.size() > ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0) return true;
      return false;
    };
    std::stable_sort(out.begin(), out.end(), [&](const Candidate& a, const Candidate& b) {
      if (a.exact != b.exact) return a.exact;
      if (a.same_arity != b.same_arity) return a.same_arity;
      if (a.rank != b.rank) return a.rank > b.rank;
      // Of twins (io_unix.c, io_uwp.c), the one the configure compiles since the library was built.
      if (bool wa = !library_awaiting(ctx_.sources->file_of(*a.entity).path).empty(),
          wb = !library_awaiting(ctx_.sources->file_of(*b.entity).path).empty();
          wa != wb)
        return wa;
      // Of twins the build names (proctitle.c, bsd-proctitle.c), not the one only an if() branch the
      // configure did not take lists: another platform's.
      if (ctx_.build) {
        const bool ua = ctx_.build->untaken.count(ctx_.sources->file_of(*a.entity).path) > 0,
                   ub = ctx_.build->untaken.count(ctx_.sources->file_of(*b.entity).path) > 0;
        if (ua != ub) return ub;
      }
      if (a.in_porting_tree != b.in_porting_tree) return a.in_porting_tree;
      return backend_source(a) && !backend_source(b);
    });
    return out;
  }

  // The ported counterpart of a file in a source root, and the original of a ported file.
  std::pair<std::string, std::optional<std::string>> ported_and_original(const std::string& path) const {
    if (under(path, ctx_.porting_dir)) {
      if (!ctx_.original_of) {
        ctx_.original_of.emplace();
        for (const auto& f : ctx_.sources->files()) {
          for (const auto& root : ctx_.source_roots) {
            if (!under(f.path, root)) continue;
            std::string orel = relative_to(f.path, root);
            ctx_.original_of->emplace(porting::ported_path(orel, ctx_.backend->port_naming), orel);
            break;
          }
        }
      }
      auto it = ctx_.original_of->find(relative_to(path, ctx_.porting_dir));
      if (it != ctx_.original_of->end()) return {path, it->second};
      return {path, std::nullopt};
    }
    for (const auto& root : ctx_.source_roots) {
      if (!under(path, root)) continue;
      std::string rel = relative_to(path, root);
      if (ctx_.porting_dir.empty()) return {path, std::nullopt};
      return {ctx_.porting_dir + "/" + porting::ported_path(rel, ctx_.backend->port_naming), rel};
    }
    return {path, std::nullopt};
  }

  bool in_build(const std::string& path) const {
    if (!ctx_.build) return ctx_.compiled_units && ctx_.compiled_units->count(path);
    // The library's own target, when the File API knows it: what another target compiles is not in this one.
    if (p_ && ref_ >= 0)
      if (const auto* t = ctx_.build->target_for_artifact(p_->objects[ref_].path); t && !t->compiles.empty())
        return ctx_.build->compiled_by(*t, path);
    if (ctx_.build->has_compile_database || !ctx_.build->compiled.empty()) return ctx_.build->is_compiled(path);
    for (const auto& l : ctx_.build->lists)
      for (const auto& e : l.entries)
        if (std::find(e.files.begin(), e.files.end(), path) != e.files.end()) return true;
    return false;
  }

  // The same entity in the ported file, for its line there.
  const IndexedEntity* in_file(const std::string& path, const IndexedEntity& like) const {
    for (const IndexedEntity* e : ctx_.sources->lookup(like.name())) {
      if (ctx_.sources->file_of(*e).path == path && e->kind == like.kind && e->params == like.params) return e;
    }
    for (const IndexedEntity* e : ctx_.sources->lookup(like.name())) {
      if (ctx_.sources->file_of(*e).path == path && e->kind == like.kind) return e;
    }
    return nullptr;
  }

  // The vtable (and typeinfo) of a class with a key function are emitted where that function is
  // defined: its definitions, the key function named in `def`.
  std::vector<Candidate> key_function_definitions(said::DefinitionAt& def) const {
    std::vector<Candidate> found;
    for (const IndexedEntity* cls : ctx_.sources->lookup(sym_.name)) {
      if (cls->kind != EntityKind::ClassDefinition || cls->extra.empty()) continue;
      bool ported = under(ctx_.sources->file_of(*cls).path, ctx_.porting_dir);
      if (!qualified_matches(*cls, ported)) continue;
      std::string key = cls->extra.substr(0, cls->extra.find('('));
      std::string key_params = cls->extra.substr(key.size() + 1, cls->extra.size() - key.size() - 2);
      for (const IndexedEntity* e : ctx_.sources->lookup(key)) {
        if (e->kind != EntityKind::FunctionDefinition || e->params != key_params) continue;
        if (e->qualified != cls->qualified + "::" + key) continue;
        const std::string& path = ctx_.sources->file_of(*e).path;
        found.push_back({.entity = e,
                         .exact = true,
                         .same_arity = true,
                         .rank = kind_rank(*e, path),
                         .in_porting_tree = under(path, ctx_.porting_dir)});
        def.key_function = cls->qualified + "::" + key + "(" + key_params + ")";
      }
    }
    return found;
  }

  bool check_sources() {
    if (!ctx_.sources) return false;
    std::vector<Candidate> found;
    said::DefinitionAt def;
    if (sym_.kind == NameKind::VTable || sym_.kind == NameKind::TypeInfo) {
      found = key_function_definitions(def);
    } else if (sym_.kind == NameKind::Function || sym_.kind == NameKind::Data || sym_.kind == NameKind::CName ||
               sym_.kind == NameKind::Thunk) {
      found = candidates(sym_.name, sym_.kind == NameKind::Function || sym_.kind == NameKind::Thunk);
    }
    if (found.empty()) return false;
    Candidate best = found.front();
    if (!best.exact) {
      // A definition with the same qualified name and arity in a source the build does not compile is
      // the missing source: only a binary defining another mangling is evidence of ABI drift.
      auto near = std::find_if(found.begin(), found.end(), [&](const Candidate& c) {
        return c.same_arity && c.rank == 3 && !in_build(ctx_.sources->file_of(*c.entity).path);
      });
      if (near == found.end()) {
        note_signature_mismatch(found);  // same name, other parameters: a signature nobody defines
        return false;
      }
      best = *near;
      std::string params = best.entity->params;
      std::replace(params.begin(), params.end(), source::kListSep, ',');
      def.inexact_params = params;
    }
    const std::string& path = ctx_.sources->file_of(*best.entity).path;
    if (best.rank == 0) {  // declarations only: remember, keep looking in the SDK and CUDA
      declared_only_ = Origin{path, static_cast<int>(best.entity->line), OriginKind::Declaration, std::nullopt,
                              ported_and_original(path).second};
      return false;
    }
    auto [ported, original] = ported_and_original(path);
    const IndexedEntity* at = best.entity;
    std::string origin_file = path;
    if (ported != path && path_exists(ported)) {
      origin_file = ported;
      if (const IndexedEntity* e = in_file(ported, *best.entity)) at = e;
    }
    // Without a build, the units are those of the loaded objects' DWARF: a file compiled into another
    // loaded library decides nothing here (its definition there may differ: the near-miss pass reads it).
    if (!ctx_.build && ctx_.compiled_units && source::is_compiled_source(origin_file, backend::file_kinds()) &&
        in_build(origin_file))
      return false;
    Origin origin{origin_file, static_cast<int>(at->line), origin_kind(*at), std::nullopt, original};
    u_.origin = origin;
    def.file = origin_file;
    def.line = at->line;
    bool translation_unit = source::is_compiled_source(origin_file, backend::file_kinds());
    if (!translation_unit || best.rank == 1) {
      // Only one translation unit can emit it: the uncompiled one that holds a template's body (no
      // other unit sees it), or the uncompiled one that alone #includes the file holding a plain
      // (non-inline) definition, as jsoncpp's .inl files and fmt's format-inl.h are included.
      if (auto tu = emitting_unit(*best.entity, origin_file, translation_unit)) {
        if (translation_unit) def.template_body = true;
        if (!translation_unit) {
          origin_file = tu->first;
          u_.origin = Origin{origin_file, static_cast<int>(tu->second), OriginKind::Definition, std::nullopt,
                             ported_and_original(origin_file).second};
          def.included_from = def.file + ":" + std::to_string(def.line);
          def.file = origin_file;
          def.line = tu->second;
          auto [tu_ported, tu_original] = ported_and_original(origin_file);
          return missing_source(origin_file, def, tu_ported, tu_original);
        }
        return missing_source(origin_file, def, ported, original);
      }
      verdict::claim(u_, EvidencePass::Trace, Classification::Unknown);
      say(u_, said::NotInstantiated{.at = def, .template_or_inline = best.rank == 1});
      u_.fix = Fix{FixKind::None, {}, {}, {}, {}, {}, saying(said::InstantiateOrInclude{.file = origin_file})};
      return true;
    }
    const std::string awaiting = library_awaiting(origin_file);
    if (!awaiting.empty() || in_build(origin_file)) {
      verdict::claim(u_, EvidencePass::Trace, Classification::Unknown);
      if (const std::string lib = awaiting.empty() ? library_older_than(origin_file) : awaiting; !lib.empty()) {
        // The configure compiles it (a glob that now sees it, an entry added since), the library predates it.
        say(u_, said::CompiledButOlder{.at = def, .library = lib});
        u_.fix =
            Fix{FixKind::None, {}, {}, {}, {}, {}, saying(said::RebuildOlder{.library = lib, .file = origin_file})};
        return true;
      }
      say(u_, said::CompiledYetMissing{.at = def});
      u_.fix = Fix{FixKind::None, {}, {}, {}, {}, {}, saying(said::CheckCompiledInto{.file = origin_file})};
      return true;
    }
    return missing_source(origin_file, def, ported, original);
  }

  // The translation unit that must be compiled for `e` (in `file`) to be emitted, with the line that
  // makes it so; nullopt when that is not one uncompiled unit.
  std::optional<std::pair<std::string, uint32_t>> emitting_unit(const IndexedEntity& e, const std::string& file,
                                                                bool translation_unit) const {
    if (translation_unit) {
      if (e.is_template && !e.is_inline && !in_build(file)) return std::make_pair(file, e.line);
      return std::nullopt;
    }
    if (e.is_template || e.is_inline || e.kind != EntityKind::FunctionDefinition) return std::nullopt;
    std::optional<std::pair<std::string, uint32_t>> only;
    for (const auto& [included, units] : includers(ctx_)) {
      if (file.size() <= included.size() ||
          file.compare(file.size() - included.size(), included.size(), included) != 0 ||
          file[file.size() - included.size() - 1] != '/') {
        continue;
      }
      for (const auto& u : units) {
        if (in_build(u.tu) || (only && only->first != u.tu)) return std::nullopt;  // compiled, or not alone
        only = std::make_pair(u.tu, u.line);
      }
    }
    return only;
  }

  bool missing_source(const std::string& origin_file, const said::DefinitionAt& def, const std::string& ported,
                      const std::optional<std::string>& original) {
    verdict::claim(u_, EvidencePass::Trace, Classification::MissingSource);
    if (origin_file != ported && !ctx_.porting_dir.empty() && original) {
      say(u_, said::PortedCounterpartMissing{.at = def, .ported = ported});
      u_.fix = Fix{FixKind::AddSource, {}, {}, {}, {}, {}, saying(said::PortIt{.original = *original})};
      return true;
    }
    if (module_definer_.empty()) say(u_, said::NotCompiled{.at = def});
    else say(u_, said::SiblingModuleDefines{.module = module_definer_, .file = def.phrase()});
    auto choice =
        ctx_.build ? build::choose_list(*ctx_.build, origin_file, target_name(), ctx_.porting_dir) : std::nullopt;
    Fix fix = choice || !p_ || ref_ < 0
                  ? add_source_fix(choice, origin_file)
                  : setup_py_fix(p_->objects[ref_].path, origin_file).value_or(add_source_fix(choice, origin_file));
    if (original && original->size() > 4 && original->compare(original->size() - 4, 4, ".cpp") == 0 &&
        fix.list.value_or("") != "PORTING_CPP_CSRCS") {
      fix.why = saying(said::PytorchCpp{.fix = fix.why});
    }
    u_.fix = fix;
    return true;
  }

  void note_signature_mismatch(const std::vector<Candidate>& found) {
    for (const auto& c : found) {
      const std::string& path = ctx_.sources->file_of(*c.entity).path;
      if (c.rank == 0) continue;
      std::string params = c.entity->params;
      std::replace(params.begin(), params.end(), source::kListSep, ',');
      // SourceSignature, not Signature: a source is no evidence of ABI drift (that needs a binary).
      u_.suggestions.push_back({"", c.entity->qualified + "(" + params + ")",
                                path + ":" + std::to_string(c.entity->line), SuggestionReason::SourceSignature});
      if (u_.suggestions.size() >= 3) break;
    }
  }

  // --- SDK headers ---------------------------------------------------------------------------------
  bool check_sdk_headers() {
    if (!ctx_.sdk()) return false;
    for (const IndexedEntity* e : ctx_.sdk()->headers.lookup(sym_.name)) {
      if (!(is_function_kind(e->kind) || is_variable_kind(e->kind))) continue;
      if (sym_.kind != NameKind::CName && e->qualified != sym_.qualified()) continue;
      const std::string& path = ctx_.sdk()->headers.file_of(*e).path;
      verdict::claim(u_, EvidencePass::Trace, Classification::SdkDeclaredOnly);
      u_.origin = Origin{path, static_cast<int>(e->line), OriginKind::Declaration, std::nullopt, std::nullopt};
      say(u_, said::SdkDeclaresOnly{.file = path, .line = e->line, .sdk_home = ctx_.sdk()->home});
      u_.fix = Fix{FixKind::Stub, {}, {}, {}, {}, {}, saying(said::StubOrRequestFromSdk{})};
      counterpart();
      return true;
    }
    return false;
  }

  // --- CUDA ---------------------------------------------------------------------------------------
  std::string cuda_name() const {
    if (!ctx_.mapping) return "";
    std::string name = sym_.kind == NameKind::CName ? sym_.name : "";
    if (name.empty()) return "";
    std::string mapped = porting::to_cuda_name(name, *ctx_.mapping, ctx_.backend->port_naming);
    return mapped == name ? "" : mapped;
  }

  void counterpart() {
    std::string name = cuda_name();
    if (name.empty() && ctx_.backend->counterpart_by_prefix && sym_.kind == NameKind::CName) {
      if (auto by_rule = backend::cuda_name_by_rule(*ctx_.backend, sym_.name)) {
        name = *by_rule;
        also(u_, said::CounterpartByRule{.name = name, .api_prefix = ctx_.backend->api_prefix});
      }
    }
    if (name.empty()) return;
    std::optional<std::string> lib;
    if (ctx_.cuda())
      if (const auto* l = ctx_.cuda()->first_exporter(name)) lib = l->path;
    u_.counterpart = Counterpart{name, lib};
  }

  bool check_cuda() {
    std::string name = cuda_name();
    if (name.empty()) return false;
    const std::string& sdk = ctx_.backend->display;
    const auto* lib = ctx_.cuda() ? ctx_.cuda()->first_exporter(name) : nullptr;
    const IndexedEntity* decl = nullptr;
    if (ctx_.cuda())
      for (const IndexedEntity* e : ctx_.cuda()->headers.lookup(name))
        if (is_function_kind(e->kind) || is_variable_kind(e->kind)) decl = e;
    if (lib || decl) {
      verdict::claim(u_, EvidencePass::Trace, Classification::CudaOnly);
      u_.counterpart = Counterpart{name, lib ? std::optional<std::string>(lib->path) : std::nullopt};
      say(u_, said::SdkLacksCudaHas{.sdk = sdk,
                                    .name = name,
                                    .library = lib ? lib->path : "",
                                    .declared_in = lib ? "" : ctx_.cuda()->headers.file_of(*decl).path});
    } else if (const porting::ApiInfo* info = unsupported_mark(name)) {
      // No CUDA toolkit here, but the porting map itself says the target has no equivalent
      // (hipify's HIP_UNSUPPORTED): that is evidence enough for cuda-only.
      verdict::claim(u_, EvidencePass::Trace, Classification::CudaOnly);
      u_.counterpart = Counterpart{name, std::nullopt};
      say(u_, said::SdkLacksMapMarks{
                  .sdk = sdk, .map_file = ctx_.mapping->files.front(), .name = name, .line = info->line});
    } else {
      return false;
    }
    if (declared_only_) u_.origin = declared_only_;
    u_.fix = Fix{FixKind::Stub, {}, {}, {}, {}, {}, saying(said::StubAndRequest{.sdk = sdk, .name = name})};
    return true;
  }

  // A CUDA name itself (cudaMallocAsync): the port still calls CUDA's API. Said with the CUDA library
  // that exports it (or the header that declares it), and the counterpart the porting map gives:
  // unported when there is one (call it instead), cuda-only when the map has none.
  bool check_cuda_api() {
    if (sym_.kind != NameKind::CName) return false;
    const std::string& name = sym_.name;
    // A CUDA library's name (cudaX, cuX, cublasX...) or one the map renames: not whatever else the
    // CUDA install happens to export (OpenCL's clX in libOpenCL). Asked before the CUDA index, which
    // is read on first use: a plain C name (pmix_value_load in a venv's nvshmem) never costs its
    // 1.5 s first build.
    if (backend::cuda_api_family(name).empty() && !(ctx_.mapping && ctx_.mapping->to_musa.count(name))) return false;
    if (!ctx_.cuda()) return false;
    const auto* lib = ctx_.cuda()->first_exporter(name);
    const IndexedEntity* decl = nullptr;
    if (!lib)
      for (const IndexedEntity* e : ctx_.cuda()->headers.lookup(name))
        if (is_function_kind(e->kind) || is_variable_kind(e->kind)) decl = e;
    if (!lib && !decl) return false;
    const std::string& sdk = ctx_.backend->display;
    said::CudaApiCalled called{.library = lib ? lib->path : "",
                               .declared_in = lib ? "" : ctx_.cuda()->headers.file_of(*decl).path,
                               .sdk = sdk,
                               .counterpart = said::CudaApiCalled::Counterpart::NoMap,
                               .name = "",
                               .naming_rule = "",
                               .exporter = "",
                               .sdk_home = ""};
    u_.origin = lib ? Origin{lib->path, std::nullopt, OriginKind::Library, lib->path, std::nullopt}
                    : Origin{ctx_.cuda()->headers.file_of(*decl).path, static_cast<int>(decl->line),
                             OriginKind::Declaration, std::nullopt, std::nullopt};
    std::string counterpart;
    if (ctx_.mapping)
      if (auto it = ctx_.mapping->to_musa.find(name); it != ctx_.mapping->to_musa.end() && it->second != name)
        counterpart = std::string(it->second);
    if (counterpart.empty() && !ctx_.mapping && ctx_.sdk()) {
      // No map: the backend's naming rule (cudaX -> hipX), taken only when the SDK exports that name.
      if (auto renamed = backend::counterpart_by_rule(*ctx_.backend, name);
          renamed && ctx_.sdk()->first_exporter(*renamed))
        counterpart = *renamed, called.naming_rule = backend::naming_rule(*ctx_.backend);
    }
    if (counterpart.empty() && !ctx_.mapping) {
      // Without a map its counterpart is not known: neither stubbed (cuda-only) nor renamed.
      called.counterpart = said::CudaApiCalled::Counterpart::NoMap;
      say(u_, std::move(called));
      return true;
    }
    if (counterpart.empty()) {
      verdict::claim(u_, EvidencePass::Trace, Classification::CudaOnly);
      called.counterpart = said::CudaApiCalled::Counterpart::NoneInMap;
      say(u_, std::move(called));
      u_.fix = Fix{FixKind::Stub, {}, {}, {}, {}, {}, saying(said::StubAndRequest{.sdk = sdk, .name = name})};
      return true;
    }
    const auto* port = ctx_.sdk() ? ctx_.sdk()->first_exporter(counterpart) : nullptr;
    verdict::claim(u_, EvidencePass::Trace, Classification::Unported);
    u_.counterpart = Counterpart{counterpart, port ? std::optional<std::string>(port->path) : std::nullopt};
    called.counterpart = said::CudaApiCalled::Counterpart::Named;
    called.name = counterpart;
    called.exporter = port ? port->path : "";
    called.sdk_home = ctx_.sdk() ? ctx_.sdk()->home : "";
    say(u_, std::move(called));
    u_.fix = Fix{FixKind::None,
                 {},
                 {},
                 {},
                 port ? std::optional<std::string>(port->path) : std::nullopt,
                 {},
                 saying(said::CallInstead{.counterpart = counterpart, .name = name})};
    return true;
  }

  const porting::ApiInfo* unsupported_mark(const std::string& cuda) const {
    if (!ctx_.mapping) return nullptr;
    auto it = ctx_.mapping->info.find(cuda);
    return it != ctx_.mapping->info.end() && it->second.unsupported && !ctx_.mapping->files.empty() ? &it->second
                                                                                                    : nullptr;
  }

  const loader::Process* p_;
  int ref_;
  const TraceContext& ctx_;
  UnresolvedSymbol& u_;
  SymbolName sym_;
  std::optional<Origin> declared_only_;
  std::string module_definer_;  // an extension module that defines the symbol (no library to link)
};

}  // namespace

const std::unordered_map<std::string, std::vector<TraceContext::Includer>>& includers(const TraceContext& ctx) {
  if (!ctx.includers) {
    ctx.includers.emplace();
    // Read when the index scanned each unit (and cached with it), not from the tree on every run.
    if (ctx.sources)
      for (size_t i = 0; i < ctx.sources->files().size(); ++i) {
        const auto& f = ctx.sources->files()[i];
        if (!source::is_compiled_source(f.path, backend::file_kinds())) continue;
        for (const auto& inc : ctx.sources->includes(i)) (*ctx.includers)[inc.header].push_back({f.path, inc.line});
      }
  }
  return *ctx.includers;
}

std::optional<Fix> setup_py_fix(const std::string& module, const std::string& file) {
  auto site = build::setuptools::find_extension(module, file);
  if (!site) return std::nullopt;
  const auto& ext = site->extension();
  const std::string entry = build::setuptools::entry_for(site->setup, file);
  const std::string extension = std::string(build::setuptools::to_string(ext.kind)) + "('" + ext.name + "') at " +
                                site->setup.path + ":" + std::to_string(ext.line);
  // A fix with no entry to write: its words say what to do.
  auto told = [](FixKind kind, SaidPtr why) {
    Fix fix;
    fix.kind = kind;
    fix.why = std::move(why);
    return fix;
  };
  if (!ext.literal_sources) {
    // No list to edit: the words say what to write by hand, as precisely as the sources' form allows.
    const build::setuptools::HandEdit hand = build::setuptools::hand_edit(site->setup, ext, file);
    switch (hand.kind) {
      case build::setuptools::HandEdit::Kind::GlobMisses:
        return told(FixKind::AddSource,
                    saying(said::GlobMisses{.entry = entry, .extension = extension, .glob = hand.glob}));
      case build::setuptools::HandEdit::Kind::GlobCovers:
        return told(FixKind::None, saying(said::GlobCovers{.entry = entry, .extension = extension, .glob = hand.glob}));
      case build::setuptools::HandEdit::Kind::JoinEntry:
        return told(FixKind::AddSource,
                    saying(said::AddJoinEntry{.expression = hand.expression, .extension = extension}));
      case build::setuptools::HandEdit::Kind::Other: break;
    }
    return told(FixKind::AddSource, saying(said::AddToExtension{.entry = entry,
                                                                .extension = extension,
                                                                .by_hand = true,
                                                                .not_literal = ext.not_literal,
                                                                .variable = "",
                                                                .variable_at = ""}));
  }
  Fix fix =
      told(FixKind::AddSource,
           saying(said::AddToExtension{
               .entry = entry,
               .extension = extension,
               .by_hand = false,
               .not_literal = "",
               .variable = ext.variable,
               .variable_at = ext.variable.empty() ? "" : site->setup.path + ":" + std::to_string(ext.variable_line)}));
  fix.cmake_file = site->setup.path;
  fix.list = "sources";
  fix.entry = entry;
  return fix;
}

Fix add_source_fix(const std::optional<build::ListChoice>& choice, const std::string& file) {
  Fix fix;
  fix.kind = FixKind::AddSource;
  if (!choice) {
    fix.why = saying(said::CompileInto{.file = file});
  } else if (choice->covered) {
    fix.why = saying(
        said::ListNote{.covered = *choice->covered});  // no entry is the fix: cmake_file, list and entry stay null
  } else {
    fix.cmake_file = choice->cmake_file;
    fix.list = choice->list;
    fix.entry = choice->entry;
    fix.why = saying(said::AddToList{.entry = choice->entry, .list = choice->list, .cmake_file = choice->cmake_file});
  }
  return fix;
}

void trace_symbol(const loader::Process* process, int referencing, const TraceContext& ctx, UnresolvedSymbol& u) {
  Tracer(process, referencing, ctx, u).run();
}

}  // namespace mlc::trace

// musa-stubgen's plan in three phases: triage sorts each unresolved symbol into a stub, a CMake
// edit or a refusal; the stubs are merged into the stub files (merge.cpp, written by signatures.cpp);
// the CMake edits patch source lists and link lines (cmake_patch.cpp). Then the plan as a diff, or
// applied.
#include "stubgen/stubgen.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "build/edit.h"
#include "build/setuptools/setup_py.h"
#include "common/file_io.h"
#include "report/said_plan.h"
#include "stubgen/diff.h"
#include "stubgen/internal.h"

namespace mlc::stubgen {
namespace {

namespace fs = std::filesystem;
using namespace detail;

// A stub for `u` when its classification is one the options stub; false when it is not (a CMake
// edit may fix it). A symbol that cannot be stubbed safely is refused.
bool stub(const LibraryReport& lib, const UnresolvedSymbol& u, const trace::TraceContext& ctx, const StubOptions& o,
          Triage& t, Plan& p) {
  if (!o.classes.count(u.classification)) return false;
  if (u.type == SymbolType::Tls) {
    p.refused.push_back({u.demangled, said::plan::ThreadLocalUnstubbable{}.words()});
    return true;
  }
  Stub s;
  if (u.type == SymbolType::Object || u.size) {
    // Storage of exactly the declared size, bound to the symbol by its assembler name.
    if (!u.size) {
      p.refused.push_back({u.demangled, said::plan::DataOfUnknownSize{}.words()});
      return true;
    }
    s = data_stub(u, *u.size, lib.path, o, *ctx.backend);
  } else if (u.classification == Classification::UnimplementedKernel) {
    auto k = kernel_stub(u, ctx, o);
    if (!k) {
      p.refused.push_back({u.demangled, said::plan::KernelReturnUnknown{}.words()});
      return true;
    }
    s = *k;
  } else {
    s = function_stub(u, ctx, o, t.c10);
    if (s.refused) {
      p.refused.push_back({u.demangled, *s.refused});
      return true;
    }
    if (s.throws_instead) t.thrown_instead.push_back(u.demangled);
  }
  t.cpp_blocks[u.symbol] = s.definition;
  if (s.declaration) t.hdr_blocks[u.symbol] = *s.declaration;
  p.stubs.push_back(s.info);
  t.stubbed_in[lib.path].push_back({u.symbol, u.demangled});
  return true;
}

// The stub file goes into the build of each library it stubs for, as a missing source does: an entry
// in a source list of the library's target (the build model chooses it, the editor writes it), unless
// that target compiles the file already. Stubs no list takes reach no build: said, and left out of
// what the patch resolves.
void place_stub_file(const trace::TraceContext& ctx, const StubOptions& o, Triage& t, Plan& p) {
  if (!p.stub_files_complete) return;  // stub files that cannot be written go into no build
  const std::string file = build::normalize_path(o.out_cpp);
  if (!ctx.build) {
    // A setuptools extension: the stub file joins its sources= list, as a missing source does.
    for (const auto& [library, symbols] : t.stubbed_in) {
      auto site = build::setuptools::find_extension(library, file);
      if (!site) continue;
      const std::string entry = build::setuptools::entry_for(site->setup, file);
      const auto& listed = site->extension().sources;
      if (std::any_of(listed.begin(), listed.end(), [&](const auto& e) { return e.value == entry; })) continue;
      for (const auto& [mangled, demangled] : symbols)
        t.list_adds.push_back({site->setup.path, "sources", entry, mangled, demangled, library, file});
    }
    return;
  }
  for (const auto& [library, symbols] : t.stubbed_in) {
    const build::Target* built = ctx.build->target_for_artifact(library);
    if (built ? ctx.build->compiled_by(*built, file) : ctx.build->is_compiled(file)) continue;
    std::string target = build::target_of_library(ctx.build, library);
    auto choice = build::choose_list(*ctx.build, file, target, ctx.porting_dir);
    if (choice && !choice->cmake_file.empty()) {
      for (const auto& [mangled, demangled] : symbols)
        t.list_adds.push_back({choice->cmake_file, choice->list, choice->entry, mangled, demangled, library, file});
      continue;
    }
    if (choice && choice->covered) {
      p.notes.push_back(
          said::plan::StubsCovered{.library = library, .covered = said::ListNote{.covered = *choice->covered}}.words());
      continue;
    }
    p.warnings.push_back(
        said::plan::StubsUnlisted{.library = library, .target = target, .out_cpp = o.out_cpp, .symbols = symbols.size()}
            .words());
    for (const auto& s : symbols) p.unreached.push_back(s.first);
  }
}

// A CMake edit for `u`: an entry for a missing source, a dropped exclusion, a link; false when none fits.
bool patch(const LibraryReport& lib, const UnresolvedSymbol& u, const trace::TraceContext& ctx, Triage& t, Plan& p) {
  if (u.classification == Classification::MissingSource && u.fix && u.fix->cmake_file && u.fix->list && u.fix->entry) {
    t.list_adds.push_back({.file = *u.fix->cmake_file,
                           .list = *u.fix->list,
                           .entry = *u.fix->entry,
                           .symbol = u.symbol,
                           .demangled = u.demangled,
                           .library = lib.path,
                           .source = u.origin ? build::normalize_path(u.origin->file) : ""});
    return true;
  }
  if (u.classification == Classification::MissingSource && ctx.build && u.origin && !u.origin->file.empty()) {
    const auto* target = ctx.build->target_for_artifact(lib.path);
    auto ex = build::exclusion_for(*ctx.build, build::normalize_path(u.origin->file), target ? target->name : "");
    if (ex && ex->removal) {
      t.drops.push_back({ex->removal, ex->removal_entry, build::normalize_path(u.origin->file), u.demangled});
      return true;
    }
  }
  if ((u.classification == Classification::UnlinkedLibrary || u.classification == Classification::StaticArchive) &&
      u.fix && u.fix->entry) {
    std::string target = build::target_of_library(ctx.build, lib.path);
    std::string file = u.fix->cmake_file.value_or("");
    if (target.empty()) {  // an executable is named like the library: linking that one fixes nothing
      p.refused.push_back(
          {u.demangled, said::plan::NoTargetBuilds{.library = lib.path, .detail = *u.fix->detail}.words()});
      return true;
    }
    if (file.empty()) {
      p.refused.push_back(
          {u.demangled, said::plan::NoCMakeFileForTarget{.target = target, .detail = *u.fix->detail}.words()});
      return true;
    }
    t.link_adds.push_back(
        {file, target, build::imported_target(ctx.sdk() ? ctx.sdk()->home : "", *u.fix->entry).value_or(*u.fix->entry),
         u.symbol});
    return true;
  }
  return false;
}

// Phase 1: what the options ask for is stubbed; the rest must be fixable by a CMake patch, or is refused.
Triage triage(const Report& report, const trace::TraceContext& ctx, const StubOptions& o, Plan& p) {
  Triage t;
  t.c10 = c10_available(ctx, o);
  std::set<std::string> seen;
  // Symbols whose source the configure compiles since their library was built (a patch pending its
  // rebuild): nothing to change, nothing refused.
  std::map<std::string, std::vector<std::string>> awaiting;  // library -> symbols
  for (const auto& lib : report.libraries) {
    for (const auto& u : lib.unresolved) {
      if (!seen.insert(u.symbol).second) continue;
      if (u.classification == Classification::Unknown && ctx.build && u.origin &&
          ctx.build->awaits_rebuild(u.origin->file, lib.path)) {
        awaiting[lib.path].push_back(u.demangled.empty() ? u.symbol : u.demangled);
        continue;
      }
      if (stub(lib, u, ctx, o, t, p) || patch(lib, u, ctx, t, p)) continue;
      p.refused.push_back({u.demangled, said::plan::NotFixable{.classification = u.classification,
                                                               .reason = *u.reason,
                                                               .detail = u.fix ? *u.fix->detail : "",
                                                               .stub_asked = o.classes.count(u.classification) > 0}
                                            .words()});
    }
  }
  for (const auto& [library, symbols] : awaiting)
    p.notes.push_back(
        said::plan::AwaitingRebuild{.symbols = symbols.size(), .first = symbols.front(), .library = library}.words());
  return t;
}

}  // namespace

const char* to_string(SignatureSource s) {
  switch (s) {
    case SignatureSource::SdkHeader: return "sdk-header";
    case SignatureSource::CudaHeader: return "cuda-header";
    case SignatureSource::Demangled: return "demangled";
    case SignatureSource::AsmLabel: return "asm-label";
    case SignatureSource::GeneratedHeader: return "generated-header";
    case SignatureSource::DwarfSize: return "dwarf-size";
  }
  return "demangled";
}

void place_beside_target(StubOptions& o, const trace::TraceContext& ctx, const Report& report) {
  if (!o.beside_target || !ctx.build || report.libraries.empty()) return;
  const build::Target* t = ctx.build->target_for_artifact(report.libraries.front().path);
  if (!t || t->source_dir.empty()) return;
  const auto name = [](const std::string& path) { return path.substr(path.rfind('/') + 1); };
  o.out_cpp = t->source_dir + "/" + name(o.out_cpp);
  o.out_header = t->source_dir + "/" + name(o.out_header);
}

Plan plan(const Report& report, const trace::TraceContext& ctx, const StubOptions& o) {
  Plan p;
  Triage t = triage(report, ctx, o, p);
  if (!t.thrown_instead.empty()) {
    const auto& f = t.thrown_instead;
    p.notes.push_back(said::plan::ThrowInstead{.stubs = f.size(), .first = f.front()}.words());
  }
  plan_stub_files(report, t, o, *ctx.backend, p);  // phase 2: unimplemented_functions.cpp/.h
  place_stub_file(ctx, o, t, p);                   // phase 3: source lists (the stub file's), and link lines
  plan_cmake_edits(t, ctx, p);
  return p;
}

std::string diff_of(const Plan& plan, const StubOptions& o, bool include_stubs, bool include_cmake) {
  std::string out;
  auto rel = [&](const std::string& path) {
    if (!o.relative_to.empty() && path.rfind(o.relative_to + "/", 0) == 0) return path.substr(o.relative_to.size() + 1);
    return path;  // outside the project: its own absolute path, as diff -u writes it (patch -p0)
  };
  // A CMake patch is applied from the checkout: its paths are relative to the git work tree that
  // holds the file (a .git directory or file above it), or else to the project's source dir.
  auto repo_rel = [&](const std::string& path) {
    for (fs::path dir = fs::path(path).parent_path(); !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
      std::error_code ec;
      if (fs::exists(dir / ".git", ec)) return path.substr(dir.string().size() + 1);
    }
    return rel(path);
  };
  if (include_cmake)
    for (const auto& f : plan.cmake_files) out += unified_diff(repo_rel(f.path), f.before, f.after, f.created);
  if (include_stubs)
    for (const auto& f : plan.stub_files) out += unified_diff(rel(f.path), f.before, f.after, f.created);
  return out;
}

std::vector<InputError> apply(const Plan& plan, bool include_stubs, bool include_cmake) {
  std::vector<InputError> errors;
  auto write = [&](const FileEdit& f) {
    if (!f.changed()) return;
    if (auto err = write_atomic(f.path, f.after)) errors.push_back(*err);
  };
  if (include_stubs)
    for (const auto& f : plan.stub_files) write(f);
  if (include_cmake)
    for (const auto& f : plan.cmake_files) write(f);
  return errors;
}

}  // namespace mlc::stubgen

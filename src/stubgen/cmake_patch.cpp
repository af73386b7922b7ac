// The build patches: a source-list entry for each missing source; a link for each unlinked library; the
// list(REMOVE_ITEM)/list(FILTER EXCLUDE) entry that takes out a needed source dropped. What to edit,
// for which symbols, and what to refuse is decided here; the edits themselves go through the build
// model's editor (buildmodel/edit.h), on the parse the build reader made.
#include <sys/stat.h>

#include <map>
#include <set>
#include <tuple>

#include "build/edit.h"
#include "build/setuptools/setup_py.h"
#include "common/paths.h"
#include "report/said_plan.h"
#include "stubgen/internal.h"

namespace mlc::stubgen::detail {
namespace {

// The entries to drop, by the list(REMOVE_ITEM)/list(FILTER) command holding them.
using Dropped = std::map<const build::SourceList*, std::set<const build::ListEntry*>>;

// The edits of one plan, file by file, and what each is for.
struct Edits {
  const Triage& t;
  const trace::TraceContext& ctx;
  Plan& p;
  build::Editor editor;
  // The symbols each distinct addition fixes (several symbols often share one missing source), and
  // per patched file, what was added for which symbols.
  std::map<std::string, std::vector<std::string>> fixes_of_add;
  std::map<std::string, std::vector<EditPurpose>> purposes;
  std::set<std::string> added;

  Edits(const Triage& triage, const trace::TraceContext& context, Plan& plan)
      : t(triage), ctx(context), p(plan), editor(context.build, context.backend->cmake_add_library) {
    for (const auto& add : t.list_adds) fixes_of_add[list_key(add)].push_back(add.symbol);
    for (const auto& add : t.link_adds) fixes_of_add[link_key(add)].push_back(add.symbol);
  }

  static std::string list_key(const ListAdd& add) { return add.file + "\n" + add.list + "\n" + add.entry; }
  static std::string link_key(const LinkAdd& add) { return add.file + "\nlink\n" + add.target + "\n" + add.entry; }

  void record(const std::string& file, const std::string& key, const std::string& change) {
    purposes[file].push_back({change, fixes_of_add[key]});
  }

  // setup.py's text before and after this plan's additions, by path (the setuptools builds).
  std::map<std::string, std::pair<std::string, std::string>> setup_texts;

  void add_to_list(const ListAdd& add) {
    std::string key = list_key(add);
    if (!added.insert(key).second) return;
    if (is_setup_py(add)) return add_to_setup_py(add, key);
    switch (editor.add_source(add.file, add.list, add.entry, add.source)) {
      case build::EditOutcome::Added:
        record(add.file, key, said::plan::AddEntry{.entry = add.entry, .list = add.list}.words());
        break;
      case build::EditOutcome::Present: already_listed(add, key); break;
      case build::EditOutcome::NoPlace:
        p.refused.push_back({add.entry, said::plan::ListNotInFile{.list = add.list, .file = add.file}.words()});
        for (const auto& symbol : fixes_of_add[key]) p.unreached.push_back(symbol);
        break;
      case build::EditOutcome::Unreadable: break;  // said once, by the build reader or the editor
    }
  }

  static bool is_setup_py(const ListAdd& add) { return base_name(add.file) == "setup.py" && add.list == "sources"; }

  // An entry for the sources= list of the setuptools extension that builds the library: setup.py is
  // read as text and edited there, never run.
  void add_to_setup_py(const ListAdd& add, const std::string& key) {
    auto it = setup_texts.find(add.file);
    if (it == setup_texts.end()) {
      auto read = build::setuptools::read_setup_py(add.file);
      if (!read) {
        p.errors.push_back(read.error());
        for (const auto& symbol : fixes_of_add[key]) p.unreached.push_back(symbol);
        return;
      }
      it = setup_texts.emplace(add.file, std::make_pair(read->text, read->text)).first;
    }
    const build::setuptools::SetupPy setup = build::setuptools::parse_setup_py(add.file, it->second.second);
    const build::setuptools::ExtensionDecl* ext = build::setuptools::extension_for(setup, add.library);
    auto refuse = [&](const std::string& why) {
      p.refused.push_back({add.entry, why});
      for (const auto& symbol : fixes_of_add[key]) p.unreached.push_back(symbol);
    };
    if (!ext) return refuse(said::plan::NoExtensionBuilds{.file = add.file, .library = add.library}.words());
    const std::string what =
        said::plan::ExtensionSources{.kind = std::string(build::setuptools::to_string(ext->kind)), .name = ext->name}
            .words();
    for (const auto& entry : ext->sources)
      if (entry.value == add.entry) {
        p.warnings.push_back(
            said::plan::AlreadyInExtension{.entry = add.entry, .extension = what, .file = add.file, .line = entry.line}
                .words());
        return;
      }
    auto after = build::setuptools::with_source_added(setup, *ext, add.entry);
    if (!after)
      return refuse(said::plan::ExtensionListNotLiteral{
          .extension = what, .file = add.file, .not_literal = ext->not_literal, .entry = add.entry, .line = ext->line}
                        .words());
    it->second.second = std::move(*after);
    record(add.file, key, said::plan::AddEntry{.entry = add.entry, .list = what}.words());
  }

  // The entry is there already (a second --apply, or a person's edit). A library older than the
  // CMake file has not been rebuilt since: the rebuild takes the entry in. A library built after it
  // still lacks what the source defines: that list does not reach this build (an if() branch the
  // configure did not take, another target's list), and saying "added" again would promise a
  // rebuild that fails as before. Called once per entry (add_to_list skips a key it has seen).
  void already_listed(const ListAdd& add, const std::string& key) {
    said::plan::AlreadyListed said{.entry = add.entry, .list = add.list, .file = add.file, .predating_library = ""};
    struct stat cmake_st, lib_st;
    if (add.library.empty() || stat(add.file.c_str(), &cmake_st) != 0 || stat(add.library.c_str(), &lib_st) != 0) {
      p.warnings.push_back(said.words());  // no library file to compare with (a saved report's)
      return;
    }
    if (std::tie(lib_st.st_mtim.tv_sec, lib_st.st_mtim.tv_nsec) <
        std::tie(cmake_st.st_mtim.tv_sec, cmake_st.st_mtim.tv_nsec)) {
      said.predating_library = add.library;
      p.warnings.push_back(said.words());
      return;
    }
    for (const auto& a : t.list_adds) {
      if (list_key(a) != key) continue;
      p.unreached.push_back(a.symbol);
      p.refused.push_back(
          {a.demangled.empty() ? a.symbol : a.demangled,
           said::plan::ListDoesNotReach{.entry = add.entry, .list = add.list, .file = add.file, .library = add.library}
               .words()});
    }
  }

  void link(const LinkAdd& add) {
    std::string key = link_key(add);
    if (!added.insert(key).second) return;
    switch (editor.add_link(add.file, add.target, add.entry)) {
      case build::EditOutcome::Added:
        record(add.file, key, said::plan::LinkWith{.target = add.target, .entry = add.entry}.words());
        break;
      case build::EditOutcome::NoPlace:
        p.refused.push_back({add.entry, said::plan::NoLinkPlace{.target = add.target, .file = add.file}.words()});
        break;
      case build::EditOutcome::Present:
      case build::EditOutcome::Unreadable: break;
    }
  }

  // Drops, by the command they edit. A FILTER regex goes only when everything it excludes is wanted
  // back; otherwise dropping it would compile files the project keeps out on purpose.
  Dropped drops_to_make() {
    std::set<std::string> wanted;
    for (const auto& d : t.drops) wanted.insert(d.file);
    Dropped dropped;
    for (const auto& d : t.drops) {
      if (d.removal->filter) {
        std::vector<std::string> others;
        for (const auto& f : d.entry->files)
          if (!wanted.count(build::normalize_path(f))) others.push_back(f);
        if (!others.empty()) {
          p.refused.push_back({d.symbol, said::plan::RegexAlsoExcludes{.file = d.file,
                                                                       .variable = d.removal->variable,
                                                                       .regex = d.entry->raw,
                                                                       .cmake_file = d.removal->cmake_file,
                                                                       .first_other = others.front(),
                                                                       .line = d.removal->line,
                                                                       .others = others.size()}
                                             .words()});
          continue;
        }
      }
      dropped[d.removal].insert(d.entry);
    }
    return dropped;
  }

  void drop(const Dropped& dropped) {
    for (const auto& [removal, entries] : dropped) {
      const std::string where = removal->cmake_file + ":" + std::to_string(removal->line);
      if (entries.size() == removal->entries.size()) {
        // Nothing left for the call to take out: the call goes, with its line.
        if (editor.remove_command(*removal) != build::EditOutcome::Added) continue;
        p.notes.push_back(said::plan::RemovingCall{.filter = removal->filter,
                                                   .variable = removal->variable,
                                                   .regex = removal->filter ? removal->entries[0].raw : "",
                                                   .where = where,
                                                   .sources = entries.size()}
                              .words());
      } else {
        for (const auto* e : entries) {
          if (editor.remove_entry(*removal, *e) != build::EditOutcome::Added) continue;
          p.notes.push_back(
              said::plan::DroppingEntry{.entry = e->raw, .variable = removal->variable, .where = where}.words());
        }
      }
    }
  }

  void finish() {
    for (auto& edit : editor.finish())
      p.cmake_files.push_back({edit.file, std::move(edit.before), std::move(edit.after), false, purposes[edit.file]});
    for (auto& [file, texts] : setup_texts)
      if (texts.first != texts.second)
        p.cmake_files.push_back({file, std::move(texts.first), std::move(texts.second), false, purposes[file]});
    p.errors.insert(p.errors.end(), editor.errors().begin(), editor.errors().end());
  }
};

}  // namespace

namespace {

// The plan's edits of `t`, made on a copy of `p` (a second try starts again from `p`).
Plan planned(const Triage& t, const trace::TraceContext& ctx, const Plan& p) {
  Plan trial = p;
  Edits edits(t, ctx, trial);
  for (const auto& add : t.list_adds) edits.add_to_list(add);
  for (const auto& add : t.link_adds) edits.link(add);
  edits.drop(edits.drops_to_make());
  edits.finish();
  return trial;
}

// The targets each added source is for (by the library lacking it), as the build system names them.
std::vector<std::pair<std::string, std::string>> wanted(const Triage& t, const build::Model& build) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& add : t.list_adds)
    if (const auto* target = build.target_for_artifact(add.library); target && !add.source.empty())
      out.emplace_back(target->name, add.source);
  return out;
}

}  // namespace

namespace {

// CMake's verdict on the edits of `t` (planned on a copy of `p`).
build::EditCheck checked(const Triage& t, const trace::TraceContext& ctx, const Plan& p) {
  std::vector<build::FileEdit> edits;
  for (const auto& f : planned(t, ctx, p).cmake_files) edits.push_back({f.path, f.before, f.after});
  // The stub files the plan writes exist in the checked copy too (a list or a glob must find them
  // there); one outside the source tree is none of CMake's files to copy.
  // A stub file outside it cannot be shown to CMake without writing it: its entry is not asked about.
  const std::string tree = build::normalize_path(ctx.build->source_dir) + "/";
  std::set<std::string> unseen;
  for (const auto& f : p.stub_files) {
    if (f.path.rfind(tree, 0) != 0) unseen.insert(build::normalize_path(f.path));
    else if (!edits.empty()) edits.push_back({f.path, f.before, f.after});
  }
  auto want = wanted(t, *ctx.build);
  std::erase_if(want, [&](const auto& w) { return unseen.count(w.second) > 0; });
  return build::check_edits(*ctx.build, edits, want);
}

// The source entries without which the edits of `t` configure (halves tried in turn: a few configures
// for one bad entry among many), each with CMake's error; all of them when the rest fails alone.
void breaking_adds(const Triage& t, const std::vector<size_t>& adds, const std::string& failure,
                   const trace::TraceContext& ctx, const Plan& p, std::map<size_t, std::string>& out) {
  if (adds.size() == 1) {
    out[adds[0]] = failure;
    return;
  }
  const size_t half = adds.size() / 2;
  for (const auto& part : {std::vector<size_t>(adds.begin(), adds.begin() + static_cast<long>(half)),
                           std::vector<size_t>(adds.begin() + static_cast<long>(half), adds.end())}) {
    Triage alone = t;
    alone.list_adds.clear();
    for (size_t k : part) alone.list_adds.push_back(t.list_adds[k]);
    const auto check = checked(alone, ctx, p);
    if (!check.failure.empty()) breaking_adds(t, part, check.failure, ctx, p, out);
  }
}

}  // namespace

void plan_cmake_edits(const Triage& t, const trace::TraceContext& ctx, Plan& p) {
  Plan trial = planned(t, ctx, p);
  // CMake's own word on the edited files, when the tool may ask it: they must configure, and each added
  // source must be compiled by the target that lacks it. An edit that fails either is not written.
  if (!ctx.build || !ctx.build->from_build_system || trial.cmake_files.empty()) {
    p = std::move(trial);
    return;
  }
  auto check = checked(t, ctx, p);
  if (!check.ran || (check.failure.empty() && check.not_compiled.empty())) {
    p = std::move(trial);
    return;
  }
  Triage kept = t;
  auto refuse = [&](const ListAdd& add, const std::string& why) {
    p.refused.push_back({add.demangled.empty() ? add.symbol : add.demangled, why});
    p.unreached.push_back(add.symbol);
  };
  if (!check.failure.empty()) {
    // The entries that break the configure go; the rest is checked again below.
    std::vector<size_t> all(t.list_adds.size());
    for (size_t k = 0; k < all.size(); ++k) all[k] = k;
    std::map<size_t, std::string> breaking;
    if (!all.empty()) breaking_adds(t, all, check.failure, ctx, p, breaking);
    if (breaking.empty())  // the links or removals break it: nothing is written
      for (size_t k = 0; k < all.size(); ++k) breaking[k] = check.failure;
    kept.list_adds.clear();
    for (size_t k = 0; k < t.list_adds.size(); ++k) {
      const auto& add = t.list_adds[k];
      if (auto it = breaking.find(k); it != breaking.end())
        refuse(add,
               said::plan::AddBreaksConfigure{
                   .entry = add.entry, .list = add.list, .file = add.file, .failure = it->second}
                   .words());
      else kept.list_adds.push_back(add);
    }
    if (breaking.size() == t.list_adds.size()) {
      kept.link_adds.clear();
      kept.drops.clear();
    }
    check = kept.list_adds.empty() ? build::EditCheck{} : checked(kept, ctx, p);
    if (!check.failure.empty()) {  // what fails only together goes too
      for (const auto& add : kept.list_adds)
        refuse(add,
               said::plan::AddBreaksConfigure{
                   .entry = add.entry, .list = add.list, .file = add.file, .failure = check.failure}
                   .words());
      kept.list_adds.clear();
      kept.link_adds.clear();
      kept.drops.clear();
    }
  }
  std::erase_if(kept.list_adds, [&](const ListAdd& add) {
    for (const auto& [target, file] : check.not_compiled)
      if (file == add.source) {
        refuse(add,
               said::plan::AddDoesNotCompile{
                   .entry = add.entry, .list = add.list, .file = add.file, .source = file, .target = target}
                   .words());
        return true;
      }
    return false;
  });
  p = planned(kept, ctx, p);
}

}  // namespace mlc::stubgen::detail

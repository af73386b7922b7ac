// Which uncompiled sources could define a symbol that text matching could not place, ranked by the
// evidence for each (the confirm pass compiles them in this order, within its budget): macro families,
// vtables of macro-written classes and explicit instantiations through export macros are invisible
// to text, but not to the compiler.
#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "backend/backend.h"
#include "build/model.h"
#include "common/paths.h"
#include "confirm/confirm.h"
#include "demangle/symbol_name.h"
#include "report/said.h"
#include "source/source_index.h"

namespace mlc::confirm {
namespace {

bool ends_with_path(const std::string& file, const std::string& tail) {
  return file.size() > tail.size() && file.compare(file.size() - tail.size(), tail.size(), tail) == 0 &&
         file[file.size() - tail.size() - 1] == '/';
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A test, benchmark, example or fuzzer, or a file for another platform than this build's (by the names
// projects give them: *_test.cc, tests/, win32/, os390...).
bool is_test_or_platform_file(const std::string& path) {
  static const std::set<std::string> dirs = {
      "test",  "tests",   "testing",  "unittest", "unittests",  "gtest", "benchmark", "benchmarks",
      "bench", "example", "examples", "sample",   "samples",    "fuzz",  "fuzzing",   "fuzzer",
      "win",   "win32",   "win64",    "windows",  "mingw",      "msvc",  "darwin",    "mac",
      "macos", "osx",     "ios",      "android",  "os390",      "zos",   "aix",       "solaris",
      "sunos", "haiku",   "cygwin",   "freertos", "emscripten", "wasm"};
  std::string p = lower(path);
  for (size_t start = 0, slash; (slash = p.find('/', start)) != std::string::npos; start = slash + 1)
    if (dirs.count(p.substr(start, slash - start))) return true;
  std::string stem = p.substr(p.rfind('/') + 1);
  stem = stem.substr(0, stem.rfind('.'));
  for (const char* tail : {"_test", "_tests", "_unittest", "-test", "_benchmark", "_bench", "_fuzzer", "_fuzz",
                           "_win32", "_windows", "_win", "_darwin", "_mac", "_os390", "_android"})
    if (stem.size() > std::string(tail).size() && stem.ends_with(tail)) return true;
  return stem.rfind("test_", 0) == 0 || stem == "test" || stem.rfind("win32_", 0) == 0;
}

}  // namespace

int candidate_place(const trace::TraceContext& ctx, const UnresolvedSymbol& u, const std::string& file) {
  if (is_test_or_platform_file(file)) return 3;
  if (!ctx.build) return 2;
  const std::string dir = dir_of(file);
  const build::Target* own = nullptr;
  for (const auto& ref : u.referenced_by)
    if ((own = ctx.build->target_for_artifact(ref.library))) break;
  if (own) {
    const auto own_sources = ctx.build->source_files(*own);
    if (own->source_dir == dir ||
        std::any_of(own_sources.begin(), own_sources.end(), [&](const std::string& s) { return dir_of(s) == dir; }))
      return 0;
  }
  for (const auto& t : ctx.build->targets)
    if (&t != own &&
        std::any_of(t.sources.begin(), t.sources.end(), [&](const std::string& s) { return dir_of(s) == dir; }))
      return 1;
  return 2;
}

uint32_t line_mentioning(const std::string& text, const std::string& word) {
  if (word.empty()) return 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    // As a whole word, or as the tail of a pasted one (DEFINE_bool(name) writes FLAGS_name).
    bool right = at + word.size() == text.size() || !is_word_char(text[at + word.size()]);
    bool left = at == 0 || !is_word_char(text[at - 1]);
    if (right && left)
      return static_cast<uint32_t>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n') + 1);
  }
  return 0;
}

// The headers that declare the symbol `sym` parses to, its class or its template, and the file its
// origin names.
std::set<std::string> declaring_headers(const trace::TraceContext& ctx, const UnresolvedSymbol& u,
                                        const demangle::SymbolName& sym, bool c_name) {
  std::set<std::string> headers;
  std::string qualified = c_name ? sym.name : sym.qualified();
  for (const auto* e : ctx.sources->lookup(sym.name))
    if (e->qualified == qualified || (c_name && e->name() == sym.name)) headers.insert(ctx.sources->file_of(*e).path);
  if (!c_name && !sym.scopes.empty()) {
    std::string scope;
    for (size_t i = 0; i < sym.scopes.size(); ++i) scope += (i ? "::" : "") + sym.scopes[i];
    std::string last = sym.scopes.back();
    if (auto lt = last.find('<'); lt != std::string::npos) {
      last = last.substr(0, lt);
      scope = scope.substr(0, scope.rfind('<'));
    }
    for (const auto* e : ctx.sources->lookup(last))
      if ((e->kind == source::EntityKind::ClassDefinition || e->kind == source::EntityKind::ClassInstantiation) &&
          e->qualified == scope)
        headers.insert(ctx.sources->file_of(*e).path);
  }
  if (u.origin && !u.origin->file.empty()) headers.insert(u.origin->file);
  return headers;
}

// The directories of the sources of the targets that reference `u`: the File API's target of each
// referencing library, else the CMake lists that feed a target named after it.
std::set<std::string> target_dirs(const trace::TraceContext& ctx, const UnresolvedSymbol& u) {
  std::set<std::string> dirs;
  for (const auto& ref : u.referenced_by) {
    if (const auto* t = ctx.build->target_for_artifact(ref.library)) {
      for (const auto& s : ctx.build->source_files(*t)) dirs.insert(dir_of(s));
      continue;
    }
    std::string base = build::target_of_library(nullptr, ref.library);  // named after the library
    for (const auto& l : ctx.build->lists)
      if (!l.removal && (l.targets.count(base) || l.variable == base) && build::feeds_build(*ctx.build, l))
        for (const auto& e : l.entries)
          for (const auto& f : e.files) dirs.insert(dir_of(f));
  }
  return dirs;
}

std::vector<RankedSource> rank_sources(const trace::TraceContext& ctx, const UnresolvedSymbol& u,
                                       std::map<std::string, std::string>& texts) {
  std::vector<RankedSource> out;
  if (!ctx.sources || !ctx.build) return out;
  auto sym = demangle::parse_symbol(u.symbol);
  if (sym.name.empty()) return out;
  const bool c_name = sym.kind == demangle::NameKind::CName;
  // The word a source that writes it must contain: the entity's own name, or for a special member
  // (vtable, typeinfo, guard variable) the class's.
  std::string word = sym.name;
  if (sym.is_constructor || sym.is_destructor) word = sym.scopes.empty() ? sym.name : sym.scopes.back();
  if (!word.empty() && word[0] == '~') word = word.substr(1);
  // A variable a macro pastes (FLAGS_name): the pasted-in part is what the source spells.
  if (word.rfind("FLAGS_", 0) == 0 && word.size() > 6) word = word.substr(6);

  // 1. The headers that declare it, its class or its template.
  const std::set<std::string> headers = declaring_headers(ctx, u, sym, c_name);

  std::set<std::string> seen;
  // (or compiled by the configure only since the library was built: the rebuild will define what it does)
  const std::string library = u.referenced_by.empty() ? "" : u.referenced_by.front().library;
  auto uncompiled = [&](const std::string& f) {
    return source::is_compiled_source(f, backend::file_kinds()) &&
           (!ctx.build->is_compiled(f) || (!library.empty() && ctx.build->awaits_rebuild(f, library)));
  };
  auto text_of = [&](const std::string& f) -> const std::string& {
    auto it = texts.find(f);
    if (it != texts.end()) return it->second;
    std::ifstream in(f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return texts[f] = ss.str();
  };
  for (const auto& h : headers)
    if (uncompiled(h) && seen.insert(h).second)
      out.push_back({.file = h,
                     .tier = 1,
                     .line = line_mentioning(text_of(h), word),
                     .evidence = {.kind = said::CandidateBasis::Kind::Declares, .what = ""}});
  for (const auto& [included, units] : trace::includers(ctx)) {
    const std::string* header = nullptr;
    for (const auto& h : headers)
      if (ends_with_path(h, included)) header = &h;
    if (!header) continue;
    for (const auto& unit : units)
      if (uncompiled(unit.tu) && seen.insert(unit.tu).second)
        out.push_back({.file = unit.tu,
                       .tier = 1,
                       .line = unit.line,
                       .evidence = {.kind = said::CandidateBasis::Kind::Includes, .what = *header}});
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.file < b.file; });

  // 2 and 3. The directories of the target that references it (else of the declaring headers):
  // first the uncompiled sources there that spell its name, then all the others.
  // The target comes from the File API (its artifacts), else from the CMake lists that feed a target
  // named after the library (libcore.so: core). Without either, the name is looked for beside every
  // compiled source, but only the target's and the headers' directories are compiled wholesale.
  std::set<std::string> dirs = target_dirs(ctx, u), spelling_dirs;
  if (dirs.empty())
    for (const auto& f : ctx.build->compiled) spelling_dirs.insert(dir_of(f));
  for (const auto& h : headers) dirs.insert(dir_of(h));
  std::vector<RankedSource> mentions, others;
  for (const auto& f : ctx.sources->files()) {
    const std::string dir = dir_of(f.path);
    const bool wholesale = dirs.count(dir) > 0;
    if ((!wholesale && !spelling_dirs.count(dir)) || !uncompiled(f.path) || seen.count(f.path)) continue;
    if (uint32_t line = line_mentioning(text_of(f.path), word)) {
      seen.insert(f.path);
      mentions.push_back({.file = f.path,
                          .tier = 2,
                          .line = line,
                          .evidence = {.kind = said::CandidateBasis::Kind::SpellsBeside, .what = word}});
    } else if (wholesale) {
      seen.insert(f.path);
      others.push_back(
          {.file = f.path, .tier = 3, .line = 0, .evidence = {.kind = said::CandidateBasis::Kind::Beside, .what = ""}});
    }
  }
  out.insert(out.end(), mentions.begin(), mentions.end());
  out.insert(out.end(), others.begin(), others.end());
  for (auto& r : out) r.place = candidate_place(ctx, u, r.file);
  return out;
}

}  // namespace mlc::confirm

// CMake patches: a source-list entry for each missing source, in the list's own style; a link for each
// unlinked library; the list(REMOVE_ITEM)/list(FILTER EXCLUDE) entry that takes out a needed source
// dropped. Each CMake file is read and parsed once and edited by insertions at byte offsets.
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <tuple>

#include "cmake/cmake_lang.h"
#include "common/file_io.h"
#include "stubgen/internal.h"

namespace mlc::stubgen::detail {
namespace {

namespace fs = std::filesystem;

struct Insertion {
  size_t offset;
  std::string text;
  size_t erase = 0;  // bytes replaced from offset (0: a pure insertion)
};

std::string line_indent(const std::string& text, size_t offset, bool* first_on_line) {
  size_t ls = text.rfind('\n', offset == 0 ? 0 : offset - 1);
  ls = ls == std::string::npos ? 0 : ls + 1;
  size_t k = ls;
  while (k < offset && (text[k] == ' ' || text[k] == '\t')) ++k;
  *first_on_line = k == offset;
  return text.substr(ls, k - ls);
}

size_t common_prefix(const std::string& a, const std::string& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

std::string lower(std::string x) {
  std::transform(x.begin(), x.end(), x.begin(), [](unsigned char c) { return std::tolower(c); });
  return x;
}

// Where `entry` goes in `list`, in the list's own style: quoted when its neighbour is, on a line of its
// own with the neighbour's indentation (or beside it when entries share a line). A sorted list stays
// sorted; otherwise the entry goes next to the one sharing the longest prefix with it, in alphabetical
// order with that neighbour. References (${SRCS}) and generator expressions are never neighbours.
std::optional<Insertion> insertion_for(const std::string& text, const cmake::SourceList& list, const std::string& entry) {
  std::vector<const cmake::ListEntry*> direct;
  for (const auto& e : list.entries)
    if (!cmake::is_indirect_entry(e.raw)) direct.push_back(&e);
  if (direct.empty()) {
    // add_library(T SHARED ${SRCS}) or an empty set(): after the last argument, on its line.
    size_t at = list.entries.empty() ? list.close_paren : list.entries.back().end;
    return Insertion{at, " " + entry};
  }
  bool sorted = std::is_sorted(direct.begin(), direct.end(),
                               [](const auto* a, const auto* b) { return lower(a->raw) < lower(b->raw); });
  const cmake::ListEntry* after = nullptr;   // the entry the new one follows
  const cmake::ListEntry* before = nullptr;  // or, when none, the one it precedes
  if (sorted && direct.size() > 1) {
    for (const auto* e : direct) {
      if (lower(e->raw) < lower(entry)) after = e;
      else if (!before) before = e;
    }
  } else {
    size_t best_len = 0;
    for (const auto* e : direct) best_len = std::max(best_len, common_prefix(e->raw, entry));
    // Among entries with that prefix, the last one that sorts before the new entry.
    for (const auto* e : direct) {
      if (common_prefix(e->raw, entry) < best_len) continue;
      if (lower(e->raw) < lower(entry)) after = e;
      else if (!before) before = e;
    }
  }
  const cmake::ListEntry* model = after ? after : before;
  std::string written = text[model->begin] == '"' ? "\"" + entry + "\"" : entry;
  bool first = false;
  if (after) {
    std::string indent = line_indent(text, after->begin, &first);
    size_t nl = text.find('\n', after->end);
    if (nl == std::string::npos) nl = text.size();
    bool shares_line = std::any_of(list.entries.begin(), list.entries.end(),
                                   [&](const auto& e) { return e.begin > after->end && e.begin < nl; });
    if (!first || shares_line || nl > list.close_paren) return Insertion{after->end, " " + written};  // "a.cc b.cc)"
    return Insertion{nl, "\n" + indent + written};
  }
  std::string indent = line_indent(text, before->begin, &first);
  if (!first) return Insertion{before->begin, written + " "};
  size_t ls = text.rfind('\n', before->begin);
  ls = ls == std::string::npos ? 0 : ls + 1;
  return Insertion{ls, indent + written + "\n"};
}

std::string apply_insertions(std::string text, std::vector<Insertion> ins) {
  // Back to front, so offsets stay valid; at one offset the entry that sorts last goes in first and
  // so ends up last.
  std::sort(ins.begin(), ins.end(), [](const Insertion& a, const Insertion& b) {
    return a.offset != b.offset ? a.offset > b.offset : a.text > b.text;
  });
  for (const auto& i : ins) text.replace(i.offset, i.erase, i.text);
  return text;
}

// The bytes to cut so that [begin, end) goes from a CMake file: with its whole line when nothing else is
// on it, else with the blanks before it ("a.cc b.cc" loses " b.cc").
Insertion cut(const std::string& text, size_t begin, size_t end) {
  size_t ls = text.rfind('\n', begin == 0 ? 0 : begin - 1);
  ls = ls == std::string::npos || begin == 0 ? 0 : ls + 1;
  size_t le = text.find('\n', end);
  if (le == std::string::npos) le = text.size();
  auto blank = [&](size_t from, size_t to) {
    return std::all_of(text.begin() + static_cast<std::ptrdiff_t>(from), text.begin() + static_cast<std::ptrdiff_t>(to),
                       [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
  };
  if (blank(ls, begin) && blank(end, le)) return {ls, "", std::min(le + 1, text.size()) - ls};
  size_t from = begin;
  while (from > ls && (text[from - 1] == ' ' || text[from - 1] == '\t')) --from;
  if (from == ls) {  // first on its line, others follow: take the blanks after it instead
    size_t to = end;
    while (to < le && (text[to] == ' ' || text[to] == '\t')) ++to;
    return {begin, "", to - begin};
  }
  return {from, "", end - from};
}

struct Parsed {
  std::string text;
  std::vector<cmake::CMakeCommand> commands;
};

// The entries to drop, by the list(REMOVE_ITEM)/list(FILTER) command holding them.
using Dropped = std::map<const cmake::SourceList*, std::set<const cmake::ListEntry*>>;

// The edits of one plan, file by file, and what each is for.
struct Edits {
  const Triage& t;
  const trace::TraceContext& ctx;
  Plan& p;
  std::map<std::string, std::optional<Parsed>> parsed;
  std::map<std::string, std::vector<Insertion>> inserts;
  std::map<std::string, std::string> vars = ctx.build ? ctx.build->variables() : std::map<std::string, std::string>{};
  // The symbols each distinct addition fixes (several symbols often share one missing source), and
  // per patched file, what was added for which symbols.
  std::map<std::string, std::vector<std::string>> fixes_of_add;
  std::map<std::string, std::vector<EditPurpose>> purposes;
  std::set<std::string> added;

  Edits(const Triage& triage, const trace::TraceContext& context, Plan& plan) : t(triage), ctx(context), p(plan) {
    for (const auto& add : t.list_adds) fixes_of_add[list_key(add)].push_back(add.symbol);
    for (const auto& add : t.link_adds) fixes_of_add[link_key(add)].push_back(add.symbol);
  }

  static std::string list_key(const ListAdd& add) { return add.file + "\n" + add.list + "\n" + add.entry; }
  static std::string link_key(const LinkAdd& add) { return add.file + "\nlink\n" + add.target + "\n" + add.entry; }

  void record(const std::string& file, const std::string& key, const std::string& change) {
    purposes[file].push_back({change, fixes_of_add[key]});
  }

  // Each CMake file is read and parsed once; a file that cannot be is an error, once.
  const Parsed* parsed_of(const std::string& file) {
    if (!parsed.count(file)) {
      auto& slot = parsed[file];
      auto text = read_text(file);
      if (!text) {
        p.errors.push_back({file, "cannot read"});
        return nullptr;
      }
      auto cmds = cmake::parse_cmake(*text, file);
      if (!cmds) {
        p.errors.push_back(cmds.error());
        return nullptr;
      }
      slot = Parsed{std::move(*text), std::move(cmds).value()};
    }
    return parsed[file] ? &*parsed[file] : nullptr;
  }

  void add_to_list(const ListAdd& add) {
    std::string key = list_key(add);
    if (!added.insert(key).second) return;
    const Parsed* file = parsed_of(add.file);
    if (!file) return;
    // The lists as the build read them (its scopes' variables expanded); the file alone otherwise.
    std::vector<cmake::SourceList> lists;
    auto local_vars = vars;
    if (ctx.build)
      for (const auto& l : ctx.build->lists)
        if (l.cmake_file == add.file) lists.push_back(l);
    if (lists.empty()) lists = cmake::find_source_lists(file->commands, add.file, local_vars, ctx.backend->cmake_add_library);
    std::vector<const cmake::SourceList*> named;  // every command writing that list (set, list(APPEND), ...)
    for (const auto& l : lists)
      if (l.variable == add.list && !l.removal) named.push_back(&l);
    if (named.empty()) {
      p.refused.push_back({add.entry, "the list " + add.list + " is not in " + add.file});
      return;
    }
    // Only the commands the configure took count (those whose files the build compiles): an entry in
    // an if() branch that is not taken changes nothing, there or as a duplicate.
    if (ctx.build) {
      std::vector<const cmake::SourceList*> live;
      for (const auto* l : named)
        if (cmake::feeds_build(*ctx.build, *l)) live.push_back(l);
      if (!live.empty()) named = live;
    }
    // Present by spelling, or by the file the entry names once its variables are expanded.
    const std::string& dir = named.front()->current_dir;
    local_vars["CMAKE_CURRENT_SOURCE_DIR"] = dir;
    local_vars["CMAKE_CURRENT_LIST_DIR"] = add.file.substr(0, add.file.rfind('/'));
    std::string expanded = cmake::expand_variables(add.entry, local_vars);
    expanded = cmake::normalize_path(!expanded.empty() && expanded[0] == '/' ? expanded : dir + "/" + expanded);
    bool present = false;
    for (const auto* l : named)
      for (const auto& e : l->entries) {
        present |= e.raw == add.entry;
        for (const auto& f : e.files) present |= f == expanded;
      }
    if (present) {
      already_listed(add, key);
      return;
    }
    // Of several commands writing the list (if/else branches, list(APPEND)), the one holding the
    // entry's nearest siblings.
    const cmake::SourceList* list = named.back();
    size_t best = 0;
    for (const auto* l : named)
      for (const auto& e : l->entries) {
        if (cmake::is_indirect_entry(e.raw)) continue;
        size_t len = common_prefix(e.raw, add.entry);
        if (len > best) best = len, list = l;
      }
    if (auto ins = insertion_for(file->text, *list, add.entry)) {
      inserts[add.file].push_back(*ins);
      record(add.file, key, "add " + add.entry + " to " + add.list);
    }
  }

  // The entry is there already (a second --apply, or a person's edit). A library older than the
  // CMake file has not been rebuilt since: the rebuild takes the entry in. A library built after it
  // still lacks what the source defines: that list does not reach this build (an if() branch the
  // configure did not take, another target's list), and saying "added" again would promise a
  // rebuild that fails as before. Called once per entry (add_to_list skips a key it has seen).
  void already_listed(const ListAdd& add, const std::string& key) {
    const std::string said = add.entry + " is already in " + add.list + " (" + add.file + "): not added again";
    struct stat cmake_st, lib_st;
    if (add.library.empty() || stat(add.file.c_str(), &cmake_st) != 0 || stat(add.library.c_str(), &lib_st) != 0) {
      p.warnings.push_back(said);  // no library file to compare with (a saved report's)
      return;
    }
    if (std::tie(lib_st.st_mtim.tv_sec, lib_st.st_mtim.tv_nsec) <
        std::tie(cmake_st.st_mtim.tv_sec, cmake_st.st_mtim.tv_nsec)) {
      p.warnings.push_back(said + "; " + add.library + " predates that file: rebuild it");
      return;
    }
    for (const auto& a : t.list_adds) {
      if (list_key(a) != key) continue;
      p.unreached.push_back(a.symbol);
      p.refused.push_back({a.demangled.empty() ? a.symbol : a.demangled,
                           add.entry + " is already in " + add.list + " (" + add.file + "), yet " + add.library +
                               ", built after that file, does not compile it: that list does not reach this "
                               "configuration's build of the library (an if() branch not taken, or another "
                               "target's list)"});
    }
  }

  void link(const LinkAdd& add) {
    std::string key = link_key(add);
    if (!added.insert(key).second) return;
    const Parsed* file = parsed_of(add.file);
    if (!file) return;
    const std::string* text = &file->text;
    const cmake::CMakeCommand* link = nullptr;
    const cmake::CMakeCommand* creator = nullptr;
    for (const auto& c : file->commands) {
      if (c.args.empty() || c.args[0].value != add.target) continue;
      if (c.name == "target_link_libraries") link = &c;
      if (cmake::creates_library(c.name, ctx.backend->cmake_add_library)) creator = &c;
    }
    if (link) {
      bool present = std::any_of(link->args.begin(), link->args.end(), [&](const auto& a) { return a.value == add.entry; });
      if (present) return;
      inserts[add.file].push_back({link->args.back().end, " " + add.entry});
      record(add.file, key, "link " + add.target + " with " + add.entry);
    } else if (creator) {
      size_t nl = text->find('\n', creator->close_paren);
      inserts[add.file].push_back({nl == std::string::npos ? text->size() : nl,
                                   "\ntarget_link_libraries(" + add.target + " PRIVATE " + add.entry + ")"});
      record(add.file, key, "link " + add.target + " with " + add.entry);
    } else {
      p.refused.push_back({add.entry, "no target_link_libraries() or add_library() for " + add.target + " in " + add.file});
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
          if (!wanted.count(cmake::normalize_path(f))) others.push_back(f);
        if (!others.empty()) {
          p.refused.push_back({d.symbol, "missing-source: " + d.file + " is excluded by list(FILTER " + d.removal->variable +
                                             " EXCLUDE REGEX " + d.entry->raw + ") at " + d.removal->cmake_file + ":" +
                                             std::to_string(d.removal->line) + ", which also excludes " + others.front() +
                                             (others.size() > 1 ? " and " + std::to_string(others.size() - 1) + " more" : "") +
                                             ": narrow that regex by hand"});
          continue;
        }
      }
      dropped[d.removal].insert(d.entry);
    }
    return dropped;
  }

  void drop(const Dropped& dropped) {
    for (const auto& [removal, entries] : dropped) {
      const Parsed* file = parsed_of(removal->cmake_file);
      if (!file) continue;
      const cmake::CMakeCommand* cmd = nullptr;
      for (const auto& c : file->commands)
        if (c.close_paren == removal->close_paren) cmd = &c;
      if (!cmd) continue;
      const std::string where = removal->cmake_file + ":" + std::to_string(removal->line);
      if (entries.size() == removal->entries.size()) {
        // Nothing left for the call to take out: the call goes, with its line.
        inserts[removal->cmake_file].push_back(cut(file->text, cmd->begin, cmd->close_paren + 1));
        std::string what = removal->filter ? "list(FILTER " + removal->variable + " EXCLUDE REGEX " + removal->entries[0].raw + ")"
                                           : "list(REMOVE_ITEM " + removal->variable + " ...)";
        p.notes.push_back("removing " + what + " at " + where + ": it takes out " + std::to_string(entries.size()) +
                          " source" + (entries.size() == 1 ? "" : "s") + " the library needs");
      } else {
        for (const auto* e : entries) {
          inserts[removal->cmake_file].push_back(cut(file->text, e->begin, e->end));
          p.notes.push_back("dropping " + e->raw + " from list(REMOVE_ITEM " + removal->variable + " ...) at " + where +
                            ": it takes out a source the library needs");
        }
      }
    }
  }

  void finish() {
    for (auto& [file, ins] : inserts) {
      const std::string& text = parsed[file]->text;
      p.cmake_files.push_back({file, text, apply_insertions(text, ins), false, purposes[file]});
    }
  }
};

}  // namespace

// An imported target for the library in the SDK's CMake package (lib/cmake/*/*.cmake), if any.
std::optional<std::string> imported_target(const trace::TraceContext& ctx, const std::string& link_name) {
  if (!ctx.sdk() || ctx.sdk()->home.empty()) return std::nullopt;
  std::error_code ec;
  for (const char* lib : {"/lib/cmake", "/lib64/cmake"}) {
    fs::path dir = ctx.sdk()->home + lib;
    if (!fs::exists(dir, ec)) continue;
    for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec || !it->is_regular_file() || it->path().extension() != ".cmake") continue;
      auto text = read_text(it->path().string());
      if (!text) continue;
      auto cmds = cmake::parse_cmake(*text, it->path().string());
      if (!cmds) continue;
      for (const auto& c : cmds.value()) {
        if (c.name != "add_library" || c.args.size() < 2) continue;
        bool imported = std::any_of(c.args.begin(), c.args.end(), [](const auto& a) { return a.value == "IMPORTED"; });
        std::string name = c.args[0].value;
        std::string tail = name.substr(name.rfind(':') == std::string::npos ? 0 : name.rfind(':') + 1);
        std::string lower = tail;
        std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
        if (imported && lower == link_name) return name;
      }
    }
  }
  return std::nullopt;
}

void plan_cmake_edits(const Triage& t, const trace::TraceContext& ctx, Plan& p) {
  Edits edits(t, ctx, p);
  for (const auto& add : t.list_adds) edits.add_to_list(add);
  for (const auto& add : t.link_adds) edits.link(add);
  edits.drop(edits.drops_to_make());
  edits.finish();
}

}  // namespace mlc::stubgen::detail

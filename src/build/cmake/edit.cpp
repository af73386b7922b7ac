// The CMake provider's editor (buildmodel/edit.h): entries inserted into a source-list command in the
// list's own style, target_link_libraries() extended or written, list(REMOVE_ITEM)/list(FILTER) entries
// or whole commands cut. Each file is taken from the build reader's parse (else read and parsed here,
// once) and edited by insertions and cuts at byte offsets.
#include "build/edit.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "build/cmake/build_info.h"
#include "common/file_io.h"
#include "common/paths.h"

namespace mlc::build::cmake {

// Outside the anonymous namespace: Editor::State keeps them.
struct Insertion {
  size_t offset;
  std::string text;
  size_t erase = 0;  // bytes replaced from offset (0: a pure insertion)
};

namespace {

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
Insertion insertion_for(const std::string& text, const SourceList& list, const std::string& entry) {
  std::vector<const ListEntry*> direct;
  for (const auto& e : list.entries)
    if (!build::is_indirect_entry(e.raw)) direct.push_back(&e);
  if (direct.empty()) {
    // add_library(T SHARED ${SRCS}) or an empty set(): after the last argument, on its line.
    size_t at = list.entries.empty() ? list.close_paren : list.entries.back().end;
    return Insertion{at, " " + entry};
  }
  bool sorted = std::is_sorted(direct.begin(), direct.end(),
                               [](const auto* a, const auto* b) { return lower(a->raw) < lower(b->raw); });
  const ListEntry* after = nullptr;   // the entry the new one follows
  const ListEntry* before = nullptr;  // or, when none, the one it precedes
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
  const ListEntry* model = after ? after : before;
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

}  // namespace
}  // namespace mlc::build::cmake

namespace mlc::build {

using namespace cmake;
namespace fs = std::filesystem;

struct Editor::State {
  const Model* build;
  std::string helper;
  std::map<std::string, std::string> vars;  // the configure's variables, for entries spelled with ${...}
  std::map<std::string, std::optional<ProviderParse::File>> own;  // files the model did not read
  std::vector<InputError> errors;
  std::map<std::string, std::vector<Insertion>> inserts;

  // The model's parse of `file`, else this editor's own (read once; a failure said once). A file
  // the reader failed to read is an error there already, and is not read again.
  const ProviderParse::File* parsed(const std::string& file) {
    if (build && build->parse)
      if (auto it = build->parse->files.find(file); it != build->parse->files.end()) return &it->second;
    if (auto it = own.find(file); it != own.end()) return it->second ? &*it->second : nullptr;
    auto& slot = own[file];
    if (build &&
        std::any_of(build->errors.begin(), build->errors.end(), [&](const InputError& e) { return e.path == file; }))
      return nullptr;  // the reader could not read or parse it, and said so
    auto text = read_text(file);
    if (!text) {
      errors.push_back({file, "cannot read"});
      return nullptr;
    }
    auto cmds = parse_cmake(*text, file);
    if (!cmds) {
      errors.push_back(cmds.error());
      return nullptr;
    }
    slot = ProviderParse::File{std::move(*text), std::move(cmds).value()};
    return &*slot;
  }
};

Editor::Editor(const Model* build, std::string library_helper)
    : s_(std::make_unique<State>(State{build,
                                       std::move(library_helper),
                                       build ? variables(*build) : std::map<std::string, std::string>{},
                                       {},
                                       {},
                                       {}})) {}
Editor::~Editor() = default;

EditOutcome Editor::add_source(const std::string& cmake_file, const std::string& list_name, const std::string& entry,
                               const std::string& source) {
  const auto* file = s_->parsed(cmake_file);
  if (!file) return EditOutcome::Unreadable;
  // The lists as the build read them (its scopes' variables expanded); the file alone otherwise.
  std::vector<SourceList> lists;
  auto local_vars = s_->vars;
  if (s_->build)
    for (const auto& l : s_->build->lists)
      if (l.cmake_file == cmake_file) lists.push_back(l);
  if (lists.empty()) lists = find_source_lists(file->commands, cmake_file, local_vars, s_->helper);
  std::vector<const SourceList*> named;  // every command writing that list (set, list(APPEND), ...)
  for (const auto& l : lists)
    if (l.variable == list_name && !l.removal) named.push_back(&l);
  if (named.empty()) return EditOutcome::NoPlace;
  // Only the commands the configure took count (those whose files the build compiles): an entry in
  // an if() branch that is not taken changes nothing, there or as a duplicate.
  // (The build system's own lists are those of the configure already: a header-only one counts too.)
  if (s_->build && !s_->build->from_build_system) {
    std::vector<const SourceList*> live;
    for (const auto* l : named)
      if (feeds_build(*s_->build, *l) || l->emptied) live.push_back(l);
    if (!live.empty()) named = live;
  }
  // Present by spelling, or by the file the entry names once its variables are expanded.
  const std::string& dir = named.front()->current_dir;
  local_vars["CMAKE_CURRENT_SOURCE_DIR"] = dir;
  local_vars["CMAKE_CURRENT_LIST_DIR"] = cmake_file.substr(0, cmake_file.rfind('/'));
  std::string expanded = expand_variables(entry, local_vars);
  if (expanded.empty() || expanded[0] != '/') {
    // Relative to the list's directory, else to that of a target it feeds (CMake reads a source named in a
    // subdirectory's list(APPEND) relative to the directory that creates the target).
    std::string relative = expanded;
    expanded = dir + "/" + relative;
    if (s_->build && !path_exists(expanded))
      for (const auto& t : s_->build->targets)
        if (named.front()->targets.count(t.name) && !t.source_dir.empty() && path_exists(t.source_dir + "/" + relative))
          expanded = t.source_dir + "/" + relative;
  }
  // What the entry spells wins; the caller's file stands in for a spelling CMake completes (no extension).
  if (!source.empty() && !path_exists(expanded)) expanded = source;
  expanded = normalize_path(expanded);
  for (const auto* l : named)
    for (const auto& e : l->entries)
      if (e.raw == entry || std::find(e.files.begin(), e.files.end(), expanded) != e.files.end())
        return EditOutcome::Present;
  // Of several commands writing the list (if/else branches, list(APPEND), a call's sections), the one
  // holding the entry's nearest siblings, as choose_list found it.
  const SourceList* list = nearest_list(named, expanded);
  if (!list) list = named.back();
  s_->inserts[cmake_file].push_back(insertion_for(file->text, *list, entry));
  return EditOutcome::Added;
}

EditOutcome Editor::add_link(const std::string& cmake_file, const std::string& target, const std::string& entry) {
  const auto* file = s_->parsed(cmake_file);
  if (!file) return EditOutcome::Unreadable;
  const CMakeCommand* link = nullptr;
  const CMakeCommand* creator = nullptr;
  for (const auto& c : file->commands) {
    if (c.args.empty() || c.args[0].value != target) continue;
    if (c.name == "target_link_libraries") link = &c;
    if (cmake::creates_library(c.name, s_->helper)) creator = &c;
  }
  if (link) {
    if (std::any_of(link->args.begin(), link->args.end(), [&](const auto& a) { return a.value == entry; }))
      return EditOutcome::Present;
    s_->inserts[cmake_file].push_back({link->args.back().end, " " + entry});
    return EditOutcome::Added;
  }
  if (!creator) return EditOutcome::NoPlace;
  size_t nl = file->text.find('\n', creator->close_paren);
  s_->inserts[cmake_file].push_back({nl == std::string::npos ? file->text.size() : nl,
                                     "\ntarget_link_libraries(" + target + " PRIVATE " + entry + ")"});
  return EditOutcome::Added;
}

EditOutcome Editor::remove_command(const SourceList& removal) {
  const auto* file = s_->parsed(removal.cmake_file);
  if (!file) return EditOutcome::Unreadable;
  for (const auto& c : file->commands)
    if (c.close_paren == removal.close_paren) {
      s_->inserts[removal.cmake_file].push_back(cut(file->text, c.begin, c.close_paren + 1));
      return EditOutcome::Added;
    }
  return EditOutcome::NoPlace;
}

EditOutcome Editor::remove_entry(const SourceList& removal, const ListEntry& entry) {
  const auto* file = s_->parsed(removal.cmake_file);
  if (!file) return EditOutcome::Unreadable;
  s_->inserts[removal.cmake_file].push_back(cut(file->text, entry.begin, entry.end));
  return EditOutcome::Added;
}

std::vector<FileEdit> Editor::finish() const {
  std::vector<FileEdit> out;
  for (const auto& [file, ins] : s_->inserts) {
    const auto* parsed = s_->parsed(file);
    out.push_back({file, parsed->text, apply_insertions(parsed->text, ins)});
  }
  return out;
}

const std::vector<InputError>& Editor::errors() const { return s_->errors; }

std::optional<std::string> imported_target(const std::string& sdk_home, const std::string& link_name) {
  if (sdk_home.empty()) return std::nullopt;
  std::error_code ec;
  for (const char* lib : {"/lib/cmake", "/lib64/cmake"}) {
    fs::path dir = sdk_home + lib;
    if (!fs::exists(dir, ec)) continue;
    for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (ec || !it->is_regular_file() || it->path().extension() != ".cmake") continue;
      auto text = read_text(it->path().string());
      if (!text) continue;
      auto cmds = parse_cmake(*text, it->path().string());
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

}  // namespace mlc::build

// Which CMake source list a missing file belongs in: the list that feeds the target referencing it
// and already holds its siblings, with the entry spelled like its nearest neighbour. A file that a
// file(GLOB) of the target already matches needs no entry, and the choice says so instead.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "build/cmake/build_info.h"

#include "common/paths.h"
#include "common/text.h"

namespace mlc::build {
namespace {

std::string extension_of(const std::string& path) {
  auto dot = path.rfind('.');
  auto slash = path.rfind('/');
  return dot == std::string::npos || (slash != std::string::npos && dot < slash) ? "" : path.substr(dot);
}

bool strictly_under(const std::string& path, const std::string& dir) {
  return !dir.empty() && path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/';
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string where(const SourceList& l) { return l.cmake_file + ":" + std::to_string(l.line); }

std::string unquoted(const std::string& raw) {
  return raw.size() >= 2 && raw.front() == '"' && raw.back() == '"' ? raw.substr(1, raw.size() - 2) : raw;
}

// The directory a plain entry ("gflags.cc") is really read from when it names nothing beside the CMake
// file: a function such as gflags' configure_sources() prefixes "src/". The deepest directory between
// `file`'s and the list's own that holds the entry; empty when none does.
std::string entry_base(const SourceList& list, const ListEntry& e, const std::string& file) {
  std::error_code ec;
  if (e.files.size() != 1 || std::filesystem::exists(e.files[0], ec)) return "";
  const std::string raw = unquoted(e.raw);
  if (raw.empty() || raw.find('$') != std::string::npos || raw[0] == '/') return "";
  for (std::string dir = file.substr(0, file.rfind('/')); strictly_under(dir, list.current_dir);
       dir = dir.substr(0, dir.rfind('/')))
    if (std::filesystem::exists(dir + "/" + raw, ec)) return dir;
  return "";
}

}  // namespace

bool feeds_build(const Model& build, const SourceList& list) {
  for (const auto& e : list.entries) {
    if (is_indirect_entry(e.raw)) continue;
    for (const auto& f : e.files) {
      if (build.is_compiled(f)) return true;
      // Named beside the CMake file but read from elsewhere (a function adds a directory): by its tail.
      const std::string tail = "/" + unquoted(e.raw);
      if (tail.size() > 1 && tail.find('$') == std::string::npos &&
          std::any_of(build.compiled.begin(), build.compiled.end(),
                      [&](const std::string& c) { return ends_with(c, tail); }))
        return true;
    }
  }
  return false;
}

namespace {

// The target and the OBJECT libraries it takes, by name: the lists feeding any of them feed it.
std::set<std::string> scope_of(const Model& build, const std::string& target) {
  std::set<std::string> out{target};
  for (const auto& t : build.targets)
    if (t.name == target)
      for (const Target* o : build.with_objects(t)) out.insert(o->name);
  return out;
}

bool feeds_any(const SourceList& l, const std::set<std::string>& scope) {
  return std::any_of(scope.begin(), scope.end(), [&](const std::string& t) { return l.targets.count(t) > 0; });
}

}  // namespace

std::optional<Exclusion> exclusion_for(const Model& build, const std::string& file, const std::string& target) {
  const std::set<std::string> scope = scope_of(build, target);
  bool any_feeds = !target.empty() && std::any_of(build.lists.begin(), build.lists.end(), [&](const SourceList& l) {
    return !l.removal && feeds_any(l, scope);
  });
  for (const auto& l : build.lists) {
    if (l.removal || (any_feeds && !feeds_any(l, scope))) continue;
    for (const auto& e : l.entries) {
      if (!e.is_glob || std::find(e.files.begin(), e.files.end(), file) == e.files.end()) continue;
      for (const auto& r : build.lists) {
        if (!r.removal || r.variable != l.variable) continue;
        for (const auto& re : r.entries)
          if (std::find(re.files.begin(), re.files.end(), file) != re.files.end())
            return Exclusion{.glob = &l, .glob_entry = &e, .removal = &r, .removal_entry = &re};
      }
      return Exclusion{.glob = &l, .glob_entry = &e, .removal = nullptr, .removal_entry = nullptr};
    }
  }
  return std::nullopt;
}

bool is_indirect_entry(const std::string& raw) {
  if (raw.find("$<") != std::string::npos) return true;
  return raw.size() > 3 && raw.rfind("${", 0) == 0 && raw.back() == '}' && raw.find('}') == raw.size() - 1;
}

std::string entry_spelling(const SourceList& list, const std::string& file, const std::string& porting_dir) {
  // The neighbour in the nearest directory, then the shortest tail it shares with its own file that
  // leaves `file` under the same directory: "${CMAKE_CURRENT_SOURCE_DIR}/src/a.cc" naming /p/src/a.cc
  // spells /p/src/b.cc as "${CMAKE_CURRENT_SOURCE_DIR}/src/b.cc".
  const ListEntry* near = nullptr;
  size_t near_len = 0;
  for (const auto& e : list.entries) {
    if (e.is_glob || e.files.size() != 1 || is_indirect_entry(e.raw)) continue;
    size_t len = shared_dir_prefix(e.files[0], file);
    if (!near || len > near_len) near = &e, near_len = len;
  }
  if (near) {
    if (std::string base = entry_base(list, *near, file); !base.empty() && strictly_under(file, base)) {
      return file.substr(base.size() + 1);
    }
    const std::string raw = unquoted(near->raw);
    std::string named = near->files[0], spelled = file;
    // Written without its extension, as CMake allows ("drivers/pn532_uart" for pn532_uart.c): so is the file.
    if (extension_of(raw).empty() && !extension_of(named).empty() && extension_of(named) == extension_of(file)) {
      named.resize(named.size() - extension_of(named).size());
      spelled.resize(spelled.size() - extension_of(file).size());
    }
    for (size_t cut = named.rfind('/'); cut != std::string::npos && cut > 0; cut = named.rfind('/', cut - 1)) {
      std::string tail = named.substr(cut + 1);
      if (!ends_with(raw, tail)) break;
      std::string dir = named.substr(0, cut);
      if (!strictly_under(spelled, dir)) continue;
      std::string prefix = raw.substr(0, raw.size() - tail.size());
      if (!prefix.empty() && prefix.back() != '/') break;  // "x${A}b.cc": no clean directory prefix
      return prefix + spelled.substr(dir.size() + 1);
    }
  }
  bool uses_porting_var = std::any_of(list.entries.begin(), list.entries.end(), [](const ListEntry& e) {
    return e.raw.find("${GENERATED_PORTING_DIR}") != std::string::npos;
  });
  if (uses_porting_var && strictly_under(file, porting_dir))
    return "${GENERATED_PORTING_DIR}/" + file.substr(porting_dir.size() + 1);
  if (strictly_under(file, list.current_dir)) return file.substr(list.current_dir.size() + 1);
  return file;
}

namespace {

std::string stem_of(const std::string& path) {
  std::string name = path.substr(path.rfind('/') + 1);
  return name.substr(0, name.rfind('.'));
}

// How near a list is to the file it would take: by the files its direct entries name (or their
// spelling, when they name nothing on disk). Compared field by field, the first the strongest.
struct Nearness {
  int clean = 0;           // it spells no file its targets lack (a branch the configure took)
  int sources = 0;         // it names a file that is no header (or the file is one): set(HEADERS a.h b.h) takes no b.c
  int branch = 0;          // an emptied branch whose condition or other branches name the file's kin
  int stem = 0;            // it names the file's own header or source (plugins_unix.h for plugins_unix.cc)
  int same_ext = 0;        // it names files of the file's kind
  size_t dir = 0;          // the directory it shares with the file
  long kin = 0;            // files beside it sharing a word of its name (pki_crypto.c for md_crypto.c)
  long unconditional = 0;  // minus the if() blocks around it: where it compiles in every configuration
  long same_ext_count = 0;
  int variable = 0;  // a variable's list (set, list(APPEND)) rather than a target's own
  auto key() const {
    return std::tie(clean, sources, branch, stem, same_ext, dir, kin, unconditional, same_ext_count, variable);
  }
  bool operator<(const Nearness& o) const { return key() < o.key(); }
};

// A file(GLOB) of patterns alone (no literal path among them): it takes files by its patterns.
bool patterns_only(const SourceList& l) {
  return l.command == ListCommand::Glob && std::all_of(l.entries.begin(), l.entries.end(), [](const ListEntry& e) {
           return e.raw.find_first_of("*?[") != std::string::npos || is_indirect_entry(e.raw);
         });
}

// Whether the list names at least one file (an existing one, a glob's, or one with an extension): a
// set(JPEG_LIB_VERSION 62) names none and is no source list, whatever it feeds.
bool names_files(const SourceList& l) {
  for (const auto& e : l.entries) {
    if (is_indirect_entry(e.raw)) continue;
    if (e.is_glob || !extension_of(e.raw).empty()) return true;
    for (const auto& f : e.files)
      if (path_exists(f)) return true;
  }
  return false;
}

// Whether a file of a branch is kin to `file` there: they share a word, and the sibling is not merely
// `file`'s name with another word added (env_posix.cc in else(WIN32) is the platform's variant of
// env.cc, which every platform compiles; posix_logger.cc is kin, tif_unix.c is tif_win32.c's twin).
bool branch_kin(const std::set<std::string>& file_words, const std::set<std::string>& theirs) {
  const bool shares =
      std::any_of(theirs.begin(), theirs.end(), [&](const std::string& w) { return file_words.count(w) > 0; });
  const bool variant = !file_words.empty() && file_words.size() < theirs.size() &&
                       std::includes(theirs.begin(), theirs.end(), file_words.begin(), file_words.end());
  return shares && !variant;
}

// Whether an emptied branch speaks for `file`: a word of its condition in the file's name or its
// directory's ("lzma" in HAVE_LIBLZMA), or another branch naming its twin (x_win.c beside x_unix.c; the
// same name in another directory).
bool branch_names(const SourceList& l, const std::string& file) {
  const std::string dir = file.substr(0, file.rfind('/'));
  std::set<std::string> words = name_words(stem_of(file));
  for (const auto& w : name_words(dir.substr(dir.rfind('/') + 1))) words.insert(w);
  for (const auto& c : l.evidence)
    for (const auto& w : words)
      if (cmake::overlaps(c, w)) return true;
  // A word most of the target's files carry (tif_ of tif_*.c) makes no kin: tif_swab.c is no kin of
  // tif_win32.c. What is left of two names once the platform is taken out makes twins: tif_unix.c and
  // tif_win32.c leave nothing each, plug_unix.cc and plug_win.cc leave plug.
  const auto& platforms = cmake::platform_names();
  auto own_words = [&](const std::string& path) {
    std::set<std::string> out;
    for (const auto& w : name_words(stem_of(path)))
      if (!l.common_words.count(w)) out.insert(w);
    return out;
  };
  auto without_platform = [&](std::set<std::string> named, bool& had) {
    had = std::erase_if(named, [&](const std::string& w) { return platforms.count(w) > 0; }) > 0;
    return named;
  };
  const std::set<std::string> own = own_words(file);
  bool own_platform = false;
  const auto own_rest = without_platform(own, own_platform);
  for (const auto& s : l.branch_siblings) {
    if (s == file) continue;
    if (s.substr(s.rfind('/')) == file.substr(file.rfind('/'))) return true;
    if (s.substr(0, s.rfind('/')) != dir) continue;
    const auto theirs = own_words(s);
    if (branch_kin(own, theirs)) return true;
    bool their_platform = false;
    if (own_platform && without_platform(theirs, their_platform) == own_rest && their_platform) return true;
  }
  return false;
}

Nearness nearness(const SourceList& l, const std::string& file) {
  Nearness n{.clean = l.foreign == 0 ? 1 : 0,
             .sources = cmake::is_header(file) ? 1 : 0,
             .stem = 0,
             .same_ext = 0,
             .dir = 0,
             .kin = 0,
             .unconditional = -static_cast<long>(l.conditions),
             .same_ext_count = 0,
             .variable = is_variable_list(l.command) ? 1 : 0};
  const std::string ext = extension_of(file), dir = file.substr(0, file.rfind('/'));
  const std::set<std::string> words = name_words(stem_of(file));
  for (const auto& e : l.entries) {
    if (is_indirect_entry(e.raw)) continue;
    if (extension_of(e.raw) == ext || (e.is_glob && ends_with(e.raw, ext))) ++n.same_ext_count;
    std::vector<std::string> named = e.files;
    if (named.empty()) named.push_back(e.raw);  // an entry naming nothing on disk still tells where its kind goes
    for (const auto& f : named) {
      if (!cmake::is_header(unquoted(f))) n.sources = 1;  // CMake completes a name without extension as a source
      n.dir = std::max(n.dir, shared_dir_prefix(f, file));
      if (f == file || f.substr(0, f.rfind('/')) != dir) continue;
      if (stem_of(f) == stem_of(file) && extension_of(f) != ext) n.stem = 1;
      const auto theirs = name_words(stem_of(f));
      if (l.conditions > 0
              ? branch_kin(words, theirs)
              : std::any_of(theirs.begin(), theirs.end(), [&](const std::string& w) { return words.count(w) > 0; }))
        ++n.kin;
    }
  }
  if (l.emptied) {
    // Its files went: the other branches' files stand in for them, and the branch's evidence decides.
    for (const auto& f : l.branch_siblings) {
      if (extension_of(f) == ext) ++n.same_ext_count;
      n.dir = std::max(n.dir, shared_dir_prefix(f, file));
    }
    n.sources = 1;
    n.branch = branch_names(l, file) ? 1 : 0;
  }
  n.same_ext = n.same_ext_count > 0 ? 1 : 0;
  n.same_ext_count = std::min<long>(n.same_ext_count, 4095);
  return n;
}

// Nearness of a command from its sections' lists: the best of each field, the counts summed.
Nearness nearness(const std::vector<const SourceList*>& sections, const std::string& file) {
  Nearness out = nearness(*sections.front(), file);
  for (size_t k = 1; k < sections.size(); ++k) {
    Nearness n = nearness(*sections[k], file);
    out.clean = std::min(out.clean, n.clean);
    out.sources = std::max(out.sources, n.sources);
    out.branch = std::max(out.branch, n.branch);
    out.stem = std::max(out.stem, n.stem);
    out.same_ext = std::max(out.same_ext, n.same_ext);
    out.dir = std::max(out.dir, n.dir);
    out.kin += n.kin;
    out.unconditional = std::max(out.unconditional, n.unconditional);
    out.same_ext_count += n.same_ext_count;
    out.variable = std::max(out.variable, n.variable);
  }
  return out;
}

}  // namespace

const SourceList* nearest_list(const std::vector<const SourceList*>& all, const std::string& file) {
  // A file(GLOB) of patterns alone takes files by its patterns: a literal name written into one is no
  // reviewer's entry while another command of the target can take it. One that lists literal paths
  // among its patterns already (torch_musa's PORTING_CPP_CSRCS) takes them: that is the project's style.
  std::vector<const SourceList*> candidates;
  for (const auto* l : all)
    if (!patterns_only(*l)) candidates.push_back(l);
  if (candidates.empty()) candidates = all;
  // By command first (a call's sections together: absl_cc_library's HDRS hold str_cat.h, its SRCS the
  // .cc files), then the command's section that holds files of the file's kind.
  std::map<std::pair<std::string, size_t>, std::vector<const SourceList*>> commands;
  std::vector<std::pair<std::string, size_t>> order;
  for (const auto* l : candidates) {
    auto key = std::make_pair(l->cmake_file, l->close_paren);
    if (!commands.count(key)) order.push_back(key);
    commands[key].push_back(l);
  }
  // A command naming only headers takes no source (set(HEADERS a.h b.h) beside set(SOURCES ...)),
  // unless it is the only one in its if() depth: an else() branch's target_sources(T PRIVATE x_unix.h)
  // whose x_unix.cc went is where that source belongs.
  std::set<uint32_t> depths_with_sources;
  for (const auto& key : order)
    if (nearness(commands[key], file).sources) depths_with_sources.insert(commands[key].front()->conditions);
  const std::vector<const SourceList*>* best = nullptr;
  Nearness best_n;
  for (const auto& key : order) {
    Nearness n = nearness(commands[key], file);
    // (a command whose every argument is a reference, add_library(T ${SRCS}), has no kind to speak of)
    const bool direct = std::any_of(commands[key].begin(), commands[key].end(), [](const SourceList* l) {
      return std::any_of(l->entries.begin(), l->entries.end(),
                         [](const ListEntry& e) { return !is_indirect_entry(e.raw); });
    });
    if (direct && !depths_with_sources.count(commands[key].front()->conditions)) n.sources = 1;
    if (!best || best_n < n) best = &commands[key], best_n = n;
  }
  if (!best) return nullptr;
  const SourceList* section = best->front();
  std::tuple<int, long, int> section_n{-1, -1, 0};
  for (const auto* l : *best) {
    Nearness n = nearness(*l, file);
    if (auto key = std::make_tuple(n.sources, n.same_ext_count, n.stem); key > section_n) section = l, section_n = key;
  }
  return section;
}

std::optional<ListChoice> choose_list(const Model& build, const std::string& file, const std::string& target,
                                      const std::string& porting_dir) {
  const std::set<std::string> scope = scope_of(build, target);
  bool any_feeds = !target.empty() && std::any_of(build.lists.begin(), build.lists.end(), [&](const SourceList& l) {
    return !l.removal && names_files(l) && feeds_any(l, scope);
  });
  auto in_scope = [&](const SourceList& l) { return !any_feeds || feeds_any(l, scope); };

  // A glob of the target's lists already matches it: an entry would be a duplicate.
  if (auto ex = exclusion_for(build, file, target)) {
    const SourceList& l = *ex->glob;
    GlobCovers covered{.then = GlobCovers::Then::NeedsNoEntry,
                       .file = file,
                       .pattern = ex->glob_entry->raw,
                       .list = l.variable,
                       .at = where(l),
                       .removal = "",
                       .removal_at = ""};
    if (ex->removal) {
      const SourceList& r = *ex->removal;
      covered.then = GlobCovers::Then::RemovedAgain;
      covered.removal = r.filter ? "list(FILTER " + r.variable + " EXCLUDE REGEX " + ex->removal_entry->raw + ")"
                                 : "list(REMOVE_ITEM " + r.variable + " " + ex->removal_entry->raw + ")";
      covered.removal_at = where(r);
      return ListChoice{.cmake_file = "", .list = "", .entry = "", .line = r.line, .covered = covered};
    }
    // The configure globs it in already: only the build is behind.
    if (build.unbuilt.count(file)) covered.then = GlobCovers::Then::ConfigureCompiles;
    return ListChoice{.cmake_file = "", .list = "", .entry = "", .line = l.line, .covered = covered};
  }

  std::vector<const SourceList*> candidates, creators;
  const std::string ext = extension_of(file);
  for (const auto& l : build.lists) {
    if (l.removal || !in_scope(l)) continue;
    // The target's own add_library(T ${SRCS}), naming no file itself, takes an entry only where a glob
    // fills every other list (a literal name written into a file(GLOB) is no reviewer's entry).
    if (!(names_files(l) || l.emptied)) {
      if (creates_library(l.command) && any_feeds && feeds_any(l, scope)) creators.push_back(&l);
      continue;
    }
    // Without a target to go by, only a list holding files of the same kind is a candidate.
    if (!any_feeds && nearness(l, file).same_ext == 0) continue;
    // Listed already (a second run before the rebuild): that list, where the editor finds it present.
    for (const auto& e : l.entries)
      if (!e.is_glob && !is_indirect_entry(e.raw) && std::find(e.files.begin(), e.files.end(), file) != e.files.end())
        return ListChoice{
            .cmake_file = l.cmake_file, .list = l.variable, .entry = e.raw, .line = l.line, .covered = std::nullopt};
    candidates.push_back(&l);
  }
  if (std::all_of(candidates.begin(), candidates.end(), [](const SourceList* l) { return patterns_only(*l); }))
    candidates.insert(candidates.end(), creators.begin(), creators.end());
  const SourceList* best = nearest_list(candidates, file);
  if (!best) return std::nullopt;
  return ListChoice{.cmake_file = best->cmake_file,
                    .list = best->variable,
                    .entry = entry_spelling(*best, file, porting_dir),
                    .line = best->line,
                    .covered = std::nullopt};
}

}  // namespace mlc::build

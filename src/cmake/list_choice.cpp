// Which CMake source list a missing file belongs in: the list that feeds the target referencing it
// and already holds its siblings, with the entry spelled like its nearest neighbour. A file that a
// file(GLOB) of the target already matches needs no entry, and the choice says so instead.
#include <algorithm>
#include <filesystem>

#include "cmake/build_info.h"

#include "common/paths.h"

namespace mlc::build {
namespace {

std::string extension_of(const std::string& path) {
  auto dot = path.rfind('.');
  auto slash = path.rfind('/');
  return dot == std::string::npos || (slash != std::string::npos && dot < slash) ? "" : path.substr(dot);
}

bool under(const std::string& path, const std::string& dir) {
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
  for (std::string dir = file.substr(0, file.rfind('/')); under(dir, list.current_dir);
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
          std::any_of(build.compiled.begin(), build.compiled.end(), [&](const std::string& c) { return ends_with(c, tail); }))
        return true;
    }
  }
  return false;
}

std::optional<Exclusion> exclusion_for(const Model& build, const std::string& file, const std::string& target) {
  bool any_feeds = !target.empty() && std::any_of(build.lists.begin(), build.lists.end(), [&](const SourceList& l) {
                     return !l.removal && l.targets.count(target);
                   });
  for (const auto& l : build.lists) {
    if (l.removal || (any_feeds && !l.targets.count(target))) continue;
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
    if (std::string base = entry_base(list, *near, file); !base.empty() && under(file, base)) {
      return file.substr(base.size() + 1);
    }
    const std::string& raw = near->raw;
    const std::string& named = near->files[0];
    for (size_t cut = named.rfind('/'); cut != std::string::npos && cut > 0; cut = named.rfind('/', cut - 1)) {
      std::string tail = named.substr(cut + 1);
      if (!ends_with(raw, tail)) break;
      std::string dir = named.substr(0, cut);
      if (!under(file, dir)) continue;
      std::string prefix = raw.substr(0, raw.size() - tail.size());
      if (!prefix.empty() && prefix.back() != '/') break;  // "x${A}b.cc": no clean directory prefix
      return prefix + file.substr(dir.size() + 1);
    }
  }
  bool uses_porting_var = std::any_of(list.entries.begin(), list.entries.end(), [](const ListEntry& e) {
    return e.raw.find("${GENERATED_PORTING_DIR}") != std::string::npos;
  });
  if (uses_porting_var && under(file, porting_dir)) return "${GENERATED_PORTING_DIR}/" + file.substr(porting_dir.size() + 1);
  if (under(file, list.current_dir)) return file.substr(list.current_dir.size() + 1);
  return file;
}

std::optional<ListChoice> choose_list(const Model& build, const std::string& file, const std::string& target,
                                      const std::string& porting_dir) {
  bool any_feeds = !target.empty() && std::any_of(build.lists.begin(), build.lists.end(), [&](const SourceList& l) {
                     return !l.removal && l.targets.count(target);
                   });
  auto in_scope = [&](const SourceList& l) { return !any_feeds || l.targets.count(target) > 0; };

  // A glob of the target's lists already matches it: an entry would be a duplicate.
  if (auto ex = exclusion_for(build, file, target)) {
    const SourceList& l = *ex->glob;
    std::string glob = file + " matches the file(GLOB) pattern " + ex->glob_entry->raw + " of " + l.variable + " (" + where(l) + ")";
    if (ex->removal) {
      const SourceList& r = *ex->removal;
      std::string call = r.filter ? "list(FILTER " + r.variable + " EXCLUDE REGEX " + ex->removal_entry->raw + ")"
                                                         : "list(REMOVE_ITEM " + r.variable + " " + ex->removal_entry->raw + ")";
      return ListChoice{.cmake_file = "", .list = "", .entry = "", .line = r.line,
                        .note = glob + ", but " + call + " at " + where(r) + " takes it out again: drop that entry"};
    }
    return ListChoice{.cmake_file = "", .list = "", .entry = "", .line = l.line,
                      .note = glob + ", so it needs no entry: the fix lies elsewhere (re-run cmake if the file "
                              "is newer than the configure; otherwise a wrong directory, #if guards or a missing port)"};
  }

  const SourceList* best = nullptr;
  long best_score = -1;
  std::string ext = extension_of(file);
  for (const auto& l : build.lists) {
    if (l.removal || !in_scope(l)) continue;
    bool variable_list = is_variable_list(l.command);
    long same_ext = 0, direct = 0;
    size_t prefix = 0;
    for (const auto& e : l.entries) {
      if (is_indirect_entry(e.raw)) continue;
      ++direct;
      if (extension_of(e.raw) == ext || (e.is_glob && ends_with(e.raw, ext))) ++same_ext;
      for (const auto& f : e.files) prefix = std::max(prefix, shared_dir_prefix(f, file));
      // An entry naming nothing on disk still tells where its kind of file goes.
      if (e.files.empty()) prefix = std::max(prefix, shared_dir_prefix(e.raw, file));
    }
    if (direct == 0) continue;
    // Without a target to go by, only a list holding files of the same kind is a candidate.
    if (same_ext == 0 && !any_feeds) continue;
    long score = (same_ext > 0 ? 1L << 40 : 0) + static_cast<long>(std::min<size_t>(prefix, 4095)) * (1L << 20) +
                 std::min<long>(same_ext, 4095) * 2 + (variable_list ? 1 : 0);
    if (score > best_score) best_score = score, best = &l;
  }
  if (!best) return std::nullopt;
  return ListChoice{.cmake_file = best->cmake_file,
                    .list = best->variable,
                    .entry = entry_spelling(*best, file, porting_dir),
                    .line = best->line,
                    .note = ""};
}

}  // namespace mlc::build

// Index construction: walk the roots, reuse cached entities of unchanged files, scan the rest in
// parallel (oneTBB), write the cache atomically. The cache is a private binary format versioned by
// its first line; anything unexpected in it means "no cache", never an error.
#include "source/source_index.h"
#include "source/preprocessor.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tbb/parallel_for.h>
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>

#include "common/walk.h"

namespace mlc::source {
namespace {

constexpr char kCacheMagic[] = "MLC-SOURCE-INDEX 7\n";  // 6: #include lines; 7: names through using-directives

bool has_suffix(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool read_whole(const std::string& path, std::string& out) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return false;
  }
  out.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < out.size()) {
    ssize_t n = read(fd, out.data() + got, out.size() - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  out.resize(got);
  close(fd);
  return true;
}

// --- cache serialisation -------------------------------------------------------------------------

void put_u64(std::string& b, uint64_t v) { b.append(reinterpret_cast<const char*>(&v), sizeof v); }
void put_str(std::string& b, const std::string& s) {
  put_u64(b, s.size());
  b += s;
}

struct Cursor {
  const std::string& b;
  size_t pos = 0;
  bool ok = true;
  uint64_t u64() {
    if (pos + 8 > b.size()) return ok = false, 0;
    uint64_t v;
    std::memcpy(&v, b.data() + pos, 8);
    pos += 8;
    return v;
  }
  std::string str() {
    uint64_t n = u64();
    if (!ok || n > b.size() - pos) return ok = false, std::string();
    std::string s = b.substr(pos, n);
    pos += n;
    return s;
  }
};

struct CachedFile {
  uint64_t size;
  int64_t mtime_ns;
  std::vector<Entity> entities;
  std::vector<IncludeLine> includes;
};

std::map<std::string, CachedFile> load_cache(const std::string& file, const std::vector<std::string>& roots) {
  std::map<std::string, CachedFile> cache;
  std::string buf;
  if (file.empty() || !read_whole(file, buf) || buf.compare(0, sizeof kCacheMagic - 1, kCacheMagic) != 0) return cache;
  Cursor c{buf, sizeof kCacheMagic - 1};
  uint64_t nroots = c.u64();
  if (!c.ok || nroots != roots.size()) return {};
  for (const auto& r : roots)
    if (c.str() != r || !c.ok) return {};  // built for other roots
  uint64_t nfiles = c.u64();
  for (uint64_t f = 0; c.ok && f < nfiles; ++f) {
    std::string path = c.str();
    CachedFile cf;
    cf.size = c.u64();
    cf.mtime_ns = static_cast<int64_t>(c.u64());
    uint64_t n = c.u64();
    if (!c.ok || n > buf.size()) return {};
    cf.entities.resize(n);
    for (auto& e : cf.entities) {
      uint64_t packed = c.u64();
      e.kind = static_cast<EntityKind>(packed & 0xff);
      e.line = static_cast<uint32_t>(packed >> 32);
      e.is_template = packed & 0x100;
      e.is_inline = packed & 0x200;
      e.extern_c = packed & 0x400;
      e.const_method = packed & 0x800;
      e.qualified = c.str();
      e.params = c.str();
      e.template_params = c.str();
      e.template_args = c.str();
      e.extra = c.str();
      e.using_qualified = c.str();
    }
    uint64_t ni = c.u64();
    if (!c.ok || ni > buf.size()) return {};
    cf.includes.resize(ni);
    for (auto& inc : cf.includes) {
      inc.header = c.str();
      inc.line = static_cast<uint32_t>(c.u64());
    }
    if (c.ok) cache.emplace(std::move(path), std::move(cf));
  }
  if (!c.ok) return {};
  return cache;
}

bool save_cache(const std::string& file, const std::vector<std::string>& roots, const std::vector<SourceFile>& files,
                const std::vector<std::vector<Entity>>& per_file,
                const std::vector<std::vector<IncludeLine>>& includes) {
  std::string b = kCacheMagic;
  put_u64(b, roots.size());
  for (const auto& r : roots) put_str(b, r);
  put_u64(b, files.size());
  for (size_t f = 0; f < files.size(); ++f) {
    put_str(b, files[f].path);
    put_u64(b, files[f].size);
    put_u64(b, static_cast<uint64_t>(files[f].mtime_ns));
    put_u64(b, per_file[f].size());
    for (const auto& e : per_file[f]) {
      uint64_t packed = static_cast<uint64_t>(e.kind) | (e.is_template ? 0x100 : 0) | (e.is_inline ? 0x200 : 0) |
                        (e.extern_c ? 0x400 : 0) | (e.const_method ? 0x800 : 0) | (static_cast<uint64_t>(e.line) << 32);
      put_u64(b, packed);
      put_str(b, e.qualified);
      put_str(b, e.params);
      put_str(b, e.template_params);
      put_str(b, e.template_args);
      put_str(b, e.extra);
      put_str(b, e.using_qualified);
    }
    put_u64(b, includes[f].size());
    for (const auto& inc : includes[f]) {
      put_str(b, inc.header);
      put_u64(b, inc.line);
    }
  }
  // Atomic: write a temporary file next to it, then rename.
  std::string dir = file.substr(0, file.rfind('/'));
  mkdir(dir.c_str(), 0755);
  std::string tmp = file + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!(out << b)) return false;
  }
  return std::rename(tmp.c_str(), file.c_str()) == 0;
}

}  // namespace

std::vector<IncludeLine> scan_includes(std::string_view text) {
  std::vector<IncludeLine> out;
  uint32_t n = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++n;
    size_t i = line.find_first_not_of(" \t");
    if (i == std::string_view::npos || line[i] != '#') continue;
    i = line.find_first_not_of(" \t", i + 1);
    if (i == std::string_view::npos || line.compare(i, 7, "include") != 0) continue;
    size_t open = line.find_first_of("\"<", i + 7);
    if (open == std::string_view::npos) continue;
    size_t close = line.find(line[open] == '"' ? '"' : '>', open + 1);
    if (close == std::string_view::npos) continue;
    out.push_back({.header = std::string(line.substr(open + 1, close - open - 1)), .line = n});
  }
  return out;
}

namespace {
bool has_any_suffix(std::string_view path, const std::vector<std::string>& exts) {
  return std::any_of(exts.begin(), exts.end(), [&](const std::string& e) { return has_suffix(path, e); });
}
}  // namespace

bool is_source_file(std::string_view path, const FileKinds& kinds) { return has_any_suffix(path, kinds.any); }

bool is_compiled_source(std::string_view path, const FileKinds& kinds) { return has_any_suffix(path, kinds.compiled); }

namespace {

// The source files under the roots (the index's, then the macro roots'), each once: the first root
// that holds it wins. A root whose walk was cut short is noted in `stats`.
std::vector<SourceFile> find_sources(const IndexOptions& options, const std::vector<std::string>& all_roots,
                                     IndexStats* stats) {
  std::vector<SourceFile> found;
  for (size_t r = 0; r < all_roots.size(); ++r) {
    struct stat st;
    const std::string& root = all_roots[r];
    bool macros_only = r >= options.roots.size();
    if (stat(root.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      WalkOptions wo{.skip_hidden = true, .follow_symlinks = true};
      // Another build tree below a source root (build/ inside the checkout, an in-source build's
      // CMakeFiles/ with its compiler-identification main()) holds copies and probes, not the project's sources.
      if (!macros_only)
        wo.skip_dir = [](const std::string& dir) {
          struct stat cs;
          return dir.ends_with("/CMakeFiles") || stat((dir + "/CMakeCache.txt").c_str(), &cs) == 0;
        };
      bool bounded = options.bounded_roots.count(root) > 0;
      if (bounded) wo.max_files = options.walk_limit;
      bool whole = walk_tree(
          root,
          [&](const std::string& path, const struct stat& fst) {
            if (!is_source_file(path, options.kinds) || (macros_only && is_compiled_source(path, options.kinds)))
              return;
            found.push_back({path, static_cast<uint64_t>(fst.st_size),
                             fst.st_mtim.tv_sec * 1000000000LL + fst.st_mtim.tv_nsec, static_cast<uint16_t>(r)});
          },
          wo);
      if (!whole && stats) stats->cut_short.push_back(root);
    } else if (S_ISREG(st.st_mode)) {
      found.push_back({root, static_cast<uint64_t>(st.st_size), st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec,
                       static_cast<uint16_t>(r)});
    }
  }
  // A file under two roots is indexed once (the first root wins).
  std::vector<SourceFile> files;
  std::map<std::string, bool> seen;
  for (auto& f : found)
    if (seen.emplace(f.path, true).second) files.push_back(std::move(f));
  return files;
}

}  // namespace

SourceIndex SourceIndex::build(const IndexOptions& options, IndexStats* stats,
                               const std::vector<std::string>& macro_roots) {
  SourceIndex idx;
  idx.roots_ = options.roots;
  std::vector<std::string> all_roots = options.roots;
  all_roots.insert(all_roots.end(), macro_roots.begin(), macro_roots.end());
  std::vector<SourceFile> files = find_sources(options, all_roots, stats);
  auto cache = load_cache(options.cache_file, all_roots);
  std::vector<std::vector<Entity>> per_file(files.size());
  std::vector<std::vector<IncludeLine>> includes(files.size());
  std::vector<char> reused(files.size(), 0);
  for (size_t f = 0; f < files.size(); ++f) {
    auto it = cache.find(files[f].path);
    if (it != cache.end() && it->second.size == files[f].size && it->second.mtime_ns == files[f].mtime_ns) {
      per_file[f] = std::move(it->second.entities);
      includes[f] = std::move(it->second.includes);
      reused[f] = 1;
    }
  }
  std::atomic<size_t> bytes{0};
  tbb::parallel_for(size_t{0}, files.size(), [&](size_t f) {
    if (reused[f]) return;
    std::string text;
    if (!read_whole(files[f].path, text)) return;  // unreadable: indexed as empty
    bytes += text.size();
    per_file[f] = scan_source(text, true);
    if (is_compiled_source(files[f].path, options.kinds) && files[f].root < options.roots.size())
      includes[f] = scan_includes(text);
    if (has_any_suffix(
            files[f].path,
            options.kinds.kernel))  // REGISTER_DISPATCH registers a static object there, defines no stub member
      std::erase_if(per_file[f], [](const Entity& e) { return e.extra == "REGISTER_DISPATCH"; });
    if (files[f].root >= options.roots.size())  // a macro root: only its #defines count
      std::erase_if(per_file[f], [](const Entity& e) { return e.kind != EntityKind::Macro; });
  });
  size_t n_reused = static_cast<size_t>(std::count(reused.begin(), reused.end(), 1));
  bool changed = n_reused != files.size() || cache.size() != files.size();
  bool written = false;
  if (!options.cache_file.empty() && changed)
    written = save_cache(options.cache_file, all_roots, files, per_file, includes);

  size_t total = 0;
  for (const auto& v : per_file) total += v.size();
  idx.entities_.reserve(total);
  for (size_t f = 0; f < files.size(); ++f) {
    for (auto& e : per_file[f]) {
      IndexedEntity ie;
      static_cast<Entity&>(ie) = std::move(e);
      ie.file = static_cast<uint32_t>(f);
      idx.entities_.push_back(std::move(ie));
    }
  }
  idx.files_ = std::move(files);
  idx.includes_ = std::move(includes);
  idx.resolve_macro_scopes(options.defines);
  idx.build_lookup();
  idx.resolve_using_directives();
  if (stats) {
    stats->files = idx.files_.size();
    stats->reused = n_reused;
    stats->scanned = idx.files_.size() - n_reused;
    stats->bytes_scanned = bytes;
    stats->cache_loaded = !cache.empty();
    stats->cache_written = written;
  }
  return idx;
}

void SourceIndex::resolve_macro_scopes(const std::map<std::string, std::string>& defines) {
  // Of several definitions, the first whose #if branch the build's definitions take; else the first
  // whose branch cannot be evaluated; else the first.
  std::unordered_map<std::string_view, std::string_view> value;
  std::unordered_map<std::string_view, int> strength;  // 2 taken, 1 undecided, 0 not taken
  // The conditions read the build's -D flags, then the numbers the project's own headers define
  // unconditionally (an undefined name is 0 to the preprocessor, which would take the wrong branch).
  std::map<std::string, std::string> known = defines;
  for (const auto& e : entities_)
    if (e.kind == EntityKind::Macro && !e.extra.empty() && std::isdigit(static_cast<unsigned char>(e.extra[0])) &&
        evaluate_condition(e.params, defines).value_or(false))  // its header's guard is no condition
      known.emplace(e.qualified, e.extra);
  for (const auto& e : entities_) {
    if (e.kind != EntityKind::Macro) continue;
    auto taken = evaluate_condition(e.params, known);
    int s = !taken ? 1 : *taken ? 2 : 0;
    auto it = strength.find(e.qualified);
    if (it == strength.end() || s > it->second) {
      strength[e.qualified] = s;
      value[e.qualified] = e.extra;
    }
  }
  // A value may name another macro (abseil: ABSL_NAMESPACE_BEGIN opens ABSL_OPTION_INLINE_NAMESPACE_NAME,
  // whose value is the inline namespace): each component is resolved again, a few levels deep.
  std::function<std::string(std::string_view, int)> resolved = [&](std::string_view name, int depth) -> std::string {
    auto it = value.find(name);
    if (it == value.end()) return std::string(name);  // no #define seen: a namespace spelled in capitals
    if (depth >= 8) return std::string(it->second);
    std::string out;
    std::string_view v = it->second;
    for (size_t p = 0; p <= v.size();) {
      size_t end = v.find("::", p);
      if (end == std::string_view::npos) end = v.size();
      std::string part = resolved(v.substr(p, end - p), depth + 1);
      if (!part.empty()) out += (out.empty() ? "" : "::") + part;
      p = end + 2;
    }
    return out;
  };
  auto rewrite = [&](std::string& text) {
    if (text.find(kMacroMark) == std::string::npos) return;
    std::string out;
    std::string_view q = text;
    for (size_t p = 0; p < q.size();) {
      if (q[p] != kMacroMark) {
        out += q[p++];
        continue;
      }
      size_t end = p + 1;
      while (end < q.size() && q[end] != ':' && q[end] != kListSep) ++end;
      std::string v = resolved(q.substr(p + 1, end - p - 1), 0);
      if (!v.empty()) out += v;
      else if (end + 1 < q.size() && q[end] == ':') end += 2;  // an empty macro: the component goes with its "::"
      p = end;
    }
    text = std::move(out);
  };
  for (auto& e : entities_) {
    rewrite(e.qualified);
    rewrite(e.using_qualified);
  }
}

void SourceIndex::resolve_using_directives() {
  // C++ [namespace.udir]: after "using namespace N;", the A of a definition "A::f" may be N's. The
  // definition is N::A::f when another declaration of that name exists (the class's own member, the
  // header's prototype) and none of the name as written does.
  // The lookup's keys are views into the names: they are decided first, then renamed, then looked up anew.
  std::vector<std::pair<size_t, std::string>> renamed;
  for (size_t k = 0; k < entities_.size(); ++k) {
    const auto& e = entities_[k];
    if (e.using_qualified.empty()) continue;
    auto declared = [&](const std::string& qualified) {
      if (auto it = by_name_.find(e.name()); it != by_name_.end())
        for (uint32_t i : it->second)
          if (i != k && entities_[i].qualified == qualified) return true;
      return false;
    };
    if (declared(e.qualified)) continue;
    for (const auto& alternative : split_list(e.using_qualified))
      if (declared(alternative)) {
        renamed.emplace_back(k, alternative);
        break;
      }
  }
  if (renamed.empty()) return;
  for (auto& [k, name] : renamed) entities_[k].qualified = std::move(name);
  by_name_.clear();
  build_lookup();
}

void SourceIndex::build_lookup() {
  by_name_.reserve(entities_.size());
  for (size_t i = 0; i < entities_.size(); ++i) by_name_[entities_[i].name()].push_back(static_cast<uint32_t>(i));
}

std::vector<const IndexedEntity*> SourceIndex::lookup(std::string_view name) const {
  std::vector<const IndexedEntity*> out;
  if (auto it = by_name_.find(name); it != by_name_.end())
    for (uint32_t i : it->second) out.push_back(&entities_[i]);
  return out;
}

std::string SourceIndex::alias(std::string_view name, std::string_view scope) const {
  const IndexedEntity* e = alias_entity(name, scope);
  return e ? e->extra : std::string();
}

const IndexedEntity* SourceIndex::alias_entity(std::string_view name, std::string_view scope) const {
  // The typedef visible from `scope`: the one in the innermost enclosing scope wins; with none
  // visible, any typedef of that name (the scanner may not see every using-directive).
  const IndexedEntity* best = nullptr;
  const IndexedEntity* any = nullptr;
  std::string within = std::string(scope) + "::";
  if (auto it = by_name_.find(name); it != by_name_.end())
    for (uint32_t i : it->second) {
      const auto& e = entities_[i];
      if (e.kind != EntityKind::Alias) continue;
      if (!any) any = &e;
      std::string_view encl = std::string_view(e.qualified).substr(0, e.qualified.size() - e.name().size());
      if (!encl.empty() && within.rfind(encl, 0) != 0) continue;
      if (!best || encl.size() > best->qualified.size() - best->name().size()) best = &e;
    }
  if (!best) best = any;
  return best;
}

std::string SourceIndex::alias(std::string_view name) const {
  if (auto it = by_name_.find(name); it != by_name_.end())
    for (uint32_t i : it->second)
      if (entities_[i].kind == EntityKind::Alias) return entities_[i].extra;
  return {};
}

namespace {

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }

// The index just past the '>' matching the '<' at `open`, or npos.
size_t matching_angle(std::string_view t, size_t open) {
  int depth = 0;
  for (size_t k = open; k < t.size(); ++k) {
    if (t[k] == '<' || t[k] == '(') ++depth;
    if ((t[k] == '>' || t[k] == ')') && --depth == 0) return k + 1;
  }
  return std::string_view::npos;
}

// Top-level, comma-separated arguments of "<...>" spanning [open, close).
std::vector<std::string> angle_args(std::string_view t, size_t open, size_t close) {
  std::vector<std::string> out;
  int depth = 0;
  size_t start = open + 1;
  for (size_t k = open + 1; k + 1 < close; ++k) {
    if (t[k] == '<' || t[k] == '(') ++depth;
    if ((t[k] == '>' || t[k] == ')') && depth > 0) --depth;
    if (depth == 0 && t[k] == ',') {
      out.emplace_back(t.substr(start, k - start));
      start = k + 1;
    }
  }
  if (close > open + 1) out.emplace_back(t.substr(start, close - 1 - start));
  return out;
}

// `text` with whole-word occurrences of names[i] replaced by values[i].
std::string substitute(std::string_view text, const std::vector<std::string>& names,
                       const std::vector<std::string>& values) {
  std::string out;
  for (size_t k = 0; k < text.size();) {
    if (!word_char(text[k]) || (k > 0 && word_char(text[k - 1]))) {
      out += text[k++];
      continue;
    }
    size_t end = k;
    while (end < text.size() && word_char(text[end])) ++end;
    std::string_view w = text.substr(k, end - k);
    auto it = std::find(names.begin(), names.end(), w);
    out += it == names.end() ? std::string(w) : values[static_cast<size_t>(it - names.begin())];
    k = end;
  }
  return out;
}

// "is_same<A,B>::value" / "is_same_v<A,B>" / "true" / "false" (normalized spellings): its value, or
// nullopt when it is something else.
std::optional<bool> evaluate_condition(std::string_view c) {
  if (c == "true") return true;
  if (c == "false") return false;
  bool negate = !c.empty() && c[0] == '!';
  if (negate) c.remove_prefix(1);
  std::string_view head = c.substr(0, c.find('<'));
  if (head != "is_same" && head != "is_same_v") return std::nullopt;
  size_t close = matching_angle(c, head.size());
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view tail = c.substr(close);
  if (!(head == "is_same" ? tail == "::value" : tail.empty())) return std::nullopt;
  auto args = angle_args(c, head.size(), close);
  if (args.size() != 2) return std::nullopt;
  bool same = normalize_type(args[0], false) == normalize_type(args[1], false);
  return same != negate;
}

// Replaces the first decidable "conditional_t<C,X,Y>" or "conditional<C,X,Y>::type" by X or Y.
bool decide_one_conditional(std::string& t) {
  for (size_t p = 0; p < t.size(); ++p) {
    if (p > 0 && word_char(t[p - 1])) continue;
    size_t open;
    bool typed;  // conditional<...>::type
    if (t.compare(p, 14, "conditional_t<") == 0) {
      open = p + 13;
      typed = false;
    } else if (t.compare(p, 12, "conditional<") == 0) {
      open = p + 11;
      typed = true;
    } else {
      continue;
    }
    size_t close = matching_angle(t, open);
    if (close == std::string::npos) return false;
    size_t end = close;
    if (typed) {
      if (t.compare(close, 6, "::type") != 0 || (close + 6 < t.size() && word_char(t[close + 6]))) continue;
      end = close + 6;
    }
    auto args = angle_args(t, open, close);
    if (args.size() != 3) continue;
    auto value = evaluate_condition(args[0]);
    if (!value) continue;
    t.replace(p, end - p, *value ? args[1] : args[2]);
    return true;
  }
  return false;
}

}  // namespace

std::string SourceIndex::expand_aliases(std::string_view type, std::string_view scope) const {
  std::string t(type);
  int budget = 64;  // alias chains are short; this only stops a cycle the scanner could not see
  bool changed = true;
  while (changed && budget > 0) {
    changed = false;
    for (size_t p = 0; p < t.size() && budget > 0;) {
      // Not a name's start, a number, or the member in "A<T>::type": not an alias.
      if (!word_char(t[p]) || (p > 0 && (word_char(t[p - 1]) || t[p - 1] == ':')) ||
          std::isdigit(static_cast<unsigned char>(t[p]))) {
        ++p;
        continue;
      }
      size_t end = p;
      while (end < t.size() && word_char(t[end])) ++end;
      std::string name = t.substr(p, end - p);
      const IndexedEntity* a = alias_entity(name, scope);
      if (!a || a->extra.empty() || a->extra == name || a->extra == "(*)") {
        p = end;
        continue;
      }
      auto params = split_list(a->template_params);
      bool has_args = end < t.size() && t[end] == '<';
      if (params.empty() != !has_args) {  // "vector<int>" is no use of a plain alias "vector"
        p = end;
        continue;
      }
      std::string replacement = a->extra;
      size_t span_end = end;
      if (has_args) {
        size_t close = matching_angle(t, end);
        if (close == std::string::npos) break;
        auto args = angle_args(t, end, close);
        params.resize(std::min(params.size(), args.size()));
        args.resize(params.size());
        replacement = substitute(a->extra, params, args);
        span_end = close;
      }
      t.replace(p, span_end - p, replacement);
      --budget;
      changed = true;  // the replacement may name aliases too: read it again from p
    }
    while (budget > 0 && decide_one_conditional(t)) {
      --budget;
      changed = true;
    }
  }
  return normalize_type(t, false);
}

}  // namespace mlc::source

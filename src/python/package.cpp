// Reading a package's Python sources for what they import at module level: a line scanner, not a parser.
// It knows what decides whether an import runs when the module is imported (def and class bodies do not
// run; strings are not code) and nothing else of the language.
#include "python/package.h"

#include <sys/stat.h>

#include <set>

#include "common/file_io.h"
#include "common/paths.h"
#include "common/text.h"
#include "common/walk.h"

namespace mlc::python {
namespace {

size_t indent_of(const std::string& line) {
  size_t n = 0;
  while (n < line.size() && (line[n] == ' ' || line[n] == '\t')) n += line[n] == '\t' ? 8 : 1;
  return n;
}

bool starts_with_word(const std::string& s, const std::string& word) {
  return s.rfind(word, 0) == 0 && (s.size() == word.size() || s[word.size()] == ' ' || s[word.size()] == '\t' ||
                                   s[word.size()] == '(' || s[word.size()] == ':');
}

// The statements that run when the module is imported, one per line, without indentation: every line
// outside a function body and outside a triple-quoted string. A class body runs on import (Python
// executes it to make the class), its methods' bodies do not. Comments are dropped.
std::vector<std::string> module_level_lines(const std::string& text) {
  std::vector<std::string> out;
  std::vector<size_t> def_indents;  // open function bodies, by the indentation of their header
  std::string quote;                // the triple quote of an open string, "" outside one
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string raw = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    start = nl == std::string::npos ? text.size() : nl + 1;
    if (!quote.empty()) {
      if (raw.find(quote) != std::string::npos) quote.clear();
      continue;
    }
    std::string line = trim(raw);
    if (line.empty() || line[0] == '#') continue;
    size_t indent = indent_of(raw);
    while (!def_indents.empty() && indent <= def_indents.back()) def_indents.pop_back();
    // A string opened and not closed on this line: the lines up to its closing quote are text.
    for (const char* q : {"\"\"\"", "'''"}) {
      size_t open = line.find(q);
      if (open != std::string::npos && line.find(q, open + 3) == std::string::npos) {
        quote = q;
        break;
      }
    }
    if (!def_indents.empty()) continue;
    if (starts_with_word(line, "def") || starts_with_word(line, "async")) {
      def_indents.push_back(indent);
      continue;
    }
    if (auto hash = line.find('#'); hash != std::string::npos) line = trim(line.substr(0, hash));
    out.push_back(line);
  }
  return out;
}

// The modules an import line names: `import a.b as c, d` -> {a.b, d}; `from .x import y, z` -> {.x}
// with `names` {y, z} (which may be modules of package .x).
struct ImportLine {
  std::vector<std::string> modules;
  std::vector<std::string> names;  // from-import: what is taken from modules[0]
};
std::optional<ImportLine> parse_import(const std::string& line) {
  ImportLine out;
  auto words_of = [](const std::string& list) {
    std::vector<std::string> names;
    size_t at = 0;
    while (at <= list.size()) {
      size_t comma = list.find(',', at);
      std::string item = trim(list.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
      if (auto sp = item.find_first_of(" \t"); sp != std::string::npos) item = item.substr(0, sp);
      std::erase_if(item, [](char c) { return c == '(' || c == ')' || c == '\\'; });
      if (!item.empty()) names.push_back(item);
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    return names;
  };
  if (starts_with_word(line, "import")) {
    out.modules = words_of(line.substr(6));
    return out.modules.empty() ? std::nullopt : std::optional<ImportLine>(out);
  }
  if (starts_with_word(line, "from")) {
    size_t imp = line.find(" import");
    if (imp == std::string::npos) return std::nullopt;
    std::string module = trim(line.substr(4, imp - 4));
    if (module.empty()) return std::nullopt;
    out.modules.push_back(module);
    out.names = words_of(line.substr(imp + 7));
    return out;
  }
  return std::nullopt;
}

// The file of a module of the chain's top package: dir/name.py or dir/name/__init__.py.
std::string module_file(const std::string& dir, const std::string& dotted) {
  std::string rel = dotted;
  for (auto& c : rel) c = c == '.' ? '/' : c;
  std::string base = join_path(dir, rel);
  if (is_file(base + ".py")) return base + ".py";
  if (is_file(base + "/__init__.py")) return base + "/__init__.py";
  return "";
}

// The files of this package that an import line of `file` runs (relative imports, and absolute ones inside
// the top package).
std::vector<std::string> imported_package_files(const ImportLine& imp, const std::string& file,
                                                const PackageChain& chain) {
  std::vector<std::string> out;
  const std::string top = chain.packages.front();
  const std::string top_name = base_name(top);
  auto add = [&](const std::string& f) {
    if (!f.empty()) out.push_back(f);
  };
  for (const auto& m : imp.modules) {
    std::string dir;
    std::string rest;
    if (m[0] == '.') {
      size_t dots = m.find_first_not_of('.');
      dir = dir_name(file);
      for (size_t i = 1; i < (dots == std::string::npos ? m.size() : dots); ++i) dir = dir_name(dir);
      if (dir.size() < top.size()) continue;  // above the top package
      rest = dots == std::string::npos ? "" : m.substr(dots);
    } else if (m == top_name || m.rfind(top_name + ".", 0) == 0) {
      dir = chain.site;
      rest = m;
    } else {
      continue;
    }
    if (!rest.empty()) add(module_file(dir, rest));
    // `from . import a, b` and `from .x import y`: each name may itself be a module of that package.
    std::string package_dir = rest.empty() ? dir : join_path(dir, [&] {
      std::string r = rest;
      for (auto& c : r) c = c == '.' ? '/' : c;
      return r;
    }());
    if (!imp.names.empty() && is_dir(package_dir))
      for (const auto& n : imp.names)
        if (n != "*") add(module_file(package_dir, n));
  }
  return out;
}

}  // namespace

PackageChain package_chain(const std::string& file) {
  PackageChain chain;
  for (std::string dir = dir_name(file); dir != "/" && dir != "." && is_file(dir + "/__init__.py"); dir = dir_name(dir))
    chain.packages.insert(chain.packages.begin(), dir);
  if (!chain.packages.empty()) chain.site = dir_name(chain.packages.front());
  return chain;
}

bool line_imports(const std::string& line, const std::string& package) {
  auto imp = parse_import(line);
  if (!imp) return false;
  for (const auto& m : imp->modules)
    if (m == package || m.rfind(package + ".", 0) == 0) return true;
  return false;
}

std::optional<std::string> module_importing(const PackageChain& chain, const std::string& package, size_t limit) {
  if (chain.packages.empty()) return std::nullopt;
  std::vector<std::string> queue;
  for (const auto& p : chain.packages) queue.push_back(p + "/__init__.py");
  std::set<std::string> seen(queue.begin(), queue.end());
  for (size_t i = 0; i < queue.size() && i < limit; ++i) {
    auto text = read_text(queue[i]);
    if (!text) continue;
    for (const auto& line : module_level_lines(*text)) {
      if (line_imports(line, package)) return queue[i];
      if (auto imp = parse_import(line))
        for (auto& f : imported_package_files(*imp, queue[i], chain))
          if (seen.insert(f).second) queue.push_back(f);
    }
  }
  return std::nullopt;
}

namespace {

using Found = FoundModule;

std::optional<Found> find_module(const std::string& root, const std::string& dotted, ImportCache& cache) {
  auto key = std::make_pair(root, dotted);
  if (auto hit = cache.found.find(key); hit != cache.found.end()) return hit->second;
  auto store = [&](const std::optional<Found>& f) { return cache.found.emplace(std::move(key), f).first->second; };
  Found out;
  std::string dir = root;
  size_t at = 0;
  while (true) {
    size_t dot = dotted.find('.', at);
    const std::string part = dotted.substr(at, dot == std::string::npos ? std::string::npos : dot - at);
    if (part.empty()) return store(std::nullopt);
    const std::string here = join_path(dir, part);
    if (is_file(here + "/__init__.py")) {
      out.inits.push_back(here + "/__init__.py");
      dir = here;
    } else if (dot == std::string::npos && is_file(here + ".py")) {
      out.py = here + ".py";
      return store(out);
    } else if (dot == std::string::npos) {
      auto listing = cache.listings.find(dir);
      if (listing == cache.listings.end()) listing = cache.listings.emplace(dir, sorted_entries(dir)).first;
      const std::vector<std::string>& entries = listing->second;  // an element never moves
      // In EXTENSION_SUFFIXES order: a tagged name (.cpython-311-...so), then .abi3.so, then .so.
      auto rank = [&](const std::string& name) {
        const std::string suffix = name.substr(part.size());
        return suffix.rfind(".cpython-", 0) == 0 ? 0 : suffix == ".abi3.so" ? 1 : suffix == ".so" ? 2 : 3;
      };
      std::string best;
      for (const auto& name : entries)
        if (name.rfind(part + ".", 0) == 0 && name.ends_with(".so") && is_file(join_path(dir, name)) &&
            (best.empty() || rank(name) < rank(best)))
          best = name;
      if (best.empty()) return store(std::nullopt);
      out.extension = join_path(dir, best);
      return store(out);
    } else {
      return store(std::nullopt);
    }
    if (dot == std::string::npos) return store(out);
    at = dot + 1;
  }
}

struct ImportWalk {
  const std::vector<std::string>& roots;  // where absolute imports are found, in sys.path order
  const std::string& target;
  size_t limit;
  ImportCache& cache;
  std::set<std::string> seen = {};
  std::vector<ImportedFirst> out = {};
  size_t read = 0;
  bool reached = false;  // the target's own import: what follows runs after it

  // `from .x import y` / `import a.b`: each module (and each name that is a module of a package) in order.
  void run_import(const ImportLine& imp, const std::string& file) {
    for (const auto& m : imp.modules) {
      if (reached) return;
      std::vector<std::pair<std::string, std::string>> where;  // (root, dotted) candidates
      if (m[0] == '.') {
        const size_t dots = m.find_first_not_of('.');
        std::string dir = dir_name(file);
        for (size_t i = 1; i < (dots == std::string::npos ? m.size() : dots); ++i) dir = dir_name(dir);
        const std::string rest = dots == std::string::npos ? "" : m.substr(dots);
        if (!rest.empty()) where.push_back({dir, rest});
        for (const auto& n : imp.names)
          if (n != "*") where.push_back({dir, rest.empty() ? n : rest + "." + n});
      } else {
        if (m == "torch" || m.rfind("torch.", 0) == 0) continue;
        for (const auto& root : roots)
          if (find_module(root, m, cache)) {
            where.push_back({root, m});
            for (const auto& n : imp.names)
              if (n != "*" && find_module(root, m + "." + n, cache)) where.push_back({root, m + "." + n});
            break;
          }
      }
      for (const auto& [root, dotted] : where) {
        auto found = find_module(root, dotted, cache);
        if (!found) continue;
        for (const auto& init : found->inits) run_file(init);
        if (!found->py.empty()) run_file(found->py);
        if (!found->extension.empty() && !reached) {
          if (found->extension == target) reached = true;
          else if (seen.insert(found->extension).second) out.push_back({found->extension, file});
        }
        if (reached) return;
      }
    }
  }

  void run_file(const std::string& file) {
    if (reached || !seen.insert(file).second || read++ >= limit) return;
    auto it = cache.import_lines.find(file);
    if (it == cache.import_lines.end()) {
      std::vector<std::string> imports;
      if (auto text = read_text(file))
        for (auto& line : module_level_lines(*text))
          if (parse_import(line)) imports.push_back(std::move(line));
      it = cache.import_lines.emplace(file, std::move(imports)).first;
    }
    const std::vector<std::string>& lines = it->second;  // an element never moves
    for (const auto& line : lines) {
      if (auto imp = parse_import(line)) run_import(*imp, file);
      if (reached) return;
    }
  }
};

}  // namespace

std::vector<ImportedFirst> extensions_imported_first(const PackageChain& chain,
                                                     const std::vector<std::string>& site_dirs,
                                                     const std::string& target, size_t limit, ImportCache* cache) {
  if (chain.packages.empty()) return {};
  std::vector<std::string> roots{chain.site};
  for (const auto& s : site_dirs)
    if (s != chain.site) roots.push_back(s);
  ImportCache own;
  ImportWalk walk{.roots = roots, .target = target, .limit = limit, .cache = cache ? *cache : own};
  for (const auto& p : chain.packages) walk.run_file(p + "/__init__.py");
  return walk.out;
}

}  // namespace mlc::python

// Scanning is one pass per file over its identifiers (a hash look-up each), in parallel; the SDK is
// consulted once per distinct API. Declarations come from the SDK's header index (functions, types)
// and, for what that index does not hold (enumerators, macros), the first mention in an SDK header.
#include "coverage/coverage.h"

#include <sys/stat.h>

#include <tbb/parallel_for.h>
#include <algorithm>
#include <cctype>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "backend/backend.h"
#include "backend/cuda_api.h"
#include "common/file_io.h"
#include "common/paths.h"
#include "common/walk.h"
#include "source/source_index.h"

namespace mlc::coverage {
namespace {

// The CUDA library families a coverage report is about; the map's PyTorch/c10 entries are not APIs.
bool is_api_family(std::string_view f) {
  static const std::unordered_set<std::string_view> families = {"runtime", "driver", "blas", "sparse", "rand", "fft",
                                                                "rtc",     "roctx",  "dnn",  "solver", "nccl", "other"};
  return families.count(f) != 0;
}

// A name that is a CUDA library API by its prefix alone, for names the map does not know.
bool looks_like_cuda_api(std::string_view n) {
  for (std::string_view p : {"cublas", "cusparse", "cufft", "curand", "cusolver", "cudnn", "nvrtc"})
    if (n.size() > p.size() && n.substr(0, p.size()) == p &&
        (n[p.size()] == '_' || (n[p.size()] >= 'A' && n[p.size()] <= 'Z')))
      return true;
  return n.size() > 4 && n.substr(0, 4) == "cuda" && n[4] >= 'A' && n[4] <= 'Z';
}

// CUDA's spelling: a prefix, then CamelCase, at most a _v2 or _t suffix. PyTorch's own names built on
// a CUDA prefix (cudaMalloc_count, nvrtc_major) are not APIs.
bool cuda_spelling(std::string_view n) {
  size_t us = n.find('_');
  if (us == std::string_view::npos) return true;
  std::string_view tail = n.substr(us);
  if (tail == "_t") return true;
  return tail.size() >= 3 && tail[1] == 'v' &&
         std::all_of(tail.begin() + 2, tail.end(), [](char c) { return c >= '0' && c <= '9'; });
}

struct Hit {
  uint32_t count = 0;
  uint32_t first_line = 0;
};

struct Found {
  std::string cuda;
  std::string_view family;
};

}  // namespace

const char* to_string(Status s) {
  switch (s) {
    case Status::Exported: return "exported";
    case Status::HeaderOnly: return "header-only";
    case Status::DeclaredOnly: return "declared-only";
    case Status::Missing: return "missing";
    case Status::Unmapped: return "unmapped";
    case Status::NoSdk: return "no-sdk";
  }
  return "?";
}

void for_each_identifier(std::string_view s, const std::function<void(std::string_view, uint32_t)>& f) {
  uint32_t line = 1;
  size_t i = 0, n = s.size();
  while (i < n) {
    char c = s[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      i += 2;
      while (i < n && !(s[i] == '*' && i + 1 < n && s[i + 1] == '/')) line += s[i++] == '\n';
      i += 2;
    } else if (c == '"' || c == '\'') {
      // #include "x.h" names a file, not an API; a string is no reference either.
      ++i;
      while (i < n && s[i] != c && s[i] != '\n') i += s[i] == '\\' ? 2 : 1;
      ++i;
    } else if (is_ident_start(c)) {
      size_t b = i;
      while (i < n && is_ident_char(s[i])) ++i;
      // R"(...)" raw strings: skip to the closing delimiter.
      if (i < n && s[i] == '"' && i - b <= 3 && s[i - 1] == 'R') {
        size_t open = s.find('(', i);
        if (open == std::string_view::npos) return;
        std::string close = ")" + std::string(s.substr(i + 1, open - i - 1)) + "\"";
        size_t end = s.find(close, open);
        for (size_t k = i; k < std::min(end, n); ++k) line += s[k] == '\n';
        i = end == std::string_view::npos ? n : end + close.size();
        continue;
      }
      f(s.substr(b, i - b), line);
    } else if (c >= '0' && c <= '9') {
      while (i < n && (is_ident_char(s[i]) || s[i] == '.' || s[i] == '\'')) ++i;  // 1e5f, 0x1Fu, 1'000
    } else {
      ++i;
    }
  }
}

namespace {

// The source files under the roots, sorted and each once; a root that does not exist is an error.
std::vector<std::string> source_files(const std::vector<std::string>& roots, std::vector<InputError>& errors) {
  std::vector<std::string> files;
  for (const auto& root : roots) {
    struct stat st;
    if (stat(root.c_str(), &st) != 0) {
      errors.push_back({root, "cannot open: no such file or directory"});
    } else if (S_ISDIR(st.st_mode)) {
      walk_tree(
          root,
          [&](const std::string& p, const struct stat&) {
            if (source::is_source_file(p, backend::file_kinds())) files.push_back(p);
          },
          WalkOptions{.skip_hidden = true, .follow_symlinks = true});
    } else {
      files.push_back(root);
    }
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

// Which CUDA API an identifier is, its family and the backend's counterpart: from the map, else
// (no map) from the backend's naming rule, under which a ported tree's hipX is counted as cudaX.
struct Naming {
  const CoverageOptions& o;
  const porting::PortingMap* map = o.map;
  bool by_rule = map == nullptr;

  std::string_view family_of(std::string_view cuda) const {
    if (map)
      if (auto it = map->info.find(cuda); it != map->info.end() && !it->second.family.empty()) return it->second.family;
    return backend::cuda_api_family(cuda);
  }

  // The CUDA name `id` counts under, or empty; `original` holds a name the naming rule made.
  std::string_view cuda_of(std::string_view id, std::string& original) const {
    std::string_view cuda;
    if (by_rule) {
      if (auto c = backend::cuda_name_by_rule(*o.backend, id); c && cuda_spelling(id)) cuda = original = *c;
    } else {
      if (auto it = map->to_musa.find(id); it != map->to_musa.end() && it->second != id) {
        cuda = it->first;  // a CUDA tree
      } else if (auto inv = map->to_cuda.find(id); inv != map->to_cuda.end() && inv->second != id) {
        cuda = inv->second;  // a ported tree: the backend's name, counted under its CUDA name
      }
    }
    if (cuda.empty() && looks_like_cuda_api(id) && cuda_spelling(id)) cuda = id;
    return cuda;
  }

  std::optional<std::string> counterpart_of(const std::string& cuda) const {
    if (by_rule) return backend::counterpart_by_rule(*o.backend, cuda);
    if (auto it = map->to_musa.find(cuda); it != map->to_musa.end()) return std::string(it->second);
    return std::nullopt;
  }
};

// Every API used in the files, with its call sites per file: one parallel pass over each file's identifiers.
std::map<std::string, ApiUse> count_uses(const std::vector<std::string>& files, const Naming& naming,
                                         std::vector<InputError>& errors) {
  std::vector<std::unordered_map<std::string, Hit>> per_file(files.size());
  std::vector<std::optional<InputError>> read_errors(files.size());
  tbb::parallel_for(size_t{0}, files.size(), [&](size_t k) {
    auto text = read_text(files[k]);
    if (!text) {
      read_errors[k] = InputError{files[k], "cannot read"};
      return;
    }
    auto& hits = per_file[k];
    std::string original;  // the CUDA name a ported name comes from by the naming rule
    for_each_identifier(*text, [&](std::string_view id, uint32_t line) {
      std::string_view cuda = naming.cuda_of(id, original);
      if (cuda.empty() || !is_api_family(naming.family_of(cuda))) return;
      Hit& h = hits[std::string(cuda)];
      if (h.count++ == 0) h.first_line = line;
    });
  });
  for (auto& e : read_errors)
    if (e) errors.push_back(*e);

  std::map<std::string, ApiUse> apis;
  for (size_t k = 0; k < files.size(); ++k) {
    for (const auto& [cuda, hit] : per_file[k]) {
      ApiUse& a = apis[cuda];
      a.cuda = cuda;
      a.call_sites += hit.count;
      a.files.push_back({files[k], hit.count, hit.first_line});
    }
  }
  return apis;
}

// Whether line `line` of a header (lines start at `starts`) declares `id`: a preprocessor line
// mentions a name without declaring it (#if X, #define Y X), unless it is the #define of that very name.
bool declares(std::string_view text, const std::vector<size_t>& starts, std::string_view id, uint32_t line) {
  if (line == 0 || line > starts.size()) return true;
  std::string_view l = text.substr(starts[line - 1]);
  l = l.substr(0, l.find('\n'));
  size_t at = l.find_first_not_of(" \t");
  if (at == std::string_view::npos || l[at] != '#') return true;
  l = l.substr(at + 1);
  l.remove_prefix(std::min(l.size(), l.find_first_not_of(" \t")));
  if (!l.starts_with("define")) return false;
  l.remove_prefix(6);
  l.remove_prefix(std::min(l.size(), l.find_first_not_of(" \t")));
  return l.starts_with(id) &&
         (l.size() == id.size() || !(std::isalnum(static_cast<unsigned char>(l[id.size()])) || l[id.size()] == '_'));
}

using Mentions = std::unordered_map<std::string, std::pair<uint32_t, uint32_t>>;  // name -> header file, line

// The first declaring mention of each wanted name in the SDK's headers.
Mentions header_mentions(const sdk::SdkIndex& sdk, const std::unordered_set<std::string>& wanted) {
  Mentions mentions;
  const auto& hfiles = sdk.headers.files();
  for (uint32_t f = 0; f < hfiles.size(); ++f) {
    auto text = read_text(hfiles[f].path);
    if (!text) continue;
    std::vector<size_t> starts = {0};
    for (size_t i = 0; i < text->size(); ++i)
      if ((*text)[i] == '\n') starts.push_back(i + 1);
    for_each_identifier(*text, [&](std::string_view id, uint32_t line) {
      if (wanted.count(std::string(id)) && declares(*text, starts, id, line))
        mentions.emplace(std::string(id), std::make_pair(f, line));
    });
  }
  return mentions;
}

// Functions the SDK declares with C++ linkage are exported under their mangled names:
// _Z22hipCreateSurfaceObjectPP13__hip_surfacePK15hipResourceDesc is hipCreateSurfaceObject.
std::unordered_map<std::string, std::string> cxx_exports(const sdk::SdkIndex& sdk) {
  std::unordered_map<std::string, std::string> out;
  for (const auto& [sym, exports] : sdk.exports) {
    if (sym.size() < 4 || sym.compare(0, 2, "_Z") != 0 || sym[2] < '1' || sym[2] > '9' || exports.empty()) continue;
    size_t i = 2, len = 0;
    while (i < sym.size() && sym[i] >= '0' && sym[i] <= '9' && len < 4096) len = len * 10 + (sym[i++] - '0');
    if (i + len <= sym.size()) out.emplace(sym.substr(i, len), sdk.libraries[exports.front().library].path);
  }
  return out;
}

// What the SDK holds of a mapped API's counterpart: its exporter, its declaration (else a mention), its status.
void settle_in_sdk(ApiUse& a, const sdk::SdkIndex& sdk, const std::unordered_map<std::string, std::string>& cxx,
                   const std::function<const std::pair<uint32_t, uint32_t>*(const std::string&)>& mention) {
  const std::string& name = *a.counterpart;
  if (const auto* lib = sdk.first_exporter(name)) {
    a.exported_by = lib->path;
  } else if (auto it = cxx.find(name); it != cxx.end()) {
    a.exported_by = it->second;  // a C++ declaration (HIP's hipCreateSurfaceObject): exported mangled
  }
  // A function declared out of line is what a linker needs a definition of; types, inline and
  // template functions are settled by the header itself. That declaration is the one cited.
  const source::IndexedEntity* decl = nullptr;
  bool out_of_line = false;
  for (const source::IndexedEntity* e : sdk.headers.lookup(name)) {
    // A namespace-naming macro entry is no declaration (and has no line): HIP's NVIDIA-platform
    // headers #define HIP_R_32F CUDA_R_32F; the enumerator itself is found as a mention.
    if (e->kind == source::EntityKind::Macro) continue;
    bool fn = e->kind == source::EntityKind::FunctionDeclaration && !e->is_inline && !e->is_template;
    if (!decl || (fn && !out_of_line)) decl = e;
    out_of_line = out_of_line || fn;
  }
  if (decl) {
    a.declared_file = sdk.headers.file_of(*decl).path;
    a.declared_line = decl->line;
    a.declared_kind = source::to_string(decl->kind);
  } else if (const auto* m = mention(name)) {
    a.declared_file = sdk.headers.files()[m->first].path;
    a.declared_line = m->second;
    a.declared_kind = "mention";
  }
  if (a.exported_by) {
    a.status = Status::Exported;
  } else if (out_of_line) {
    a.status = Status::DeclaredOnly;
  } else if (a.declared_file) {
    a.status = Status::HeaderOnly;
  } else {
    a.status = Status::Missing;
  }
}

// Each API's family, counterpart and status.
void classify(std::map<std::string, ApiUse>& apis, const CoverageOptions& o, const Naming& naming) {
  // Mentions in the SDK's headers, for names its declaration index does not hold (enumerators,
  // function-like macros): read only when some counterpart needs it.
  std::optional<Mentions> mentions;
  auto mention = [&](const std::string& name) -> const std::pair<uint32_t, uint32_t>* {
    if (!o.sdk) return nullptr;
    if (!mentions) {
      std::unordered_set<std::string> wanted;
      for (const auto& [cuda, a] : apis)
        if (auto c = naming.counterpart_of(cuda)) wanted.insert(*c);
      mentions.emplace(header_mentions(*o.sdk, wanted));
    }
    auto it = mentions->find(name);
    return it == mentions->end() ? nullptr : &it->second;
  };
  std::unordered_map<std::string, std::string> cxx;
  if (o.sdk) cxx = cxx_exports(*o.sdk);
  for (auto& [cuda, a] : apis) {
    a.family = std::string(naming.family_of(cuda));
    a.counterpart = naming.counterpart_of(cuda);
    if (naming.map)
      if (auto it = naming.map->info.find(cuda); it != naming.map->info.end())
        a.marked_unsupported = it->second.unsupported;
    if (!a.counterpart) {
      a.status = Status::Unmapped;
    } else if (!o.sdk) {
      a.status = Status::NoSdk;
    } else {
      settle_in_sdk(a, *o.sdk, cxx, mention);
    }
    std::sort(a.files.begin(), a.files.end(), [](const FileUses& x, const FileUses& y) { return x.file < y.file; });
  }
}

// The totals per family and status, and the APIs in the report's order (family, then CUDA name).
void add_totals(CoverageReport& r, std::map<std::string, ApiUse>& apis) {
  std::map<std::string, FamilyTotals> families;
  for (auto& [cuda, a] : apis) {
    FamilyTotals& t = families[a.family];
    t.family = a.family;
    ++t.apis;
    t.call_sites += a.call_sites;
    ++t.by_status[a.status];
    ++r.by_status[a.status];
    r.call_sites += a.call_sites;
  }
  for (auto& [f, t] : families) r.families.push_back(std::move(t));
  for (auto& [cuda, a] : apis) r.apis.push_back(std::move(a));
  std::stable_sort(r.apis.begin(), r.apis.end(), [](const ApiUse& x, const ApiUse& y) {
    return x.family != y.family ? x.family < y.family : x.cuda < y.cuda;
  });
}

}  // namespace

// The passes: find the sources, count the APIs they use, settle each in the SDK, total.
CoverageReport run_coverage(const CoverageOptions& o) {
  CoverageReport r;
  r.backend = o.backend->name;
  const Naming naming{.o = o};
  if (naming.by_rule) r.naming_rule = backend::naming_rule(*o.backend);
  r.sdk_home = o.sdk_home;
  r.mapping = o.mapping;
  r.roots = o.roots;
  std::vector<std::string> files = source_files(o.roots, r.errors);
  r.files_scanned = files.size();
  std::map<std::string, ApiUse> apis = count_uses(files, naming, r.errors);
  classify(apis, o, naming);
  add_totals(r, apis);
  return r;
}

}  // namespace mlc::coverage

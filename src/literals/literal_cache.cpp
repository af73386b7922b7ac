// The literals found in a file by a search, kept between runs (runtime_lookup.h, LiteralCache).
#include <array>
#include <atomic>
#include <optional>
#include <sstream>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "common/cache_file.h"
#include "common/file_io.h"
#include "common/hash.h"
#include "common/paths.h"
#include "common/phase_times.h"
#include "literals/lookups.h"

namespace mlc::literals {
namespace {

constexpr std::string_view kHeader = "mlc-runtime-literals 1";

bool writable(std::string_view s) { return s.find_first_of("\t\n") == std::string_view::npos; }

}  // namespace

LiteralCache::LiteralCache(std::string cache_dir)
    : dir_(cache_dir), file_(cache_dir.empty() ? "" : cache_dir + "/runtime-literals.tsv") {}

void LiteralCache::load() {
  if (loaded_) return;
  loaded_ = true;
  if (file_.empty()) return;
  auto text = read_text(file_);
  if (!text) return;
  std::istringstream in(*text);
  std::string line;
  if (!std::getline(in, line) || line != kHeader) return;  // another format, or garbled: ignored, rewritten
  std::map<std::string, Entry> read;
  Entry* current = nullptr;
  while (std::getline(in, line)) {
    if (line.rfind("K\t", 0) == 0) {
      // K <identity> <query> <path>
      size_t a = line.find('\t', 2), b = a == std::string::npos ? a : line.find('\t', a + 1);
      if (b == std::string::npos) return;
      std::string id = line.substr(2, a - 2), query = line.substr(a + 1, b - a - 1);
      current = &read[id + '\t' + query];
      current->path = line.substr(b + 1);
      current->identity = id;
      current->query = query;
    } else if (line.rfind("L\t", 0) == 0 && current) {
      current->literals.push_back(line.substr(2));
    } else {
      return;  // a line of no known kind: the whole file is ignored, and rewritten at the end
    }
  }
  entries_ = std::move(read);
}

std::optional<std::vector<std::string>> LiteralCache::find(const std::string& path, const std::string& query) {
  if (file_.empty()) return std::nullopt;
  std::string id = file_identity(path);
  if (id.empty()) return std::nullopt;
  std::lock_guard<std::mutex> lock(mutex_);
  load();
  auto it = entries_.find(id + '\t' + query);
  if (it == entries_.end()) return std::nullopt;
  ++hits_;
  return it->second.literals;
}

void LiteralCache::store(const std::string& path, const std::string& query, const std::vector<std::string>& literals) {
  if (file_.empty() || !writable(path) || !writable(query)) return;
  for (const auto& l : literals)
    if (!writable(l)) return;
  std::string id = file_identity(path);
  if (id.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  load();
  entries_[id + '\t' + query] = Entry{.path = path, .identity = id, .query = query, .literals = literals};
  dirty_ = true;
}

void LiteralCache::save() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!dirty_ || file_.empty()) return;
  std::string out(kHeader);
  out += '\n';
  for (const auto& [key, e] : entries_) {
    if (file_identity(e.path) != e.identity) continue;  // the file changed or went away since: dropped
    out += "K\t" + e.identity + '\t' + e.query + '\t' + e.path + '\n';
    for (const auto& l : e.literals) out += "L\t" + l + '\n';
  }
  (void)write_atomic(file_, out, Parents::Create);  // a cache that cannot be written costs the next run time
  dirty_ = false;
}

namespace {

// Rows: W identity path (a witness), C directory (the working directory a relative path was asked from),
// R kind driver has-provider library name provider provider-name (a look-up), S path (its search).
constexpr CacheFormat kLookupsFormat{.magic = "mlc-runtime-lookups 2\n", .fields = 0};
// The key line: a second hash of the key, of another basis, inside the file its first hash names (128 bits).
constexpr uint64_t kSecondBasis = 0x9e3779b97f4a7c15ull;
std::string key_line(const std::string& key) { return hex64(fnv1a(key, kSecondBasis)) + '\n'; }

}  // namespace

std::string LiteralCache::lookups_file(const std::string& key) const {
  return dir_ + "/runtime-lookups/" + fnv1a_hex(key) + ".tsv";
}

std::optional<std::vector<RuntimeLookup>> LiteralCache::find_lookups(const std::string& key) const {
  if (dir_.empty() || key.empty()) return std::nullopt;
  // The rows are read as views into the cache's text; while it is there, the witnesses are checked, then the
  // look-ups copied out, each in parallel: libtorch_cpu's process in torch's venv keeps 600 look-ups (2,500
  // strings) that the binding waits for.
  struct Row {
    std::array<std::string_view, 8> fields;
    size_t searched_from = 0, searched_to = 0;  // its S rows, in `searched`
  };
  std::vector<std::pair<std::string_view, std::string_view>> witnesses;  // path, identity
  std::vector<Row> lookups;
  std::vector<std::string_view> searched;
  std::optional<PhaseTime> step(std::in_place, "runtime.kept.read");
  const auto rows = [&](std::span<const std::string_view> f) {
    if (f[0] == "W" && f.size() == 3) {
      witnesses.emplace_back(f[2], f[1]);
      return true;
    }
    if (f[0] == "C" && f.size() == 2) return current_dir() == f[1];  // relative paths asked from elsewhere: a miss
    if (f[0] == "S" && f.size() == 2 && !lookups.empty()) {
      searched.push_back(f[1]);
      lookups.back().searched_to = searched.size();
      return true;
    }
    if (f[0] != "R" || f.size() != 8) return false;  // garbled: recomputed, and rewritten
    Row& r = lookups.emplace_back();
    std::copy(f.begin(), f.end(), r.fields.begin());
    r.searched_from = r.searched_to = searched.size();
    return true;
  };
  std::vector<RuntimeLookup> out;
  const auto witnessed = [&] {
    step.emplace("runtime.kept.witnesses");
    std::atomic<bool> same = true;
    tbb::parallel_for(tbb::blocked_range<size_t>(0, witnesses.size(), 128), [&](const tbb::blocked_range<size_t>& r) {
      for (size_t i = r.begin(); i != r.end() && same.load(std::memory_order_relaxed); ++i)
        if (!has_identity(witnesses[i].first, witnesses[i].second)) same = false;
    });
    if (!same) return false;
    step.emplace("runtime.kept.copy");
    out.resize(lookups.size());
    tbb::parallel_for(tbb::blocked_range<size_t>(0, lookups.size(), 64), [&](const tbb::blocked_range<size_t>& r) {
      for (size_t i = r.begin(); i != r.end(); ++i) {
        const auto& f = lookups[i].fields;
        out[i] = RuntimeLookup{
            .library = std::string(f[4]),
            .kind = f[1] == "dlsym" ? LookupKind::Dlsym : LookupKind::Dlopen,
            .name = std::string(f[5]),
            .provider = f[3] == "1" ? std::optional<std::string>(f[6]) : std::nullopt,
            .provider_name = std::string(f[7]),
            .searched = std::vector<std::string>(searched.begin() + static_cast<ptrdiff_t>(lookups[i].searched_from),
                                                 searched.begin() + static_cast<ptrdiff_t>(lookups[i].searched_to)),
            .driver = f[2] == "1"};
      }
    });
    return true;
  };
  if (!read_cache_file(lookups_file(key), kLookupsFormat, key_line(key), rows, witnessed)) return std::nullopt;
  return out;
}

void LiteralCache::store_lookups(const std::string& key,
                                 const std::vector<std::pair<std::string, std::string>>& witnesses,
                                 const std::string& cwd, const std::vector<RuntimeLookup>& lookups) const {
  if (dir_.empty() || key.empty()) return;
  // A field holding a tab or a newline cannot be kept: nothing is written, and the next run looks up again.
  CacheWriter out(kLookupsFormat, key_line(key));
  if (!cwd.empty() && !out.add(std::array<std::string_view, 2>{"C", cwd})) return;
  for (const auto& [path, identity] : witnesses)
    if (!out.add(std::array<std::string_view, 3>{"W", identity, path})) return;
  for (const auto& r : lookups) {
    const std::array<std::string_view, 8> row{"R",
                                              r.kind == LookupKind::Dlsym ? "dlsym" : "dlopen",
                                              r.driver ? "1" : "0",
                                              r.provider ? "1" : "0",
                                              r.library,
                                              r.name,
                                              r.provider ? std::string_view(*r.provider) : "",
                                              r.provider_name};
    if (!out.add(row)) return;
    for (const auto& s : r.searched)
      if (!out.add(std::array<std::string_view, 2>{"S", s})) return;
  }
  out.write(lookups_file(key));
}

}  // namespace mlc::literals

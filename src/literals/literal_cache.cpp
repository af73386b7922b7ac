// The literals found in a file by a search, kept between runs (runtime_lookup.h, LiteralCache).
#include <sstream>

#include "common/file_io.h"
#include "common/hash.h"
#include "common/paths.h"
#include "literals/lookups.h"

namespace mlc::literals {
namespace {

constexpr std::string_view kHeader = "mlc-runtime-literals 1";

bool writable(std::string_view s) { return s.find_first_of("\t\n") == std::string_view::npos; }

std::string fmt_lookup_line(const RuntimeLookup& r) {
  return std::string("R\t") + (r.kind == LookupKind::Dlsym ? "dlsym" : "dlopen") + '\t' + (r.driver ? "1" : "0") +
         '\t' + (r.provider ? "1" : "0") + '\t' + r.library + '\t' + r.name + '\t' + r.provider.value_or("") + '\t' +
         r.provider_name + '\n';
}

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

constexpr std::string_view kLookupsHeader = "mlc-runtime-lookups 1";
// A second hash of the key, of another basis, inside the file its first hash names: 128 bits in all.
constexpr uint64_t kSecondBasis = 0x9e3779b97f4a7c15ull;

std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t at = 0;
  for (size_t tab; (tab = line.find('\t', at)) != line.npos; at = tab + 1) out.push_back(line.substr(at, tab - at));
  out.push_back(line.substr(at));
  return out;
}

}  // namespace

std::string LiteralCache::lookups_file(const std::string& key) const {
  return dir_ + "/runtime-lookups/" + fnv1a_hex(key) + ".tsv";
}

std::optional<std::vector<RuntimeLookup>> LiteralCache::find_lookups(const std::string& key) const {
  if (dir_.empty() || key.empty()) return std::nullopt;
  auto text = read_text(lookups_file(key));
  if (!text) return std::nullopt;
  std::istringstream in(*text);
  std::string line;
  if (!std::getline(in, line) || line != kLookupsHeader) return std::nullopt;
  if (!std::getline(in, line) || line != "H\t" + hex64(fnv1a(key, kSecondBasis))) return std::nullopt;
  std::vector<RuntimeLookup> out;
  bool complete = false;
  while (std::getline(in, line)) {
    auto f = fields(line);
    if (f[0] == "W" && f.size() == 3) {
      // Each witness as it was: anything else (a file changed, a file created where one was missing) is a miss.
      if (file_identity(std::string(f[2])) != f[1]) return std::nullopt;
    } else if (f[0] == "C" && f.size() == 2) {
      if (current_dir() != f[1]) return std::nullopt;  // relative paths were asked from another directory
    } else if (f[0] == "R" && f.size() == 8) {
      RuntimeLookup r;
      r.kind = f[1] == "dlsym" ? LookupKind::Dlsym : LookupKind::Dlopen;
      r.driver = f[2] == "1";
      r.library = f[4];
      r.name = f[5];
      if (f[3] == "1") r.provider = std::string(f[6]);
      r.provider_name = f[7];
      out.push_back(std::move(r));
    } else if (f[0] == "S" && f.size() == 2 && !out.empty()) {
      out.back().searched.emplace_back(f[1]);
    } else if (f[0] == "E" && f.size() == 1) {
      complete = true;
    } else {
      return std::nullopt;  // garbled: recomputed, and rewritten
    }
  }
  if (!complete) return std::nullopt;  // cut short
  return out;
}

void LiteralCache::store_lookups(const std::string& key,
                                 const std::vector<std::pair<std::string, std::string>>& witnesses,
                                 const std::string& cwd, const std::vector<RuntimeLookup>& lookups) const {
  if (dir_.empty() || key.empty() || !writable(cwd)) return;
  std::string out(kLookupsHeader);
  out += "\nH\t" + hex64(fnv1a(key, kSecondBasis)) + '\n';
  if (!cwd.empty()) out += "C\t" + cwd + '\n';
  for (const auto& [path, identity] : witnesses) {
    if (!writable(path)) return;
    out += "W\t" + identity + '\t' + path + '\n';
  }
  for (const auto& r : lookups) {
    if (!writable(r.library) || !writable(r.name) || !writable(r.provider.value_or("")) || !writable(r.provider_name))
      return;
    out += fmt_lookup_line(r);
    for (const auto& s : r.searched) {
      if (!writable(s)) return;
      out += "S\t" + s + '\n';
    }
  }
  out += "E\n";
  (void)write_atomic(lookups_file(key), out, Parents::Create);  // one that cannot be written is computed again
}

}  // namespace mlc::literals

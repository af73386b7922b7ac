// The literals found in a file by a search, kept between runs (runtime_lookup.h, LiteralCache).
#include <sstream>

#include "common/file_io.h"
#include "common/paths.h"
#include "literals/lookups.h"

namespace mlc::literals {
namespace {

constexpr std::string_view kHeader = "mlc-runtime-literals 1";

bool writable(std::string_view s) { return s.find_first_of("\t\n") == std::string_view::npos; }

}  // namespace

LiteralCache::LiteralCache(std::string cache_dir)
    : file_(cache_dir.empty() ? "" : cache_dir + "/runtime-literals.tsv") {}

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

}  // namespace mlc::literals

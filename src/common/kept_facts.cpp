#include "common/kept_facts.h"

#include <algorithm>
#include <array>

#include "common/cache_file.h"
#include "common/paths.h"

namespace mlc {

KeptFacts::KeptFacts(std::string file, std::string question)
    : file_(std::move(file)), magic_(std::move(question) + " 1\n") {}

void KeptFacts::load() {
  if (loaded_ || file_.empty()) return;
  loaded_ = true;
  CacheText text(file_);
  std::vector<Row> rows;
  bool sorted = true;
  // Identity, answer, path; a file garbled or of another format answers nothing (and is rewritten).
  if (!text.opened() || !read_cache_text(text.text(), CacheFormat{.magic = magic_, .fields = 3}, "", [&](auto f) {
        if (!rows.empty() && f[2] <= rows.back().path) sorted = false;
        rows.push_back({.path = f[2], .identity = f[0], .answer = f[1]});
        return true;
      }))
    return;
  // save() writes the rows sorted, each path once; a file otherwise (written by hand) is read as a map would
  // read it: the last row of a path stands.
  if (!sorted) {
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.path < b.path; });
    std::vector<Row> last;
    for (const Row& r : rows) {
      if (!last.empty() && last.back().path == r.path) last.back() = r;
      else last.push_back(r);
    }
    rows = std::move(last);
  }
  text_ = std::move(text);
  read_ = std::move(rows);
}

const KeptFacts::Row* KeptFacts::read_row(std::string_view path) const {
  auto it =
      std::lower_bound(read_.begin(), read_.end(), path, [](const Row& r, std::string_view p) { return r.path < p; });
  return it != read_.end() && it->path == path ? &*it : nullptr;
}

std::optional<std::string> KeptFacts::find(const std::string& path, const std::string& identity) {
  if (file_.empty() || identity.empty()) return std::nullopt;
  std::lock_guard lock(mutex_);
  load();
  if (auto it = kept_.find(path); it != kept_.end())
    return it->second.first == identity ? std::optional<std::string>(it->second.second) : std::nullopt;
  const Row* row = read_row(path);
  if (!row || row->identity != identity) return std::nullopt;
  return std::string(row->answer);
}

void KeptFacts::keep(const std::string& path, const std::string& identity, int64_t changed_at, std::string answer) {
  if (file_.empty() || identity.empty() || changed_at >= settled_since()) return;
  if (answer.find_first_of("\t\n") != std::string::npos || path.find_first_of("\t\n") != std::string::npos) return;
  std::lock_guard lock(mutex_);
  load();
  if (auto it = kept_.find(path); it != kept_.end()) {
    if (it->second.first == identity && it->second.second == answer) return;
  } else if (const Row* row = read_row(path); row && row->identity == identity && row->answer == answer) {
    return;
  }
  kept_[path] = {identity, std::move(answer)};
  changed_ = true;
}

void KeptFacts::save() {
  std::lock_guard lock(mutex_);
  if (!changed_) return;
  CacheWriter out(CacheFormat{.magic = magic_, .fields = 3}, "");
  // The rows read and the rows kept, merged by path; a kept row replaces the read one.
  auto read = read_.begin();
  auto add = [&](std::string_view path, std::string_view identity, std::string_view answer) {
    out.add(std::array<std::string_view, 3>{identity, answer, path});
  };
  for (const auto& [path, row] : kept_) {
    for (; read != read_.end() && read->path < path; ++read) add(read->path, read->identity, read->answer);
    if (read != read_.end() && read->path == path) ++read;
    add(path, row.first, row.second);
  }
  for (; read != read_.end(); ++read) add(read->path, read->identity, read->answer);
  out.write(file_);
  changed_ = false;
}

}  // namespace mlc

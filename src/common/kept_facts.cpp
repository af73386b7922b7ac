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
  std::map<std::string, std::pair<std::string, std::string>> read;
  // Identity, answer, path; a file garbled or of another format answers nothing (and is rewritten).
  if (read_cache_file(file_, CacheFormat{.magic = magic_, .fields = 3}, "", [&](auto f) {
        read[std::string(f[2])] = {std::string(f[0]), std::string(f[1])};
        return true;
      }))
    rows_ = std::move(read);
}

std::optional<std::string> KeptFacts::find(const std::string& path, const std::string& identity) {
  if (file_.empty() || identity.empty()) return std::nullopt;
  std::lock_guard lock(mutex_);
  load();
  auto it = rows_.find(path);
  if (it == rows_.end() || it->second.first != identity) return std::nullopt;
  return it->second.second;
}

void KeptFacts::keep(const std::string& path, const std::string& identity, int64_t changed_at, std::string answer) {
  if (file_.empty() || identity.empty() || changed_at >= settled_since()) return;
  if (answer.find_first_of("\t\n") != std::string::npos || path.find_first_of("\t\n") != std::string::npos) return;
  std::lock_guard lock(mutex_);
  load();
  auto& row = rows_[path];
  if (row.first == identity && row.second == answer) return;
  row = {identity, std::move(answer)};
  changed_ = true;
}

void KeptFacts::save() {
  std::lock_guard lock(mutex_);
  if (!changed_) return;
  CacheWriter out(CacheFormat{.magic = magic_, .fields = 3}, "");
  for (const auto& [path, row] : rows_) out.add(std::array<std::string_view, 3>{row.first, row.second, path});
  out.write(file_);
  changed_ = false;
}

}  // namespace mlc

#include "common/kept_facts.h"

#include <algorithm>
#include <array>
#include <string>

#include "common/cache_file.h"
#include "common/paths.h"
#include "common/text.h"

namespace mlc {

KeptFacts::KeptFacts(std::string file, std::string question)
    : file_(std::move(file)), magic_(std::move(question) + " 1\n") {}

namespace {

// identity TAB answer TAB path, exactly two tabs.
std::optional<std::array<std::string_view, 3>> split_row(std::string_view line) {
  const size_t first = line.find('\t');
  if (first == std::string_view::npos) return std::nullopt;
  const size_t second = line.find('\t', first + 1);
  if (second == std::string_view::npos || line.find('\t', second + 1) != std::string_view::npos) return std::nullopt;
  return std::array<std::string_view, 3>{line.substr(0, first), line.substr(first + 1, second - first - 1),
                                         line.substr(second + 1)};
}

}  // namespace

void KeptFacts::load() {
  if (loaded_ || file_.empty()) return;
  loaded_ = true;
  CacheText text(file_);
  // A file garbled, cut short or of another format answers nothing (and is rewritten).
  const std::string_view all = text.text();
  if (!text.opened() || !all.starts_with(magic_) || !all.ends_with('\n')) return;
  const size_t end_line = all.rfind('\n', all.size() - 2) + 1;  // the magic's newline at least
  if (end_line < magic_.size() || !all.substr(end_line).starts_with("end\t")) return;
  const std::string_view rows = all.substr(magic_.size(), end_line - magic_.size());
  const size_t lines = count_char(rows, '\n'), tabs = count_char(rows, '\t');
  const std::string_view count = all.substr(end_line + 4, all.size() - 1 - (end_line + 4));  // its newline left
  if (count != std::to_string(lines) || tabs != 2 * lines) return;
  rows_begin_ = magic_.size();
  rows_end_ = end_line;
  text_ = std::move(text);
}

std::optional<KeptFacts::Row> KeptFacts::read_row(std::string_view path) const {
  const std::string_view rows = text_.text().substr(rows_begin_, rows_end_ - rows_begin_);
  auto row_at = [&](size_t start) -> std::optional<Row> {
    auto f = split_row(rows.substr(start, rows.find('\n', start) - start));
    if (!f) return std::nullopt;
    return Row{.path = (*f)[2], .identity = (*f)[0], .answer = (*f)[1]};
  };
  // The first line whose path is not before `path`; lo and hi are always the starts of lines (or the end).
  size_t lo = 0, hi = rows.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const size_t start = mid == 0 ? 0 : rows.rfind('\n', mid - 1) + 1;  // npos + 1 is 0
    auto row = row_at(start);
    if (!row) return std::nullopt;
    if (row->path < path) lo = rows.find('\n', start) + 1;
    else hi = start;
  }
  if (lo >= rows.size()) return std::nullopt;
  auto row = row_at(lo);
  if (!row || row->path != path) return std::nullopt;
  return row;
}

// Every row of the file, sorted by path, each path once: as save() wrote them, or, from a file written otherwise
// (by hand), as a map would read it: the last row of a path stands.
std::vector<KeptFacts::Row> KeptFacts::read_rows() const {
  std::vector<Row> rows;
  bool sorted = true;
  // load() checked the file's counts; read_cache_text reads its rows. A row of the wrong shape the counts did not
  // catch makes the file garbled, as load() would have judged it whole: it is rewritten from this run's rows.
  if (!read_cache_text(text_.text(), CacheFormat{.magic = magic_, .fields = 3}, "", [&](auto f) {
        if (!rows.empty() && f[2] <= rows.back().path) sorted = false;
        rows.push_back({.path = f[2], .identity = f[0], .answer = f[1]});
        return true;
      }))
    rows.clear();
  if (!sorted) {
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.path < b.path; });
    std::vector<Row> last;
    for (const Row& r : rows) {
      if (!last.empty() && last.back().path == r.path) last.back() = r;
      else last.push_back(r);
    }
    rows = std::move(last);
  }
  return rows;
}

std::optional<std::string> KeptFacts::find(const std::string& path, const std::string& identity) {
  if (file_.empty() || identity.empty()) return std::nullopt;
  std::lock_guard lock(mutex_);
  load();
  if (auto it = kept_.find(path); it != kept_.end())
    return it->second.first == identity ? std::optional<std::string>(it->second.second) : std::nullopt;
  const auto row = read_row(path);
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
  } else if (const auto row = read_row(path); row && row->identity == identity && row->answer == answer) {
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
  const std::vector<Row> rows = read_rows();
  auto read = rows.begin();
  auto add = [&](std::string_view path, std::string_view identity, std::string_view answer) {
    out.add(std::array<std::string_view, 3>{identity, answer, path});
  };
  for (const auto& [path, row] : kept_) {
    for (; read != rows.end() && read->path < path; ++read) add(read->path, read->identity, read->answer);
    if (read != rows.end() && read->path == path) ++read;
    add(path, row.first, row.second);
  }
  for (; read != rows.end(); ++read) add(read->path, read->identity, read->answer);
  out.write(file_);
  changed_ = false;
}

}  // namespace mlc

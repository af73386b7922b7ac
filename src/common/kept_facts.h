// Facts about files and directories kept between runs, each by the identity of what it is about
// (stat_identity: device, inode, size, mtime, ctime), in one cache file per question: an answer stands while
// its subject's identity does, and a subject changed in the last two seconds is answered but not kept (a file
// system stamps times at a coarse granularity, settled_since). The questions: which directories hold
// dist-info (environment/ownership.cpp), how Python hosts a file (python/hosting.h), which glibc a libc.so.6
// is (tools/loader_facts.cpp): each answered from a whole file or directory on every run before.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/cache_file.h"

namespace mlc {

class KeptFacts {
 public:
  // `file`: the cache file ("" keeps nothing); `question`: the format's name, its first line ("name 1").
  KeptFacts(std::string file, std::string question);
  KeptFacts(const KeptFacts&) = delete;
  KeptFacts& operator=(const KeptFacts&) = delete;
  // The answer kept for `path` when its identity is still `identity` (read from the file once, on first use).
  std::optional<std::string> find(const std::string& path, const std::string& identity);
  // Keeps `answer` (no tab or newline) for `path` as `identity`, unless the subject changed at or after
  // settled_since() (`changed_at`: paths.h's changed_at of its stat).
  void keep(const std::string& path, const std::string& identity, int64_t changed_at, std::string answer);
  // Writes the file atomically when something was kept (the rows read and not contradicted, with the new).
  void save();

 private:
  // A row as the file holds it: views into text_.
  struct Row {
    std::string_view path, identity, answer;
  };
  void load();
  std::optional<Row> read_row(std::string_view path) const;
  std::vector<Row> read_rows() const;
  std::string file_;
  std::string magic_;
  std::mutex mutex_;
  bool loaded_ = false;
  bool changed_ = false;
  // The file's rows are looked up where they lie, by halves over its lines (save() writes them sorted by path): a
  // run asks about a few of a venv's thousand, and parsing every row into a table was 0.6 ms of a warm run. The
  // file is checked whole first by its counts alone: its magic, its end line's row count, as many lines and twice
  // as many tabs. What this run keeps is beside the rows and wins.
  CacheText text_;
  size_t rows_begin_ = 0, rows_end_ = 0;  // the rows' bytes in text_ (offsets: the text moves with text_)
  std::map<std::string, std::pair<std::string, std::string>, std::less<>> kept_;  // path -> identity, answer
};

}  // namespace mlc

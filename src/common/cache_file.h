// One format for the caches of our indexes (dpkg's owners, a site directory's owners): a magic line,
// the key lines (what the cache must have been written for, to answer now), one tab-separated row per
// entry, and "end\tN" closing it with the row count, so a file cut short or garbled is never read as
// an answer. A cache is an optimisation only: one that cannot be read is ignored, one that cannot be
// written costs the next run time.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace mlc {

// A cache file's text, held as long as its reader needs it: from 64 KB on, the file mapped where the page cache
// holds it (MAP_POPULATE: its pages at once), not copied into memory of the process's own; a smaller one read.
// On a virtual machine the first touch of a page is what a read costs: the 175 KB of a venv's kept run-time
// look-ups took 0.7 ms read into a new buffer and 0.05 ms mapped (a fresh process, 2 cores). Our caches are
// replaced by a rename, never rewritten in place, so a mapping holds one version of a file.
class CacheText {
 public:
  CacheText() = default;
  // Empty, and false from opened(), when the file cannot be opened or read.
  explicit CacheText(const std::string& path);
  CacheText(CacheText&& other) noexcept;
  CacheText& operator=(CacheText&& other) noexcept;
  CacheText(const CacheText&) = delete;
  CacheText& operator=(const CacheText&) = delete;
  ~CacheText();
  bool opened() const { return opened_; }
  std::string_view text() const { return text_; }

 private:
  void release();
  bool opened_ = false;
  void* mapped_ = nullptr;
  size_t mapped_size_ = 0;
  std::string read_;
  std::string_view text_;
};

struct CacheFormat {
  std::string_view magic;  // the first line, newline included: the format and its version
  size_t fields = 0;       // tab-separated fields per row; 0: rows of kinds with their own counts
};

// Reads a cache written for `key`: calls row(fields) for each row in order; false (the cache does not
// answer) when the file is missing, another format, for another key, cut short, a row has another
// number of fields, or row() refuses one (returns false, as it must for a row of a kind it does not know or
// of the wrong count when the format's `fields` is 0).
// `then`, when given, is called once every row was read and accepted, while the views row() kept are still
// valid (they point into the file's text, which goes when this returns); its answer is the function's.
bool read_cache_file(const std::string& path, const CacheFormat& format, std::string_view key,
                     const std::function<bool(std::span<const std::string_view>)>& row,
                     const std::function<bool()>& then = nullptr);
// The same over a cache's text already read: the fields are views into `text`.
bool read_cache_text(std::string_view text, const CacheFormat& format, std::string_view key,
                     const std::function<bool(std::span<const std::string_view>)>& row);

// Builds the text of a cache, then writes it atomically (creating the cache directory).
class CacheWriter {
 public:
  CacheWriter(const CacheFormat& format, std::string_view key);
  // Adds a row; false (nothing added) when a field holds a tab or a newline, which no row can carry.
  bool add(std::span<const std::string_view> fields);
  void write(const std::string& path);

 private:
  std::string text_;
  size_t rows_ = 0;
};

}  // namespace mlc

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

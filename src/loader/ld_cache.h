// The loader's system-wide knowledge: the binary /etc/ld.so.cache that ldconfig writes (both the
// "ld.so-1.7.0" and the "glibc-ld.so.cache1.1" layouts) and, where no cache exists (a bare sysroot),
// the ld.so.conf directory list with its include directives, from which ldconfig would build one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace mlc::loader {

// One entry. Its strings are views into the bytes of the cache it was read from (LdCache::bytes), or into
// what the reader of ld.so.conf keeps (SystemCache::names): an entry lives no longer than its cache.
struct CacheEntry {
  std::string_view soname;
  std::string_view path;
  int32_t flags = 0;   // FLAG_ELF_LIBC6 | architecture bits
  uint64_t hwcap = 0;  // non-zero for hwcaps entries (legacy bits, or a glibc-hwcaps subdirectory's)
  // The glibc-hwcaps subdirectory an entry is for ("x86-64-v3"), from the cache's extension section
  // (dl-cache.h DL_CACHE_HWCAP_EXTENSION); "" for the others.
  std::string_view glibc_hwcaps = {};
};

// A cache file as read: its bytes, and the entries (in file order) that point into them. The strings are
// not copied (a cache of 1,000 entries made 2,000 strings, 0.9 ms of every run here).
struct LdCache {
  std::shared_ptr<const std::string> bytes;
  std::vector<CacheEntry> entries;
};

Result<LdCache> read_ld_cache(const std::string& file);

// The cache flags the loader accepts for an object of this machine and class (glibc's
// _dl_cache_check_flags); 0 means "any libc6 entry".
int32_t cache_flags_for(uint16_t machine, bool is_64);
bool cache_flags_match(int32_t entry_flags, uint16_t machine, bool is_64);

// Directories named by ld.so.conf, in order, following "include" globs (relative to the including
// file's directory). Paths are returned as written (absolute, without sysroot); the files themselves
// are read inside `sysroot`.
Result<std::vector<std::string>> read_ld_conf(const std::string& file, const std::string& sysroot);

}  // namespace mlc::loader

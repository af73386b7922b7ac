// Parses ld.so.cache the way glibc's dl-cache.c reads it: entries in file order, string offsets
// relative to the new-format header, every offset bounds-checked against the file.
#include "loader/ld_cache.h"

#include <glob.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "common/file_io.h"

namespace mlc::loader {
namespace {

constexpr char kOldMagic[] = "ld.so-1.7.0";
constexpr char kNewMagic[] = "glibc-ld.so.cache";
constexpr char kNewVersion[] = "1.1";
constexpr size_t kOldHeader = 16;  // magic[11] padded to 12, uint32 nlibs
constexpr size_t kOldEntry = 12;   // int32 flags, uint32 key, uint32 value
constexpr size_t kNewHeader = 48;  // magic+version[20], nlibs, len_strings, flags[4], ext offset, unused[3]
constexpr size_t kNewEntry = 24;   // int32 flags, uint32 key, value, osversion, uint64 hwcap

template <typename T>
T load(const std::string& buf, size_t off) {
  T v;
  std::memcpy(&v, buf.data() + off, sizeof v);
  return v;
}

// The NUL-terminated string at `off` (a view into `buf`); false when it runs past the end.
bool string_at(const std::string& buf, size_t off, std::string_view& out) {
  if (off >= buf.size()) return false;
  size_t end = buf.find('\0', off);
  if (end == std::string::npos) return false;
  out = std::string_view(buf).substr(off, end - off);
  return true;
}

// The names of the glibc-hwcaps subdirectories the cache's extension directory lists
// (dl-cache.h cache_extension_load: magic, count, sections; cache_extension_tag_glibc_hwcaps is an
// array of string offsets from the start of the file). None when anything is out of bounds.
std::vector<std::string_view> glibc_hwcaps_names(const std::string& buf, size_t new_start) {
  constexpr uint32_t kExtensionMagic = static_cast<uint32_t>(-358342284);
  constexpr uint32_t kTagGlibcHwcaps = 1;
  std::vector<std::string_view> names;
  const uint64_t ext = load<uint32_t>(buf, new_start + 32);
  if (ext == 0 || ext % 4 != 0 || ext + 8 > buf.size() || load<uint32_t>(buf, ext) != kExtensionMagic) return names;
  const uint64_t count = load<uint32_t>(buf, ext + 4);
  if (ext + 8 + count * 16 > buf.size()) return names;
  for (uint64_t i = 0; i < count; ++i) {
    const size_t section = ext + 8 + i * 16;
    const uint64_t offset = load<uint32_t>(buf, section + 8), size = load<uint32_t>(buf, section + 12);
    if (load<uint32_t>(buf, section) != kTagGlibcHwcaps || offset % 4 != 0 || offset + size > buf.size()) continue;
    for (uint64_t at = offset; at + 4 <= offset + size; at += 4) {
      std::string_view name;
      if (!string_at(buf, load<uint32_t>(buf, at), name)) return {};
      names.push_back(name);
    }
  }
  return names;
}

}  // namespace

int32_t cache_flags_for(uint16_t machine, bool is_64) {
  constexpr int32_t kLibc6 = 0x0003;
  switch (machine) {
    case 62: return is_64 ? (kLibc6 | 0x0300) : (kLibc6 | 0x0800);  // EM_X86_64: lib64 / x32
    case 3: return kLibc6;                                          // EM_386
    case 183: return kLibc6 | 0x0a00;                               // EM_AARCH64
    case 21: return kLibc6 | 0x0500;                                // EM_PPC64
    case 243: return kLibc6 | (is_64 ? 0x0f00 : 0x1000);            // EM_RISCV lp64d / ilp32d
    default: return 0;
  }
}

bool cache_flags_match(int32_t entry_flags, uint16_t machine, bool is_64) {
  int32_t want = cache_flags_for(machine, is_64);
  if (want == 0) return (entry_flags & 0xff) == 0x03;
  if (machine == 3) return entry_flags == 0x0003 || entry_flags == 0x0001;
  return entry_flags == want;
}

Result<LdCache> read_ld_cache(const std::string& file) {
  auto bytes = std::make_shared<std::string>();
  const std::string& buf = *bytes;
  // A directory opens and reads nothing: not a cache, as an empty file is not.
  if (!read_text_into(file, *bytes) && errno != EISDIR) return InputError{file, "cannot open ld.so.cache"};
  LdCache out{.bytes = bytes, .entries = {}};
  std::vector<CacheEntry>& entries = out.entries;

  size_t new_start = std::string::npos;
  if (buf.compare(0, sizeof kNewMagic - 1, kNewMagic) == 0) {
    new_start = 0;
  } else if (buf.compare(0, sizeof kOldMagic - 1, kOldMagic) == 0) {
    if (buf.size() < kOldHeader) return InputError{file, "truncated ld.so.cache"};
    uint32_t nlibs = load<uint32_t>(buf, 12);
    size_t old_end = kOldHeader + size_t{nlibs} * kOldEntry;
    if (nlibs > buf.size() / kOldEntry || old_end > buf.size()) return InputError{file, "truncated ld.so.cache"};
    size_t aligned = (old_end + 7) & ~size_t{7};
    if (aligned + sizeof kNewMagic - 1 <= buf.size() && buf.compare(aligned, sizeof kNewMagic - 1, kNewMagic) == 0) {
      new_start = aligned;
    } else {
      // Old layout only: string offsets are relative to the end of the entry table.
      for (uint32_t i = 0; i < nlibs; ++i) {
        size_t e = kOldHeader + size_t{i} * kOldEntry;
        CacheEntry entry;
        entry.flags = load<int32_t>(buf, e);
        if (!string_at(buf, old_end + load<uint32_t>(buf, e + 4), entry.soname) ||
            !string_at(buf, old_end + load<uint32_t>(buf, e + 8), entry.path)) {
          return InputError{file, "corrupt ld.so.cache (string offset out of range)"};
        }
        entries.push_back(entry);
      }
      return out;
    }
  } else {
    return InputError{file, "not an ld.so.cache file"};
  }

  if (buf.size() < new_start + kNewHeader) return InputError{file, "truncated ld.so.cache"};
  if (buf.compare(new_start + sizeof kNewMagic - 1, 3, kNewVersion) != 0) {
    return InputError{file, "unsupported ld.so.cache version"};
  }
  uint32_t nlibs = load<uint32_t>(buf, new_start + 20);
  if (nlibs > (buf.size() - new_start - kNewHeader) / kNewEntry) return InputError{file, "truncated ld.so.cache"};
  const std::vector<std::string_view> hwcaps_names = glibc_hwcaps_names(buf, new_start);
  entries.reserve(nlibs);
  for (uint32_t i = 0; i < nlibs; ++i) {
    size_t e = new_start + kNewHeader + size_t{i} * kNewEntry;
    CacheEntry entry;
    entry.flags = load<int32_t>(buf, e);
    entry.hwcap = load<uint64_t>(buf, e + 16);
    // dl-cache.h dl_cache_hwcap_extension: only DL_CACHE_HWCAP_EXTENSION (bit 62) set in the upper
    // half, the ISA level bits aside; the lower half indexes the glibc-hwcaps names.
    if (((entry.hwcap >> 32) & ~uint64_t{0x3ff}) == (uint64_t{1} << 30) &&
        (entry.hwcap & 0xffffffff) < hwcaps_names.size())
      entry.glibc_hwcaps = hwcaps_names[entry.hwcap & 0xffffffff];
    if (!string_at(buf, new_start + load<uint32_t>(buf, e + 4), entry.soname) ||
        !string_at(buf, new_start + load<uint32_t>(buf, e + 8), entry.path)) {
      return InputError{file, "corrupt ld.so.cache (string offset out of range)"};
    }
    entries.push_back(entry);
  }
  return out;
}

namespace {

void read_conf_into(const std::string& file, const std::string& sysroot, int depth, std::set<std::string>& seen,
                    std::vector<std::string>& dirs) {
  if (depth > 16 || !seen.insert(file).second) return;  // include loops
  std::ifstream in(sysroot + file);
  std::string line;
  std::string base = file.substr(0, file.rfind('/') + 1);
  while (std::getline(in, line)) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::istringstream words(line);
    std::string word;
    if (!(words >> word)) continue;
    if (word == "include") {
      while (words >> word) {
        std::string pattern = word[0] == '/' ? word : base + word;
        glob_t g{};
        if (glob((sysroot + pattern).c_str(), 0, nullptr, &g) == 0) {
          for (size_t i = 0; i < g.gl_pathc; ++i) {
            read_conf_into(std::string(g.gl_pathv[i]).substr(sysroot.size()), sysroot, depth + 1, seen, dirs);
          }
        }
        globfree(&g);
      }
    } else if (word == "hwcap") {
      continue;  // obsolete directive, ignored by ldconfig since glibc 2.37; harmless to skip
    } else {
      // ldconfig also accepts several directories on a line, separated by blanks, ':' or ','.
      std::string rest = word;
      std::string more;
      while (words >> more) rest += " " + more;
      for (char& c : rest)
        if (c == ':' || c == ',' || c == '\t') c = ' ';
      std::istringstream parts(rest);
      while (parts >> word) {
        if (auto eq = word.find('='); eq != std::string::npos) word.erase(eq);  // old "dir=TYPE" syntax
        while (word.size() > 1 && word.back() == '/') word.pop_back();
        dirs.push_back(word);
      }
    }
  }
}

}  // namespace

Result<std::vector<std::string>> read_ld_conf(const std::string& file, const std::string& sysroot) {
  std::ifstream probe(sysroot + file);
  if (!probe) return InputError{sysroot + file, "cannot open ld.so.conf"};
  std::vector<std::string> dirs;
  std::set<std::string> seen;
  read_conf_into(file, sysroot, 0, seen, dirs);
  return dirs;
}

}  // namespace mlc::loader

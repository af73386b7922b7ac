// String literals of an ELF object (what a dlopen("libx.so.4") or dlsym(h, "xInit") call passes):
// the NUL-terminated printable runs of its read-only data sections, read in the mapping the object
// was read from (native or libelf: any byte order works); never a crash on a malformed file.
#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

#include "elf/elf_object.h"
#include "elf/readers.h"

namespace mlc::elf {

namespace {

bool printable(char c) { return static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f; }

// A large section, once read, leaves the process's resident set: the mapping is private and read
// only, so the pages come back from the file if touched again, and the loader's mappings are kept
// until exit (a scan of CUDA's 155 MB of .rodata otherwise stayed resident: 171 MB peak on its tree).
// Each 1 MiB range is released when scanned, so the peak stays a few MiB whatever the section's size.
void release(std::string_view bytes) {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t from = (reinterpret_cast<uintptr_t>(bytes.data()) + page - 1) & ~(page - 1);
  uintptr_t to = (reinterpret_cast<uintptr_t>(bytes.data()) + bytes.size()) & ~(page - 1);
  if (to > from) madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
}

// Every literal of one section: from each NUL (found with memchr) back over the printable bytes before
// it. A literal ends at its NUL, and a run cut by any other byte begins after that byte (what precedes
// is data).
void every_literal(const char* bytes, const char* end, size_t min_length,
                   const std::function<void(std::string_view)>& add) {
  for (const char* from = bytes; from < end;) {
    const auto* nul = static_cast<const char*>(std::memchr(from, 0, static_cast<size_t>(end - from)));
    if (!nul) break;
    const char* begin = nul;
    while (begin > from && printable(begin[-1])) --begin;
    if (static_cast<size_t>(nul - begin) >= min_length) add(std::string_view(begin, static_cast<size_t>(nul - begin)));
    from = nul + 1;
  }
}

// The first occurrence of `needle` in [at, limit), or nullptr: memchr for its first byte, then the
// rest compared. Over .rodata this is ~10x faster than glibc's memmem for ".so"
// (0.6 ms against 7 ms over libtorch_cpu's 9.6 MB, measured on this machine).
const char* find_text(const char* at, const char* limit, std::string_view needle) {
  if (needle.empty() || limit - at < static_cast<ptrdiff_t>(needle.size())) return needle.empty() ? at : nullptr;
  const char* last = limit - needle.size();  // the last place an occurrence can start
  while (at <= last) {
    const auto* c = static_cast<const char*>(std::memchr(at, needle[0], static_cast<size_t>(last - at) + 1));
    if (!c) return nullptr;
    if (std::memcmp(c + 1, needle.data() + 1, needle.size() - 1) == 0) return c;
    at = c + 1;
  }
  return nullptr;
}

// A section [bytes, end), which must end at a NUL, and the range [at, stop) of it one scan covers.
struct ScanRange {
  const char* bytes;
  const char* end;
  const char* at;
  const char* stop;
};

// The literals holding `needle` whose first occurrence lies in [at, stop): each occurrence (find_text)
// widened to the printable run around it within the section [bytes, end), which must end at a NUL.
// A literal is told once, at its first occurrence, so adjacent ranges never tell one twice. The same
// literals every_literal would give, with that text in them.
void literals_containing(ScanRange range, size_t min_length, std::string_view needle,
                         std::vector<std::string_view>& out) {
  auto [bytes, end, at, stop] = range;
  while (at < stop) {
    // Only occurrences starting before `stop` are this range's: the search ends there.
    const char* limit = std::min(end, stop + needle.size() - 1);
    const char* hit = find_text(at, limit, needle);
    if (!hit) break;
    const char* nul = hit;
    while (nul < end && printable(*nul)) ++nul;
    if (nul == end || *nul != '\0' || nul < hit + needle.size()) {  // not one printable run ending at a NUL
      at = hit + 1;
      continue;
    }
    const char* begin = hit;
    while (begin > bytes && printable(begin[-1])) --begin;
    // An earlier occurrence in the same literal (before this range) already told it.
    bool first = find_text(begin, hit + needle.size() - 1, needle) == nullptr;
    if (first && static_cast<size_t>(nul - begin) >= min_length)
      out.emplace_back(begin, static_cast<size_t>(nul - begin));
    at = nul + 1;
  }
}

// The same over a whole section, in 1 MiB ranges scanned in parallel for a large one (libtorch_cpu's
// .rodata is 9.6 MB: the scan was most of this pass), concatenated in order.
void literals_containing(const char* bytes, const char* end, size_t min_length, std::string_view needle,
                         const std::function<void(std::string_view)>& add) {
  constexpr size_t kRange = size_t{1} << 20;
  const size_t size = static_cast<size_t>(end - bytes);
  const size_t ranges = (size + kRange - 1) / kRange;
  std::vector<std::vector<std::string_view>> found(ranges);
  auto scan = [&](size_t r) {
    const char* from = bytes + r * kRange;
    literals_containing({.bytes = bytes, .end = end, .at = from, .stop = std::min(end, from + kRange)}, min_length,
                        needle, found[r]);
    if (ranges > 1) release({from, static_cast<size_t>(std::min(end, from + kRange) - from)});
  };
  if (ranges > 1) tbb::parallel_for(size_t{0}, ranges, scan);
  else if (ranges == 1) scan(0);
  for (const auto& list : found)
    for (auto literal : list) add(literal);
}

// The literals that begin with `needle` and start in [at, stop): an occurrence is a literal's start
// when the byte before it is not printable (or it opens the section), and the printable run from it
// ends at a NUL. The same literals every_literal would give, beginning with that text.
void literals_starting(ScanRange range, size_t min_length, std::string_view needle,
                       std::vector<std::string_view>& out) {
  auto [bytes, end, at, stop] = range;
  while (at < stop) {
    const char* limit = std::min(end, stop + needle.size() - 1);
    const char* hit = find_text(at, limit, needle);
    if (!hit) break;
    const char* nul = hit;
    while (nul < end && printable(*nul)) ++nul;
    if ((hit == bytes || !printable(hit[-1])) && nul < end && *nul == '\0' && nul >= hit + needle.size() &&
        static_cast<size_t>(nul - hit) >= min_length)
      out.emplace_back(hit, static_cast<size_t>(nul - hit));
    // No literal starts inside the printable run just walked (each byte there follows a printable one).
    at = std::max(hit + 1, nul);
  }
}

// Several texts at once: the needles that another needle begins are dropped (a literal starting with
// "cuda" starts with "cu"), each range is searched for the rest, and a literal found twice is told once.
void literals_starting(const char* bytes, const char* end, size_t min_length, std::vector<std::string> needles,
                       const std::function<void(std::string_view)>& add) {
  std::sort(needles.begin(), needles.end());
  std::vector<std::string> kept;
  for (auto& n : needles)
    if (!n.empty() && (kept.empty() || n.rfind(kept.back(), 0) != 0)) kept.push_back(std::move(n));
  constexpr size_t kRange = size_t{1} << 20;
  const size_t size = static_cast<size_t>(end - bytes);
  const size_t ranges = (size + kRange - 1) / kRange;
  std::vector<std::vector<std::string_view>> found(ranges);
  auto scan = [&](size_t r) {
    const char* from = bytes + r * kRange;
    for (const auto& needle : kept)
      literals_starting({.bytes = bytes, .end = end, .at = from, .stop = std::min(end, from + kRange)}, min_length,
                        needle, found[r]);
    if (kept.size() > 1) {
      std::sort(found[r].begin(), found[r].end(), [](auto a, auto b) { return a.data() < b.data(); });
      found[r].erase(std::unique(found[r].begin(), found[r].end(), [](auto a, auto b) { return a.data() == b.data(); }),
                     found[r].end());
    }
    if (ranges > 1) release({from, static_cast<size_t>(std::min(end, from + kRange) - from)});
  };
  if (ranges > 1) tbb::parallel_for(size_t{0}, ranges, scan);
  else if (ranges == 1) scan(0);
  for (const auto& list : found)
    for (auto literal : list) add(literal);
}

// Where literals live: .rodata and its split parts (.rodata.str1.1 in relocatable objects, .rodata1),
// allocated, read-only, not code. Never .lrodata or .ldata (x86-64's large-model data), .nv_fatbin
// (device code), .eh_frame and the like: hundreds of MB in CUDA's libraries, and no C literal there.
bool holds_literals(const detail::RawSection& s) {
  return s.type == SHT_PROGBITS && !(s.flags & SHF_WRITE) && !(s.flags & SHF_EXECINSTR) && (s.flags & SHF_ALLOC) &&
         s.name.rfind(".rodata", 0) == 0;
}

}  // namespace

Result<std::vector<std::string>> read_string_literals(const ElfObject& object, const LiteralSearch& search) {
  if (!object.native && !object.handle)
    return InputError{object.path, "internal: the object's sections are no longer open"};
  std::vector<std::string> out;
  auto add = [&](std::string_view literal) {
    if (!search.keep || search.keep(literal)) out.emplace_back(literal);
  };
  for (const auto& section : object.native ? detail::native_sections(object) : detail::libelf_sections(object)) {
    if (!holds_literals(section) || section.bytes.empty()) continue;
    if (object.native) detail::read_in_order(section.bytes);  // the scan goes through all of it
    const char* bytes = section.bytes.data();
    const char* end = bytes + section.bytes.size();
    if (!search.starting.empty()) {
      literals_starting(bytes, end, search.min_length, search.starting, add);
    } else if (!search.containing.empty()) {
      literals_containing(bytes, end, search.min_length, search.containing, add);
    } else {
      every_literal(bytes, end, search.min_length, add);
    }
    if (section.bytes.size() >= (size_t{1} << 20)) release(section.bytes);  // what was kept is copied out
  }
  return out;
}

Result<std::vector<std::string>> read_string_literals(const std::string& path, size_t min_length,
                                                      const std::function<bool(std::string_view)>& keep,
                                                      std::string_view containing) {
  auto object = read_object(path, ReadOptions{.symbols = false});
  if (!object) return object.error();
  return read_string_literals(
      object.value(),
      LiteralSearch{.min_length = min_length, .keep = keep, .containing = std::string(containing), .starting = {}});
}

}  // namespace mlc::elf

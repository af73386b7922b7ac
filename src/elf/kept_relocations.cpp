#include "elf/kept_relocations.h"

#include <charconv>
#include <span>
#include <vector>

#include "common/cache_file.h"
#include "common/hash.h"
#include "common/paths.h"
#include "common/text.h"

namespace mlc::elf {
namespace {

// Rows: "named\t0|1" (has_relocation_info), then "relocated", "copy" and "tls", each with its count and its
// indexes, space-separated.
constexpr CacheFormat kFormat{.magic = "mlc-relocations 1\n", .fields = 0};

std::string joined(const std::vector<uint32_t>& indexes) {
  std::string out;
  out.reserve(indexes.size() * 6);
  for (uint32_t i : indexes) {
    if (!out.empty()) out += ' ';
    out += std::to_string(i);
  }
  return out;
}

// A row's indexes: exactly `count` of them, each below `limit`; `sorted`: strictly increasing, as the reader
// writes relocated_symbols and copy_symbols.
bool parse(std::span<const std::string_view> f, size_t limit, bool sorted, std::vector<uint32_t>& out) {
  if (f.size() != 3) return false;
  size_t count = 0;
  if (!parse_number(f[1], count) || count > limit) return false;
  out.clear();
  out.reserve(count);
  const char* p = f[2].data();
  const char* stop = p + f[2].size();
  while (p < stop) {
    uint32_t v = 0;
    auto [next, err] = std::from_chars(p, stop, v);
    if (err != std::errc() || v >= limit || (sorted && !out.empty() && v <= out.back())) return false;
    out.push_back(v);
    if (next == stop) break;
    if (*next != ' ' || next + 1 == stop) return false;
    p = next + 1;
  }
  return out.size() == count;
}

}  // namespace

KeptRelocations::KeptRelocations(std::string cache_dir) : dir_(std::move(cache_dir)) {}

// Only a file read natively, its tables read, named by a path a cache line can hold.
bool KeptRelocations::keeps(const ElfObject& object) const {
  return !dir_.empty() && !program_identity().empty() && !object.identity.empty() && object.tables_read &&
         object.path.find_first_of("\t\n") == std::string::npos;
}

std::string KeptRelocations::file_of(const ElfObject& object) const {
  return dir_ + "/relocations/" + fnv1a_hex(object.path) + ".tsv";
}

std::string KeptRelocations::key_of(const ElfObject& object) const {
  return program_identity() + '\t' + object.identity + '\t' + object.path + '\n';
}

bool KeptRelocations::find(ElfObject& object) const {
  if (!keeps(object)) return false;
  const size_t limit = object.dynsym_count;
  bool named = false;
  std::vector<uint32_t> relocated, copy, tls;
  int seen = 0;  // the rows, in their order
  const bool read = read_cache_file(file_of(object), kFormat, key_of(object), [&](auto f) {
    switch (seen++) {
      case 0:
        if (f.size() != 2 || f[0] != "named" || (f[1] != "0" && f[1] != "1")) return false;
        named = f[1] == "1";
        return true;
      case 1: return f[0] == "relocated" && parse(f, limit, true, relocated);
      case 2: return f[0] == "copy" && parse(f, limit, true, copy);
      case 3: return f[0] == "tls" && parse(f, limit, false, tls);
      default: return false;
    }
  });
  if (!read || seen != 4) return false;
  if (!named && !(relocated.empty() && copy.empty() && tls.empty())) return false;
  object.has_relocation_info = named;
  object.relocated_symbols = std::move(relocated);
  object.copy_symbols = std::move(copy);
  object.static_tls_symbols = std::move(tls);
  return true;
}

void KeptRelocations::store(const ElfObject& object) const {
  if (!keeps(object) || object.changed_at >= settled_since()) return;
  // Never a cache directory made where a run would make none (under a --build-dir that does not exist).
  if (!is_dir(parent_dir(dir_))) return;
  CacheWriter out(kFormat, key_of(object));
  const std::string relocated = joined(object.relocated_symbols), copy = joined(object.copy_symbols),
                    tls = joined(object.static_tls_symbols);
  const std::string counts[] = {std::to_string(object.relocated_symbols.size()),
                                std::to_string(object.copy_symbols.size()),
                                std::to_string(object.static_tls_symbols.size())};
  out.add(std::vector<std::string_view>{"named", object.has_relocation_info ? "1" : "0"});
  out.add(std::vector<std::string_view>{"relocated", counts[0], relocated});
  out.add(std::vector<std::string_view>{"copy", counts[1], copy});
  out.add(std::vector<std::string_view>{"tls", counts[2], tls});
  out.write(file_of(object));
}

}  // namespace mlc::elf

// The relocations that bind more than a name (relocation_checks.h): copy relocations of the main
// program (dl-lookup.c, dl-protected.h) and initial-exec TLS in the static TLS surplus (dl-tls.c,
// dl-reloc.c). x86-64 only, where the relocation types are read.
#include "loader/relocation_checks.h"

#include <algorithm>
#include <set>

#include "common/paths.h"

namespace mlc::loader {
namespace {

using elf::Symbol;

const elf::VersionRequirement* version_of(const elf::ElfObject& o, const Symbol& s) {
  return o.has_versym && s.version_index >= 2 ? o.requirement(s.version_index) : nullptr;
}

// sysdeps/x86_64/nptl/tls.h: TCB_ALIGNMENT; dl-tls.c: LIBC_IE_TLS, OTHER_IE_TLS and the legacy
// part that makes the default surplus 1664 bytes.
constexpr uint64_t kTcbAlignment = 64;
constexpr uint64_t kLibcIeTls = 144, kOtherIeTls = 144, kLegacyTls = 144;

uint64_t round_up(uint64_t value, uint64_t align) { return align ? (value + align - 1) / align * align : value; }

// The static TLS block as the process starts: what the objects loaded at start use
// (_dl_determine_tlsoffset, TLS_TCB_AT_TP) and the free bytes after it, the surplus included.
struct StaticTls {
  uint64_t max_align = kTcbAlignment;
  uint64_t free = 0;
  std::set<int> placed;  // objects whose block has its place
};

StaticTls at_start(const Process& p, uint64_t surplus) {
  StaticTls tls;
  uint64_t offset = 0, freetop = 0, freebottom = 0;
  for (size_t i = 0; i < p.objects.size(); ++i) {
    const auto& o = p.objects[i];
    const auto& h = o.elf.header;
    if (!o.at_start || h.tls_blocksize == 0) continue;
    const uint64_t align = std::max<uint64_t>(h.tls_align, 1);
    const uint64_t firstbyte = (0 - h.tls_firstbyte_offset) & (align - 1);
    tls.max_align = std::max(tls.max_align, align);
    tls.placed.insert(static_cast<int>(i));
    if (freebottom - freetop >= h.tls_blocksize) {
      uint64_t off = round_up(freetop + h.tls_blocksize - firstbyte, align) + firstbyte;
      if (off <= freebottom) {
        freetop = off;
        continue;
      }
    }
    uint64_t off = round_up(offset + h.tls_blocksize - firstbyte, align) + firstbyte;
    if (off > offset + h.tls_blocksize + (freebottom - freetop)) {
      freetop = offset;
      freebottom = off - h.tls_blocksize;
    }
    offset = off;
  }
  tls.free = round_up(offset + surplus, tls.max_align) - offset;
  return tls;
}

// dl-reloc.c _dl_try_allocate_static_tls: the block goes at the top of what is free, aligned.
bool place(StaticTls& tls, const elf::LoadHeader& h) {
  const uint64_t align = std::max<uint64_t>(h.tls_align, 1);
  const uint64_t size = h.tls_blocksize + h.tls_firstbyte_offset;
  if (align > tls.max_align || tls.free < size) return false;
  const uint64_t n = (tls.free - size) / align;
  tls.free -= tls.free - n * align - h.tls_firstbyte_offset;
  return true;
}

// One initial-exec reference: the object whose block it reaches (its own for index 0), -1 when the
// look-up finds nothing (an undefined symbol, reported as one).
int resolve(const Process& p, int object, uint32_t index) {
  if (index == 0) return object;
  const auto& o = p.objects[object].elf;
  const Symbol s = o.dynamic_symbol(index);
  // A local symbol, or one that binds within its object, is the object's own.
  if (s.binding == elf::Binding::Local ||
      (!s.is_undefined() && (s.visibility == elf::Visibility::Hidden || s.visibility == elf::Visibility::Internal)))
    return object;
  return find_definition(p, object, o.name_of(s), version_of(o, s)).object;
}

// The reference's symbol name, for the report ("" for index 0: the object's own block).
std::string symbol_of(const Process& p, int object, uint32_t index) {
  if (index == 0) return "";
  const auto& o = p.objects[object].elf;
  return std::string(o.name_of(o.dynamic_symbol(index)));
}

// resolve(), answered from `providers` when it holds the reference (a kept answer naming an object the
// process does not have is no answer).
int provider_of(const Process& p, int object, uint32_t index, TlsProviders& providers) {
  const int objects = static_cast<int>(p.objects.size());
  if (auto it = providers.find({object, index}); it != providers.end() && it->second >= -1 && it->second < objects)
    return it->second;
  const int provider = resolve(p, object, index);
  providers[{object, index}] = provider;
  return provider;
}

// The objects whose initial-exec relocations glibc applies, in its order: what the process starts
// with, then each dlopen's new objects. dl-open.c relocates those in the reverse of their sorted
// initialization order (_dl_sort_maps: an object before its dependencies), so dependencies first: a
// depth-first walk of the DT_NEEDED entries from the dlopen'ed object, each object after what it
// needs. Of two blocks the surplus cannot both hold, the one reached from deeper in the graph is
// placed first and the other is the one glibc names.
std::vector<int> relocation_order(const Process& p) {
  std::vector<int> order;
  for (size_t i = 0; i < p.objects.size(); ++i)
    if (p.objects[i].at_start) order.push_back(static_cast<int>(i));
  std::vector<int> roots;
  for (const auto& o : p.objects)
    if (!o.at_start && o.root >= 0 && std::find(roots.begin(), roots.end(), o.root) == roots.end())
      roots.push_back(o.root);
  std::vector<char> seen(p.objects.size(), 0);
  for (int root : roots) {
    // Post-order, iteratively: (object, next DT_NEEDED entry to follow).
    std::vector<std::pair<int, size_t>> stack;
    auto visit = [&](int x) {
      if (x < 0 || seen[static_cast<size_t>(x)] || p.objects[static_cast<size_t>(x)].at_start ||
          p.objects[static_cast<size_t>(x)].root != root)
        return;
      seen[static_cast<size_t>(x)] = 1;
      stack.emplace_back(x, 0);
    };
    visit(root);
    while (!stack.empty()) {
      auto& [x, next] = stack.back();
      const auto& needed = p.objects[static_cast<size_t>(x)].needed;
      if (next < needed.size()) {
        visit(needed[next++].object);
        continue;
      }
      order.push_back(x);
      stack.pop_back();
    }
    // Anything of this dlopen the walk did not reach (none, in a well-formed process): last loaded first.
    for (size_t i = p.objects.size(); i-- > 0;)
      if (!seen[i] && !p.objects[i].at_start && p.objects[i].root == root) order.push_back(static_cast<int>(i));
  }
  return order;
}

// Whether every block the dlopens reach fits, with this surplus; the first that does not, else -1
// (and the reference that reached it).
struct Outcome {
  int object = -1, provider = -1;
  std::string symbol;
  bool mismatch = false;  // a non-TLS definition in an object without a TLS block
};
Outcome simulate(const Process& p, uint64_t surplus, TlsProviders& providers) {
  StaticTls tls = at_start(p, surplus);
  for (int x : relocation_order(p)) {
    for (uint32_t index : p.objects[x].elf.static_tls_symbols) {
      const int provider = provider_of(p, x, index, providers);
      if (provider < 0) continue;
      const auto& h = p.objects[provider].elf.header;
      if (h.tls_blocksize == 0 || h.tls_align == 0) return {x, provider, symbol_of(p, x, index), true};
      if (tls.placed.count(provider)) continue;
      if (!place(tls, h)) return {x, provider, symbol_of(p, x, index), false};
      tls.placed.insert(provider);
    }
  }
  return {};
}

uint64_t surplus_of(const LoaderEnv& env, uint64_t optional) {
  const uint64_t nns = std::max<uint64_t>(env.nns, 1);
  return (nns - 1) * kLibcIeTls + nns * kOtherIeTls + optional + kLegacyTls;
}

}  // namespace

void check_copy_relocations(const Process& p, const std::vector<int>& checked, BindOutcome& out) {
  const int main = p.main;
  if (main < 0 || std::find(checked.begin(), checked.end(), main) == checked.end()) return;
  const auto& o = p.objects[main].elf;
  for (uint32_t index : o.copy_symbols) {
    const Symbol s = o.dynamic_symbol(index);
    const std::string_view name = o.name_of(s);
    const elf::VersionRequirement* version = version_of(o, s);
    Definition def = find_definition(p, main, name, version, main);
    if (def.aborted_in >= 0) {
      out.failures.push_back(version_without_versym(p, main, def.aborted_in, name, version ? version->name : ""));
      continue;
    }
    if (def.object < 0) {
      UnresolvedRef u;
      u.object = main;
      u.symbol_index = index;
      u.name = name;
      if (version) {
        u.version = version->name;
        u.version_file = version->file;
      }
      out.unresolved.push_back(std::move(u));
      continue;
    }
    const auto& provider = p.objects[def.object];
    const Symbol d = provider.elf.dynamic_symbol(def.symbol);
    // GNU_PROPERTY_1_NEEDED_INDIRECT_EXTERN_ACCESS (bit 0): the object's protected data cannot be copied.
    if (d.visibility == elf::Visibility::Protected && (provider.elf.header.gnu_1_needed & 1)) {
      out.failures.push_back({.kind = FailureKind::ProtectedCopy,
                              .object = main,
                              .file = provider.path,
                              .symbol = std::string(name),
                              .facts = {.by = base_name(p.objects[main].path),
                                        .provider = base_name(provider.path),
                                        .symbol = std::string(name)}});
    }
  }
}

void check_static_tls(const Process& p, const LoaderEnv& env, BindOutcome& out, TlsProviders& providers) {
  if (p.objects.empty() || p.objects.front().elf.machine != 62 || !p.objects.front().elf.is_64) return;
  Outcome first = simulate(p, surplus_of(env, env.optional_static_tls), providers);
  if (first.object < 0) return;
  const auto& provider = p.objects[first.provider];
  const std::string by = base_name(p.objects[first.object].path);
  const std::string what = first.symbol.empty() ? "its own thread-local variables" : first.symbol;
  if (first.mismatch) {
    out.failures.push_back({.kind = FailureKind::TlsMismatch,
                            .object = first.object,
                            .file = provider.path,
                            .symbol = first.symbol,
                            .facts = {.by = by, .provider = base_name(provider.path), .symbol = what}});
    return;
  }
  // The smallest glibc.rtld.optional_static_tls that lets every block in (rounded up to 512 bytes).
  uint64_t low = env.optional_static_tls, high = std::max<uint64_t>(low, 512) * 2;
  while (simulate(p, surplus_of(env, high), providers).object >= 0 && high < (uint64_t{1} << 30)) high *= 2;
  while (low + 1 < high) {
    uint64_t mid = low + (high - low) / 2;
    (simulate(p, surplus_of(env, mid), providers).object >= 0 ? low : high) = mid;
  }
  const uint64_t tunable = round_up(high, 512);
  out.failures.push_back({.kind = FailureKind::StaticTls,
                          .object = first.object,
                          .file = provider.path,
                          .symbol = first.symbol,
                          .facts = {.by = by,
                                    .provider = base_name(provider.path),
                                    .tls_bytes = provider.elf.header.tls_blocksize,
                                    .tunable = tunable}});
}

}  // namespace mlc::loader

#include "loader/kept_bindings.h"

#include <span>

#include "common/cache_file.h"
#include "common/hash.h"
#include "common/paths.h"
#include "common/text.h"

namespace mlc::loader {
namespace {

// Rows: "U object symbol miss near,near..." (an unresolved reference, in the order bind() reports them),
// "V object provider weak version file" (a version its provider lacks) and "T object symbol provider" (where an
// initial-exec TLS reference binds).
constexpr CacheFormat kFormat{.magic = "mlc-bindings 2\n", .fields = 0};
// The key line: a second hash of the key, of another basis, inside the file its first hash names (128 bits).
constexpr uint64_t kSecondBasis = 0x9e3779b97f4a7c15ull;

// Each part of the key with its length, so that no two processes' parts run together into one key.
void add(std::string& key, std::string_view part) {
  key += std::to_string(part.size());
  key += ':';
  key += part;
}
void add(std::string& key, long long number) { add(key, std::to_string(number)); }

}  // namespace

KeptBindings::KeptBindings(std::string cache_dir) : dir_(std::move(cache_dir)) {}

std::string KeptBindings::key(const Process& p, const std::vector<int>& checked) const {
  if (dir_.empty() || program_identity().empty()) return "";
  std::string key;
  add(key, program_identity());
  add(key, static_cast<long long>(p.objects.size()));
  for (const auto& o : p.objects) {
    if (o.elf.identity.empty()) return "";
    add(key, o.elf.identity);
    add(key, o.realname);
    add(key, static_cast<long long>(o.names.size()));
    for (const auto& n : o.names) add(key, n);
    add(key, o.global ? 1 : 0);
    add(key, o.root);
    add(key, static_cast<long long>(o.needed.size()));
    for (const auto& n : o.needed) {
      add(key, n.name);
      add(key, n.expanded);
      add(key, n.object);
    }
  }
  add(key, static_cast<long long>(checked.size()));
  for (int i : checked) add(key, i);
  return key;
}

std::string KeptBindings::file_of(const std::string& key) const {
  return dir_ + "/bindings/" + fnv1a_hex(key) + ".tsv";
}

std::optional<KeptLookups> KeptBindings::find(const std::string& key) const {
  if (dir_.empty() || key.empty()) return std::nullopt;
  KeptLookups out;
  const bool read = read_cache_file(file_of(key), kFormat, hex64(fnv1a(key, kSecondBasis)) + '\n', [&](auto f) {
    if (f[0] == "U" && f.size() == 5) {
      KeptUnresolved u;
      int miss = 0;
      if (!parse_number(f[1], u.object) || !parse_number(f[2], u.symbol) || !parse_number(f[3], miss)) return false;
      if (miss < static_cast<int>(Miss::NoDefinition) || miss > static_cast<int>(Miss::LibraryMissing)) return false;
      u.miss = static_cast<Miss>(miss);
      for (std::string_view rest = f[4]; !rest.empty();) {
        const size_t comma = rest.find(',');
        int near = 0;
        if (!parse_number(rest.substr(0, comma), near)) return false;
        u.near.push_back(near);
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        if (comma != std::string_view::npos && rest.empty()) return false;
      }
      out.unresolved.push_back(std::move(u));
      return true;
    }
    if (f[0] == "V" && f.size() == 6) {
      MissingVersion m;
      if (!parse_number(f[1], m.object) || !parse_number(f[2], m.provider) || (f[3] != "0" && f[3] != "1"))
        return false;
      m.weak = f[3] == "1";
      m.version = std::string(f[4]);
      m.file = std::string(f[5]);
      out.missing_versions.push_back(std::move(m));
      return true;
    }
    if (f[0] == "T" && f.size() == 4) {
      KeptTls t;
      if (!parse_number(f[1], t.object) || !parse_number(f[2], t.symbol) || !parse_number(f[3], t.provider))
        return false;
      out.tls.push_back(t);
      return true;
    }
    return false;  // garbled: bound again, and rewritten
  });
  if (!read) return std::nullopt;
  return out;
}

void KeptBindings::store(const std::string& key, const Process& p, const KeptLookups& lookups) const {
  if (dir_.empty() || key.empty()) return;
  const int64_t settled = settled_since();
  for (const auto& o : p.objects)
    if (o.elf.changed_at >= settled) return;
  // Never a cache directory made where a run would make none (under a --build-dir that does not exist).
  if (!is_dir(parent_dir(dir_))) return;
  CacheWriter out(kFormat, hex64(fnv1a(key, kSecondBasis)) + '\n');
  for (const auto& u : lookups.unresolved) {
    std::string near;
    for (int n : u.near) near += (near.empty() ? "" : ",") + std::to_string(n);
    const std::string fields[] = {std::to_string(u.object), std::to_string(u.symbol),
                                  std::to_string(static_cast<int>(u.miss)), near};
    if (!out.add(std::vector<std::string_view>{"U", fields[0], fields[1], fields[2], fields[3]})) return;
  }
  for (const auto& m : lookups.missing_versions) {
    const std::string fields[] = {std::to_string(m.object), std::to_string(m.provider)};
    // A version or file name holding a tab or a newline cannot be kept: nothing is.
    if (!out.add(std::vector<std::string_view>{"V", fields[0], fields[1], m.weak ? "1" : "0", m.version, m.file}))
      return;
  }
  for (const auto& t : lookups.tls) {
    const std::string fields[] = {std::to_string(t.object), std::to_string(t.symbol), std::to_string(t.provider)};
    out.add(std::vector<std::string_view>{"T", fields[0], fields[1], fields[2]});
  }
  out.write(file_of(key));
}

}  // namespace mlc::loader

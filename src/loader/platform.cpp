// The platform's facts the loader expands and searches with (loader.h): the vocabulary's names, the
// system directories, $LIB and $PLATFORM, dynamic string tokens (dl-load.c _dl_dst_substitute), the
// search path lists' separators, and the hwcaps subdirectories (dl-hwcaps.c).
#include <algorithm>
#include <cctype>
#include <string_view>
#include <utility>

#include "loader/loader.h"

namespace mlc::loader {

const char* to_string(FailureKind kind) {
  switch (kind) {
    case FailureKind::BadCandidate: return "bad-candidate";
    case FailureKind::NoOpen: return "noopen";
    case FailureKind::StaticTls: return "static-tls";
    case FailureKind::TlsMismatch: return "tls-mismatch";
    case FailureKind::VersionFileUnmatched: return "version-file-unmatched";
    case FailureKind::VersionWithoutVersym: return "version-without-versym";
    case FailureKind::ProtectedCopy: return "protected-copy";
    case FailureKind::IsaLevel: return "isa-level";
    case FailureKind::ExtensionTag: return "extension-tag";
    case FailureKind::PackageImport: return "package-import";
    case FailureKind::ShadowedModule: return "shadowed-module";
  }
  return "bad-candidate";
}

std::string multiarch_for(uint16_t machine, bool is_64) {
  switch (machine) {
    case 62: return is_64 ? "x86_64-linux-gnu" : "x86_64-linux-gnux32";
    case 3: return "i386-linux-gnu";
    case 183: return "aarch64-linux-gnu";
    case 40: return "arm-linux-gnueabihf";
    case 21: return "powerpc64le-linux-gnu";
    case 22: return "s390x-linux-gnu";
    case 243: return "riscv64-linux-gnu";
    default: return "";
  }
}

std::vector<std::string> default_dirs_for(uint16_t machine, bool is_64) {
  // Debian's glibc: slibdir and libdir are the multiarch directories, then the generic ones.
  const std::string triplet = multiarch_for(machine, is_64);
  if (triplet.empty()) return {"/lib", "/usr/lib"};
  return {"/lib/" + triplet, "/usr/lib/" + triplet, "/lib", "/usr/lib"};
}

std::string lib_token_for(uint16_t machine, bool is_64) {
  const std::string triplet = multiarch_for(machine, is_64);
  return triplet.empty() ? "lib" : "lib/" + triplet;  // Debian: $LIB = lib/<triplet>
}

std::string platform_token_for(uint16_t machine, bool is_64) {
  switch (machine) {
    case 62: return is_64 ? "x86_64" : "i686";
    case 3: return "i686";
    case 183: return "aarch64";
    case 21: return "power8";
    default: return "";
  }
}

std::optional<std::string> expand_dst(const std::string& element, const std::string& origin, const std::string& lib,
                                      const std::string& platform) {
  // dl-load.c is_dst: "$NAME" or "${NAME}", NAME one of the known tokens and not followed by an
  // identifier character; _dl_dst_substitute copies anything else after '$' as it stands.
  auto is_dst = [&](size_t at, std::string_view name) -> size_t {
    const bool curly = at < element.size() && element[at] == '{';
    const size_t start = at + (curly ? 1 : 0);
    if (element.compare(start, name.size(), name) != 0) return 0;
    const size_t after = start + name.size();
    if (curly) return after < element.size() && element[after] == '}' ? name.size() + 2 : 0;
    if (after < element.size() && (isalnum(static_cast<unsigned char>(element[after])) || element[after] == '_'))
      return 0;
    return name.size();
  };
  std::string out;
  for (size_t i = 0; i < element.size();) {
    if (element[i] != '$') {
      out += element[i++];
      continue;
    }
    const std::pair<std::string_view, const std::string*> tokens[] = {
        {"ORIGIN", &origin}, {"PLATFORM", &platform}, {"LIB", &lib}};
    size_t len = 0;
    const std::string* value = nullptr;
    for (const auto& [name, repl] : tokens)
      if ((len = is_dst(i + 1, name)) != 0) {
        value = repl;
        break;
      }
    if (!value) {
      out += element[i++];  // no token glibc knows: the '$' stays
      continue;
    }
    if (value->empty()) return std::nullopt;  // a known token without a value: the element is dropped
    out += *value;
    i += 1 + len;
  }
  return out;
}

namespace {

std::vector<std::string> split_at(const std::string& list, const char* separators) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t at = list.find_first_of(separators, start);
    out.push_back(list.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) break;
    start = at + 1;
  }
  return out;
}

}  // namespace

std::vector<std::string> split_search_path(const std::string& list) { return split_at(list, ":;"); }

std::vector<std::string> split_rpath(const std::string& list) { return split_at(list, ":"); }

std::vector<std::string> hwcaps_subdirs(uint16_t machine, bool is_64, int x86_isa_level, const std::string& platform,
                                        bool avx512_1, int glibc_minor) {
  std::vector<std::string> out;
  std::vector<std::string> legacy;  // dl-hwcaps.c: the hwcap names (bit order), the platform, then "tls"
  const bool known = glibc_minor > 0;
  if (machine == 62 && is_64) {
    // sysdeps/x86_64/dl-hwcaps-subdirs.c (glibc 2.33 on): the supported levels, best first.
    for (int level = std::min(x86_isa_level, 4); level >= 2 && (!known || glibc_minor >= 33); --level)
      out.push_back("glibc-hwcaps/x86-64-v" + std::to_string(level) + "/");
    // sysdeps/x86/cpu-features.c: dl_hwcap is HWCAP_X86_64, plus HWCAP_X86_AVX512_1 on such Intel
    // CPUs; HWCAP_IMPORTANT keeps both.
    legacy.push_back("x86_64");
    if (avx512_1) legacy.push_back("avx512_1");
  }
  if (!platform.empty()) legacy.push_back(platform);
  legacy.push_back("tls");
  // glibc 2.37 ("elf: Remove legacy hwcaps support"): only the glibc-hwcaps subdirectories are searched.
  if (known && glibc_minor >= 37) legacy.clear();
  // The power set, largest subset first; within a subset the names from the last to the first.
  const size_t n = legacy.size();
  for (size_t subset = (size_t{1} << n); subset-- > 0;) {
    std::string dir;
    for (size_t k = n; k-- > 0;)
      if (subset & (size_t{1} << k)) dir += legacy[k] + "/";
    out.push_back(dir);
  }
  return out;
}

}  // namespace mlc::loader

// The CPU and tunables glibc's loader sees (loader_facts.h), read the way glibc reads them: cpuid and
// xgetbv for what is usable (sysdeps/x86/cpu-features.c), GLIBC_TUNABLES for what is turned off
// (sysdeps/x86/cpu-tunables.c) and for the static TLS surplus (elf/dl-tunables.list).
#include "loader_facts.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "common/file_io.h"
#include "common/kept_facts.h"
#include "common/paths.h"
#include "elf/elf_object.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace mlc::tools {
namespace {

// The features glibc's ISA levels and legacy platforms test, named as glibc.cpu.hwcaps names them.
std::set<std::string> usable_features() {
  std::set<std::string> f;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  auto add = [&](bool on, const char* name) {
    if (on) f.insert(name);
  };
  add(d & (1u << 0), "FPU");
  add(d & (1u << 8), "CX8");
  add(d & (1u << 15), "CMOV");
  add(d & (1u << 23), "MMX");
  add(d & (1u << 24), "FXSR");
  add(d & (1u << 25), "SSE");
  add(d & (1u << 26), "SSE2");
  add(c & (1u << 0), "SSE3");
  add(c & (1u << 9), "SSSE3");
  add(c & (1u << 13), "CMPXCHG16B");
  add(c & (1u << 19), "SSE4_1");
  add(c & (1u << 20), "SSE4_2");
  add(c & (1u << 22), "MOVBE");
  add(c & (1u << 23), "POPCNT");
  // AVX and AVX-512 are usable only when the OS saves their registers (XCR0).
  unsigned long long xcr0 = 0;
  if (c & (1u << 27)) {
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = (static_cast<unsigned long long>(hi) << 32) | lo;
  }
  const bool ymm = (xcr0 & 0x6) == 0x6, zmm = ymm && (xcr0 & 0xe0) == 0xe0;
  add(ymm && (c & (1u << 28)), "AVX");
  add(ymm && (c & (1u << 28)) && (c & (1u << 12)), "FMA");
  add(ymm && (c & (1u << 28)) && (c & (1u << 29)), "F16C");
  if (__get_cpuid(0x80000001, &a, &b, &c, &d)) {
    add(c & (1u << 0), "LAHF64_SAHF64");
    add(c & (1u << 5), "LZCNT");
  }
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    add(b & (1u << 3), "BMI1");
    add(b & (1u << 8), "BMI2");
    add(ymm && (b & (1u << 5)), "AVX2");
    const std::pair<int, const char*> avx512[] = {{16, "AVX512F"},  {17, "AVX512DQ"}, {26, "AVX512PF"},
                                                  {27, "AVX512ER"}, {28, "AVX512CD"}, {30, "AVX512BW"},
                                                  {31, "AVX512VL"}};
    for (const auto& [bit, name] : avx512) add(zmm && (b & (1u << bit)), name);
  }
#endif
  return f;
}

bool intel() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a, b, c, d;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return false;
  return b == 0x756e6547 && d == 0x49656e69 && c == 0x6c65746e;  // "GenuineIntel"
#else
  return false;
#endif
}

// GLIBC_TUNABLES: "name=value:name=value".
std::map<std::string, std::string> tunables(std::string_view text) {
  std::map<std::string, std::string> out;
  while (!text.empty()) {
    size_t colon = text.find(':');
    std::string_view item = text.substr(0, colon);
    if (size_t eq = item.find('='); eq != std::string_view::npos)
      out[std::string(item.substr(0, eq))] = std::string(item.substr(eq + 1));
    if (colon == std::string_view::npos) break;
    text.remove_prefix(colon + 1);
  }
  return out;
}

bool all_of(const std::set<std::string>& f, std::initializer_list<const char*> names) {
  return std::all_of(names.begin(), names.end(), [&](const char* n) { return f.count(n) > 0; });
}

// get-isa-level.h get_isa_level.
int isa_level(const std::set<std::string>& f) {
  int level = 0;
  if (all_of(f, {"CMOV", "CX8", "FPU", "FXSR", "MMX", "SSE", "SSE2"})) {
    level = 1;
    if (all_of(f, {"CMPXCHG16B", "LAHF64_SAHF64", "POPCNT", "SSE3", "SSSE3", "SSE4_1", "SSE4_2"})) {
      level = 2;
      if (all_of(f, {"AVX", "AVX2", "F16C", "FMA", "LZCNT", "MOVBE"})) {
        level = 3;
        if (all_of(f, {"AVX512F", "AVX512BW", "AVX512CD", "AVX512DQ", "AVX512VL"})) level = 4;
      }
    }
  }
  return level;
}

}  // namespace

int cpu_level_number(std::string_view name) {
  if (name == "baseline" || name == "x86-64") return 1;
  if (name.size() == 9 && name.substr(0, 8) == "x86-64-v" && name[8] >= '2' && name[8] <= '4') return name[8] - '0';
  return 0;
}

namespace {

// The N its banner states ("... stable release version 2.N."), searched for in the file mapped, not
// read: libc.so.6 is 2 MB, and a copy of it was a tenth of a single library's check.
int stated_minor(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st;
  void* map = fstat(fd, &st) == 0 && st.st_size > 0
                  ? mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0)
                  : MAP_FAILED;
  close(fd);
  if (map == MAP_FAILED) return 0;
  const std::string_view text(static_cast<const char*>(map), static_cast<size_t>(st.st_size));
  const std::string_view banner = "release version 2.";
  int minor = 0;
  if (size_t at = text.find(banner); at != std::string_view::npos)
    for (size_t i = at + banner.size(); i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i)
      minor = minor * 10 + (text[i] - '0');
  munmap(map, static_cast<size_t>(st.st_size));
  return minor;
}

// libc.so.6's release: the one it states, else the newest GLIBC_2.N node it defines; nullopt when it cannot be read.
std::optional<int> release_minor(const std::string& path) {
  if (int minor = stated_minor(path); minor > 0) return minor;
  auto libc = elf::read_object(path, elf::ReadOptions{.relocations = false, .symbols = true, .lookup_only = true});
  if (!libc) return std::nullopt;
  int newest = 0;
  for (const auto& d : libc->version_definitions) {
    int major = 0, minor = 0, micro = 0;
    if (std::sscanf(std::string(d.name).c_str(), "GLIBC_%d.%d.%d", &major, &minor, &micro) >= 2 && major == 2)
      newest = std::max(newest, minor);
  }
  return newest;
}

// The N of the glibc 2.N the process runs, from the system's libc.so.6 (inside the sysroot): the release it
// states ("... stable release version 2.36.", the banner libc.so.6 prints when run), else the newest GLIBC_2.N
// node it defines (a release that adds no function adds no node); 0 when none is found or read. Kept between
// runs by the file's identity (cache_dir's glibc-release.tsv): the banner is found by reading most of
// libc.so.6's 2 MB (0.4 ms on the device, every run).
int glibc_minor_of(const std::string& sysroot, const std::string& cache_dir) {
  for (const char* dir : {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/lib64",
                          "/usr/lib64", "/lib", "/usr/lib"}) {
    const std::string path = sysroot + dir + "/libc.so.6";
    if (access(path.c_str(), R_OK) != 0) continue;
    struct stat st;
    const std::string identity = stat(path.c_str(), &st) == 0 ? stat_identity(st) : "";
    KeptFacts kept(cache_dir.empty() ? "" : cache_dir + "/glibc-release.tsv", "mlc-glibc-release");
    if (auto known = kept.find(path, identity);
        known && !known->empty() && known->size() < 4 &&
        std::all_of(known->begin(), known->end(), [](char c) { return c >= '0' && c <= '9'; }))
      return std::stoi(*known);
    const std::optional<int> minor = release_minor(path);
    if (!minor) continue;
    kept.keep(path, identity, changed_at(st), std::to_string(*minor));
    kept.save();
    return *minor;
  }
  return 0;
}

}  // namespace

void apply_loader_facts(loader::LoaderEnv& env, std::string_view glibc_tunables, const std::string& cpu_level,
                        const std::string& cache_dir) {
  env.glibc_minor = glibc_minor_of(env.sysroot, cache_dir);
  const auto t = tunables(glibc_tunables);
  auto number = [&](const char* name, uint64_t& into) {
    auto it = t.find(name);
    if (it == t.end()) return;
    try {
      into = std::stoull(it->second, nullptr, 0);
    } catch (...) {
    }
  };
  number("glibc.rtld.optional_static_tls", env.optional_static_tls);
  number("glibc.rtld.nns", env.nns);
#if defined(__x86_64__)
  std::set<std::string> f = usable_features();
  // dl_isa_level_check compares with the CPU's level as found before the tunables apply.
  env.x86_cpu_isa_level = isa_level(f);
  // glibc.cpu.hwcaps=-AVX2,-AVX512F,...: those features are off for the rest (the glibc-hwcaps
  // subdirectories, the legacy platform).
  if (auto it = t.find("glibc.cpu.hwcaps"); it != t.end()) {
    std::string_view list = it->second;
    while (!list.empty()) {
      size_t comma = list.find(',');
      std::string_view item = list.substr(0, comma);
      if (!item.empty() && item[0] == '-') f.erase(std::string(item.substr(1)));
      if (comma == std::string_view::npos) break;
      list.remove_prefix(comma + 1);
    }
  }
  int level = isa_level(f);
  if (int chosen = cpu_level_number(cpu_level); chosen > 0) level = env.x86_cpu_isa_level = chosen;
  env.x86_isa_level = std::max(level, 1);
  // cpu-features.c: an Intel CPU's platform and HWCAP_X86_AVX512_1.
  if (intel() && env.platform_token.empty()) {
    const char* platform = nullptr;
    if (f.count("AVX512CD")) {
      if (f.count("AVX512ER")) {
        if (f.count("AVX512PF")) platform = "xeon_phi";
      } else if (all_of(f, {"AVX512BW", "AVX512DQ", "AVX512VL"})) {
        env.hwcap_avx512_1 = true;
      }
    }
    if (!platform && all_of(f, {"AVX2", "FMA", "BMI1", "BMI2", "LZCNT", "MOVBE", "POPCNT"})) platform = "haswell";
    if (platform) env.platform_token = platform;
  }
#else
  if (int chosen = cpu_level_number(cpu_level); chosen > 0) env.x86_isa_level = env.x86_cpu_isa_level = chosen;
#endif
}

}  // namespace mlc::tools

// What the loader's environment holds beyond paths, as the tools find it for the core (src/ reads no
// environment): the CPU glibc's ld.so sees (its x86-64 ISA level and legacy hwcaps, by cpuid, with
// the glibc.cpu.hwcaps tunable applied) and the glibc.rtld tunables that size static TLS.
#pragma once

#include <string>
#include <string_view>

#include "loader/loader.h"

namespace mlc::tools {

// Sets env's x86_isa_level, platform_token (on Intel: "haswell", "xeon_phi") and hwcap_avx512_1 as
// sysdeps/x86/cpu-features.c and get-isa-level.h compute them on this CPU, after GLIBC_TUNABLES'
// glibc.cpu.hwcaps=-FEATURE,... has turned features off; `cpu_level` ("x86-64-v2".."x86-64-v4",
// "baseline"; "" for this machine's) caps the level. Sets the static TLS tunables
// (glibc.rtld.optional_static_tls, glibc.rtld.nns) from `glibc_tunables`.
// `cache_dir`: where the glibc release read from libc.so.6 is kept between runs ("" for nowhere).
void apply_loader_facts(loader::LoaderEnv& env, std::string_view glibc_tunables, const std::string& cpu_level,
                        const std::string& cache_dir = "");

// "x86-64-v3" -> 3, "baseline" -> 1; 0 for anything else.
int cpu_level_number(std::string_view name);

}  // namespace mlc::tools

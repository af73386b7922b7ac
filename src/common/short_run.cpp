#include "common/short_run.h"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

// The end of the program's data, which the linker defines (end(3)): the break starts above it.
extern "C" char _end;  // NOLINT(bugprone-reserved-identifier)

namespace mlc {

namespace {

[[maybe_unused]] constexpr size_t kPad = size_t{64} << 20, kHuge = size_t{2} << 20;

// Whether a block is the main arena's: between the program's end and the break.
[[maybe_unused]] bool in_main_arena(const void* block) {
  const auto at = reinterpret_cast<uintptr_t>(block);
  return at >= reinterpret_cast<uintptr_t>(&_end) && at < reinterpret_cast<uintptr_t>(sbrk(0));
}

}  // namespace

void prepare_heap() {
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)  // a sanitizer's allocator is not glibc's
  if (const char* tunables = std::getenv("GLIBC_TUNABLES"); tunables && std::strstr(tunables, "glibc.malloc.")) return;
  mallopt(M_TOP_PAD, static_cast<int>(kPad));
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(2 * kPad));
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  // One allocation past what the arena holds (its first extension, at the program's start, is about
  // 132 KiB) grows it by the pad; what that leaves free is the top chunk, up to the break: asked for in
  // huge pages from its first 2 MiB boundary.
  void* probe = std::malloc(1 << 20);
  if (probe && in_main_arena(probe)) {
    const auto from = (reinterpret_cast<uintptr_t>(probe) + kHuge - 1) & ~(kHuge - 1);
    const auto to = reinterpret_cast<uintptr_t>(sbrk(0)) & ~(kHuge - 1);
    if (to > from) madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE);
  }
  std::free(probe);
#endif
}

bool heap_preparation_built() {
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  return true;
#else
  return false;
#endif
}

void end_run(int status) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  std::exit(status);
#else
  _exit(status);
#endif
}

}  // namespace mlc

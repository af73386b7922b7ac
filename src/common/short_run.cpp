#include "common/short_run.h"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <thread>
#include <vector>

#include <tbb/task_arena.h>

// The end of the program's data, which the linker defines (end(3)): the break starts above it.
extern "C" char _end;  // NOLINT(bugprone-reserved-identifier)

namespace mlc {

namespace {

// Whether malloc is glibc's: a sanitizer's build has the sanitizer's allocator.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kGlibcMalloc = false;
#else
constexpr bool kGlibcMalloc = true;
#endif

constexpr size_t kPad = size_t{64} << 20, kHuge = size_t{2} << 20;

// Whether a block is the main arena's: between the program's end and the break.
bool in_main_arena(const void* block) {
  const auto at = reinterpret_cast<uintptr_t>(block);
  return at >= reinterpret_cast<uintptr_t>(&_end) && at < reinterpret_cast<uintptr_t>(sbrk(0));
}

}  // namespace

void prepare_heap() {
  if (!kGlibcMalloc) return;
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
}

bool heap_preparation_built() { return kGlibcMalloc; }

void start_parallel_runtime() {
  if (!kGlibcMalloc) return;
  std::thread([] { (new tbb::task_arena)->initialize(); }).detach();  // never destroyed: see the header
}

void leave_to_exit(std::shared_ptr<const void> kept) {
  if (!kGlibcMalloc) return;  // freed here, as `kept` goes
  static std::mutex mutex;
  static auto* const left = new std::vector<std::shared_ptr<const void>>;  // never destroyed
  std::lock_guard<std::mutex> lock(mutex);
  left->push_back(std::move(kept));
}

void end_run(int status) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  if (!kGlibcMalloc) std::exit(status);  // a sanitizer's build: its leak check runs at exit
  _exit(status);
}

}  // namespace mlc

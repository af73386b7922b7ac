// A short run's process: a heap grown in one large step and backed by transparent huge pages, and an end
// that skips what exit(3) would do after the output is out.
#pragma once

#include <memory>

namespace mlc {

// What glibc.malloc.hugetlb=1 and glibc.malloc.top_pad do for the main arena, asked for from inside: it
// grows 64 MiB at a time (M_TOP_PAD; a single file's run is one extension), is not trimmed back between
// phases, serves blocks up to 32 MiB itself (M_MMAP_THRESHOLD: a growing vector's new block reuses freed
// memory instead of fresh pages of a mapping of its own), and its pages are transparent huge pages where
// the kernel gives them on request (MADV_HUGEPAGE: /sys/kernel/mm/transparent_hugepage/enabled "madvise"
// or "always"). The worker threads' arenas are left as they are: asking for theirs too gained nothing
// more and cost the whole venv's run 29 MB of peak RSS on the device.
//
// Why: a warm run is short and allocates most of its memory once, and every first touch of a 4 KiB page
// is a page fault, which on a virtual machine costs microseconds. Debian's libtorch_cpu (285 objects)
// took 1,500 faults a run on a 2-core VM (docs/benchmarks.md has the times). Nothing is done when
// GLIBC_TUNABLES already tunes malloc: the person's settings stand.
void prepare_heap();

// Whether prepare_heap does anything in this build of the library: false when it was compiled with a
// sanitizer (whose allocator is not glibc's), whatever the caller was compiled with.
bool heap_preparation_built();

// Starts oneTBB on a thread of its own while the main thread reads its command line and context: its
// one-time start (libtbbmalloc loaded, the thread server looked for) and its market, which an arena made
// here brings up. The main thread's first parallel algorithm then finds them made: waited for there, they
// were 0.8 ms of a 7-9 ms run on the device's 16 cores. The arena is never destroyed (the run ends with
// end_run) and never given work, so it takes no worker from the main thread's. Under a sanitizer nothing
// is started: the arena would be a leak at the exit.
void start_parallel_runtime();

// Flushes the standard streams and ends the process with `status` at once (_exit): the static destructors
// and oneTBB's teardown (joining every worker thread) are skipped, as lld skips them (its exitLld), for
// what the kernel frees anyway. Whatever the run writes to a file is written and renamed before this; under
// a sanitizer the process exits normally, so that LeakSanitizer reports.
[[noreturn]] void end_run(int status);

// Keeps `kept` until the process ends, never destroyed: for what a run built that only the exit would free
// after it (a loaded process's objects, freed one string and table at a time, cost a single file's run
// 0.3-0.7 ms). Only a program that ends with end_run may ask. Under a sanitizer it is freed at once, so
// that LeakSanitizer has nothing to report. Safe from any thread.
void leave_to_exit(std::shared_ptr<const void> kept);

}  // namespace mlc

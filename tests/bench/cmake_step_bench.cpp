// The CMake step alone: read_build on one build tree, as musa-linkcheck --build-dir does before it
// traces anything, timed in the process, with its peak RSS (getrusage) and what it read. The source
// is the same against the tree it is compiled in and an older one (tests/bench/cmake_step_bench.sh
// builds it against both), so the two are measured side by side.
//   usage: cmake_step_bench BUILD_DIR [ask]     ("ask": CMake may be run for its File API reply)
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "build/model.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: cmake_step_bench BUILD_DIR [ask]\n");
    return 2;
  }
  mlc::build::BuildOptions options{argv[1], {}, ""};
#ifdef MLC_BENCH_CAN_ASK
  options.ask_build_system = argc > 2 && std::strcmp(argv[2], "ask") == 0;
#endif
  const auto start = std::chrono::steady_clock::now();
  const mlc::build::Model model = mlc::build::read_build(options);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  size_t entries = 0, files = 0;
  for (const auto& l : model.lists) {
    entries += l.entries.size();
    for (const auto& e : l.entries) files += e.files.size();
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("%.1f ms, peak RSS %.1f MB, %zu targets, %zu lists, %zu entries naming %zu files, %zu errors\n", ms,
              static_cast<double>(ru.ru_maxrss) / 1024.0, model.targets.size(), model.lists.size(), entries, files,
              model.errors.size());
  return 0;
}

// The CMake reader and the patcher: the input is a CMakeLists.txt. Its source lists are read as
// the tool reads a build's, and a missing-source fix is planned into the first list found; a patched
// file must still parse, and an input that parsed must still parse after the patch.
#include "backend/backend.h"
#include "build/cmake/build_info.h"
#include "build/model.h"
#include "fuzz_support.h"
#include "stubgen/stubgen.h"
#include "verdict/verdict.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mlc;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  bool parsed = build::cmake::parse_cmake(text, "CMakeLists.txt").ok();
  std::string path = fuzz::write_file("CMakeLists.txt", text);
  build::Model info = build::read_build({"", {path}, backend::musa().cmake_add_library});
  if (info.lists.empty()) return 0;
  Report report;
  LibraryReport lib;
  lib.path = fuzz::scratch_dir() + "/libfuzz.so";
  UnresolvedSymbol u;
  u.symbol = "_Z4funcv";
  u.demangled = "func()";
  verdict::claim(u, EvidencePass::Trace, Classification::MissingSource);
  verdict::resolve(u);
  u.fix = Fix{.kind = FixKind::AddSource,
              .cmake_file = info.lists.front().cmake_file,
              .list = info.lists.front().variable,
              .entry = "fuzz/added.cpp",
              .library = {}};
  lib.unresolved.push_back(u);
  report.libraries.push_back(lib);
  trace::TraceContext ctx;
  ctx.build = &info;
  stubgen::StubOptions options;
  options.out_cpp = fuzz::scratch_dir() + "/unimplemented_functions.cpp";
  options.out_header = fuzz::scratch_dir() + "/unimplemented_functions.h";
  stubgen::Plan plan = stubgen::plan(report, ctx, options);
  for (const auto& edit : plan.cmake_files) {
    if (parsed && !build::cmake::parse_cmake(edit.after, edit.path).ok()) __builtin_trap();  // a patch broke the file
  }
  return 0;
}

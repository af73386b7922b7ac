// The CMake reader, source-list discovery, list choice, porting rules and maps, and the source
// index cache.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "backend/backend.h"
#include "build/cmake/build_info.h"
#include "build/cmake/generator_targets.h"
#include "build/edit.h"
#include "build/model.h"
#include "porting/porting_map.h"
#include "source/source_index.h"
#include "test_support.h"
#include "trace/trace.h"

namespace mlc {
namespace {

using build::cmake::CMakeArg;

TEST(CMakeReader, arguments_comments_and_exact_ranges) {
  std::string text =
      "# a comment ( with parens\n"
      "set(A \"quoted ${X} \\\" arg\" unquoted;list [==[bracket ]] arg]==])  #[[ bracket\n comment ]]\n"
      "FILE(GLOB  S\n"
      "  a/*.cpp   # trailing\n"
      "  b.cu\n"
      ")\n"
      "if((A AND B))\nendif()\n";
  auto cmds = build::cmake::parse_cmake(text, "CMakeLists.txt");
  ASSERT_TRUE(cmds.ok()) << cmds.error().to_line();
  ASSERT_EQ(cmds->size(), 4u);
  const auto& set = (*cmds)[0];
  EXPECT_EQ(set.name, "set");
  ASSERT_EQ(set.args.size(), 4u);
  EXPECT_EQ(set.args[1].kind, CMakeArg::Kind::Quoted);
  EXPECT_EQ(set.args[1].value, "quoted ${X} \\\" arg");
  EXPECT_EQ(text.substr(set.args[1].begin, set.args[1].end - set.args[1].begin), "\"quoted ${X} \\\" arg\"");
  EXPECT_EQ(set.args[3].kind, CMakeArg::Kind::Bracket);
  EXPECT_EQ(set.args[3].value, "bracket ]] arg");
  const auto& file = (*cmds)[1];
  EXPECT_EQ(file.name, "file");  // command names are case-insensitive
  EXPECT_EQ(file.line, 4u);      // the bracket comment above spans two lines
  ASSERT_EQ(file.args.size(), 4u);
  EXPECT_EQ(file.args[2].value, "a/*.cpp");
  EXPECT_EQ(file.args[2].line, 5u);
  EXPECT_EQ(file.args[3].line, 6u);
  EXPECT_EQ(text[file.close_paren], ')');
  EXPECT_EQ((*cmds)[2].args.size(), 3u);  // if((A AND B)): nested parentheses are not arguments
}

TEST(CMakeReader, broken_file_is_an_error_naming_file_and_line) {
  auto unterminated = build::cmake::parse_cmake("set(A \"open\n\nfoo(", "/x/CMakeLists.txt");
  ASSERT_FALSE(unterminated.ok());
  EXPECT_EQ(unterminated.error().to_line(),
            "/x/CMakeLists.txt: broken CMake file: unterminated quoted argument at line 1");
  auto missing_paren = build::cmake::parse_cmake("add_library(x\n  a.cpp\n", "/x/CMakeLists.txt");
  ASSERT_FALSE(missing_paren.ok());
  EXPECT_EQ(missing_paren.error().message,
            "broken CMake file: unterminated command add_library (missing ')') at line 3");
  auto bracket = build::cmake::parse_cmake("#[[ never closed\nset(A)", "f.cmake");
  EXPECT_FALSE(bracket.ok());
}

TEST(SourceLists, glob_entries_expand_on_disk_and_missing_explicit_paths_vanish) {
  std::string dir = test::scratch_dir("lists");
  std::filesystem::create_directories(dir + "/ops/sub");
  test::write_file(dir + "/ops/a.cpp", "");
  test::write_file(dir + "/ops/sub/b.mu", "");
  test::write_file(dir + "/gen.mu", "");
  std::string text =
      "file(GLOB CPP ops/*.cpp ${GEN}/missing.cpp)\n"
      "file(GLOB_RECURSE MU ${GEN}/gen.mu ${GEN}/gen.mu ops/*.mu)\n"
      "set(EXTRA x.cpp)\nlist(APPEND EXTRA y.cpp)\n";
  auto cmds = build::cmake::parse_cmake(text, dir + "/CMakeLists.txt");
  ASSERT_TRUE(cmds.ok());
  std::map<std::string, std::string> vars = {{"GEN", dir}};
  auto lists =
      build::cmake::find_source_lists(cmds.value(), dir + "/CMakeLists.txt", vars, backend::musa().cmake_add_library);
  ASSERT_EQ(lists.size(), 4u);
  EXPECT_EQ(lists[0].variable, "CPP");
  EXPECT_EQ(lists[0].entries[0].files, std::vector<std::string>{dir + "/ops/a.cpp"});
  EXPECT_TRUE(lists[0].entries[1].files.empty());  // an explicit path inside file(GLOB) that does not exist
  EXPECT_EQ(lists[1].entries[2].files, std::vector<std::string>{dir + "/ops/sub/b.mu"});
  EXPECT_EQ(lists[1].duplicates, std::vector<std::string>{"${GEN}/gen.mu"});
  EXPECT_EQ(vars["EXTRA"], "x.cpp;y.cpp");
  EXPECT_EQ(lists[3].command, build::ListCommand::ListEdit);
}

// Found by fuzz_cmake: a pattern holding NUL bytes after an unset variable's "/" made the walk's base
// read as "/", and the reader walked the whole file system. Neither that nor a recursive glob
// rooted at "/" names anything now, and both return at once.
TEST(SourceLists, recursive_glob_never_walks_the_whole_file_system) {
  std::string dir = test::scratch_dir("rootglob");
  test::write_file(dir + "/a.cpp", "");
  using namespace std::string_literals;
  std::string text = "file(GLOB_RECURSE SRCS ${UNSET}/\0\0usr/*.cpp ${UNSET}/*.h a.cpp)\n"s;
  auto cmds = build::cmake::parse_cmake(text, dir + "/CMakeLists.txt");
  ASSERT_TRUE(cmds.ok());
  std::map<std::string, std::string> vars;
  auto lists =
      build::cmake::find_source_lists(cmds.value(), dir + "/CMakeLists.txt", vars, backend::musa().cmake_add_library);
  ASSERT_EQ(lists.size(), 1u);
  ASSERT_EQ(lists[0].entries.size(), 3u);
  EXPECT_TRUE(lists[0].entries[0].files.empty());
  EXPECT_TRUE(lists[0].entries[1].files.empty());
  EXPECT_EQ(lists[0].entries[2].files, std::vector<std::string>{dir + "/a.cpp"});
}

TEST(SourceLists, remove_item_and_filter_exclude_regex_name_what_they_take_out_of_a_glob) {
  std::string dir = test::scratch_dir("exclusions");
  std::filesystem::create_directories(dir + "/src");
  for (const char* f : {"a.cc", "b.cc", "win.cc", "posix.cc"}) test::write_file(dir + "/src/" + f, "");
  std::string text =
      "file(GLOB SRCS src/*.cc)\n"
      "list(REMOVE_ITEM SRCS ${CMAKE_CURRENT_SOURCE_DIR}/src/b.cc)\n"
      "list(FILTER SRCS EXCLUDE REGEX \"/(win|nt)\\\\.cc$\")\n"
      "add_library(core SHARED ${SRCS})\n";
  auto cmds = build::cmake::parse_cmake(text, dir + "/CMakeLists.txt");
  ASSERT_TRUE(cmds.ok());
  std::map<std::string, std::string> vars;
  build::Model info;
  info.lists =
      build::cmake::find_source_lists(cmds.value(), dir + "/CMakeLists.txt", vars, backend::musa().cmake_add_library);
  ASSERT_EQ(info.lists.size(), 4u);
  EXPECT_EQ(vars["SRCS"], dir + "/src/a.cc;" + dir + "/src/posix.cc");
  EXPECT_TRUE(info.lists[2].removal && info.lists[2].filter);
  EXPECT_EQ(info.lists[2].entries.at(0).files, std::vector<std::string>{dir + "/src/win.cc"});
  auto b = build::exclusion_for(info, dir + "/src/b.cc", "core");
  ASSERT_TRUE(b && b->removal);
  EXPECT_EQ(b->removal->line, 2u);
  EXPECT_EQ(b->removal_entry->raw, "${CMAKE_CURRENT_SOURCE_DIR}/src/b.cc");
  auto win = build::exclusion_for(info, dir + "/src/win.cc", "core");
  ASSERT_TRUE(win && win->removal);
  EXPECT_EQ(win->removal->line, 3u);
  auto a = build::exclusion_for(info, dir + "/src/a.cc", "core");  // globbed and kept: no removal
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->removal, nullptr);
}

TEST(SourceLists, missing_file_goes_to_the_list_of_its_kind_spelled_like_its_neighbours) {
  std::string dir = test::scratch_dir("choose");
  std::string gen = dir + "/build/generated";
  std::filesystem::create_directories(gen + "/aten/musa");
  test::write_file(gen + "/aten/musa/Loss.mu", "");
  test::write_file(gen + "/aten/musa/Act.cpp", "");
  std::string text =
      "file(GLOB PORTING_CPP_CSRCS ${GENERATED_PORTING_DIR}/aten/musa/Act.cpp)\n"
      "file(GLOB_RECURSE MU_SRCS ${GENERATED_PORTING_DIR}/aten/musa/Loss.mu)\n";
  build::Model info;
  auto cmds = build::cmake::parse_cmake(text, dir + "/CMakeLists.txt");
  std::map<std::string, std::string> vars = {{"GENERATED_PORTING_DIR", gen}};
  info.lists =
      build::cmake::find_source_lists(cmds.value(), dir + "/CMakeLists.txt", vars, backend::musa().cmake_add_library);
  auto mu = build::choose_list(info, gen + "/aten/musa/cub.mu", "", gen);
  ASSERT_TRUE(mu.has_value());
  EXPECT_EQ(mu->list, "MU_SRCS");
  EXPECT_EQ(mu->entry, "${GENERATED_PORTING_DIR}/aten/musa/cub.mu");
  auto cpp = build::choose_list(info, gen + "/aten/musa/Resize.cpp", "", gen);
  EXPECT_EQ(cpp->list, "PORTING_CPP_CSRCS");
  EXPECT_FALSE(build::choose_list(info, gen + "/x.py", "", gen).has_value());
}

// The editor plans on the parse the build reader made: each CMake file is read and parsed once. With
// the file gone after the read, an entry is still placed, in the text the reader saw; a file the
// reader never read is read by the editor, and one it cannot read is an error naming it.
TEST(BuildEditor, edits_are_planned_on_the_readers_parse) {
  std::string dir = test::scratch_dir("editor");
  test::write_file(dir + "/a.cc", "");
  const std::string text = "set(SRCS\n  a.cc\n)\nadd_library(core SHARED ${SRCS})\n";
  test::write_file(dir + "/CMakeLists.txt", text);
  build::Model model = build::read_build({"", {dir + "/CMakeLists.txt"}, ""});
  ASSERT_TRUE(model.errors.empty());
  ASSERT_EQ(model.lists.size(), 2u);
  EXPECT_EQ(model.lists[0].command, build::ListCommand::Set);
  EXPECT_EQ(model.lists[1].command, build::ListCommand::AddLibrary);
  std::filesystem::remove(dir + "/CMakeLists.txt");
  build::Editor editor(&model, "");
  EXPECT_EQ(editor.add_source(dir + "/CMakeLists.txt", "SRCS", "b.cc"), build::EditOutcome::Added);
  EXPECT_EQ(editor.add_source(dir + "/CMakeLists.txt", "SRCS", "a.cc"), build::EditOutcome::Present);
  EXPECT_EQ(editor.add_source(dir + "/CMakeLists.txt", "OTHER", "b.cc"), build::EditOutcome::NoPlace);
  EXPECT_EQ(editor.add_link(dir + "/CMakeLists.txt", "core", "m"), build::EditOutcome::Added);
  EXPECT_EQ(editor.add_source(dir + "/sub/CMakeLists.txt", "SRCS", "b.cc"), build::EditOutcome::Unreadable);
  auto edits = editor.finish();
  ASSERT_EQ(edits.size(), 1u);
  EXPECT_EQ(edits[0].before, text);
  EXPECT_EQ(edits[0].after,
            "set(SRCS\n  a.cc\n  b.cc\n)\nadd_library(core SHARED ${SRCS})\ntarget_link_libraries(core PRIVATE m)\n");
  ASSERT_EQ(editor.errors().size(), 1u);
  EXPECT_EQ(editor.errors()[0].to_line(), dir + "/sub/CMakeLists.txt: cannot read");
  std::filesystem::remove_all(dir);
}

TEST(Porting, path_rules_follow_torch_musa) {
  const auto& naming = backend::musa().port_naming;
  auto ported_path = [&](std::string_view p) { return porting::ported_path(p, naming); };
  EXPECT_EQ(ported_path("aten/src/ATen/native/cuda/SparseCUDATensor.cu"),
            "aten/src/ATen/native/musa/SparseMUSATensor.mu");
  EXPECT_EQ(ported_path("aten/src/ATen/native/sparse/cuda/SoftMax.cu"), "aten/src/ATen/native/sparse/musa/SoftMax.mu");
  EXPECT_EQ(ported_path("aten/src/ATen/cuda/CUDAContext.h"), "aten/src/ATen/musa/MUSAContext.h");
  EXPECT_EQ(ported_path("aten/src/ATen/cuda/cub.cuh"), "aten/src/ATen/musa/cub.muh");
  EXPECT_EQ(ported_path("aten/src/ATen/cuda/EmptyTensor.cpp"), "aten/src/ATen/musa/EmptyTensor.cpp");
  EXPECT_EQ(ported_path("c10/cuda/CUDAStream.cpp"), "c10/musa/MUSAStream.cpp");
}

// hipify's rules, not torch_musa's: a HIP build's original of native/hip/X.hip is native/cuda/X.cu.
TEST(Porting, path_rules_follow_the_backend) {
  const auto& naming = backend::hip().port_naming;
  EXPECT_EQ(porting::ported_path("aten/src/ATen/native/cuda/SparseCUDATensor.cu", naming),
            "aten/src/ATen/native/hip/SparseHIPTensor.hip");
  EXPECT_EQ(porting::ported_path("aten/src/ATen/cuda/cub.cuh", naming), "aten/src/ATen/hip/cub.cuh");
}

TEST(Porting, fixture_map_inverts_names_and_scopes) {
  auto map = porting::load_mapping(std::string(MLC_SOURCE_DIR) + "/fixtures/torch_musa/mapping");
  ASSERT_TRUE(map.ok()) << map.error().to_line();
  EXPECT_EQ(map->to_cuda.at("musaMallocAsync"), "cudaMallocAsync");
  EXPECT_EQ(map->headers.at("cuda_runtime_api.h"), "musa_runtime_api.h");
  EXPECT_EQ(map->to_musa.count("#ifdef CUDART_VERSION"), 0u);  // not an identifier: not a rename
  EXPECT_EQ(porting::to_cuda_name("at::musa::getCurrentMUSAStream", *map, backend::musa().port_naming),
            "at::cuda::getCurrentCUDAStream");
  EXPECT_EQ(porting::map_identifiers("musaError_t f(musaStream_t s, int musaX)", map->to_cuda),
            "cudaError_t f(cudaStream_t s, int musaX)");
}

TEST(Porting, invalid_map_is_an_error_naming_the_file) {
  std::string dir = test::scratch_dir("badmap");
  test::write_file(dir + "/general.json", "{\"cudaMalloc\": \"musaMalloc\",,}");
  auto bad = porting::load_mapping(dir);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().path, dir + "/general.json");
  EXPECT_EQ(bad.error().message.rfind("invalid JSON at line 1, column ", 0), 0u) << bad.error().message;
  test::write_file(dir + "/general.json", "{\"cudaMalloc\": 3}");
  EXPECT_EQ(porting::load_mapping(dir).error().message, "a value is a number, not a string");
  EXPECT_FALSE(porting::load_mapping(dir + "/absent").ok());
}

TEST(Porting, real_torch_musa_maps_load_and_invert) {
  std::string dir = MLC_MAPPING_DIR;
  if (!std::filesystem::exists(dir + "/general.json"))
    MLC_SKIP() << dir << " is absent (shared/data not beside the repo)";
  auto start = std::chrono::steady_clock::now();
  auto map = porting::load_mapping(dir);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(map.ok()) << map.error().to_line();
  auto general = porting::load_mapping(dir + "/general.json");
  ASSERT_TRUE(general.ok());
  EXPECT_EQ(general->to_musa.size() + 0, 23519u - 0) << "general.json has 23,519 identifier entries";
  EXPECT_EQ(general->to_cuda.size(), general->to_musa.size()) << "general.json is one-to-one";
  EXPECT_EQ(map->to_cuda.at("musaMalloc"), "cudaMalloc");
  EXPECT_EQ(map->to_cuda.at("mublasSgemm_v2"), "cublasSgemm_v2");
  EXPECT_EQ(map->to_cuda.at("MUSAStream"), "CUDAStream");
  EXPECT_EQ(map->headers.at("cublas_v2.h"), "mublas.h");
  EXPECT_EQ(map->headers.size(), 111u);  // include.json's 110 and dnn-header.json's 4, three of them shared
  RecordProperty("load_ms", std::to_string(ms));
  std::printf("real maps: %zu identifiers, %zu headers, loaded in %.1f ms\n", map->to_musa.size(), map->headers.size(),
              ms);
}

TEST(SourceIndexCache, unchanged_files_come_from_the_cache_and_changed_ones_are_rescanned) {
  std::string dir = test::scratch_dir("index");
  test::write_file(dir + "/a.cpp", "namespace n { void f(int); void f(int) {} }\n");
  test::write_file(dir + "/b.h", "struct S { virtual void k(); };\n");
  source::IndexOptions o{{dir}, dir + "/cache/sources.idx"};
  source::IndexStats s1, s2, s3;
  auto first = source::SourceIndex::build(o, &s1);
  EXPECT_EQ(s1.scanned, 2u);
  EXPECT_TRUE(s1.cache_written);
  auto second = source::SourceIndex::build(o, &s2);
  EXPECT_EQ(s2.reused, 2u);
  EXPECT_EQ(s2.scanned, 0u);
  EXPECT_FALSE(s2.cache_written);
  EXPECT_EQ(second.lookup("f").size(), 2u);
  EXPECT_EQ(second.lookup("S").front()->extra, "k()");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  test::write_file(dir + "/a.cpp", "namespace n { void g(long); }\n// grown\n");
  auto third = source::SourceIndex::build(o, &s3);
  EXPECT_EQ(s3.scanned, 1u);
  EXPECT_EQ(s3.reused, 1u);
  EXPECT_TRUE(third.lookup("f").empty());
  EXPECT_EQ(third.lookup("g").front()->qualified, "n::g");
  // A damaged cache is no cache, never an error.
  test::write_file(dir + "/cache/sources.idx", "MLC-SOURCE-INDEX 2\ngarbage");
  source::IndexStats s4;
  auto fourth = source::SourceIndex::build(o, &s4);
  EXPECT_EQ(s4.scanned, 2u);
}

// The translation units by what they include (trace::includers, which ranks the sources the compiler is
// asked about) come from the index and its cache, not from reading the tree again on every run.
TEST(SourceIndexCache, include_lines_of_translation_units_are_kept_with_the_cache) {
  std::string dir = test::scratch_dir("index-includes");
  test::write_file(dir + "/a.cpp", "#include \"b.h\"\n\n  #  include <vector> // c\nint x;\n#define include \"no\"\n");
  test::write_file(dir + "/b.h", "#include \"a.h\"\n");
  source::IndexOptions o{{dir}, dir + "/cache/sources.idx"};
  source::IndexStats s1, s2;
  auto first = source::SourceIndex::build(o, &s1);
  auto second = source::SourceIndex::build(o, &s2);
  ASSERT_EQ(s1.scanned, 2u);
  ASSERT_EQ(s2.reused, 2u);
  for (const auto* idx : {&first, &second}) {
    ASSERT_EQ(idx->files().size(), 2u);
    for (size_t f = 0; f < idx->files().size(); ++f) {
      const auto& inc = idx->includes(f);
      if (idx->files()[f].path == dir + "/b.h") {
        EXPECT_TRUE(inc.empty()) << "a header is no translation unit";
        continue;
      }
      ASSERT_EQ(inc.size(), 2u);
      EXPECT_EQ(inc[0].header, "b.h");
      EXPECT_EQ(inc[0].line, 1u);
      EXPECT_EQ(inc[1].header, "vector");
      EXPECT_EQ(inc[1].line, 3u);
    }
  }
}

}  // namespace
}  // namespace mlc

#include "pipeline/linkcheck.h"

namespace mlc {
namespace {

TEST(TraceVtable, vtable_traces_to_the_definition_of_the_key_function) {
  std::string dir = test::scratch_dir("vtable");
  std::filesystem::create_directories(dir + "/gen/aten/musa");
  test::write_file(dir + "/gen/aten/musa/Widget.h",
                   "namespace at { namespace musa {\nclass Widget {\n public:\n  virtual ~Widget() = default;\n"
                   "  virtual void run(int n);\n  virtual int size() const { return 0; }\n};\n}}\n");
  test::write_file(
      dir + "/gen/aten/musa/Widget.mu",
      "#include \"Widget.h\"\nnamespace at {\nnamespace musa {\n\nvoid Widget::run(int n) { (void)n; }\n\n}\n}\n");
  LinkcheckOptions o;
  o.trace.porting_dir = dir + "/gen";
  Report r = explain_symbols({"_ZTVN2at4musa6WidgetE", "_ZTIN2at4musa6WidgetE"}, o);
  ASSERT_EQ(r.libraries[0].unresolved.size(), 2u);
  for (const auto& u : r.libraries[0].unresolved) {
    ASSERT_TRUE(u.origin.has_value()) << u.demangled << ": " << *u.reason;
    EXPECT_EQ(u.origin->file, dir + "/gen/aten/musa/Widget.mu");
    EXPECT_EQ(u.origin->line, 5);
    EXPECT_NE(u.reason->find("the key function at::musa::Widget::run(int)"), std::string::npos) << *u.reason;
  }
}

}  // namespace
}  // namespace mlc

namespace mlc {
namespace {

TEST(TraceArchive, symbol_only_in_an_sdk_static_archive_is_static_archive) {
  std::string dir = test::scratch_dir("archive-sdk");
  std::filesystem::create_directories(dir + "/sdk/lib");
  std::filesystem::create_directories(dir + "/sdk/include");
  std::string archive = dir + "/sdk/lib/libmusa_extras_static.a";
  std::filesystem::copy_file(std::string(MLC_LOADER_FIXTURES) + "/static/libfx_static.a", archive);
  LinkcheckOptions o;
  o.trace.sdk_home = dir + "/sdk";
  Report r = explain_symbols({"sb_func", "sb_data"}, o);
  ASSERT_EQ(r.libraries[0].unresolved.size(), 2u);
  for (const auto& u : r.libraries[0].unresolved) {
    EXPECT_EQ(u.classification, Classification::StaticArchive) << u.symbol << ": " << u.reason;
    ASSERT_TRUE(u.origin.has_value());
    EXPECT_EQ(u.origin->file, archive);
    EXPECT_EQ(u.origin->library, archive + "(static_b.c.o)");
    EXPECT_EQ(u.fix->kind, FixKind::LinkLibrary);
    EXPECT_EQ(u.fix->entry, archive);
  }
  EXPECT_EQ(r.libraries[0].unresolved[0].reason,
            "defined only in " + archive + "(static_b.c.o), a static archive: no shared library provides it");
}

// pcre2's shape: the library's target is not named like its file (OUTPUT_NAME), and an executable takes
// that name. CMake's own codemodel is the oracle. The library is given by its SONAME (what the loader and
// ldd name); the File API's artifact is the link name libfoo.so: both lead to libfoo.so.1.2.3.
TEST(TargetOfLibrary, output_name_and_an_executable_named_like_the_library) {
  std::string dir = test::scratch_dir("output-name");
  std::filesystem::create_directories(dir + "/src");
  test::write_file(dir + "/src/CMakeLists.txt",
                   "cmake_minimum_required(VERSION 3.16)\nproject(p C)\n"
                   "add_library(foo_shared SHARED a.c)\n"
                   "set_target_properties(foo_shared PROPERTIES OUTPUT_NAME foo VERSION 1.2.3 SOVERSION 1)\n"
                   "add_executable(foo main.c)\n");
  test::write_file(dir + "/src/a.c", "int a(void) { return 1; }\n");
  test::write_file(dir + "/src/main.c", "int main(void) { return 0; }\n");
  std::filesystem::create_directories(dir + "/build/.cmake/api/v1/query");
  test::write_file(dir + "/build/.cmake/api/v1/query/codemodel-v2", "");
  auto r = test::run("cmake -S " + test::quote(dir + "/src") + " -B " + test::quote(dir + "/build") +
                     " >/dev/null && cmake --build " + test::quote(dir + "/build") + " >/dev/null");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string lib = dir + "/build/libfoo.so.1";
  ASSERT_TRUE(std::filesystem::is_symlink(lib));

  auto build = build::read_build({.build_dir = dir + "/build", .cmake_lists = {}, .library_helper = {}});
  EXPECT_EQ(build::target_of_library(&build, lib), "foo_shared");  // not the executable foo
  // The real file the loader names (the links lead to it) is the same target's.
  EXPECT_EQ(build::target_of_library(&build, dir + "/build/libfoo.so.1.2.3"), "foo_shared");

  // Without the File API reply the lists still say that `foo` is an executable: no target, not the wrong one.
  std::filesystem::remove_all(dir + "/build/.cmake/api/v1/reply");
  auto lists_only = build::read_build({.build_dir = dir + "/build", .cmake_lists = {}, .library_helper = {}});
  EXPECT_TRUE(lists_only.targets.empty());
  EXPECT_EQ(build::target_of_library(&lists_only, lib), "");
  EXPECT_EQ(build::target_of_library(nullptr, lib), "foo");  // with no build at all: named after the file
}

// What a target compiles is its own, with the OBJECT libraries it takes: a test target compiling the same
// file (neither built nor linked into the library) is not the library's build. CMake's codemodel is the oracle.
TEST(TargetSources, a_target_compiles_its_own_sources_and_its_object_libraries) {
  std::string dir = test::scratch_dir("target-sources");
  std::filesystem::create_directories(dir + "/src");
  test::write_file(dir + "/src/CMakeLists.txt",
                   "cmake_minimum_required(VERSION 3.16)\nproject(p C)\n"
                   "add_library(objs OBJECT o.c)\nset_target_properties(objs PROPERTIES POSITION_INDEPENDENT_CODE ON)\n"
                   "add_library(core SHARED a.c $<TARGET_OBJECTS:objs>)\n"
                   "add_executable(core_test EXCLUDE_FROM_ALL t.c shared.c)\n");
  for (const char* f : {"o.c", "a.c", "t.c", "shared.c"})
    test::write_file(dir + "/src/" + f, "int x_" + std::string(1, f[0]) + ";\n");
  std::filesystem::create_directories(dir + "/build/.cmake/api/v1/query");
  test::write_file(dir + "/build/.cmake/api/v1/query/codemodel-v2", "");
  auto r = test::run("cmake -S " + test::quote(dir + "/src") + " -B " + test::quote(dir + "/build") + " >/dev/null");
  ASSERT_EQ(r.status, 0) << r.err;
  auto build = build::read_build({.build_dir = dir + "/build", .cmake_lists = {}, .library_helper = {}});
  const auto* core = build.target_for_artifact(dir + "/build/libcore.so");
  ASSERT_NE(core, nullptr);
  EXPECT_EQ(core->name, "core");
  EXPECT_TRUE(build.compiled_by(*core, dir + "/src/a.c"));
  EXPECT_TRUE(build.compiled_by(*core, dir + "/src/o.c"));        // through the OBJECT library
  EXPECT_FALSE(build.compiled_by(*core, dir + "/src/shared.c"));  // only the test target compiles it
  EXPECT_TRUE(build.is_compiled(dir + "/src/shared.c"));          // though the build as a whole does
}

// CMake's own codemodel, read by the test straight from the reply CMake wrote (not by the code under
// test): each target's name, type, artifacts (absolute), compiled sources (absolute), source directory
// and the names of the targets it depends on.
struct OracleTarget {
  std::string name, type, source_dir;
  std::vector<std::string> artifacts, dependencies;
  std::set<std::string> compiles;
};
std::vector<OracleTarget> codemodel_targets(const std::string& build) {
  namespace fs = std::filesystem;
  const std::string reply = build + "/.cmake/api/v1/reply";
  std::string index;
  for (const auto& e : fs::directory_iterator(reply))
    if (e.path().filename().string().rfind("index-", 0) == 0) index = std::max(index, e.path().string());
  auto idx = nlohmann::json::parse(test::read_file(index));
  std::string codemodel;
  for (const auto& o : idx.at("objects"))
    if (o.at("kind") == "codemodel") codemodel = o.at("jsonFile");
  auto cm = nlohmann::json::parse(test::read_file(reply + "/" + codemodel));
  const fs::path top = cm.at("paths").at("source").get<std::string>();
  std::vector<OracleTarget> out;
  for (const auto& ref : cm.at("configurations").at(0).at("targets")) {
    auto t = nlohmann::json::parse(test::read_file(reply + "/" + ref.at("jsonFile").get<std::string>()));
    OracleTarget o{.name = t.at("name"),
                   .type = t.at("type"),
                   .source_dir = (top / t.at("paths").at("source").get<std::string>()).lexically_normal().string(),
                   .artifacts = {},
                   .dependencies = {},
                   .compiles = {}};
    if (o.source_dir.size() > 1 && o.source_dir.back() == '/') o.source_dir.pop_back();
    for (const auto& a : t.value("artifacts", nlohmann::json::array()))
      o.artifacts.push_back((fs::path(build) / a.at("path").get<std::string>()).lexically_normal().string());
    for (const auto& src : t.value("sources", nlohmann::json::array()))
      if (src.contains("compileGroupIndex"))
        o.compiles.insert((top / src.at("path").get<std::string>()).lexically_normal().string());
    for (const auto& d : t.value("dependencies", nlohmann::json::array())) {
      std::string id = d.at("id");
      o.dependencies.push_back(id.substr(0, id.find("::@")));
    }
    out.push_back(std::move(o));
  }
  return out;
}

// A build configured without a File API query (a user's, torch_musa's setup.py) still knows its targets:
// the generator's files (compile_commands.json's object directories, Makefiles' link.txt, build.ninja's
// link edges) give what CMake's codemodel gives, and CMake's own reply of the same build, read by the
// test, is the oracle.
// The library's file is named by OUTPUT_NAME, an executable takes the target-like name, an OBJECT
// library feeds it and a test target compiles one of the same sources.
class GeneratorTargets : public testing::TestWithParam<std::string> {};

TEST_P(GeneratorTargets, give_the_codemodels_targets_without_a_file_api_query) {
  const std::string generator = GetParam();
  if (generator == "Ninja" && test::run("ninja --version").status != 0) MLC_SKIP() << "ninja is not installed";
  std::string dir = test::scratch_dir(generator == "Ninja" ? "gen-targets-ninja" : "gen-targets-make");
  std::filesystem::create_directories(dir + "/src/sub");
  test::write_file(dir + "/src/CMakeLists.txt",
                   "cmake_minimum_required(VERSION 3.16)\nproject(p C)\n"
                   "add_library(objs OBJECT o.c)\nset_target_properties(objs PROPERTIES POSITION_INDEPENDENT_CODE ON)\n"
                   "add_library(kernels_shared SHARED a.c shared.c $<TARGET_OBJECTS:objs>)\n"
                   "set_target_properties(kernels_shared PROPERTIES OUTPUT_NAME kernels VERSION 1.2.3 SOVERSION 1)\n"
                   "add_executable(kernels main.c)\n"
                   "add_executable(kernels_test t.c shared.c)\n"
                   "add_subdirectory(sub)\n");
  test::write_file(dir + "/src/sub/CMakeLists.txt", "add_library(st STATIC s.c)\n");
  for (const char* f : {"o.c", "a.c", "t.c", "shared.c", "sub/s.c"})
    test::write_file(dir + "/src/" + f,
                     "int x_" + std::string(1, f[0]) + "_" + std::to_string(std::string(f).size()) + ";\n");
  test::write_file(dir + "/src/main.c", "int main(void) { return 0; }\n");
  test::write_file(dir + "/src/t.c", "int main(void) { return 0; }\n");
  std::filesystem::create_directories(dir + "/build/.cmake/api/v1/query");
  test::write_file(dir + "/build/.cmake/api/v1/query/codemodel-v2", "");
  auto r = test::run("cmake -G " + test::quote(generator) + " -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -S " +
                     test::quote(dir + "/src") + " -B " + test::quote(dir + "/build") + " >/dev/null");
  ASSERT_EQ(r.status, 0) << r.err;

  const auto oracle = codemodel_targets(dir + "/build");
  ASSERT_FALSE(oracle.empty()) << "no File API reply";
  const auto got = build::cmake::targets_from_generator(dir + "/build", dir + "/src");
  std::map<std::string, const build::Target*> by_name;
  for (const auto& t : got) by_name[t.name] = &t;
  size_t compared = 0;
  for (const auto& want : oracle) {
    if (want.compiles.empty()) continue;  // utility targets compile nothing
    ++compared;
    ASSERT_TRUE(by_name.count(want.name)) << want.name << " not found from the generator's files";
    const auto& t = *by_name[want.name];
    EXPECT_EQ(build::to_string(t.type), want.type) << want.name;
    EXPECT_EQ(t.artifacts, want.artifacts) << want.name;
    EXPECT_EQ(t.compiles, want.compiles) << want.name;
    EXPECT_EQ(t.source_dir, want.source_dir) << want.name;
    std::vector<std::string> object_deps;  // the codemodel also lists link dependencies; OBJECT ones compare
    for (const auto& d : want.dependencies)
      for (const auto& o : oracle)
        if (o.name == d && o.type == "OBJECT_LIBRARY") object_deps.push_back(d);
    EXPECT_EQ(t.dependencies, object_deps) << want.name;
  }
  EXPECT_EQ(compared, 5u);  // objs, kernels_shared, kernels, kernels_test, st
  EXPECT_EQ(got.size(), compared);

  // What the tracer asks of it, with the reply gone: the library's target by its file (and by its
  // SONAME link), not the executable named like it; the OBJECT library's source is compiled by it, the
  // test target's copy of shared.c is, and t.c is not.
  std::filesystem::remove_all(dir + "/build/.cmake/api/v1/reply");
  const auto build = build::read_build({.build_dir = dir + "/build", .cmake_lists = {}, .library_helper = {}});
  auto b = test::run("cmake --build " + test::quote(dir + "/build") + " >/dev/null");
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(build::target_of_library(&build, dir + "/build/libkernels.so.1"), "kernels_shared");
  const auto* lib = build.target_for_artifact(dir + "/build/libkernels.so");
  ASSERT_NE(lib, nullptr);
  EXPECT_TRUE(build.compiled_by(*lib, dir + "/src/o.c"));
  EXPECT_TRUE(build.compiled_by(*lib, dir + "/src/shared.c"));
  EXPECT_FALSE(build.compiled_by(*lib, dir + "/src/t.c"));
}

INSTANTIATE_TEST_SUITE_P(Build, GeneratorTargets, testing::Values("Unix Makefiles", "Ninja"),
                         [](const testing::TestParamInfo<std::string>& param_info) {
                           return param_info.param == "Ninja" ? std::string("Ninja") : std::string("Makefiles");
                         });

// libssh's pattern, read without CMake's help (no File API, cmake not asked): set(X ${X} f.c) in one
// if() after another. Each branch may be taken, so the list is the union of them all, each file once;
// the reader's work and memory grow with the file, not with 2^(number of if()s).
TEST(CMakeReader, set_x_x_under_many_ifs_is_read_in_linear_space) {
  const std::string dir = test::scratch_dir("linear-reader");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  constexpr int kBlocks = 48;  // 2^48 entries, were the value doubled in each branch
  std::string text = "set(SRCS main.c)\n";
  for (int k = 0; k < kBlocks; ++k) {
    text += "if(WITH_" + std::to_string(k) + ")\n  set(SRCS ${SRCS} f" + std::to_string(k) + ".c)\nendif()\n";
    test::write_file(dir + "/f" + std::to_string(k) + ".c", "");
  }
  text += "add_library(core SHARED ${SRCS})\n";
  test::write_file(dir + "/main.c", "");
  test::write_file(dir + "/CMakeLists.txt", text);
  build::Model model =
      build::read_build({.build_dir = "", .cmake_lists = {dir + "/CMakeLists.txt"}, .library_helper = {}});
  ASSERT_TRUE(model.errors.empty());
  const build::SourceList* library = nullptr;
  size_t named = 0;
  for (const auto& l : model.lists) {
    for (const auto& e : l.entries) named += e.files.size();
    if (l.command == build::ListCommand::AddLibrary) library = &l;
  }
  ASSERT_NE(library, nullptr);
  ASSERT_EQ(library->entries.size(), 1u);
  // The library's ${SRCS}: main.c and every branch's file, once each.
  std::set<std::string> files(library->entries[0].files.begin(), library->entries[0].files.end());
  EXPECT_EQ(files.size(), static_cast<size_t>(kBlocks + 1));
  EXPECT_EQ(library->entries[0].files.size(), files.size());
  // Each ${SRCS} names at most what the file spells so far: quadratic in the blocks at worst, never 2^48.
  EXPECT_LE(named, static_cast<size_t>((kBlocks + 2) * (kBlocks + 2)));
  std::filesystem::remove_all(dir);
}

// With CMake's File API, the lists are the commands the backtraces lead to, read as spans: a function's
// call (its SRCS section), a parent's set() of a list a subdirectory's target takes, an if() branch's
// target_sources, each tied to its target; nothing else (a version set() beside them, a test's list).
// CMake's own reply of the configure is what the spans are found from; what they name, by the test.
TEST(FileApiLists, each_list_is_the_command_whose_text_spells_the_targets_sources) {
  const std::string dir = test::scratch_dir("file-api-lists");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/src/shared");
  std::filesystem::create_directories(dir + "/src/cmake");
  test::write_file(
      dir + "/src/cmake/helpers.cmake",
      "function(core_library)\n  cmake_parse_arguments(C \"\" \"NAME\" \"SRCS;HDRS\" ${ARGN})\n"
      "  add_library(${C_NAME} SHARED \"\")\n  target_sources(${C_NAME} PRIVATE ${C_SRCS} ${C_HDRS})\nendfunction()\n");
  test::write_file(dir + "/src/CMakeLists.txt",
                   "cmake_minimum_required(VERSION 3.16)\nproject(p C)\ninclude(cmake/helpers.cmake)\n"
                   "set(LIB_VERSION 62)\n"
                   "set(SHARED_SOURCES s1.c s2.c)\n"
                   "core_library(NAME fn HDRS fn.h SRCS fn1.c fn2.c)\n"
                   "add_subdirectory(shared)\n"
                   "set(TEST_SRCS t.c)\nadd_executable(t ${TEST_SRCS})\n"
                   "add_library(br SHARED b1.c)\nif(WIN32)\n  target_sources(br PRIVATE w.c w.h)\nelse()\n"
                   "  target_sources(br PRIVATE u.h)\nendif()\n");
  test::write_file(
      dir + "/src/shared/CMakeLists.txt",
      "foreach(src ${SHARED_SOURCES})\n  set(SRCS ${SRCS} ../${src})\nendforeach()\nadd_library(sh SHARED ${SRCS})\n");
  for (const char* f : {"s1.c", "s2.c", "fn1.c", "fn2.c", "fn.h", "t.c", "b1.c", "w.c", "w.h", "u.h"})
    test::write_file(dir + "/src/" + f, std::string(f).ends_with(".h")
                                            ? ""
                                            : "int x_" + std::string(1, f[0]) + std::string(1, f[1]) + ";\n");
  test::write_file(dir + "/src/t.c", "int main(void) { return 0; }\n");
  std::filesystem::create_directories(dir + "/build/.cmake/api/v1/query");
  test::write_file(dir + "/build/.cmake/api/v1/query/codemodel-v2", "");
  test::write_file(dir + "/build/.cmake/api/v1/query/cmakeFiles-v1", "");
  auto r = test::run("cmake -S " + test::quote(dir + "/src") + " -B " + test::quote(dir + "/build") + " >/dev/null");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto model = build::read_build({.build_dir = dir + "/build", .cmake_lists = {}, .library_helper = {}});
  ASSERT_TRUE(model.errors.empty()) << model.errors[0].to_line();
  EXPECT_TRUE(model.from_build_system);
  // Each list as "file:line variable -> targets: entries".
  std::set<std::string> got;
  for (const auto& l : model.lists) {
    std::string line = l.cmake_file.substr(dir.size() + 5) + ":" + std::to_string(l.line) + " " + l.variable + " ->";
    for (const auto& t : l.targets) line += " " + t;
    line += ":";
    for (const auto& e : l.entries) line += " " + e.raw;
    got.insert(line);
  }
  EXPECT_EQ(got, (std::set<std::string>{
                     "CMakeLists.txt:5 SHARED_SOURCES -> sh: s1.c s2.c",
                     "CMakeLists.txt:6 core_library(fn) HDRS -> fn: fn.h",
                     "CMakeLists.txt:6 core_library(fn) SRCS -> fn: fn1.c fn2.c",
                     "CMakeLists.txt:8 TEST_SRCS -> t: t.c",
                     "CMakeLists.txt:10 br -> br: b1.c",
                     "CMakeLists.txt:14 br -> br: u.h",
                     // the command creating sh, which no stack of its sources leads to (they come through
                     // SRCS): an entry for sh can go there
                     "shared/CMakeLists.txt:4 sh -> sh: ${SRCS}",
                 }));
  // The placement follows them: a new source of fn goes into the call's SRCS, u.c into the else()
  // branch beside its header, s3.c into the parent's list of sh.
  auto place = [&](const std::string& file, const std::string& target) {
    auto c = build::choose_list(model, dir + "/src/" + file, target, "");
    return c ? c->cmake_file.substr(dir.size() + 5) + ":" + std::to_string(c->line) + " " + c->list + " " + c->entry
             : "none";
  };
  EXPECT_EQ(place("fn3.c", "fn"), "CMakeLists.txt:6 core_library(fn) SRCS fn3.c");
  EXPECT_EQ(place("u.c", "br"), "CMakeLists.txt:14 br u.c");
  EXPECT_EQ(place("s3.c", "sh"), "CMakeLists.txt:5 SHARED_SOURCES s3.c");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace mlc

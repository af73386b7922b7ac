// CMake as people write it: tiny projects, each missing one source in a different construct
// (target_sources, add_library's own list, set()/list(APPEND) inside if(), a subdirectory's list
// passed up with PARENT_SCOPE, file(GLOB)), configured and built with cmake at test time. One
// `musa-stubgen --apply` must insert exactly the expected line and the project must build again;
// a second run must change no byte.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "test_support.h"

namespace mlc {
namespace {

namespace fs = std::filesystem;
using test::quote;
using test::run;

const std::string kStubgen = MLC_STUBGEN_BIN;
const std::string kLinkcheck = MLC_LINKCHECK_BIN;

// The library's sources: a.cc calls b_value() (defined in the source the CMake file forgets) and
// c_value(); the program calls a_value(), so it links only once b is compiled into the library.
const char* kA = "int b_value(int v);\nint c_value(int v);\nint a_value(int v) { return b_value(v) + c_value(v); }\n";
const char* kB = "int b_value(int v) { return v * 2; }\n";
const char* kC = "int c_value(int v) { return v + 1; }\n";
const char* kMain = "int a_value(int v);\nint main() { return a_value(1) == 4 ? 0 : 1; }\n";

class CMakePatch : public ::testing::Test {
 protected:
  void TearDown() override {
    if (!root_.empty()) fs::remove_all(root_);
  }

  // Writes the project (paths relative to its source dir), makes it a git checkout, configures it
  // and builds it once (the program's link fails: that is the starting point).
  void make(const std::string& name, const std::map<std::string, std::string>& files) {
    make_in(name, files, "/libcore.so");
  }
  void make_in(const std::string& name, const std::map<std::string, std::string>& files, const std::string& library) {
    root_ = test::scratch_dir("cmake-patch-" + name);  // the tests' scratch area (test_support.h)
    fs::remove_all(root_);
    src_ = root_ + "/src";
    build_ = root_ + "/build";
    for (const auto& [path, text] : files) {
      fs::create_directories(fs::path(src_ + "/" + path).parent_path());
      test::write_file(src_ + "/" + path, text);
    }
    ASSERT_EQ(run("cd " + quote(src_) +
                  " && git init -q . && git add -A && git -c user.name=t -c user.email=t@t "
                  "commit -qm base")
                  .status,
              0);
    auto configured = run("cmake -S " + quote(src_) + " -B " + quote(build_) +
                          " -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_COMPILE_COMMANDS=ON");
    ASSERT_EQ(configured.status, 0) << configured.out << configured.err;
    auto built = run("cmake --build " + quote(build_) + " -j 2");
    ASSERT_NE(built.status, 0) << "the program should not link before the fix";
    ASSERT_TRUE(fs::exists(build_ + library));
  }

  test::CommandResult stubgen(const std::string& extra) {
    return run(kStubgen + " --build-dir " + quote(build_) + " --source-root " + quote(src_) +
               " --no-runtime --out-cpp " + quote(root_ + "/stubs.cpp") + " --out-header " + quote(root_ + "/stubs.h") +
               " " + extra + " " + quote(build_ + "/libcore.so"));
  }

  std::string file(const std::string& rel) { return test::read_file(src_ + "/" + rel); }

  // The fix restores the build: cmake re-configures, the program links and runs, the library has no
  // undefined symbol left, and a second --apply changes no byte of any file.
  void expect_restored(const std::string& cmake_rel) {
    auto rebuilt = run("cmake --build " + quote(build_) + " -j 2");
    ASSERT_EQ(rebuilt.status, 0) << rebuilt.out << rebuilt.err;
    EXPECT_EQ(run(quote(build_ + "/app")).status, 0);
    auto check = run(kLinkcheck + " --build-dir " + quote(build_) + " " + quote(build_ + "/libcore.so"));
    EXPECT_EQ(check.status, 0) << check.out << check.err;
    std::string before = file(cmake_rel);
    auto again = stubgen("--apply");
    EXPECT_EQ(again.status, 0) << again.err;
    EXPECT_EQ(file(cmake_rel), before);
    EXPECT_EQ(
        run("cd " + quote(src_) + " && git status --porcelain --untracked-files=no | grep -v " + quote(cmake_rel)).out,
        "");
  }

  std::string root_, src_, build_;
};

std::map<std::string, std::string> sources(const std::string& dir, const std::string& cmake) {
  return {{"CMakeLists.txt", cmake}, {dir + "a.cc", kA}, {dir + "b.cc", kB}, {dir + "c.cc", kC}, {"main.cc", kMain}};
}

const std::string kHead = "cmake_minimum_required(VERSION 3.16)\nproject(tiny CXX)\n";
const std::string kApp = "add_executable(app main.cc)\ntarget_link_libraries(app PRIVATE core)\n";

TEST_F(CMakePatch, target_sources_gets_a_quoted_entry_in_sorted_place) {
  std::string cmake = kHead +
                      "add_library(core SHARED)\n"
                      "target_sources(core\n"
                      "  PRIVATE\n"
                      "    \"src/a.cc\"\n"
                      "    \"src/c.cc\"\n"
                      ")\n" +
                      kApp;
  make("target_sources", sources("src/", cmake));
  auto r = stubgen("--apply");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string want = cmake;
  want.insert(want.find("    \"src/c.cc\""), "    \"src/b.cc\"\n");
  EXPECT_EQ(file("CMakeLists.txt"), want);
  expect_restored("CMakeLists.txt");
}

TEST_F(CMakePatch, add_library_own_sources_get_the_entry_beside_its_siblings_generator_expression_untouched) {
  std::string cmake = kHead + "add_library(core SHARED a.cc c.cc $<$<BOOL:OFF>:extra.cc>)\n" + kApp;
  auto files = sources("", cmake);
  files["extra.cc"] = "int extra_value() { return 3; }\n";
  make("add_library", files);
  auto r = stubgen("--apply");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(file("CMakeLists.txt"), kHead + "add_library(core SHARED a.cc b.cc c.cc $<$<BOOL:OFF>:extra.cc>)\n" + kApp);
  expect_restored("CMakeLists.txt");
}

TEST_F(CMakePatch, set_and_list_append_inside_if_branches_patch_the_branch_holding_the_siblings) {
  std::string cmake = kHead +
                      "if(WIN32)\n"
                      "  set(CORE_SRCS win/w.cc)\n"
                      "else()\n"
                      "  set(CORE_SRCS a.cc)\n"
                      "endif()\n"
                      "if(UNIX)\n"
                      "  list(APPEND CORE_SRCS\n"
                      "       posix/a.cc\n"
                      "       posix/c.cc)\n"
                      "endif()\n"
                      "add_library(core SHARED ${CORE_SRCS})\n" +
                      kApp;
  std::map<std::string, std::string> files = {{"CMakeLists.txt", cmake}, {"a.cc", "int a2() { return 0; }\n"},
                                              {"posix/a.cc", kA},        {"posix/b.cc", kB},
                                              {"posix/c.cc", kC},        {"main.cc", kMain}};
  make("if_branches", files);
  auto r = stubgen("--apply");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string want = cmake;
  want.insert(want.find("       posix/c.cc)"), "       posix/b.cc\n");
  EXPECT_EQ(file("CMakeLists.txt"), want);
  expect_restored("CMakeLists.txt");
}

TEST_F(CMakePatch, list_set_in_a_subdirectory_with_parent_scope_is_patched_there_and_git_apply_works) {
  std::string top = kHead + "add_subdirectory(db)\nadd_library(core SHARED ${DB_SRCS} lib.cc)\n" + kApp;
  std::string db =
      "set(DB_SRCS\n"
      "  ${CMAKE_CURRENT_SOURCE_DIR}/a.cc\n"
      "  ${CMAKE_CURRENT_SOURCE_DIR}/c.cc\n"
      "  PARENT_SCOPE)\n";
  auto files = sources("db/", top);
  files["db/CMakeLists.txt"] = db;
  files["lib.cc"] = "int lib_value() { return 0; }\n";
  make("parent_scope", files);
  // The patch names the file relative to the checkout, and git apply takes it from there.
  std::string patch = root_ + "/fix.diff";
  auto r = stubgen("--cmake-patch " + quote(patch));
  ASSERT_EQ(r.status, 0) << r.err;
  std::string diff = test::read_file(patch);
  EXPECT_EQ(diff.rfind("--- a/db/CMakeLists.txt\n+++ b/db/CMakeLists.txt\n", 0), 0u) << diff;
  EXPECT_NE(diff.find("\n+  ${CMAKE_CURRENT_SOURCE_DIR}/b.cc\n"), std::string::npos) << diff;
  EXPECT_EQ(file("db/CMakeLists.txt"), db);  // --cmake-patch alone writes no CMake file
  auto applied = run("cd " + quote(src_) + " && git apply " + quote(patch));
  ASSERT_EQ(applied.status, 0) << applied.err;
  std::string want = db;
  want.insert(want.find("  ${CMAKE_CURRENT_SOURCE_DIR}/c.cc"), "  ${CMAKE_CURRENT_SOURCE_DIR}/b.cc\n");
  EXPECT_EQ(file("db/CMakeLists.txt"), want);
  EXPECT_EQ(file("CMakeLists.txt"), top);
  expect_restored("db/CMakeLists.txt");
}

TEST_F(CMakePatch, file_covered_by_a_glob_gets_no_entry_and_the_reason) {
  std::string cmake = kHead + "file(GLOB CORE_SRCS src/*.cc)\nadd_library(core SHARED ${CORE_SRCS})\n" + kApp;
  auto files = sources("src/", cmake);
  files.erase("src/b.cc");  // added after the configure: the glob has not seen it
  make("glob", files);
  test::write_file(src_ + "/src/b.cc", kB);
  // Read alone, the files say the glob matches it: no entry, and re-running cmake is the fix.
  auto r = stubgen("--apply --no-reconfigure");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(file("CMakeLists.txt"), cmake);
  EXPECT_NE(r.err.find(src_ + "/src/b.cc matches the file(GLOB) pattern src/*.cc of CORE_SRCS (" + src_ +
                       "/CMakeLists.txt:3), so it needs no entry: the fix lies elsewhere (re-run cmake"),
            std::string::npos)
      << r.err;
  // Asked, CMake's configure globs it in (no object yet): what is left is to rebuild the library, which
  // is nothing to change and nothing refused.
  auto asked = stubgen("--apply");
  EXPECT_EQ(asked.status, 0) << asked.err;
  EXPECT_EQ(file("CMakeLists.txt"), cmake);
  EXPECT_NE(asked.err.find("musa-stubgen: 1 symbol (b_value(int)) defined in sources the build compiles since " +
                           build_ + "/libcore.so was built: rebuild it first (cmake --build), then run again\n"),
            std::string::npos)
      << asked.err;
  EXPECT_EQ(run("cmake --build " + quote(build_) + " -j 2").status, 0);
}

TEST_F(CMakePatch, glob_trimmed_by_remove_item_loses_that_entry_and_keeps_the_rest_of_the_call) {
  std::string cmake = kHead +
                      "file(GLOB CORE_SRCS ${CMAKE_CURRENT_SOURCE_DIR}/src/*.cc)\n"
                      "list(REMOVE_ITEM CORE_SRCS\n"
                      "     ${CMAKE_CURRENT_SOURCE_DIR}/src/b.cc\n"
                      "     ${CMAKE_CURRENT_SOURCE_DIR}/src/win.cc)\n"
                      "add_library(core SHARED ${CORE_SRCS})\n" +
                      kApp;
  auto files = sources("src/", cmake);
  files["src/win.cc"] = "#error not on this platform\n";
  make("remove_item", files);
  auto r = stubgen("--apply");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string want = cmake;
  want.erase(want.find("     ${CMAKE_CURRENT_SOURCE_DIR}/src/b.cc\n"),
             std::string("     ${CMAKE_CURRENT_SOURCE_DIR}/src/b.cc\n").size());
  EXPECT_EQ(file("CMakeLists.txt"), want);
  EXPECT_NE(r.err.find(
                "musa-stubgen: dropping ${CMAKE_CURRENT_SOURCE_DIR}/src/b.cc from list(REMOVE_ITEM CORE_SRCS ...) at " +
                src_ + "/CMakeLists.txt:4: it takes out a source the library needs\n"),
            std::string::npos)
      << r.err;
  ASSERT_EQ(run("cmake " + quote(build_)).status, 0);  // a glob is evaluated at configure time
  expect_restored("CMakeLists.txt");
}

TEST_F(CMakePatch, removals_emptied_go_whole_including_one_only_the_given_back_source_needs) {
  // a.cc needs b.cc, and b.cc needs d.cc, which nothing the build compiles references: one run must
  // give back both (the second through the compiled b.cc's own references).
  std::string cmake = kHead +
                      "file(GLOB CORE_SRCS src/*.cc)\n"
                      "list(REMOVE_ITEM CORE_SRCS ${CMAKE_CURRENT_SOURCE_DIR}/src/b.cc)\n"
                      "list(FILTER CORE_SRCS EXCLUDE REGEX \"/d\\\\.cc$\")\n"
                      "add_library(core SHARED ${CORE_SRCS})\n" +
                      kApp;
  auto files = sources("src/", cmake);
  files["src/b.cc"] = "int d_value(int v);\nint b_value(int v) { return d_value(v); }\n";
  files["src/d.cc"] = "int d_value(int v) { return v * 2; }\n";
  make("remove_chain", files);
  auto r = stubgen("--apply");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(file("CMakeLists.txt"),
            kHead + "file(GLOB CORE_SRCS src/*.cc)\nadd_library(core SHARED ${CORE_SRCS})\n" + kApp);
  EXPECT_NE(r.err.find("removing list(FILTER CORE_SRCS EXCLUDE REGEX /d\\\\.cc$) at " + src_ + "/CMakeLists.txt:5"),
            std::string::npos)
      << r.err;
  ASSERT_EQ(run("cmake " + quote(build_)).status, 0);
  expect_restored("CMakeLists.txt");
}

TEST_F(CMakePatch, filter_that_also_excludes_a_file_kept_out_on_purpose_is_refused_with_the_reason) {
  std::string cmake = kHead +
                      "file(GLOB CORE_SRCS src/*.cc)\n"
                      "list(FILTER CORE_SRCS EXCLUDE REGEX \"/(b|win)\\\\.cc$\")\n"
                      "add_library(core SHARED ${CORE_SRCS})\n" +
                      kApp;
  auto files = sources("src/", cmake);
  files["src/win.cc"] = "#error not on this platform\n";
  make("filter_shared", files);
  auto r = stubgen("--apply");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(file("CMakeLists.txt"), cmake);
  EXPECT_NE(
      r.err.find(src_ + "/src/b.cc is excluded by list(FILTER CORE_SRCS EXCLUDE REGEX /(b|win)\\\\.cc$) at " + src_ +
                 "/CMakeLists.txt:4, which also excludes " + src_ + "/src/win.cc: narrow that regex by hand"),
      std::string::npos)
      << r.err;
}

TEST_F(CMakePatch, entry_goes_to_the_if_branch_the_configure_took_even_when_another_holds_closer_names) {
  // fmt's shape: the branch not taken holds the nearer name (src/bx.cc), so prefix alone would pick it.
  std::string cmake = kHead +
                      "option(CORE_MODULE \"\" OFF)\n"
                      "if(CORE_MODULE)\n"
                      "  set(CORE_SRCS src/bx.cc)\n"
                      "else()\n"
                      "  set(CORE_SRCS src/a.cc src/c.cc)\n"
                      "endif()\n"
                      "add_library(core SHARED ${CORE_SRCS})\n" +
                      kApp;
  auto files = sources("src/", cmake);
  files["src/bx.cc"] = "int bx() { return 0; }\n";
  make("if_taken", files);
  auto r = stubgen("--apply");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string want = cmake;
  want.replace(want.find("src/a.cc src/c.cc"), 17, "src/a.cc src/b.cc src/c.cc");
  EXPECT_EQ(file("CMakeLists.txt"), want);
  expect_restored("CMakeLists.txt");
}

TEST_F(CMakePatch, entry_is_spelled_as_its_siblings_when_a_function_adds_their_directory) {
  // gflags' shape: configure_sources() prefixes src/, so the list says "a.cc" for src/a.cc.
  std::string cmake = kHead +
                      "function(in_src out)\n"
                      "  set(tmp)\n"
                      "  foreach(s IN LISTS ARGN)\n"
                      "    list(APPEND tmp \"${PROJECT_SOURCE_DIR}/src/${s}\")\n"
                      "  endforeach()\n"
                      "  set(${out} \"${tmp}\" PARENT_SCOPE)\n"
                      "endfunction()\n"
                      "set(CORE_SRCS\n"
                      "  \"a.cc\"\n"
                      "  \"c.cc\"\n"
                      ")\n"
                      "in_src(CORE_SRCS ${CORE_SRCS})\n"
                      "add_library(core SHARED ${CORE_SRCS})\n" +
                      kApp;
  make("function_prefix", sources("src/", cmake));
  auto r = stubgen("--apply");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string want = cmake;
  want.insert(want.find("  \"c.cc\""), "  \"b.cc\"\n");
  EXPECT_EQ(file("CMakeLists.txt"), want);
  expect_restored("CMakeLists.txt");
}

TEST_F(CMakePatch, cmake_patch_paths_are_relative_to_the_checkout_holding_the_project_not_to_the_project) {
  // The CMake project is a subdirectory (src/) of the git checkout: the patch names src/CMakeLists.txt
  // so that `git apply` works from the checkout's top.
  std::string cmake = kHead + "add_library(core SHARED a.cc c.cc)\n" + kApp;
  make("checkout_subdir", sources("", cmake));
  fs::remove_all(src_ + "/.git");
  ASSERT_EQ(run("cd " + quote(root_) +
                " && git init -q . && git add src && git -c user.name=t -c user.email=t@t "
                "commit -qm base")
                .status,
            0);
  std::string patch = root_ + "/fix.diff";
  auto r = stubgen("--cmake-patch " + quote(patch));
  ASSERT_EQ(r.status, 0) << r.err;
  std::string diff = test::read_file(patch);
  EXPECT_EQ(diff.rfind("--- a/src/CMakeLists.txt\n+++ b/src/CMakeLists.txt\n", 0), 0u) << diff;
  auto applied = run("cd " + quote(root_) + " && git apply " + quote(patch));
  ASSERT_EQ(applied.status, 0) << applied.err;
  EXPECT_EQ(file("CMakeLists.txt"), kHead + "add_library(core SHARED a.cc b.cc c.cc)\n" + kApp);
  auto rebuilt = run("cmake --build " + quote(build_) + " -j 2");
  ASSERT_EQ(rebuilt.status, 0) << rebuilt.out << rebuilt.err;
  EXPECT_EQ(run(quote(build_ + "/app")).status, 0);
}

TEST_F(CMakePatch, broken_cmake_file_is_one_error_line_naming_it_and_exit_2) {
  std::string top = kHead + "add_subdirectory(db)\nadd_library(core SHARED ${DB_SRCS})\n" + kApp;
  auto files = sources("db/", top);
  files["db/CMakeLists.txt"] = "set(DB_SRCS db/a.cc db/c.cc PARENT_SCOPE)\n";
  make("broken", files);
  test::write_file(src_ + "/db/CMakeLists.txt", "set(DB_SRCS db/a.cc \"db/c.cc PARENT_SCOPE)\n");
  auto r = stubgen("--apply");
  EXPECT_EQ(r.status, 2) << r.err;
  std::string line = "musa-stubgen: error: " + src_ +
                     "/db/CMakeLists.txt: broken CMake file: unterminated quoted "
                     "argument at line 1\n";
  EXPECT_NE(r.err.find(line), std::string::npos) << r.err;
  size_t errors = 0;
  for (size_t at = r.err.find("error:"); at != std::string::npos; at = r.err.find("error:", at + 1)) ++errors;
  EXPECT_EQ(errors, 1u) << r.err;
  EXPECT_EQ(file("db/CMakeLists.txt"), "set(DB_SRCS db/a.cc \"db/c.cc PARENT_SCOPE)\n");
}

// CMake's own File API (asked for by the tool: the fixture configures without a query) says
// which commands hold each target's sources, for each construct below (text alone cannot place them).

TEST_F(CMakePatch, sources_a_function_takes_go_into_the_section_of_its_call_that_holds_their_kind) {
  // abseil's shape: the call's own arguments (SRCS ...) hold the files, the function creates the target in
  // a helper file and names its file by OUTPUT_NAME; the headers' section holds b.h, beside b.cc's name.
  const std::string helpers =
      "function(core_library)\n"
      "  cmake_parse_arguments(CORE \"\" \"NAME\" \"SRCS;HDRS\" ${ARGN})\n"
      "  add_library(${CORE_NAME}_shared SHARED \"\")\n"
      "  target_sources(${CORE_NAME}_shared PRIVATE ${CORE_SRCS} ${CORE_HDRS})\n"
      "  set_target_properties(${CORE_NAME}_shared PROPERTIES OUTPUT_NAME ${CORE_NAME})\n"
      "endfunction()\n";
  const std::string cmake = kHead +
                            "include(cmake/CoreHelpers.cmake)\n"
                            "core_library(\n"
                            "  NAME core\n"
                            "  HDRS\n"
                            "    \"a.h\"\n"
                            "    \"b.h\"\n"
                            "  SRCS\n"
                            "    \"a.cc\"\n"
                            "    \"c.cc\"\n"
                            ")\n"
                            "add_executable(app main.cc)\ntarget_link_libraries(app PRIVATE core_shared)\n";
  auto files = sources("", cmake);
  files["cmake/CoreHelpers.cmake"] = helpers;
  files["a.h"] = "int a_value(int v);\n";
  files["b.h"] = "int b_value(int v);\n";
  make("function_call", files);
  auto r = stubgen("--apply");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string want = cmake;
  want.insert(want.find("    \"c.cc\""), "    \"b.cc\"\n");
  EXPECT_EQ(file("CMakeLists.txt"), want);
  EXPECT_EQ(file("cmake/CoreHelpers.cmake"), helpers);
  expect_restored("CMakeLists.txt");
}

TEST_F(CMakePatch, a_macro_made_library_takes_the_entry_in_the_list_its_call_names_not_a_programs_list) {
  // libevent's shape: add_core_library() is a macro naming the target core_shared and its file core; a
  // test program's list, in an if(), holds more names like b.cc.
  const std::string cmake = kHead +
                            "macro(add_core_library NAME)\n"
                            "  cmake_parse_arguments(LIB \"\" \"\" \"SOURCES\" ${ARGN})\n"
                            "  add_library(${NAME}_shared SHARED ${LIB_SOURCES})\n"
                            "  set_target_properties(${NAME}_shared PROPERTIES OUTPUT_NAME ${NAME})\n"
                            "endmacro()\n"
                            "set(SRC_CORE a.cc c.cc)\n"
                            "option(WITH_REGRESS \"\" ON)\n"
                            "if(WITH_REGRESS)\n"
                            "  list(APPEND SRC_REGRESS b_regress.cc b_more.cc b_util.cc)\n"
                            "  add_executable(regress ${SRC_REGRESS})\n"
                            "endif()\n"
                            "add_core_library(core SOURCES ${SRC_CORE})\n"
                            "add_executable(app main.cc)\ntarget_link_libraries(app PRIVATE core_shared)\n";
  auto files = sources("", cmake);
  files["b_regress.cc"] = "int main() { return 0; }\n";
  files["b_more.cc"] = "int b_more() { return 1; }\n";
  files["b_util.cc"] = "int b_util() { return 2; }\n";
  make("macro_call", files);
  auto r = stubgen("--apply");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string want = cmake;
  want.replace(want.find("set(SRC_CORE a.cc c.cc)"), 23, "set(SRC_CORE a.cc b.cc c.cc)");
  EXPECT_EQ(file("CMakeLists.txt"), want);
  expect_restored("CMakeLists.txt");
}

TEST_F(CMakePatch, a_target_in_a_subdirectory_built_from_the_parents_list_is_patched_there_never_in_another_set) {
  // libjpeg-turbo's shape: shared/ builds the library from the parent's CORE_SOURCES; the parent also
  // sets a version that a generated header takes. Only the list gets the entry: config.h still says 62.
  const std::string top = kHead +
                          "set(CORE_LIB_VERSION 62)\n"
                          "set(CORE_SOURCES a.cc c.cc)\n"
                          "configure_file(config.h.in config.h)\n"
                          "add_subdirectory(shared)\n"
                          "add_executable(app main.cc)\ntarget_link_libraries(app PRIVATE core)\n";
  const std::string shared =
      "set(CMAKE_LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/..)\n"
      "foreach(src ${CORE_SOURCES})\n"
      "  set(CORE_SRCS ${CORE_SRCS} ../${src})\n"
      "endforeach()\n"
      "add_library(core SHARED ${CORE_SRCS})\n";
  auto files = sources("", top);
  files["shared/CMakeLists.txt"] = shared;
  files["config.h.in"] = "#define CORE_LIB_VERSION ${CORE_LIB_VERSION}\n";
  make("parent_list", files);
  auto r = stubgen("--apply");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string want = top;
  want.replace(want.find("set(CORE_SOURCES a.cc c.cc)"), 27, "set(CORE_SOURCES a.cc b.cc c.cc)");
  EXPECT_EQ(file("CMakeLists.txt"), want);
  EXPECT_EQ(file("shared/CMakeLists.txt"), shared);
  expect_restored("CMakeLists.txt");
  EXPECT_EQ(test::read_file(build_ + "/config.h"), "#define CORE_LIB_VERSION 62\n");
}

TEST_F(CMakePatch, set_x_x_under_if_blocks_the_entry_joins_the_block_whose_files_share_its_name) {
  // libssh's shape: set(CORE_SRCS ${CORE_SRCS} ...) in one if() per platform; b_posix.cc belongs beside io_posix.cc.
  const std::string cmake = kHead +
                            "set(CORE_SRCS a.cc c.cc)\n"
                            "if(UNIX)\n"
                            "  set(CORE_SRCS ${CORE_SRCS} io_posix.cc)\n"
                            "endif()\n"
                            "if(WIN32)\n"
                            "  set(CORE_SRCS ${CORE_SRCS} io_win.cc b_win.cc)\n"
                            "endif()\n"
                            "add_library(core SHARED ${CORE_SRCS})\n" +
                            kApp;
  std::map<std::string, std::string> files = {{"CMakeLists.txt", cmake},
                                              {"a.cc", kA},
                                              {"c.cc", kC},
                                              {"b_posix.cc", kB},
                                              {"io_posix.cc", "int io_value() { return 0; }\n"},
                                              {"io_win.cc", "#error not here\n"},
                                              {"b_win.cc", "#error not here\n"},
                                              {"main.cc", kMain}};
  make("set_under_ifs", files);
  auto r = stubgen("--apply");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string want = cmake;
  want.replace(want.find("${CORE_SRCS} io_posix.cc)"), 25, "${CORE_SRCS} b_posix.cc io_posix.cc)");
  EXPECT_EQ(file("CMakeLists.txt"), want);
  expect_restored("CMakeLists.txt");
}

TEST_F(CMakePatch, a_source_goes_back_into_the_if_branch_of_its_own_header) {
  // libheif's shape: plug_unix.cc sat beside plug_unix.h in the else() branch's target_sources.
  const std::string cmake = kHead +
                            "add_library(core SHARED a.cc c.cc)\n"
                            "if(WIN32)\n"
                            "  target_sources(core PRIVATE plug_win.cc plug_win.h)\n"
                            "else()\n"
                            "  target_sources(core PRIVATE plug_unix.h)\n"
                            "endif()\n" +
                            kApp;
  std::map<std::string, std::string> files = {{"CMakeLists.txt", cmake},
                                              {"a.cc", kA},
                                              {"c.cc", kC},
                                              {"plug_unix.cc", kB},
                                              {"plug_unix.h", "int b_value(int v);\n"},
                                              {"plug_win.cc", "#error not here\n"},
                                              {"plug_win.h", "\n"},
                                              {"main.cc", kMain}};
  make("branch_header", files);
  auto r = stubgen("--apply");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string want = cmake;
  want.replace(want.find("PRIVATE plug_unix.h)"), 20, "PRIVATE plug_unix.cc plug_unix.h)");
  EXPECT_EQ(file("CMakeLists.txt"), want);
  expect_restored("CMakeLists.txt");
}

TEST_F(CMakePatch, a_source_never_goes_into_a_list_of_headers_even_one_holding_its_own_header) {
  // Two projects of the real-code panel: set(HEADERS ...) also reaches the target, and holds b.h beside
  // which b.cc would sort; a reviewer takes b.cc only in the list of sources.
  const std::string cmake = kHead +
                            "set(CORE_HEADERS a.h b.h c.h)\n"
                            "set(CORE_SRCS a.cc c.cc)\n"
                            "add_library(core SHARED ${CORE_SRCS} ${CORE_HEADERS})\n" +
                            kApp;
  auto files = sources("", cmake);
  for (const char* h : {"a.h", "b.h", "c.h"}) files[h] = "int value_of_" + std::string(1, h[0]) + "(int v);\n";
  make("header_list", files);
  auto r = stubgen("--apply");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string want = cmake;
  want.replace(want.find("set(CORE_SRCS a.cc c.cc)"), 24, "set(CORE_SRCS a.cc b.cc c.cc)");
  EXPECT_EQ(file("CMakeLists.txt"), want);
  expect_restored("CMakeLists.txt");
}

TEST_F(CMakePatch, a_source_taken_out_of_an_else_branch_goes_back_there_beside_its_other_platforms_twin) {
  // Issue 48's libheif shape with the header gone too: the else() branch's target_sources() names nothing
  // now; the if(WIN32) branch still names plug_win.cc, plug_unix.cc's twin. The unconditional list is
  // nearer by every other measure (its files, its directory): the branch's evidence wins.
  const std::string cmake = kHead +
                            "add_library(core SHARED a.cc c.cc)\n"
                            "if(WIN32)\n"
                            "  target_sources(core PRIVATE plug_win.cc)\n"
                            "else()\n"
                            "  target_sources(core PRIVATE)\n"
                            "endif()\n" +
                            kApp;
  std::map<std::string, std::string> files = {
      {"CMakeLists.txt", cmake}, {"a.cc", kA}, {"c.cc", kC}, {"plug_unix.cc", kB}, {"plug_win.cc", "#error not here\n"},
      {"main.cc", kMain}};
  make("emptied_else", files);
  auto r = stubgen("--apply");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string want = cmake;
  want.replace(want.find("PRIVATE)"), 8, "PRIVATE plug_unix.cc)");
  EXPECT_EQ(file("CMakeLists.txt"), want);
  expect_restored("CMakeLists.txt");
}

TEST_F(CMakePatch, a_source_taken_out_of_a_feature_branch_goes_back_into_the_branch_the_configure_took) {
  // Two emptied branches whose conditions both name the file's word (codec): the one the cache says the
  // configure took (CORE_CODEC ON, CORE_CODEC_LEGACY OFF before it) takes it; the unconditional set() does not.
  const std::string cmake = kHead +
                            "option(CORE_CODEC_LEGACY \"\" OFF)\n"
                            "option(CORE_CODEC \"\" ON)\n"
                            "set(CORE_SRCS a.cc c.cc)\n"
                            "if(CORE_CODEC_LEGACY)\n"
                            "  list(APPEND CORE_SRCS)\n"
                            "elseif(CORE_CODEC)\n"
                            "  list(APPEND CORE_SRCS)\n"
                            "endif()\n"
                            "add_library(core SHARED ${CORE_SRCS})\n" +
                            kApp;
  std::map<std::string, std::string> files = {
      {"CMakeLists.txt", cmake}, {"a.cc", kA}, {"c.cc", kC}, {"codec_zstd.cc", kB}, {"main.cc", kMain}};
  make("emptied_feature", files);
  auto r = stubgen("--apply");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string want = cmake;
  const std::string taken = "elseif(CORE_CODEC)\n  list(APPEND CORE_SRCS)";
  want.replace(want.find(taken), taken.size(), "elseif(CORE_CODEC)\n  list(APPEND CORE_SRCS codec_zstd.cc)");
  EXPECT_EQ(file("CMakeLists.txt"), want);
  expect_restored("CMakeLists.txt");
}

TEST_F(CMakePatch, a_source_with_no_kin_in_a_branch_goes_into_the_unconditional_list) {
  // b.cc shares nothing with the feature's d.cc but what it shares with a.cc and c.cc (directory, kind):
  // it compiles in every configuration, as its siblings do.
  const std::string cmake = kHead +
                            "option(CORE_EXTRA \"\" ON)\n"
                            "set(CORE_SRCS a.cc c.cc)\n"
                            "if(CORE_EXTRA)\n"
                            "  list(APPEND CORE_SRCS d.cc)\n"
                            "endif()\n"
                            "add_library(core SHARED ${CORE_SRCS})\n" +
                            kApp;
  auto files = sources("", cmake);
  files["d.cc"] = "int d_value() { return 0; }\n";
  make("no_kin", files);
  auto r = stubgen("--apply");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string want = cmake;
  want.replace(want.find("set(CORE_SRCS a.cc c.cc)"), 24, "set(CORE_SRCS a.cc b.cc c.cc)");
  EXPECT_EQ(file("CMakeLists.txt"), want);
  expect_restored("CMakeLists.txt");
}

// Of two lists, the one holding files of the source's kind takes it, even where the other's files sit
// deeper in its own directory: kern/b.cc goes beside a.cc and c.cc, not among kern/'s C files.
TEST_F(CMakePatch, a_source_goes_to_the_list_of_its_kind_before_the_list_of_its_directory) {
  const std::string cmake =
      "cmake_minimum_required(VERSION 3.16)\nproject(tiny C CXX)\n"
      "set(CXX_SRCS src/a.cc src/c.cc)\n"
      "set(C_SRCS src/kern/x.c src/kern/y.c)\n"
      "add_library(core SHARED ${CXX_SRCS} ${C_SRCS})\n" +
      kApp;
  std::map<std::string, std::string> files = {{"CMakeLists.txt", cmake},
                                              {"src/a.cc", kA},
                                              {"src/kern/b.cc", kB},
                                              {"src/c.cc", kC},
                                              {"src/kern/x.c", "int x_value(void) { return 1; }\n"},
                                              {"src/kern/y.c", "int y_value(void) { return 2; }\n"},
                                              {"main.cc", kMain}};
  make("kind_before_directory", files);
  auto r = stubgen("--apply");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string patched = file("CMakeLists.txt");
  const std::string cxx =
      patched.substr(patched.find("set(CXX_SRCS"), patched.find("set(C_SRCS") - patched.find("set(CXX_SRCS"));
  EXPECT_NE(cxx.find("src/kern/b.cc"), std::string::npos) << patched;
  EXPECT_NE(patched.find("set(C_SRCS src/kern/x.c src/kern/y.c)\n"), std::string::npos) << patched;
  expect_restored("CMakeLists.txt");
}

// A list in the branch the configure did not take is no home, however near its files are (fmt's shape:
// both branches list c.cc, so CMake's backtraces lead to both): its blend_*.cc are kin of blend_core.cc,
// yet the source goes into the list the build compiles.
TEST_F(CMakePatch, a_list_in_a_branch_the_configure_did_not_take_is_no_home_even_for_kin) {
  const std::string cmake = kHead +
                            "option(CORE_SIMD \"\" OFF)\n"
                            "if(CORE_SIMD)\n"
                            "  set(CORE_SRCS src/blend_simd.cc src/blend_avx.cc src/c.cc)\n"
                            "else()\n"
                            "  set(CORE_SRCS src/a.cc src/c.cc)\n"
                            "endif()\n"
                            "add_library(core SHARED ${CORE_SRCS})\n" +
                            kApp;
  std::map<std::string, std::string> files = {{"CMakeLists.txt", cmake},
                                              {"src/a.cc", kA},
                                              {"src/blend_core.cc", kB},
                                              {"src/c.cc", kC},
                                              {"src/blend_simd.cc", "int blend_simd() { return 1; }\n"},
                                              {"src/blend_avx.cc", "int blend_avx() { return 2; }\n"},
                                              {"main.cc", kMain}};
  make("untaken_kin", files);
  auto r = stubgen("--apply");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string want = cmake;
  want.replace(want.find("set(CORE_SRCS src/a.cc src/c.cc)"), 32, "set(CORE_SRCS src/a.cc src/blend_core.cc src/c.cc)");
  EXPECT_EQ(file("CMakeLists.txt"), want);
  expect_restored("CMakeLists.txt");
}

TEST_F(CMakePatch, a_platform_twin_goes_back_into_its_emptied_branch_and_a_prefix_shared_by_all_makes_no_kin) {
  // tiff's shape (issue 48's branch panel): every source is core_*.cc; core_unix.cc left else(), whose
  // if(WIN32) twin is core_win.cc. core_dump.cc shares only the project's prefix with that twin: it goes
  // back with the sources every platform compiles (a word of its own, dump, and the prefix: without the
  // prefix set aside, core_dump.cc and core_win.cc would be kin).
  const std::string cmake = kHead +
                            "add_library(core SHARED core_a.cc core_c.cc)\n"
                            "if(WIN32)\n"
                            "  target_sources(core PRIVATE core_win.cc)\n"
                            "else()\n"
                            "  target_sources(core PRIVATE)\n"
                            "endif()\n" +
                            kApp;
  std::map<std::string, std::string> files = {
      {"CMakeLists.txt", cmake},
      {"core_a.cc", kA},
      {"core_c.cc", "int d_value(int v);\nint c_value(int v) { return d_value(v) + 1; }\n"},
      {"core_dump.cc", "int d_value(int v) { return v; }\n"},
      {"core_unix.cc", kB},
      {"core_win.cc", "#error not here\n"},
      {"main.cc", kMain}};
  make("platform_twin", files);
  auto r = stubgen("--apply");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string want = cmake;
  want.replace(want.find("PRIVATE)"), 8, "PRIVATE core_unix.cc)");
  want.replace(want.find("SHARED core_a.cc core_c.cc)"), 27, "SHARED core_a.cc core_c.cc core_dump.cc)");
  EXPECT_EQ(file("CMakeLists.txt"), want);
  expect_restored("CMakeLists.txt");
}

TEST_F(CMakePatch, of_two_files_defining_a_symbol_the_one_another_platforms_branch_lists_is_not_added) {
  // libuv's shape (issue 48's branch panel): unix/title.cc left the list; unix/bsd_title.cc and
  // unix/os390_title.cc, listed under conditions that hold on BSDs and z/OS only (CMake's MATCHES, and
  // STREQUAL with a quoted string, which is never a variable's name), define the same function and compile
  // here too. title.cc is traced, and goes back; no other platform's twin is added.
  const std::string cmake = kHead +
                            "set(CORE_SRCS a.cc c.cc)\n"
                            "if(CMAKE_SYSTEM_NAME MATCHES \"FreeBSD|OpenBSD\")\n"
                            "  list(APPEND CORE_SRCS unix/bsd_title.cc)\n"
                            "endif()\n"
                            "if(CMAKE_SYSTEM_NAME STREQUAL \"OS390\")\n"
                            "  list(APPEND CORE_SRCS unix/os390_title.cc)\n"
                            "endif()\n"
                            "add_library(core SHARED ${CORE_SRCS})\n" +
                            kApp;
  std::map<std::string, std::string> files = {
      {"CMakeLists.txt", cmake},   {"a.cc", kA},      {"c.cc", kC}, {"unix/title.cc", kB}, {"unix/bsd_title.cc", kB},
      {"unix/os390_title.cc", kB}, {"main.cc", kMain}};
  make("untaken_twin", files);
  auto report = run(kLinkcheck + " --build-dir " + quote(build_) + " --format json " + quote(build_ + "/libcore.so"));
  ASSERT_EQ(report.status, 1) << report.err;
  const auto u = nlohmann::json::parse(report.out)["libraries"][0]["unresolved"][0];
  EXPECT_EQ(u["classification"], "missing-source") << u.dump(1);
  EXPECT_EQ(u["origin"]["file"], src_ + "/unix/title.cc") << u.dump(1);
  auto r = stubgen("--apply");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string want = cmake;
  want.replace(want.find("set(CORE_SRCS a.cc c.cc)"), 24, "set(CORE_SRCS a.cc c.cc unix/title.cc)");
  EXPECT_EQ(file("CMakeLists.txt"), want);
  expect_restored("CMakeLists.txt");
}

TEST_F(CMakePatch, a_generic_source_stays_unconditional_beside_its_platform_variant_in_a_branch) {
  // leveldb's shape (the real-code panel): util/env.cc is listed with every platform's sources, and
  // util/env_posix.cc, its POSIX variant, in else(WIN32). env.cc shares a word with env_posix.cc only.
  const std::string cmake = kHead +
                            "add_library(core SHARED a.cc c.cc)\n"
                            "if(WIN32)\n"
                            "  target_sources(core PRIVATE env_windows.cc)\n"
                            "else()\n"
                            "  target_sources(core PRIVATE env_posix.cc)\n"
                            "endif()\n" +
                            kApp;
  std::map<std::string, std::string> files = {{"CMakeLists.txt", cmake},
                                              {"a.cc", kA},
                                              {"c.cc", kC},
                                              {"env.cc", kB},
                                              {"env_posix.cc", "int env_posix() { return 0; }\n"},
                                              {"env_windows.cc", "#error not here\n"},
                                              {"main.cc", kMain}};
  make("generic_source", files);
  auto r = stubgen("--apply");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string want = cmake;
  want.replace(want.find("SHARED a.cc c.cc)"), 17, "SHARED a.cc c.cc env.cc)");
  EXPECT_EQ(file("CMakeLists.txt"), want);
  expect_restored("CMakeLists.txt");
}

TEST_F(CMakePatch, a_second_apply_before_the_rebuild_changes_nothing_names_the_rebuild_and_exits_0) {
  // The library predates the first patch; its other platform's twin (plug_apple.cc, in the branch the
  // configure does not take) defines the same symbol. The second run adds neither, refuses nothing, and
  // says to rebuild; the configure's own source is the one named.
  const std::string cmake = kHead +
                            "set(CORE_SRCS a.cc c.cc)\n"
                            "if(APPLE)\n"
                            "  list(APPEND CORE_SRCS plug_apple.cc)\n"
                            "else()\n"
                            "  list(APPEND CORE_SRCS plug_common.cc)\n"
                            "endif()\n"
                            "add_library(core SHARED ${CORE_SRCS})\n" +
                            kApp;
  std::map<std::string, std::string> files = {
      {"CMakeLists.txt", cmake},
      {"a.cc", kA},
      {"c.cc", kC},
      {"plug_posix.cc", kB},
      {"plug_apple.cc", "#include <CoreFoundation/CoreFoundation.h>\nint b_value(int v) { return v * 2; }\n"},
      {"plug_common.cc", "int plug_common() { return 0; }\n"},
      {"main.cc", kMain}};
  make("second_apply", files);
  auto first = stubgen("--apply");
  ASSERT_EQ(first.status, 0) << first.err;
  std::string want = cmake;
  want.replace(want.find("CORE_SRCS plug_common.cc)"), 25, "CORE_SRCS plug_common.cc plug_posix.cc)");
  ASSERT_EQ(file("CMakeLists.txt"), want);

  auto second = stubgen("--apply");
  EXPECT_EQ(second.status, 0) << second.err;
  EXPECT_EQ(file("CMakeLists.txt"), want);
  EXPECT_NE(second.err.find("musa-stubgen: 1 symbol (b_value(int)) defined in sources the build compiles since " +
                            build_ + "/libcore.so was built: rebuild it first (cmake --build), then run again\n"),
            std::string::npos)
      << second.err;
  EXPECT_NE(second.err.find("0 files changed, 0 symbols refused"), std::string::npos) << second.err;
  auto report = run(kLinkcheck + " --build-dir " + quote(build_) + " --format json " + quote(build_ + "/libcore.so"));
  ASSERT_EQ(report.status, 1) << report.err;
  const auto u = nlohmann::json::parse(report.out)["libraries"][0]["unresolved"][0];
  EXPECT_EQ(u["classification"], "unknown") << u.dump(1);
  EXPECT_EQ(u["origin"]["file"], src_ + "/plug_posix.cc") << u.dump(1);
  EXPECT_EQ(u["fix"]["detail"],
            "rebuild " + build_ + "/libcore.so (cmake --build): it predates the build's " + src_ + "/plug_posix.cc")
      << u.dump(1);
  expect_restored("CMakeLists.txt");
}

TEST_F(CMakePatch, stubs_go_beside_the_targets_sources_and_into_its_list_when_no_out_cpp_is_named) {
  // Run from the checkout's root without --out-cpp: unimplemented_functions.cpp is written where the
  // target's list reads it (core/), is added there, and the rebuilt library has nothing left undefined.
  const std::string top = kHead + "add_subdirectory(core)\n" + kApp;
  const std::string core = "add_library(core SHARED a.cc c.cc)\n";
  std::map<std::string, std::string> files = {
      {"CMakeLists.txt", top}, {"core/CMakeLists.txt", core},         {"core/a.cc", kA},
      {"core/c.cc", kC},       {"core/b.h", "int b_value(int v);\n"}, {"main.cc", kMain}};
  make_in("stubs_beside", files, "/core/libcore.so");
  auto r = run("cd " + quote(root_) + " && " + kStubgen + " --build-dir " + quote(build_) + " --source-root " +
               quote(src_) + " --stub unknown --apply " + quote(build_ + "/core/libcore.so"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(fs::exists(root_ + "/unimplemented_functions.cpp"));
  EXPECT_TRUE(fs::exists(src_ + "/core/musa_stubs.h"));  // the stub runtime's header, beside them
  ASSERT_TRUE(fs::exists(src_ + "/core/unimplemented_functions.cpp")) << r.err;
  EXPECT_NE(test::read_file(src_ + "/core/unimplemented_functions.cpp").find("b_value(int"), std::string::npos);
  EXPECT_EQ(file("core/CMakeLists.txt"), "add_library(core SHARED a.cc c.cc unimplemented_functions.cpp)\n");
  auto rebuilt = run("cmake --build " + quote(build_) + " -j 2");
  ASSERT_EQ(rebuilt.status, 0) << rebuilt.out << rebuilt.err;
  auto check = run(kLinkcheck + " --build-dir " + quote(build_) + " " + quote(build_ + "/core/libcore.so"));
  EXPECT_EQ(check.status, 0) << check.out << check.err;
}

TEST_F(CMakePatch, an_edit_with_which_cmake_would_not_configure_is_refused_and_not_written) {
  // add_impl() reads its arguments below impl/: other/b.cc, spelled as the call's siblings are, names
  // impl/other/b.cc, which does not exist. CMake, asked on a copy of the tree, says so; impl/d.cc, the
  // other source a.cc needs, goes in as planned.
  const std::string cmake = kHead +
                            "add_library(core SHARED lib.cc)\n"
                            "function(add_impl)\n"
                            "  foreach(f ${ARGN})\n"
                            "    target_sources(core PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/impl/${f})\n"
                            "  endforeach()\n"
                            "endfunction()\n"
                            "add_impl(a.cc c.cc)\n" +
                            kApp;
  std::map<std::string, std::string> files = {
      {"CMakeLists.txt", cmake},
      {"lib.cc", "int lib_value() { return 0; }\n"},
      {"impl/a.cc",
       "int b_value(int v);\nint d_value(int v);\nint a_value(int v) { return b_value(v) + d_value(v); }\n"},
      {"impl/c.cc", kC},
      {"impl/d.cc", "int d_value(int v) { return v + 2; }\n"},
      {"other/b.cc", kB},
      {"main.cc", kMain}};
  make("check_configure", files);
  auto r = stubgen("--apply");
  EXPECT_EQ(r.status, 1) << r.err;
  std::string want = cmake;
  want.replace(want.find("add_impl(a.cc c.cc)"), 19, "add_impl(a.cc c.cc d.cc)");
  EXPECT_EQ(file("CMakeLists.txt"), want);
  EXPECT_NE(r.err.find("musa-stubgen: cannot fix b_value(int): adding other/b.cc to add_impl (" + src_ +
                       "/CMakeLists.txt) leaves a build that does not configure: CMake Error at CMakeLists.txt:3 "
                       "(add_library): Cannot find source file: " +
                       src_ + "/impl/other/b.cc"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("cannot fix d_value"), std::string::npos) << r.err;
  // Nothing of the check is left in the build tree.
  for (const auto& e : fs::directory_iterator(build_))
    EXPECT_EQ(e.path().filename().string().rfind(".musa-linkcheck-check", 0), std::string::npos) << e.path();
}

TEST_F(CMakePatch, asking_cmake_configures_the_tree_again_says_so_once_and_leaves_cache_and_library_alone) {
  const std::string cmake = kHead + "add_library(core SHARED a.cc c.cc)\n" + kApp;
  make("ask_cmake", sources("", cmake));
  const std::string cache = test::read_file(build_ + "/CMakeCache.txt");
  const auto built = fs::last_write_time(build_ + "/libcore.so");
  ASSERT_FALSE(fs::exists(build_ + "/.cmake/api/v1/reply"));
  auto r = run(kLinkcheck + " --build-dir " + quote(build_) + " " + quote(build_ + "/libcore.so"));
  EXPECT_EQ(r.status, 1) << r.err;
  // The cmake that configured the tree (the cache's CMAKE_COMMAND) is the one run.
  const auto at = cache.find("CMAKE_COMMAND:INTERNAL=") + 23;
  const std::string cmake_command = cache.substr(at, cache.find('\n', at) - at);
  const std::string note = "musa-linkcheck: note: asked CMake for its File API reply: `" + cmake_command + " " +
                           build_ +
                           "` configured the build tree again, which leaves the cache and the built files as they are "
                           "(--no-reconfigure reads the files alone)\n";
  EXPECT_NE(r.err.find(note), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("note:", r.err.find(note) + note.size()), std::string::npos) << r.err;  // once
  EXPECT_TRUE(fs::exists(build_ + "/.cmake/api/v1/reply"));
  EXPECT_EQ(test::read_file(build_ + "/CMakeCache.txt"), cache);
  EXPECT_EQ(fs::last_write_time(build_ + "/libcore.so"), built);
  EXPECT_NE(r.out.find("b_value(int)"), std::string::npos) << r.out;
  // The reply is current now: a second run asks nothing.
  auto again = run(kLinkcheck + " --build-dir " + quote(build_) + " " + quote(build_ + "/libcore.so"));
  EXPECT_EQ(again.err.find("note:"), std::string::npos) << again.err;
}

TEST_F(CMakePatch, no_reconfigure_runs_no_cmake_and_reads_the_files_alone) {
  const std::string cmake = kHead + "add_library(core SHARED a.cc c.cc)\n" + kApp;
  make("no_reconfigure", sources("", cmake));
  auto r = run(kStubgen + " --build-dir " + quote(build_) + " --no-reconfigure --no-runtime --out-cpp " +
               quote(root_ + "/stubs.cpp") + " --out-header " + quote(root_ + "/stubs.h") + " --apply " +
               quote(build_ + "/libcore.so"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("note:"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(build_ + "/.cmake/api/v1"));
  EXPECT_EQ(file("CMakeLists.txt"), kHead + "add_library(core SHARED a.cc b.cc c.cc)\n" + kApp);
}

}  // namespace
}  // namespace mlc

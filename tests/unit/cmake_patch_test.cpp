// CMake as people write it: tiny projects, each missing one source in a different construct
// (target_sources, add_library's own list, set()/list(APPEND) inside if(), a subdirectory's list
// passed up with PARENT_SCOPE, file(GLOB)), configured and built with cmake at test time. One
// `musa-stubgen --apply` must insert exactly the expected line and the project must build again;
// a second run must change no byte.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

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
    root_ = test::scratch_dir("cmake-patch-" + name);  // the tests' scratch area (test_support.h)
    fs::remove_all(root_);
    src_ = root_ + "/src";
    build_ = root_ + "/build";
    for (const auto& [path, text] : files) {
      fs::create_directories(fs::path(src_ + "/" + path).parent_path());
      test::write_file(src_ + "/" + path, text);
    }
    ASSERT_EQ(run("cd " + quote(src_) + " && git init -q . && git add -A && git -c user.name=t -c user.email=t@t "
                  "commit -qm base").status, 0);
    auto configured = run("cmake -S " + quote(src_) + " -B " + quote(build_) + " -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_COMPILE_COMMANDS=ON");
    ASSERT_EQ(configured.status, 0) << configured.out << configured.err;
    auto built = run("cmake --build " + quote(build_) + " -j 2");
    ASSERT_NE(built.status, 0) << "the program should not link before the fix";
    ASSERT_TRUE(fs::exists(build_ + "/libcore.so"));
  }

  test::CommandResult stubgen(const std::string& extra) {
    return run(kStubgen + " --build-dir " + quote(build_) + " --source-root " + quote(src_) + " --no-runtime --out-cpp " +
               quote(root_ + "/stubs.cpp") + " --out-header " + quote(root_ + "/stubs.h") + " " + extra + " " +
               quote(build_ + "/libcore.so"));
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
    EXPECT_EQ(run("cd " + quote(src_) + " && git status --porcelain --untracked-files=no | grep -v " +
                  quote(cmake_rel)).out, "");
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
                      ")\n" + kApp;
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
                      "add_library(core SHARED ${CORE_SRCS})\n" + kApp;
  std::map<std::string, std::string> files = {{"CMakeLists.txt", cmake}, {"a.cc", "int a2() { return 0; }\n"},
                                              {"posix/a.cc", kA}, {"posix/b.cc", kB}, {"posix/c.cc", kC},
                                              {"main.cc", kMain}};
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
  auto r = stubgen("--apply");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(file("CMakeLists.txt"), cmake);
  EXPECT_NE(r.err.find(src_ + "/src/b.cc matches the file(GLOB) pattern src/*.cc of CORE_SRCS (" + src_ +
                       "/CMakeLists.txt:3), so it needs no entry: the fix lies elsewhere (re-run cmake"),
            std::string::npos) << r.err;
  // And indeed: re-running cmake is the fix.
  ASSERT_EQ(run("cmake " + quote(build_)).status, 0);
  EXPECT_EQ(run("cmake --build " + quote(build_) + " -j 2").status, 0);
}

TEST_F(CMakePatch, glob_trimmed_by_remove_item_loses_that_entry_and_keeps_the_rest_of_the_call) {
  std::string cmake = kHead +
                      "file(GLOB CORE_SRCS ${CMAKE_CURRENT_SOURCE_DIR}/src/*.cc)\n"
                      "list(REMOVE_ITEM CORE_SRCS\n"
                      "     ${CMAKE_CURRENT_SOURCE_DIR}/src/b.cc\n"
                      "     ${CMAKE_CURRENT_SOURCE_DIR}/src/win.cc)\n"
                      "add_library(core SHARED ${CORE_SRCS})\n" + kApp;
  auto files = sources("src/", cmake);
  files["src/win.cc"] = "#error not on this platform\n";
  make("remove_item", files);
  auto r = stubgen("--apply");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string want = cmake;
  want.erase(want.find("     ${CMAKE_CURRENT_SOURCE_DIR}/src/b.cc\n"), std::string("     ${CMAKE_CURRENT_SOURCE_DIR}/src/b.cc\n").size());
  EXPECT_EQ(file("CMakeLists.txt"), want);
  EXPECT_NE(r.err.find("musa-stubgen: dropping ${CMAKE_CURRENT_SOURCE_DIR}/src/b.cc from list(REMOVE_ITEM CORE_SRCS ...) at " +
                       src_ + "/CMakeLists.txt:4: it takes out a source the library needs\n"),
            std::string::npos) << r.err;
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
                      "add_library(core SHARED ${CORE_SRCS})\n" + kApp;
  auto files = sources("src/", cmake);
  files["src/b.cc"] = "int d_value(int v);\nint b_value(int v) { return d_value(v); }\n";
  files["src/d.cc"] = "int d_value(int v) { return v * 2; }\n";
  make("remove_chain", files);
  auto r = stubgen("--apply");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(file("CMakeLists.txt"), kHead + "file(GLOB CORE_SRCS src/*.cc)\nadd_library(core SHARED ${CORE_SRCS})\n" + kApp);
  EXPECT_NE(r.err.find("removing list(FILTER CORE_SRCS EXCLUDE REGEX /d\\\\.cc$) at " + src_ + "/CMakeLists.txt:5"),
            std::string::npos) << r.err;
  ASSERT_EQ(run("cmake " + quote(build_)).status, 0);
  expect_restored("CMakeLists.txt");
}

TEST_F(CMakePatch, filter_that_also_excludes_a_file_kept_out_on_purpose_is_refused_with_the_reason) {
  std::string cmake = kHead +
                      "file(GLOB CORE_SRCS src/*.cc)\n"
                      "list(FILTER CORE_SRCS EXCLUDE REGEX \"/(b|win)\\\\.cc$\")\n"
                      "add_library(core SHARED ${CORE_SRCS})\n" + kApp;
  auto files = sources("src/", cmake);
  files["src/win.cc"] = "#error not on this platform\n";
  make("filter_shared", files);
  auto r = stubgen("--apply");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(file("CMakeLists.txt"), cmake);
  EXPECT_NE(r.err.find(src_ + "/src/b.cc is excluded by list(FILTER CORE_SRCS EXCLUDE REGEX /(b|win)\\\\.cc$) at " + src_ +
                       "/CMakeLists.txt:4, which also excludes " + src_ + "/src/win.cc: narrow that regex by hand"),
            std::string::npos) << r.err;
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
                      "add_library(core SHARED ${CORE_SRCS})\n" + kApp;
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
                      "add_library(core SHARED ${CORE_SRCS})\n" + kApp;
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
  ASSERT_EQ(run("cd " + quote(root_) + " && git init -q . && git add src && git -c user.name=t -c user.email=t@t "
                "commit -qm base").status, 0);
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
  std::string line = "musa-stubgen: error: " + src_ + "/db/CMakeLists.txt: broken CMake file: unterminated quoted "
                     "argument at line 1\n";
  EXPECT_NE(r.err.find(line), std::string::npos) << r.err;
  size_t errors = 0;
  for (size_t at = r.err.find("error:"); at != std::string::npos; at = r.err.find("error:", at + 1)) ++errors;
  EXPECT_EQ(errors, 1u) << r.err;
  EXPECT_EQ(file("db/CMakeLists.txt"), "set(DB_SRCS db/a.cc \"db/c.cc PARENT_SCOPE)\n");
}

}  // namespace
}  // namespace mlc

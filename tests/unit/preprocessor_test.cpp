// Macros as the preprocessor sees them: #if branches as conditions, evaluated with
// the build's -D/-U flags, and a namespace macro a generated config header defines twice resolved to
// the branch the build takes - checked against the compiler's own answer (g++ -E -dM).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "source/preprocessor.h"
#include "source/source_index.h"
#include "test_support.h"

namespace mlc {
namespace {

using source::evaluate_condition;

TEST(Preprocessor, conditions_of_an_if_chain) {
  source::ConditionStack c;
  c.directive("ifndef", " CONFIG_H_");
  c.directive("ifdef", " SOME_BUILD_SYSTEM // comment");
  EXPECT_EQ(c.current(), "(!defined(CONFIG_H_)) && (defined(SOME_BUILD_SYSTEM))");
  c.directive("elif", " VERSION >= 3");
  EXPECT_EQ(c.current(), "(!defined(CONFIG_H_)) && !(defined(SOME_BUILD_SYSTEM)) && (VERSION >= 3)");
  c.directive("else", "");
  EXPECT_EQ(c.current(), "(!defined(CONFIG_H_)) && !(defined(SOME_BUILD_SYSTEM)) && !(VERSION >= 3)");
  c.directive("endif", "");
  c.directive("endif", "");
  EXPECT_EQ(c.current(), "");
}

TEST(Preprocessor, evaluates_with_the_build_definitions) {
  std::map<std::string, std::string> d;
  source::add_command_definitions(
      {"c++", "-DUSE_X", "-D", "VERSION=4", "-DGONE", "-UGONE", "-DNAME=\"a\"", "-c", "f.cc"}, d);
  EXPECT_EQ(d, (std::map<std::string, std::string>{{"USE_X", "1"}, {"VERSION", "4"}, {"NAME", "\"a\""}}));
  EXPECT_EQ(evaluate_condition("defined(USE_X) && VERSION >= 3", d), true);
  EXPECT_EQ(evaluate_condition("!defined(SOME_BUILD_SYSTEM)", d), true);
  EXPECT_EQ(evaluate_condition("defined GONE || UNKNOWN", d), false);  // an unknown identifier is 0
  EXPECT_EQ(evaluate_condition("(VERSION == 4) && !(USE_X != 1)", d), true);
  EXPECT_EQ(evaluate_condition("VERSION < 0x10 && 2 > 1 && 1 <= 1", d), true);
  EXPECT_EQ(evaluate_condition("__has_include(<x.h>)", d), std::nullopt);  // not ours to evaluate
  EXPECT_EQ(evaluate_condition("NAME", d), std::nullopt);                  // not an integer
  EXPECT_EQ(evaluate_condition("", d), true);
}

// The real case: the namespace macro of a generated config header, defined under #ifdef and #else.
TEST(Preprocessor, a_namespace_macro_defined_twice_resolves_as_the_compiler_does) {
  const std::string dir = test::scratch_dir("preprocessor");
  std::filesystem::create_directories(dir + "/build/gen");
  std::filesystem::create_directories(dir + "/tree");
  test::write_file(dir + "/build/gen/config.h",
                   "#ifndef GEN_CONFIG_H\n#define GEN_CONFIG_H\n#ifdef SOME_BUILD_SYSTEM\n#define LIB_NS legacy_ns\n"
                   "#else\n#define LIB_NS modern_ns\n#endif\n#endif\n");
  test::write_file(dir + "/tree/impl.cc", "#include \"config.h\"\nnamespace LIB_NS {\nint f(int x) { return x; }\n}\n");
  for (const auto& [flags, expect] :
       std::map<std::string, std::string>{{"", "modern_ns::f"}, {"-DSOME_BUILD_SYSTEM", "legacy_ns::f"}}) {
    std::map<std::string, std::string> defines;
    std::vector<std::string> argv = {"c++", "-c", "impl.cc"};
    if (!flags.empty()) argv.push_back(flags);
    source::add_command_definitions(argv, defines);
    auto idx = source::SourceIndex::build({.roots = {dir + "/tree"}, .cache_file = "", .defines = defines}, nullptr,
                                          {dir + "/build"});
    std::string got;
    for (const auto* e : idx.lookup("f"))
      if (e->kind == source::EntityKind::FunctionDefinition) got = e->qualified;
    EXPECT_EQ(got, expect) << flags;
    // The oracle: the compiler's own macro table for the same flags.
    auto cpp = test::run("c++ -E -dM " + flags + " -I" + dir + "/build/gen -x c++ " + dir + "/tree/impl.cc");
    ASSERT_EQ(cpp.status, 0) << cpp.err;
    EXPECT_NE(cpp.out.find("#define LIB_NS " + expect.substr(0, expect.find("::"))), std::string::npos) << cpp.out;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace mlc

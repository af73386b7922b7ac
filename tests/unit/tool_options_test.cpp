// Options of the two tools that no other test exercised, each by its effect: the
// stub musa-stubgen writes under --style and --version-guard, compiled and run (the stub runtime's
// verdict, and nm for what a guard leaves defined); --c10/--no-c10; musa-linkcheck's --json-report
// (the same document --format json prints) and --color always/never; the SDK found from MUSA_HOME
// (and ROCM_PATH under --backend hip); the other installed versions of a missing library looked for
// in $CONDA_PREFIX/lib and $VIRTUAL_ENV/lib.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "test_support.h"

namespace mlc {
namespace {

using test::quote;
using test::run;

const std::string kLinkcheck = MLC_LINKCHECK_BIN;
const std::string kStubgen = MLC_STUBGEN_BIN;
const std::string kExample = MLC_EXAMPLE_DIR;  // the built example
const std::string kExampleSrc = std::string(MLC_SOURCE_DIR) + "/fixtures/example";

// The example's context without --build-dir (so no compile is needed to trace), with the SDK given.
std::string context(bool sdk = true) {
  return " --porting-dir " + quote(kExampleSrc + "/generated_cuda_compatible") + " --cmake-lists " +
         quote(kExampleSrc + "/csrc/CMakeLists.txt") + " --mapping " + quote(kExampleSrc + "/mapping") +
         (sdk ? " --sdk-home " + quote(kExample + "/sdk") : std::string()) + " --with " +
         quote(kExample + "/libc10.so") + " --no-cache --cuda-home ''";
}

// The stub musa-stubgen writes for the example's musaMallocAsync (sdk-declared-only) with `options`.
std::string stub_file(const std::string& dir, const std::string& options) {
  auto r = run(kStubgen + context() + " --no-confirm --out-cpp " + quote(dir + "/stubs.cpp") + " --out-header " +
               quote(dir + "/stubs.h") + " " + options + " " + quote(kExample + "/libmusa_kernels.so"));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  return test::read_file(dir + "/stubs.cpp");
}

// Compiles the stubs with a main that calls musaMallocAsync and prints what it returned.
test::CommandResult build_and_call(const std::string& dir, const std::string& defines = "") {
  test::write_file(
      dir + "/main.cpp",
      "#include <musa_runtime_api.h>\n#include <cstdio>\n#include <stdexcept>\nint main() {\n  void* p = nullptr;\n"
      "  try { std::printf(\"%d\\n\", (int)musaMallocAsync(&p, 16, nullptr)); }\n"
      "  catch (const std::exception& e) { std::printf(\"threw: %s\\n\", e.what()); }\n}\n");
  auto cc = run("c++ -std=c++17 " + defines + " -I" + quote(kExample + "/sdk/include") + " -I" + quote(dir) + " -o " +
                quote(dir + "/prog") + " " + quote(dir + "/main.cpp") + " " + quote(dir + "/stubs.cpp"));
  if (cc.status != 0) return cc;
  return run(quote(dir + "/prog"));
}

TEST(StubgenOptions, each_style_is_the_stub_runtime_policy_it_names) {
  struct Case {
    const char* style;
    const char* line;  // the body's policy line
    int status;        // the program calling the stub
    const char* out;
  };
  for (const Case& c :
       {Case{"throw", "throw std::runtime_error(\"musaMallocAsync is not supported now!\");", 0,
             "threw: musaMallocAsync is not supported now!\n"},
        Case{"return-error",
             "  musa_stub_enter(\"musaMallocAsync\", \"musaMallocAsync\");\n  return musaErrorNotSupported;", 0,
             nullptr},
        Case{"abort", "  musa_stub_abort(\"musaMallocAsync\", \"musaMallocAsync\");", 128 + 6, ""}}) {
    SCOPED_TRACE(c.style);
    std::string dir = test::scratch_dir(std::string("style-") + c.style);
    std::string cpp = stub_file(dir, std::string("--style ") + c.style);
    EXPECT_NE(cpp.find(c.line), std::string::npos) << cpp;
    auto r = build_and_call(dir);
    EXPECT_EQ(r.status, c.status) << r.out << r.err;
    if (c.out) {
      EXPECT_EQ(r.out, c.out);
    }
    if (std::string(c.style) == "return-error") {
      // It returns the SDK's "not supported" error: the value the header gives it.
      auto want =
          run("printf '#include <musa_runtime_api.h>\\n#include <cstdio>\\nint "
              "main(){std::printf(\"%%d\\\\n\",(int)musaErrorNotSupported);}\\n' > " +
              quote(dir + "/v.cpp") + " && c++ -I" + quote(kExample + "/sdk/include") + " -o " + quote(dir + "/v") +
              " " + quote(dir + "/v.cpp") + " && " + quote(dir + "/v"));
      ASSERT_EQ(want.status, 0) << want.err;
      EXPECT_EQ(r.out, want.out);
    }
    if (std::string(c.style) == "abort") {
      EXPECT_NE(r.err.find("musa-stubs: aborting: "), std::string::npos) << r.err;
    }
  }
}

TEST(StubgenOptions, a_version_guard_defines_the_stub_only_below_that_sdk_version) {
  std::string dir = test::scratch_dir("version-guard");
  std::string cpp = stub_file(dir, "--version-guard 4000");
  EXPECT_NE(cpp.find("#if defined(REAL_MUSA_VERSION) && (REAL_MUSA_VERSION < 4000)\n"), std::string::npos) << cpp;
  // nm is the oracle: an older SDK gets the stub, the SDK that has the function does not.
  for (const auto& [version, defined] : {std::pair<int, bool>{3000, true}, {4000, false}}) {
    auto obj = run("c++ -std=c++17 -c -DREAL_MUSA_VERSION=" + std::to_string(version) + " -I" +
                   quote(kExample + "/sdk/include") + " -I" + quote(dir) + " -o " + quote(dir + "/s.o") + " " +
                   quote(dir + "/stubs.cpp") + " && nm --defined-only " + quote(dir + "/s.o") + " | awk '{print $3}'");
    ASSERT_EQ(obj.status, 0) << obj.err;
    EXPECT_EQ(obj.out.find("musaMallocAsync\n") != std::string::npos, defined) << version << ":\n" << obj.out;
  }
}

TEST(StubgenOptions, c10_and_no_c10_choose_the_error_the_stub_throws) {
  std::string dir = test::scratch_dir("c10");
  EXPECT_NE(
      stub_file(dir, "--c10").find("C10_THROW_ERROR(NotImplementedError, \"musaMallocAsync is not supported now!\");"),
      std::string::npos);
  std::string plain = stub_file(dir, "--no-c10");
  EXPECT_NE(plain.find("throw std::runtime_error(\"musaMallocAsync is not supported now!\");"), std::string::npos)
      << plain;
  EXPECT_EQ(plain.find("C10_THROW_ERROR"), std::string::npos) << plain;
}

TEST(LinkcheckOptions, json_report_writes_the_document_format_json_prints_beside_the_text) {
  std::string dir = test::scratch_dir("json-report");
  std::string lib = quote(kExample + "/libmusa_kernels.so");
  auto text = run(kLinkcheck + context() + " --json-report " + quote(dir + "/r.json") + " " + lib);
  EXPECT_EQ(text.status, 1) << text.err;
  EXPECT_EQ(text.out.rfind("error: loading libmusa_kernels.so would fail", 0), 0u)
      << text.out;  // the text is still printed
  auto json = run(kLinkcheck + context() + " --format json " + lib);
  auto written = nlohmann::json::parse(test::read_file(dir + "/r.json"));
  auto printed = nlohmann::json::parse(json.out);
  EXPECT_EQ(written, printed);
  EXPECT_GT(written["libraries"][0]["unresolved"].size(), 0u);
}

TEST(LinkcheckOptions, color_always_colors_a_pipe_and_never_colors_nothing) {
  std::string lib = quote(kExample + "/libmusa_kernels.so");
  auto always = run(kLinkcheck + context() + " --color always " + lib);
  auto never = run("FORCE_COLOR=1 " + kLinkcheck + context() + " --color never " + lib);
  auto by_default = run(kLinkcheck + context() + " " + lib);  // a pipe: no color
  EXPECT_NE(always.out.find("\x1b["), std::string::npos) << always.out;
  EXPECT_EQ(never.out.find("\x1b["), std::string::npos) << never.out;
  EXPECT_EQ(by_default.out.find("\x1b["), std::string::npos);
  // The same words once the escapes are taken out.
  std::string stripped;
  for (size_t i = 0; i < always.out.size(); ++i) {
    if (always.out[i] == '\x1b') {
      i = always.out.find('m', i);
      continue;
    }
    stripped += always.out[i];
  }
  EXPECT_EQ(stripped, never.out);
}

TEST(LinkcheckOptions, musa_home_is_the_sdk_when_sdk_home_is_not_given) {
  std::string lib = quote(kExample + "/libmusa_kernels.so");
  auto with_option = run(kLinkcheck + context(true) + " --format json " + lib);
  auto from_env =
      run("MUSA_HOME=" + quote(kExample + "/sdk") + " " + kLinkcheck + context(false) + " --format json " + lib);
  auto without = run("MUSA_HOME=/nonexistent " + kLinkcheck + context(false) + " --format json " + lib);
  auto a = nlohmann::json::parse(with_option.out), b = nlohmann::json::parse(from_env.out),
       c = nlohmann::json::parse(without.out);
  auto classes = [](const nlohmann::json& d) {
    std::map<std::string, std::string> out;
    for (const auto& u : d["libraries"][0]["unresolved"]) out[u["symbol"]] = u["classification"];
    return out;
  };
  EXPECT_EQ(classes(b), classes(a));
  EXPECT_EQ(classes(a).at("musaMallocAsync"), "sdk-declared-only");
  EXPECT_NE(classes(c).at("musaMallocAsync"), "sdk-declared-only") << "without an SDK nothing declares it";
}

// A world where libmlcuser.so needs libmlcother.so.2, which nothing on the loader's path provides, and
// <dir>/env/lib holds libmlcother.so.1: the layout of a conda prefix, a venv and a ROCm home alike.
struct MissingLibraryWorld {
  std::string dir, env, user;
};

MissingLibraryWorld missing_library_world(const std::string& name) {
  MissingLibraryWorld w{.dir = test::scratch_dir(name), .env = "", .user = ""};
  w.env = w.dir + "/env";
  w.user = w.dir + "/user/libmlcuser.so";
  std::filesystem::create_directories(w.env + "/lib");
  std::filesystem::create_directories(w.dir + "/build");
  std::filesystem::create_directories(w.dir + "/user");
  test::write_file(w.dir + "/other.c", "int mlc_other(void) { return 1; }\n");
  test::write_file(w.dir + "/user.c", "int mlc_other(void);\nint mlc_user(void) { return mlc_other(); }\n");
  auto r =
      run("gcc -shared -fPIC -Wl,-soname,libmlcother.so.1 -o " + quote(w.env + "/lib/libmlcother.so.1") + " " +
          quote(w.dir + "/other.c") + " && gcc -shared -fPIC -Wl,-soname,libmlcother.so.2 -o " +
          quote(w.dir + "/build/libmlcother.so.2") + " " + quote(w.dir + "/other.c") + " && gcc -shared -fPIC -o " +
          quote(w.user) + " " + quote(w.dir + "/user.c") + " -L" + quote(w.dir + "/build") + " -l:libmlcother.so.2");
  EXPECT_EQ(r.status, 0) << r.err;
  return w;
}

// `-q`'s whole report for the world with `env` (assignments for env(1)) and `options`: no variable of
// the person's shell leaks in, and no SDK but the one a variable names.
test::CommandResult quiet_report(const MissingLibraryWorld& w, const std::string& env, const std::string& options) {
  return run("env -u LD_LIBRARY_PATH -u CONDA_PREFIX -u VIRTUAL_ENV -u ROCM_PATH MUSA_HOME=/nonexistent " + env + " " +
             kLinkcheck + " --no-cache --cuda-home '' -q " + options + " " + quote(w.user));
}

std::string missing_headline(const std::string& found) {
  return "error: loading libmlcuser.so would fail: 1 cause\nerror: library not found: libmlcother.so.2 (needed by "
         "libmlcuser.so); " +
         found + "\n";
}

TEST(LinkcheckOptions, conda_prefix_and_virtual_env_lib_are_searched_for_other_versions_of_a_missing_library) {
  auto w = missing_library_world("env-places");
  const std::string one = w.env + "/lib/libmlcother.so.1";
  ASSERT_FALSE(test::real_load(w.user).ok) << "the loader must not find libmlcother.so.2 anywhere";
  struct Case {
    std::string env, found;
  };
  for (const Case& c :
       {Case{"CONDA_PREFIX=" + quote(w.env), "1 other version found: " + one + " [conda]"},
        Case{"VIRTUAL_ENV=" + quote(w.env), "1 other version found: " + one + " [venv]"},
        Case{"CONDA_PREFIX=/nonexistent VIRTUAL_ENV=/nonexistent", "no other version of it was found"},
        Case{"CONDA_PREFIX= VIRTUAL_ENV=", "no other version of it was found"},
        // The prefix, not the variable's lib itself: $CONDA_PREFIX/lib/lib is not searched.
        Case{"CONDA_PREFIX=" + quote(w.dir) + " VIRTUAL_ENV=" + quote(w.dir), "no other version of it was found"}}) {
    SCOPED_TRACE(c.env);
    auto r = quiet_report(w, c.env, "");
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.out, missing_headline(c.found));
  }
  // Both set, to two environments: conda's first, then the venv's, each under its own tag.
  std::filesystem::create_directories(w.dir + "/venv/lib");
  std::filesystem::copy_file(one, w.dir + "/venv/lib/libmlcother.so.1");
  auto both = quiet_report(w, "CONDA_PREFIX=" + quote(w.env) + " VIRTUAL_ENV=" + quote(w.dir + "/venv"), "");
  EXPECT_EQ(both.out, missing_headline("2 other versions found: " + one + " [conda] and " + w.dir +
                                       "/venv/lib/libmlcother.so.1 [venv]"));
}

TEST(LinkcheckOptions, rocm_path_is_the_hip_sdk_when_sdk_home_is_not_given) {
  auto w = missing_library_world("rocm-path");
  const std::string sdk_copy = "1 other version found: " + w.env + "/lib/libmlcother.so.1 [sdk]";
  auto from_env = quiet_report(w, "ROCM_PATH=" + quote(w.env), "--backend hip");
  EXPECT_EQ(from_env.out, missing_headline(sdk_copy)) << from_env.err;
  // The same SDK given by --sdk-home: the variable is only its default.
  auto with_option = quiet_report(w, "", "--backend hip --sdk-home " + quote(w.env));
  EXPECT_EQ(with_option.out, from_env.out);
  auto overridden = quiet_report(w, "ROCM_PATH=" + quote(w.env), "--backend hip --sdk-home ''");
  EXPECT_EQ(overridden.out, missing_headline("no other version of it was found"));
  auto nowhere = quiet_report(w, "ROCM_PATH=/nonexistent", "--backend hip");
  EXPECT_EQ(nowhere.out, missing_headline("no other version of it was found"));
  // ROCM_PATH is HIP's: the MUSA backend does not read it.
  auto musa = quiet_report(w, "ROCM_PATH=" + quote(w.env), "--backend musa");
  EXPECT_EQ(musa.out, missing_headline("no other version of it was found"));
  // In JSON: the cause's other copy, with how it was found.
  auto json = run("env -u LD_LIBRARY_PATH -u CONDA_PREFIX -u VIRTUAL_ENV ROCM_PATH=" + quote(w.env) + " " + kLinkcheck +
                  " --no-cache --cuda-home '' --backend hip --format json " + quote(w.user));
  auto doc = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << json.out << json.err;
  bool found = false;
  for (const auto& c : doc["causes"])
    if (c["kind"] == "missing-library" && c["library"] == "libmlcother.so.2") {
      ASSERT_EQ(c["others"].size(), 1u) << c.dump();
      EXPECT_EQ(c["others"][0]["path"], w.env + "/lib/libmlcother.so.1");
      EXPECT_EQ(c["others"][0]["how"], "sdk");
      found = true;
    }
  EXPECT_TRUE(found) << json.out;
}

}  // namespace
}  // namespace mlc

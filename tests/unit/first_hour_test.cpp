// A new user's first hour: what musa-linkcheck prints for the first things people try -
// a .o or .a, a missing file, explain, a bad context path, a typo'd option - as exact lines on
// stdout and stderr with the exit status, so that none of them can mislead again.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "test_support.h"

namespace mlc {
namespace {

using test::quote;
using test::run;

const std::string kBin = MLC_LINKCHECK_BIN;
const std::string kFix = MLC_LOADER_FIXTURES;
const std::string kCrt1 = "/usr/lib/x86_64-linux-gnu/crt1.o";

std::string linkcheck(const std::string& args) { return kBin + " " + args; }

const std::string kObjectWhy =
    ": a relocatable object (.o), which the dynamic loader never loads: check the shared library or executable it "
    "is linked into (nm -u lists its undefined symbols)\n";
const std::string kArchiveWhy =
    ": a static archive (.a), which the dynamic loader never loads: check the shared library or executable it is "
    "linked into (nm -u lists its members' undefined symbols)\n";

// crt1.o has main and __libc_start_main undefined: "0 undefined symbols in 1 library" was a false all-clear.
TEST(FirstHour, relocatable_object_is_named_never_given_a_verdict) {
  if (!std::filesystem::exists(kCrt1)) MLC_SKIP() << kCrt1 << " is absent (libc6-dev)";
  auto r = run(linkcheck(quote(kCrt1)));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "musa-linkcheck: error: " + kCrt1 + kObjectWhy);

  // A directory holding only the same file says the same, instead of a bare refusal.
  std::string dir = test::scratch_dir("objects-only");
  std::filesystem::copy_file(kCrt1, dir + "/crt1.o");
  r = run(linkcheck(quote(dir)));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "musa-linkcheck: error: " + dir +
                       ": no ELF shared object or executable in this directory, only relocatable objects or static "
                       "archives (such as " +
                       dir +
                       "/crt1.o), which the dynamic loader never loads: check the "
                       "shared library or executable they are linked into\n");

  // Beside a shared object, the .o is skipped and the shared object is checked.
  std::filesystem::copy_file(kFix + "/chain/rpath/libchain_a.so", dir + "/libchain_a.so");
  r = run(linkcheck(quote(dir)));
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out.substr(r.out.rfind(" in ")), " in 1 library\n") << r.out;
}

TEST(FirstHour, static_archive_is_named_as_one) {
  const std::string archive = kFix + "/static/libfx_static.a";
  ASSERT_TRUE(std::filesystem::exists(archive)) << archive;
  auto r = run(linkcheck(quote(archive)));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "musa-linkcheck: error: " + archive + kArchiveWhy);
  // Its directory holds nothing else.
  r = run(linkcheck(quote(kFix + "/static")));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "musa-linkcheck: error: " + kFix +
                       "/static: no ELF shared object or executable in this directory, "
                       "only relocatable objects or static archives (such as " +
                       archive +
                       "), which the dynamic "
                       "loader never loads: check the shared library or executable they are linked into\n");
}

// Every input failed: no "0 undefined symbols ... in 0 libraries" beside the errors.
TEST(FirstHour, no_summary_line_when_every_input_failed) {
  std::string dir = test::scratch_dir("failed-inputs");
  test::write_file(dir + "/notes.txt", "not a library\n");
  std::filesystem::create_directories(dir + "/empty");
  auto r = run(linkcheck(quote(dir + "/missing.so") + " " + quote(dir + "/notes.txt") + " " + quote(dir + "/empty")));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  // (What the argument list names is settled first, then each file is read.)
  EXPECT_EQ(r.err, "musa-linkcheck: error: " + dir +
                       "/missing.so: cannot open: No such file or directory\n"
                       "musa-linkcheck: error: " +
                       dir +
                       "/empty: no ELF shared object or executable in this directory\n"
                       "musa-linkcheck: error: " +
                       dir + "/notes.txt: not an ELF file\n");
  // One good input among them: its summary is printed, and the errors still make it exit 2.
  r = run(linkcheck(quote(dir + "/missing.so") + " " + quote(kFix + "/chain/rpath/libchain_a.so")));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "0 undefined symbols, 0 missing libraries, 0 missing versions in 1 library\n");
  EXPECT_EQ(r.err, "musa-linkcheck: error: " + dir + "/missing.so: cannot open: No such file or directory\n");
}

// explain answers "where does X come from, and why there": the binding, or why there is none.
const std::string kTorchCpu = "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13";
const std::string kTorchCheckFail = "_ZN3c106detail14torchCheckFailEPKcS2_jS2_";

TEST(FirstHour, explain_names_the_binding_of_a_resolved_symbol) {
  if (!std::filesystem::exists(kTorchCpu)) MLC_SKIP() << kTorchCpu << " is absent (Debian's libtorch1.13)";
  // The oracle: the loader's own path for libc10 as `ldd` (the trusted system loader) reports it.
  auto ldd = run("ldd " + quote(kTorchCpu) + " | awk '$1 == \"libc10.so.1.13\" {print $3}'");
  std::string c10 = ldd.out.substr(0, ldd.out.find('\n'));
  ASSERT_FALSE(c10.empty()) << "ldd finds no libc10.so.1.13 for " << kTorchCpu;
  const std::string want =
      "c10::detail::torchCheckFail(char const*, char const*, unsigned int, char const*)\n"
      ">>> referenced by " +
      kTorchCpu +
      "\n"
      ">>> resolved by libc10.so.1.13 (" +
      c10 + "), found through ld.so.cache\n";
  auto r = run(linkcheck("explain " + kTorchCheckFail + " " + quote(kTorchCpu)));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, want);
  EXPECT_EQ(r.err, "");
  // Typed demangled, the same answer (the demangled spelling is c++filt's).
  auto filt = run("c++filt " + kTorchCheckFail);
  ASSERT_EQ(filt.out, "c10::detail::torchCheckFail(char const*, char const*, unsigned int, char const*)\n");
  r = run(linkcheck("explain " + quote(filt.out.substr(0, filt.out.size() - 1)) + " " + quote(kTorchCpu)));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, want);
}

// explain follows the reference in the scope the report binds it in: a definition
// held by a library loaded before with RTLD_LOCAL (--with LIB:local) is not where it binds, and the
// real loader (ctypes, the library first with RTLD_LOCAL) fails on it; with LIB:global it binds there.
TEST(FirstHour, explain_binds_in_the_scope_the_report_binds_in) {
  const std::string lib = kFix + "/with/libkernels.so", torchlike = kFix + "/with/libtorchlike.so";
  auto real = [&](const char* mode) {
    return run("python3 -c " +
               quote(std::string("import ctypes, os, sys\nctypes.CDLL(sys.argv[1], ") + mode +
                     ")\ntry:\n    ctypes.CDLL(sys.argv[2], os.RTLD_NOW)\n    print('ok')\n"
                     "except OSError:\n    print('fails')\n") +
               " " + quote(torchlike) + " " + quote(lib))
        .out;
  };
  EXPECT_EQ(real("os.RTLD_LOCAL"), "fails\n");
  auto local = run(linkcheck("explain torchlike_op --with " + quote(torchlike + ":local") + " " + quote(lib)));
  EXPECT_EQ(local.status, 1) << local.out << local.err;
  EXPECT_EQ(local.out.find(">>> resolved by"), std::string::npos) << local.out;
  EXPECT_NE(local.out.find("error: undefined symbol: torchlike_op\n"), std::string::npos) << local.out;
  EXPECT_EQ(real("os.RTLD_GLOBAL"), "ok\n");
  auto global = run(linkcheck("explain torchlike_op --with " + quote(torchlike + ":global") + " " + quote(lib)));
  EXPECT_EQ(global.status, 0) << global.out << global.err;
  EXPECT_NE(global.out.find(">>> resolved by libtorchlike.so (" + torchlike + "), it was loaded first (--with)\n"),
            std::string::npos)
      << global.out;
}

TEST(FirstHour, explain_says_when_nothing_references_the_symbol) {
  const std::string lib = kFix + "/chain/rpath/libchain_a.so";
  auto r = run(linkcheck("explain _ZN2at3fooEv " + quote(lib)));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "at::foo()\n>>> not referenced by " + lib + ": nothing there needs it\n");
  EXPECT_EQ(r.err, "");
}

TEST(FirstHour, explain_without_files_counts_no_library) {
  auto r = run(linkcheck("explain --sdk-home '' --cuda-home '' --no-cache _ZN2at3fooEv"));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out,
            "error: undefined symbol: at::foo()\n>>> mangled: _ZN2at3fooEv\n"
            ">>> unknown: not found in the sources, the SDK or CUDA\n");
}

TEST(FirstHour, explain_refuses_a_malformed_demangled_name) {
  auto r = run(linkcheck("explain 'at::foo(int' " + quote(kFix + "/chain/rpath/libchain_a.so")));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "musa-linkcheck: error: 'at::foo(int' is not a symbol name: an unclosed '('\n");
  r = run(linkcheck("explain 'std::vector<int>>::size() const'"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "musa-linkcheck: error: 'std::vector<int>>::size() const' is not a symbol name: an unmatched '>'\n");
  // Operators keep their brackets: a well-formed name is traced, not refused.
  r = run(linkcheck("explain --sdk-home '' --cuda-home '' --no-cache 'at::operator<(at::Tensor const&, long)'"));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out.rfind("error: undefined symbol: at::operator<(at::Tensor const&, long)\n", 0), 0u) << r.out;
}

// Option errors in GNU's words, each with its exact lines and exit status 2.
TEST(FirstHour, option_errors_are_gnu_style) {
  const std::string try_help = "Try 'musa-linkcheck --help' for more information.\n";
  auto r = run(linkcheck("--closur " + quote(kFix + "/chain/rpath/libchain_a.so")));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "musa-linkcheck: unrecognized option '--closur'; did you mean '--closure'?\n" + try_help);
  r = run(linkcheck("--format xml x.so"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "musa-linkcheck: invalid argument 'xml' for '--format'\n"
            "Valid arguments are: text, json, sarif, junit, github\n" +
                try_help);
  r = run(kBin);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "Usage: musa-linkcheck [OPTION]... FILE_OR_DIR...\n"
            "       musa-linkcheck explain SYMBOL [OPTION]... [FILE_OR_DIR]...\n"
            "       musa-linkcheck coverage [OPTION]... SOURCE_DIR...\n" +
                try_help);
  r = run(linkcheck("--with"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "musa-linkcheck: option '--with' requires an argument\n" + try_help);
  // --python with a space before an interpreter: the interpreter would become an input, checked under
  // the python3 PATH finds (a verdict for the wrong process), so it is refused, saying how to write it.
  r = run(linkcheck("--python /usr/bin/python3.11 x.so"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "musa-linkcheck: option '--python' takes its interpreter only after '=': write "
            "--python=/usr/bin/python3.11 (as written, /usr/bin/python3.11 would be checked as an input)\n" +
                try_help);
  r = run(std::string(MLC_STUBGEN_BIN) + " --python python3 x.so");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "musa-stubgen: option '--python' takes its interpreter only after '=': write --python=python3 (as "
            "written, python3 would be checked as an input)\n"
            "Try 'musa-stubgen --help' for more information.\n");
  // A file after the flag is still an input: --python without a value means the python3 on PATH.
  r = run(linkcheck("--python " + quote(kFix + "/chain/rpath/libchain_a.so") + " --format json"));
  EXPECT_NE(r.status, 2) << r.err;
  r = run(std::string(MLC_STUBGEN_BIN) + " --aply x.so");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "musa-stubgen: unrecognized option '--aply'; did you mean '--apply'?\n"
            "Try 'musa-stubgen --help' for more information.\n");
  // A classification the contract does not have is refused, naming the ones it has (not a
  // silent no-op that stubs nothing).
  r = run(std::string(MLC_STUBGEN_BIN) + " --stub unknwon x.so");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "musa-stubgen: invalid argument 'unknwon' for '--stub'\n"
            "Valid arguments are: missing-source, unlinked-library, sdk-declared-only, cuda-only, abi-mismatch, "
            "version-mismatch, hidden, shadowed, missing-library, static-archive, missing-instantiation, "
            "provider-mismatch, host-provided, unported, unimplemented-kernel, unknown\n"
            "Try 'musa-stubgen --help' for more information.\n");
  // -o to a path that cannot be written says why, in the system's words.
  std::string dir = test::scratch_dir("unwritable");
  test::write_file(dir + "/file", "a file, not a directory\n");
  r = run(linkcheck("-o " + quote(dir + "/file/report.txt") + " " + quote(kFix + "/chain/rpath/libchain_a.so")));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "musa-linkcheck: error: " + dir + "/file/report.txt: cannot write: Not a directory\n");
}

// The options each tool declares (the oracle: its sources, read here independently of CLI11).
std::vector<std::string> declared_options(const std::vector<std::string>& sources) {
  std::vector<std::string> out;
  std::regex decl(R"re(add_(?:option|flag)\(\s*"(-[^"]*)")re");
  for (const auto& src : sources) {
    std::string text = test::read_file(std::string(MLC_SOURCE_DIR) + "/tools/" + src);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), decl); it != std::sregex_iterator(); ++it) {
      std::string names = (*it)[1].str();
      names = names.substr(0, names.find('{'));  // --python{python3}: the flag's default value
      std::stringstream ss(names);
      for (std::string n; std::getline(ss, n, ',');)
        if (n != "--help-roff") out.push_back(n);
    }
  }
  return out;
}

std::string roff_escaped(const std::string& option) {
  std::string out;
  for (char c : option) out += c == '-' ? std::string("\\-") : std::string(1, c);
  return out;
}

// The tests that render or find the man pages with man: checked once for each.
class FirstHourMan : public ::testing::Test {
 protected:
  void SetUp() override {
    if (run("command -v man").status != 0) MLC_SKIP() << "man is not installed (man-db)";
  }
};

// --help and the man page both come from the declarations: every option is in both, in a group of
// its own table row (none under "Other options"), with a real placeholder (never CLI11's TEXT),
// exit status 3 is documented, and man renders the page without a warning.
TEST_F(FirstHourMan, every_option_is_in_help_and_man_page) {
  // man renders each page with its warnings on: the page's roff is checked, not only its text.
  struct Tool {
    std::string name, bin;
    std::vector<std::string> sources;
  };
  for (const Tool& tool : {Tool{"musa-linkcheck", kBin, {"musa_linkcheck.cpp", "context_options.cpp"}},
                           Tool{"musa-stubgen", MLC_STUBGEN_BIN, {"musa_stubgen.cpp", "context_options.cpp"}}}) {
    auto options = declared_options(tool.sources);
    ASSERT_GT(options.size(), 15u) << tool.name;
    auto help = run(tool.bin + " --help");
    EXPECT_EQ(help.status, 0);
    const std::string page_path = std::string(MLC_BINARY_DIR) + "/docs/man/man1/" + tool.name + ".1";
    std::string page = test::read_file(page_path);
    ASSERT_FALSE(page.empty()) << page_path;
    for (const auto& o : options) {
      EXPECT_NE(help.out.find(o), std::string::npos) << tool.name << " --help lacks " << o;
      EXPECT_NE(page.find("\\fB" + roff_escaped(o) + "\\fR"), std::string::npos) << page_path << " lacks " << o;
    }
    EXPECT_EQ(help.out.find("Other options"), std::string::npos) << "an option without a row in tools/option_docs.cpp\n"
                                                                 << help.out;
    EXPECT_EQ(help.out.find(" TEXT"), std::string::npos) << help.out;
    EXPECT_NE(help.out.find("3 internal error"), std::string::npos) << help.out;
    EXPECT_NE(page.find("3 internal error"), std::string::npos) << page_path;
    auto warnings = run("MANWIDTH=80 man --warnings -l " + quote(page_path) + " 2>&1 >/dev/null");
    EXPECT_EQ(warnings.out, "") << page_path;
  }
  // explain --help lists the options explain takes: its operands and all the context and output ones.
  auto explain = run(linkcheck("explain --help"));
  EXPECT_EQ(explain.status, 0);
  EXPECT_EQ(explain.out.find("Usage: musa-linkcheck explain SYMBOL [OPTION]... [FILE_OR_DIR]...\n"),
            explain.out.find("Usage:"))
      << explain.out;
  for (const auto& o : declared_options({"musa_linkcheck.cpp", "context_options.cpp"}))
    if (o != "--version") {
      EXPECT_NE(explain.out.find(o), std::string::npos) << "explain --help lacks " << o;
    }
}

// man finds the pages where the README says (the build tree) and after cmake --install.
TEST_F(FirstHourMan, man_finds_the_pages_in_the_build_tree_and_installed) {
  auto found = run("MANPATH=" + quote(std::string(MLC_BINARY_DIR) + "/docs/man") + " man -w musa-linkcheck");
  EXPECT_EQ(found.out, std::string(MLC_BINARY_DIR) + "/docs/man/man1/musa-linkcheck.1\n") << found.err;
  std::string prefix = test::scratch_dir("install");
  auto install = run("cmake --install " + quote(MLC_BINARY_DIR) + " --prefix " + quote(prefix));
  ASSERT_EQ(install.status, 0) << install.out << install.err;
  for (const char* tool : {"musa-linkcheck", "musa-stubgen"}) {
    auto installed = run("MANPATH=" + quote(prefix + "/share/man") + " man -w " + tool);
    EXPECT_EQ(installed.out, prefix + "/share/man/man1/" + tool + ".1\n") << installed.err;
    EXPECT_EQ(test::read_file(prefix + "/share/man/man1/" + tool + ".1"),
              test::read_file(std::string(MLC_BINARY_DIR) + "/docs/man/man1/" + tool + ".1"));
  }
}

// A wrong context path is said once, on stderr, before the findings it causes. (--no-cache: the
// default cache lies under --build-dir, and would be made there.)
TEST(FirstHour, a_bad_context_path_is_warned_about_once) {
  const std::string lib = kFix + "/chain/rpath/libchain_a.so";
  auto r = run(linkcheck("--no-cache --source-root /nonexistent/src --source-root /nonexistent/src --sdk-home " +
                         quote(lib) + " --build-dir /nonexistent/build -q " + quote(lib)));
  EXPECT_EQ(r.err,
            "musa-linkcheck: warning: --build-dir /nonexistent/build: No such file or directory\n"
            "musa-linkcheck: warning: --source-root /nonexistent/src: No such file or directory\n"
            "musa-linkcheck: warning: --sdk-home " +
                lib + ": not a directory\n");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, "");
}

// Under a sysroot that is no directory the loader finds nothing: a missing-library block per input,
// with the typo said last, read as findings. It is a usage error: one line naming the path, exit 2,
// before anything is loaded (both tools share the check, tools/context_options.cpp).
TEST(FirstHour, a_sysroot_that_is_no_directory_is_a_usage_error_before_any_analysis) {
  const std::string lib = kFix + "/chain/rpath/libchain_a.so";
  const std::string missing = test::scratch_dir("sysroot") + "/nonexistent";
  auto r = run(linkcheck("--sysroot " + quote(missing) + " " + quote(lib)));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "musa-linkcheck: error: --sysroot " + missing + ": No such file or directory\n");
  // A file is no sysroot either.
  auto f = run(linkcheck("--sysroot " + quote(lib) + " --format json " + quote(lib)));
  EXPECT_EQ(f.status, 2);
  EXPECT_EQ(f.out, "");
  EXPECT_EQ(f.err, "musa-linkcheck: error: --sysroot " + lib + ": not a directory\n");
  auto s = run(std::string(MLC_STUBGEN_BIN) + " --dry-run --sysroot " + quote(missing) + " " + quote(lib));
  EXPECT_EQ(s.status, 2);
  EXPECT_EQ(s.out, "");
  EXPECT_EQ(s.err, "musa-stubgen: error: --sysroot " + missing + ": No such file or directory\n");
}

// Symbols of the Python C API are host-provided, not unknown; the hint works under pyenv, whose
// python3 is a shell script shim; the interpreter --python took is named in text and JSON.
TEST(FirstHour, python_hint_survives_a_pyenv_shim_and_names_the_interpreter) {
  const std::string ext = kFix + "/pyext/_pyext.so";
  const std::string python = "/usr/bin/python3";
  if (!std::filesystem::exists(python)) MLC_SKIP() << python << " is absent";
  // No python3 on PATH to host it (a library that needs the C API is checked inside the first one
  // found: src/python/hosting.h), so the hint is what tells the way.
  auto r = run("PATH=/nonexistent " + linkcheck("--color never " + quote(ext)));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out,
            "error: loading _pyext.so would fail: 1 cause\n"
            "error: 4 symbols of the Python C API come from the Python interpreter that loads this extension "
            "(python3), not from a library it links\n"
            ">>> host-provided: PyArg_ParseTuple\n>>> host-provided: PyLong_FromLong\n"
            ">>> host-provided: Py_BuildValue\n>>> host-provided: _Py_NoneStruct\n"
            ">>> fix: check it as the interpreter loads it: --python (the first python3 on PATH that is an ELF "
            "executable, past pyenv's and conda's shims), or --python=EXE for another interpreter\n"
            "4 undefined symbols, 0 missing libraries, 0 missing versions in 1 library\n");
  auto doc = nlohmann::json::parse(run("PATH=/nonexistent " + linkcheck("--format json " + quote(ext))).out);
  EXPECT_EQ(doc["summary"]["by_classification"], nlohmann::json({{"host-provided", 4}}));
  EXPECT_TRUE(doc["interpreter"].is_null());

  // pyenv's shims come first on PATH: `python3` there is a shell script that execs the interpreter
  // pyenv selects (here the system's, as `pyenv global system` does).
  std::string shims = test::scratch_dir("pyenv-shims");
  test::write_file(shims + "/python3", "#!/usr/bin/env bash\nexec " + python + " \"$@\"\n");
  std::filesystem::permissions(shims + "/python3", std::filesystem::perms::owner_all);
  // What the old hint, --with $(command -v python3), gave: the shim, which is no ELF file.
  auto old_hint = run("PATH=" + quote(shims) + ":/usr/bin:/bin " + kBin + " --with \"$(PATH=" + quote(shims) +
                      ":/usr/bin:/bin command -v python3)\" " + quote(ext));
  EXPECT_EQ(old_hint.status, 2);
  EXPECT_EQ(old_hint.err, "musa-linkcheck: error: " + shims + "/python3: not an ELF file\n");
  // The hint given now works, and says which interpreter it took.
  r = run("PATH=" + quote(shims) + ":/usr/bin:/bin " + kBin + " --python " + quote(ext));
  EXPECT_EQ(r.status, 0) << r.err;
  // The shim was run and said which interpreter it is (sys.executable): the import context names both.
  EXPECT_EQ(r.out.rfind("note: import context: python3 (" + python + ") (Python ", 0), 0u) << r.out;
  EXPECT_EQ(r.out.substr(r.out.find('\n') + 1),
            "0 undefined symbols, 0 missing libraries, 0 missing versions in 1 library\n");
  doc = nlohmann::json::parse(
      run("PATH=" + quote(shims) + ":/usr/bin:/bin " + kBin + " --format json --python " + quote(ext)).out);
  EXPECT_EQ(doc["interpreter"], python);
  // python.executable is the deprecated alias of `interpreter`; python.interpreter is the shim as given.
  EXPECT_EQ(doc["python"]["executable"], doc["interpreter"]);
  EXPECT_EQ(doc["python"]["interpreter"], "python3");
}

// The JSON report follows the schema the repository carries (docs/report.schema.json, described in
// docs/contract.md): validated by python3-jsonschema, which also rejects a report that breaks it.
TEST(FirstHour, json_reports_validate_against_the_schema_in_docs) {
  if (run("/usr/bin/python3 -c 'import jsonschema'").status != 0) MLC_SKIP() << "python3-jsonschema is not installed";
  const std::string schema = std::string(MLC_SOURCE_DIR) + "/docs/report.schema.json";
  std::string dir = test::scratch_dir("schema");
  auto validate = [&](const std::string& file) {
    return run("/usr/bin/python3 -c " +
               quote("import json, sys, jsonschema\n"
                     "schema = json.load(open(sys.argv[1]))\n"
                     "jsonschema.Draft202012Validator.check_schema(schema)\n"
                     "jsonschema.Draft202012Validator(schema).validate(json.load(open(sys.argv[2])))\n") +
               " " + quote(schema) + " " + quote(file));
  };
  const std::vector<std::string> runs = {
      quote(kFix + "/miss/libmiss_user.so") + " " + quote(kFix + "/ver/libver_user3.so") + " " +
          quote(dir + "/missing.so"),
      quote(kFix + "/pyext/_pyext.so"),
      "--python=/usr/bin/python3 " + quote(kFix + "/pyext/_pyext.so"),
      "explain --sdk-home '' --cuda-home '' --no-cache _ZN2at3fooEv",
      quote(std::string(MLC_EXAMPLE_DIR) + "/libmusa_kernels.so"),
  };
  int n = 0;
  for (const auto& args : runs) {
    std::string file = dir + "/r" + std::to_string(n++) + ".json";
    auto r = run(linkcheck("--format json -o " + quote(file) + " " + args));
    ASSERT_TRUE(std::filesystem::exists(file)) << args << "\n" << r.err;
    auto v = validate(file);
    EXPECT_EQ(v.status, 0) << args << "\n" << v.err;
  }
  // A report that breaks the contract is rejected (the check can fail).
  auto doc = nlohmann::json::parse(test::read_file(dir + "/r1.json"));
  doc["libraries"][0]["unresolved"][0]["classification"] = "unheard-of";
  test::write_file(dir + "/bad.json", doc.dump());
  auto bad = validate(dir + "/bad.json");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("'unheard-of' is not one of"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace mlc

// The C++ ABI by name: _GLIBCXX_USE_CXX11_ABI drift in both directions, by-value against
// const&, const drift and a missing template instantiation, each from two tiny libraries compiled
// here with the system compiler; and the tool never breaking: non-UTF-8 symbol names in JSON, and a
// start with broken copies of its own runtime first on LD_LIBRARY_PATH.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "test_support.h"

namespace mlc {
namespace {

using test::quote;
using test::run;
using test::write_file;

const std::string kBin = MLC_LINKCHECK_BIN;

// Compiles `provider` into libprov.so and `user` into libuser.so (linked to it, RUNPATH $ORIGIN),
// each with its own extra flags. Returns the directory.
std::string build_pair(const std::string& name, const std::string& provider, const std::string& provider_flags,
                       const std::string& user, const std::string& user_flags) {
  std::string dir = test::scratch_dir("abi-" + name);
  write_file(dir + "/prov.cpp", provider);
  write_file(dir + "/user.cpp", user);
  auto p = run("c++ -shared -fPIC -O1 " + provider_flags + " -o " + quote(dir + "/libprov.so") + " " +
               quote(dir + "/prov.cpp"));
  EXPECT_EQ(p.status, 0) << p.err;
  auto u = run("c++ -shared -fPIC -O1 " + user_flags + " -o " + quote(dir + "/libuser.so") + " " +
               quote(dir + "/user.cpp") + " -L" + quote(dir) +
               " -Wl,--no-as-needed -lprov -Wl,--as-needed -Wl,-rpath,'$ORIGIN' -Wl,--allow-shlib-undefined");
  EXPECT_EQ(u.status, 0) << u.err;
  return dir;
}

struct Checked {
  int status;
  nlohmann::json symbol;  // the one unresolved symbol of libuser.so
  std::string text;
};

Checked check(const std::string& dir, const std::string& extra = "") {
  auto j = run(kBin + " --format json --cuda-home '' " + extra + " " + quote(dir + "/libuser.so"));
  auto t = run(kBin + " --color never --cuda-home '' " + extra + " " + quote(dir + "/libuser.so"));
  EXPECT_EQ(j.status, t.status);
  auto doc = nlohmann::json::parse(j.out, nullptr, false);
  EXPECT_FALSE(doc.is_discarded()) << j.out << j.err;
  if (doc.is_discarded()) return {j.status, {}, t.out};
  const auto& unresolved = doc["libraries"][0]["unresolved"];
  EXPECT_EQ(unresolved.size(), 1u) << j.out;
  return {j.status, unresolved.empty() ? nlohmann::json() : unresolved[0], t.out};
}

const std::string kProvString =
    "#include <string>\nnamespace k { int size_of(const std::string& s) { return (int)s.size(); } }\n";
const std::string kUserString =
    "#include <string>\nnamespace k { int size_of(const std::string& s); }\nint use() { return k::size_of(\"abc\"); "
    "}\n";
const std::string kNewString = "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >";
const std::string kOldString =
    "std::basic_string<char, std::char_traits<char>, std::allocator<char> >";  // c++filt's Ss

TEST(AbiByName, caller_old_string_abi_library_new) {
  std::string dir =
      build_pair("cxx11-0-1", kProvString, "-D_GLIBCXX_USE_CXX11_ABI=1", kUserString, "-D_GLIBCXX_USE_CXX11_ABI=0");
  auto c = check(dir);
  EXPECT_EQ(c.status, 1);
  EXPECT_EQ(c.symbol["symbol"], "_ZN1k7size_ofERKSs");
  EXPECT_EQ(c.symbol["classification"], "abi-mismatch");
  std::string reason =
      dir + "/libprov.so defines k::size_of(" + kNewString +
      " const&) (cxx11-abi): the caller was built with -D_GLIBCXX_USE_CXX11_ABI=0 (the old std::string "
      "ABI, std::string mangled Ss), libprov.so with -D_GLIBCXX_USE_CXX11_ABI=1 (the C++11 std::string "
      "ABI, std::__cxx11::basic_string / [abi:cxx11])";
  EXPECT_EQ(c.symbol["reason"], reason);
  EXPECT_EQ(c.symbol["suggestions"][0]["reason"], "cxx11-abi");
  EXPECT_EQ(c.symbol["fix"]["kind"], "rebuild-abi");
  std::string fix =
      "rebuild the caller with -D_GLIBCXX_USE_CXX11_ABI=1 to match libprov.so (or load a libprov.so built "
      "with -D_GLIBCXX_USE_CXX11_ABI=0); for a PyTorch extension use torch's value: python -c 'import "
      "torch; print(int(torch.compiled_with_cxx11_abi()))'";
  EXPECT_EQ(c.symbol["fix"]["detail"], fix);
  EXPECT_NE(c.text.find("error: undefined symbol: k::size_of(" + kOldString + " const&)\n"), std::string::npos)
      << c.text;
  EXPECT_NE(c.text.find("\n>>> abi-mismatch: " + reason + "\n"), std::string::npos) << c.text;
  EXPECT_NE(c.text.find("\n>>> fix: " + fix + "\n"), std::string::npos) << c.text;
}

TEST(AbiByName, caller_new_string_abi_library_old) {
  std::string dir =
      build_pair("cxx11-1-0", kProvString, "-D_GLIBCXX_USE_CXX11_ABI=0", kUserString, "-D_GLIBCXX_USE_CXX11_ABI=1");
  auto c = check(dir);
  EXPECT_EQ(c.status, 1);
  EXPECT_EQ(c.symbol["symbol"], "_ZN1k7size_ofERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE");
  EXPECT_EQ(c.symbol["classification"], "abi-mismatch");
  std::string reason =
      dir + "/libprov.so defines k::size_of(" + kOldString +
      " const&) (cxx11-abi): the caller was built with "
      "-D_GLIBCXX_USE_CXX11_ABI=1 (the C++11 std::string ABI, std::__cxx11::basic_string / [abi:cxx11]), "
      "libprov.so with -D_GLIBCXX_USE_CXX11_ABI=0 (the old std::string ABI, std::string mangled Ss)";
  EXPECT_EQ(c.symbol["reason"], reason);
  EXPECT_EQ(c.symbol["suggestions"][0]["symbol"], "_ZN1k7size_ofERKSs");
  EXPECT_EQ(c.symbol["suggestions"][0]["reason"], "cxx11-abi");
  EXPECT_EQ(c.symbol["fix"]["detail"],
            "rebuild the caller with -D_GLIBCXX_USE_CXX11_ABI=0 to match libprov.so (or load a libprov.so built with "
            "-D_GLIBCXX_USE_CXX11_ABI=1); for a PyTorch extension use torch's value: python -c 'import torch; "
            "print(int(torch.compiled_with_cxx11_abi()))'");
  EXPECT_NE(c.text.find("\n>>> abi-mismatch: " + reason + "\n"), std::string::npos) << c.text;
}

TEST(AbiByName, by_value_against_const_reference) {
  std::string dir =
      build_pair("by-value", "namespace k { struct W { int a[4]; }; int take(const W& w) { return w.a[0]; } }\n", "",
                 "namespace k { struct W { int a[4]; }; int take(W w); }\nint use() { return k::take(k::W{}); }\n", "");
  auto c = check(dir);
  EXPECT_EQ(c.status, 1);
  EXPECT_EQ(c.symbol["classification"], "abi-mismatch");
  std::string reason =
      dir +
      "/libprov.so defines k::take(k::W const&) (by-value): parameter 1 is `k::W const&` there "
      "but `k::W` in the declaration the caller was compiled against: one side passes it by value, the "
      "other by reference";
  EXPECT_EQ(c.symbol["reason"], reason);
  EXPECT_EQ(c.symbol["suggestions"][0]["reason"], "by-value");
  std::string fix =
      "declare parameter 1 as `k::W const&` where the caller sees it, as libprov.so defines "
      "k::take(k::W const&), and rebuild the caller (or rebuild libprov.so from the caller's headers)";
  EXPECT_EQ(c.symbol["fix"]["detail"], fix);
  EXPECT_EQ(c.symbol["fix"]["kind"], "rebuild-abi");
  EXPECT_NE(c.text.find("\n>>> abi-mismatch: " + reason + "\n"), std::string::npos) << c.text;
  EXPECT_NE(c.text.find("\n>>> fix: " + fix + "\n"), std::string::npos) << c.text;
}

TEST(AbiByName, const_drift_of_a_method) {
  std::string dir =
      build_pair("const", "namespace k { struct C { int v; int get() const; }; int C::get() const { return v; } }\n",
                 "", "namespace k { struct C { int v; int get(); }; }\nint use() { k::C c{1}; return c.get(); }\n", "");
  auto c = check(dir);
  EXPECT_EQ(c.status, 1);
  EXPECT_EQ(c.symbol["symbol"], "_ZN1k1C3getEv");
  EXPECT_EQ(c.symbol["classification"], "abi-mismatch");
  std::string reason = dir +
                       "/libprov.so defines k::C::get() const (const): the method is `const` there but "
                       "`non-const` in the declaration the caller was compiled against";
  EXPECT_EQ(c.symbol["reason"], reason);
  EXPECT_EQ(c.symbol["suggestions"][0]["reason"], "const");
  EXPECT_EQ(c.symbol["fix"]["detail"],
            "declare the method as `const` where the caller sees it, as libprov.so defines "
            "k::C::get() const, and rebuild the caller (or rebuild libprov.so from the "
            "caller's headers)");
  EXPECT_NE(c.text.find("\n>>> abi-mismatch: " + reason + "\n"), std::string::npos) << c.text;
}

const std::string kTemplate = "namespace k {\ntemplate <class T> T twice(T x) { return x + x; }\n}\n";

std::string twice_pair(const std::string& name, const std::string& inc) {
  std::string dir = build_pair(
      name,
      "#include \"twice.h\"\nnamespace k {\ntemplate int twice<int>(int);\ntemplate double twice<double>(double);\n}\n",
      "-I" + quote(inc),
      "namespace k { template <class T> T twice(T x); }\nlong use(long x) { return k::twice<long>(x); }\n", "");
  return dir;
}

TEST(AbiByName, missing_instantiation_names_the_ones_that_exist) {
  std::string inc = test::scratch_dir("abi-twice-include");
  write_file(inc + "/twice.h", kTemplate);
  std::string dir = twice_pair("twice", inc);
  auto c = check(dir);
  EXPECT_EQ(c.status, 1);
  EXPECT_EQ(c.symbol["symbol"], "_ZN1k5twiceIlEET_S1_");
  EXPECT_EQ(c.symbol["classification"], "missing-instantiation");
  std::string reason =
      "long k::twice<long>(long) is not instantiated: libprov.so has other instantiations of the same "
      "template (double k::twice<double>(double), int k::twice<int>(int))";
  EXPECT_EQ(c.symbol["reason"], reason);
  ASSERT_EQ(c.symbol["suggestions"].size(), 2u);
  EXPECT_EQ(c.symbol["suggestions"][0]["symbol"], "_ZN1k5twiceIdEET_S1_");
  EXPECT_EQ(c.symbol["suggestions"][1]["reason"], "instantiation");
  EXPECT_EQ(c.symbol["fix"]["kind"], "add-instantiation");
  EXPECT_EQ(c.symbol["fix"]["library"], dir + "/libprov.so");
  std::string fix =
      "add the explicit instantiation `template long k::twice<long>(long);` to the source that defines the "
      "template and rebuild libprov.so";
  EXPECT_EQ(c.symbol["fix"]["detail"], fix);
  EXPECT_NE(c.text.find("\n>>> missing-instantiation: " + reason + "\n"), std::string::npos) << c.text;
  EXPECT_NE(c.text.find("\n>>> fix: " + fix + "\n"), std::string::npos) << c.text;

  // The oracle: the line the fix gives, added to the provider, makes the symbol resolve.
  write_file(dir + "/prov.cpp",
             test::read_file(dir + "/prov.cpp") + "namespace k {}\ntemplate long k::twice<long>(long);\n");
  ASSERT_EQ(
      run("c++ -shared -fPIC -I" + quote(inc) + " -o " + quote(dir + "/libprov.so") + " " + quote(dir + "/prov.cpp"))
          .status,
      0);
  EXPECT_EQ(run(kBin + " --cuda-home '' " + quote(dir + "/libuser.so")).status, 0);
}

TEST(AbiByName, missing_instantiation_names_the_template_file_the_index_knows) {
  std::string inc = test::scratch_dir("abi-twice-src-include");
  write_file(inc + "/twice.h", kTemplate);
  std::string dir = twice_pair("twice-src", inc);
  auto c = check(dir, "--source-root " + quote(inc));
  EXPECT_EQ(c.symbol["classification"], "missing-instantiation");
  EXPECT_EQ(c.symbol["origin"]["file"], inc + "/twice.h");
  EXPECT_EQ(c.symbol["origin"]["line"], 2);
  EXPECT_EQ(c.symbol["reason"],
            "long k::twice<long>(long) is not instantiated: libprov.so has other instantiations of "
            "the same template (double k::twice<double>(double), int k::twice<int>(int)); the "
            "template is defined in " +
                inc + "/twice.h:2");
  EXPECT_EQ(c.symbol["fix"]["detail"],
            "add the explicit instantiation `template long k::twice<long>(long);` to a compiled "
            "source that includes " +
                inc + "/twice.h and rebuild libprov.so");
}

TEST(AbiByName, missing_instantiation_from_explicit_instantiations_in_the_sources) {
  std::string src = test::scratch_dir("abi-twice-tree");
  write_file(src + "/twice.h", kTemplate);
  write_file(src + "/twice.cpp", "#include \"twice.h\"\ntemplate int k::twice<int>(int);\n");
  std::string dir = build_pair(
      "twice-sources", "int unrelated() { return 0; }\n", "",
      "namespace k { template <class T> T twice(T x); }\nlong use(long x) { return k::twice<long>(x); }\n", "");
  auto c = check(dir, "--source-root " + quote(src));
  EXPECT_EQ(c.status, 1);
  EXPECT_EQ(c.symbol["classification"], "missing-instantiation");
  EXPECT_EQ(c.symbol["reason"],
            "long k::twice<long>(long) is not instantiated: the sources instantiate the same template "
            "explicitly for other arguments only (k::twice<int> at " +
                src +
                "/twice.cpp:2); the "
                "template is defined in " +
                src + "/twice.h:2");
  EXPECT_EQ(c.symbol["fix"]["kind"], "add-instantiation");
  EXPECT_EQ(c.symbol["fix"]["library"], nullptr);
  EXPECT_EQ(c.symbol["fix"]["detail"],
            "add the explicit instantiation `template long k::twice<long>(long);` to a compiled source that "
            "includes " +
                src + "/twice.h");
  EXPECT_EQ(c.symbol["suggestions"][0]["reason"], "instantiation");
}

// A library whose undefined symbol's name holds bytes that are not UTF-8: patched in a copy.
TEST(NeverBreak, json_escapes_non_utf8_symbol_names) {
  std::string dir = test::scratch_dir("abi-non-utf8");
  write_file(dir + "/user.c", "extern int mlcQQbadQQname(void);\nint use(void) { return mlcQQbadQQname(); }\n");
  ASSERT_EQ(run("cc -shared -fPIC -o " + quote(dir + "/libuser.so") + " " + quote(dir + "/user.c")).status, 0);
  std::string bytes = test::read_file(dir + "/libuser.so");
  size_t at = bytes.find("mlcQQbadQQname");
  ASSERT_NE(at, std::string::npos);
  bytes[at + 3] = '\xff';
  bytes[at + 4] = '\xfe';
  bytes[at + 8] = '\xc3';  // a lead byte without its continuation
  write_file(dir + "/libuser.so", bytes);
  auto r = run(kBin + " --format json --cuda-home '' " + quote(dir + "/libuser.so"));
  EXPECT_EQ(r.status, 1) << r.err;
  auto doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.out;
  const auto& u = doc["libraries"][0]["unresolved"];
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0]["symbol"], "mlc\\xFF\\xFEbad\\xC3Qname");
  EXPECT_EQ(u[0]["demangled"], "mlc\\xFF\\xFEbad\\xC3Qname");
  auto t = run(kBin + " --color never --cuda-home '' " + quote(dir + "/libuser.so"));
  EXPECT_EQ(t.status, 1);
  EXPECT_EQ(t.out.rfind("error: loading libuser.so would fail: 1 cause\n"
                        "error: undefined symbol: mlc\\xFF\\xFEbad\\xC3Qname\n",
                        0),
            0u)
      << t.out;
}

// The tool starts and reports right when LD_LIBRARY_PATH puts broken copies of its own runtime first.
TEST(NeverBreak, starts_with_broken_runtime_libraries_first_on_ld_library_path) {
  std::string broken = test::scratch_dir("abi-bad-runtime");
  for (const char* soname :
       {"libstdc++.so.6", "libgcc_s.so.1", "libtbb.so.12", "libtbb.so.2", "libelf.so.1", "libdw.so.1"}) {
    auto b = run(std::string("cc -shared -fPIC -x c /dev/null -nostdlib -Wl,-soname,") + soname + " -o " +
                 quote(broken + "/" + soname));
    ASSERT_EQ(b.status, 0) << b.err;
  }
  // The same environment breaks an ordinary C++ program: the test would prove nothing otherwise.
  write_file(broken + "/hello.cpp",
             "#include <string>\nint main(int argc, char**) { return (int)std::to_string(argc).size() - 1; }\n");
  ASSERT_EQ(run("c++ -o " + quote(broken + "/hello") + " " + quote(broken + "/hello.cpp")).status, 0);
  EXPECT_EQ(run(quote(broken + "/hello")).status, 0);
  EXPECT_EQ(run("LD_LIBRARY_PATH=" + quote(broken) + " " + quote(broken + "/hello")).status, 127);
  auto probe = run("LD_LIBRARY_PATH=" + quote(broken) + " /bin/sh -c 'ldd " + quote(kBin) + "'");
  EXPECT_EQ(probe.out.find(broken + "/libstdc++.so.6"), std::string::npos) << probe.out;
  EXPECT_EQ(probe.out.find(broken + "/libtbb"), std::string::npos) << probe.out;
  // Libraries that need no C++ runtime, so that the analysed process is the same in both environments.
  std::string dir =
      build_pair("broken-runtime", "namespace k { struct W { int a[4]; }; int take(const W& w) { return w.a[0]; } }\n",
                 "-Wl,--as-needed",
                 "namespace k { struct W { int a[4]; }; int take(W w); }\n"
                 "int use() { return k::take(k::W{}); }\n",
                 "-Wl,--as-needed");
  auto clean = run(kBin + " --format json --cuda-home '' " + quote(dir + "/libuser.so"));
  auto r = run("LD_LIBRARY_PATH=" + quote(broken) + " " + kBin + " --format json --cuda-home '' " +
               quote(dir + "/libuser.so"));
  EXPECT_EQ(r.status, 1) << r.err;
  auto doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.out << r.err;
  EXPECT_EQ(doc["libraries"][0]["unresolved"][0]["classification"], "abi-mismatch");
  EXPECT_EQ(r.out, clean.out);
}

}  // namespace
}  // namespace mlc

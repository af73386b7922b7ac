// The compiler has the last word: a CMake project built at test time whose library leaves
// out sources that text matching cannot read - a flag and a class's members written by macro
// families, a key function defined through a macro (vtable, typeinfo), an explicit instantiation
// through an export macro, a namespace macro a generated config header defines twice - and a second
// library whose dependency is this build's own product, shadowing an installed copy. Each finding
// must be missing-source in the right file, and one musa-stubgen --apply must make both libraries load.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "test_support.h"

namespace mlc {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::quote;
using test::run;
using test::write_file;

const std::string kLinkcheck = MLC_LINKCHECK_BIN;
const std::string kStubgen = MLC_STUBGEN_BIN;

// A map from symbol to its finding, over every library of a JSON report.
std::map<std::string, json> findings(const json& report) {
  std::map<std::string, json> out;
  for (const auto& lib : report.at("libraries"))
    for (const auto& u : lib.at("unresolved")) out[u.at("symbol")] = u;
  return out;
}

std::string origin_file(const json& u) {
  if (!u.contains("origin") || !u.at("origin").is_object()) return "";
  return u.at("origin").value("file", "");
}

// The oracle: the dynamic loader itself, in a child process of the test (never of the tool).
bool loads_now(const std::string& lib, const std::string& lib_dir, std::string& why) {
  auto r = run("LD_LIBRARY_PATH=" + quote(lib_dir) + " python3 -c " +
               quote("import ctypes,os,sys; ctypes.CDLL(sys.argv[1], os.RTLD_NOW)") + " " + quote(lib));
  why = r.err;
  return r.status == 0;
}

class CompilerVerdict : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = test::scratch_dir("compiler_verdict");
    src_ = root_ + "/src";
    build_ = root_ + "/build";
    installed_ = root_ + "/installed";
    cache_ = root_ + "/cache";
    fs::create_directories(src_);
    fs::create_directories(installed_);
    fs::create_directories(root_ + "/no-sdk");
    write_file(src_ + "/CMakeLists.txt",
               "cmake_minimum_required(VERSION 3.16)\nproject(verdict CXX)\n"
               "set(CMAKE_EXPORT_COMPILE_COMMANDS ON)\n"
               // The generated config header: the namespace macro written twice, as some projects do.
               "file(WRITE ${CMAKE_BINARY_DIR}/gen/verdict_config.h \"#pragma once\\n#ifdef SOME_BUILD_SYSTEM\\n"
               "#define VERDICT_NS legacy_verdict\\n#else\\n#define VERDICT_NS modern_verdict\\n#endif\\n\")\n"
               "include_directories(${CMAKE_BINARY_DIR}/gen ${CMAKE_CURRENT_SOURCE_DIR})\n"
               "set(CORE_SRCS core.cpp)\n"
               "add_library(core SHARED ${CORE_SRCS})\n"
               "add_library(app SHARED app.cpp)\n"
               "target_link_libraries(app PRIVATE core)\n"
               // The installed copy is found through RUNPATH, after LD_LIBRARY_PATH (the build's own).
               "set_target_properties(app PROPERTIES SKIP_BUILD_RPATH ON)\n"
               "target_link_options(app PRIVATE -Wl,--enable-new-dtags -Wl,-rpath," +
                   installed_ + ")\n");
    write_file(src_ + "/api.h", "#pragma once\n#define VERDICT_API __attribute__((visibility(\"default\")))\n");
    // 1. Macro families: a flag (namespace fL_int { int FLAGS_verbosity; }) and a shape's members.
    write_file(src_ + "/flags.h",
               "#pragma once\n"
               "#define DEFINE_FLAG(type, name, value) namespace fL_##type { type FLAGS_##name = value; }\n"
               "#define DECLARE_FLAG(type, name) namespace fL_##type { extern type FLAGS_##name; }\n"
               "DECLARE_FLAG(int, verbosity)\n");
    write_file(src_ + "/flags.cpp", "#include \"flags.h\"\nDEFINE_FLAG(int, verbosity, 2)\n");
    // 2. The key function (~Shape, the first virtual neither inline nor pure) defined by a macro.
    write_file(src_ + "/shape.h",
               "#pragma once\n"
               "class Shape {\n public:\n  Shape() {}\n  virtual ~Shape();\n  virtual int sides() const = 0;\n"
               "  virtual const char* name() const;\n  static int made;\n};\n"
               "#define DEFINE_SHAPE_BASE(Name) Name::~Name() {} const char* Name::name() const { return #Name; } "
               "int Name::made = 0;\n");
    write_file(src_ + "/shape.cpp", "#include \"shape.h\"\nDEFINE_SHAPE_BASE(Shape)\n");
    // 3. An explicit instantiation through an export macro; the template's body is in an -inl.h header.
    write_file(
        src_ + "/sink.h",
        "#pragma once\nnamespace sinks {\ntemplate <typename T>\nclass sink {\n public:\n  T put(T v);\n};\n}\n");
    write_file(
        src_ + "/sink-inl.h",
        "#pragma once\n#include \"sink.h\"\ntemplate <typename T>\nT sinks::sink<T>::put(T v) { return v + 1; }\n");
    write_file(src_ + "/sink_inst.cpp",
               "#include \"api.h\"\n#include \"sink-inl.h\"\ntemplate class VERDICT_API sinks::sink<int>;\n");
    // 4. The namespace macro of the generated config header, as the compiler resolves it.
    write_file(src_ + "/scale.h",
               "#pragma once\n#include \"verdict_config.h\"\nnamespace VERDICT_NS {\nint scale(int x);\n}\n");
    write_file(src_ + "/scale.cpp",
               "#include \"scale.h\"\nnamespace VERDICT_NS {\nint scale(int x) { return 3 * x; }\n}\n");
    // The library the build compiles, referencing all of them.
    write_file(
        src_ + "/core.cpp",
        "#include <typeinfo>\n#include \"flags.h\"\n#include \"shape.h\"\n#include \"sink.h\"\n#include \"scale.h\"\n"
        "extern template class sinks::sink<int>;\n"
        "struct Tri : Shape { int sides() const override { return 3; } };\n"
        "int core_run(int v) {\n  Tri t;\n  Shape& s = t;\n  return fL_int::FLAGS_verbosity + s.sides() + Shape::made "
        "+ "
        "sinks::sink<int>{}.put(v) + VERDICT_NS::scale(v) + (typeid(s) == typeid(Tri));\n}\n");
    // 5. A source of the build left out; an installed copy of libcore.so defines what it would.
    write_file(src_ + "/core_extra.cpp", "int core_extra(int x) { return 7 * x; }\n");
    write_file(src_ + "/app.cpp",
               "int core_extra(int);\nint core_run(int);\nint app_run() { return core_extra(2) + core_run(1); }\n");
    auto b = run("cmake -S " + quote(src_) + " -B " + quote(build_) + " >/dev/null && cmake --build " + quote(build_) +
                 " >/dev/null && c++ -shared -fPIC -Wl,-soname,libcore.so " + quote(src_ + "/core_extra.cpp") + " -o " +
                 quote(installed_ + "/libcore.so"));
    ASSERT_EQ(b.status, 0) << "cannot build the fixture project:\n" << b.out << b.err;
  }
  void TearDown() override { fs::remove_all(root_); }

  std::string context() const {
    return " --build-dir " + quote(build_) + " --source-root " + quote(src_) + " --library-path " + quote(build_) +
           " --sdk-home " + quote(root_ + "/no-sdk") + " --cuda-home '' --cache-dir " + quote(cache_) +
           " --confirm-budget 3600";  // the compiler's verdicts must not depend on a loaded machine's clock
  }
  json linkcheck(const std::string& extra, std::string* err = nullptr) {
    const std::string out = root_ + "/report.json";
    auto r = run(kLinkcheck + " " + quote(build_ + "/libcore.so") + " " + quote(build_ + "/libapp.so") + context() +
                 extra + " --format json -o " + quote(out));
    EXPECT_EQ(r.status, 1) << r.err;
    if (err) *err = r.err;
    return json::parse(test::read_file(out));
  }

  std::string root_, src_, build_, installed_, cache_;
};

TEST_F(CompilerVerdict, each_class_is_missing_source_in_the_right_file_and_one_apply_makes_it_load) {
  std::string err;
  json report = linkcheck("", &err);
  auto f = findings(report);
  // symbol -> the source that must be blamed
  const std::map<std::string, std::string> want = {
      {"_ZN6fL_int15FLAGS_verbosityE", src_ + "/flags.cpp"},  // macro family: a flag
      {"_ZN5Shape4madeE", src_ + "/shape.cpp"},               // macro family: a static member
      {"_ZN5ShapeD2Ev", src_ + "/shape.cpp"},                 // ... and the key function itself
      {"_ZTV5Shape", src_ + "/shape.cpp"},                    // vtable for Shape: where ~Shape is
      {"_ZTI5Shape", src_ + "/shape.cpp"},                    // typeinfo for Shape: the same unit
      {"_ZN5sinks4sinkIiE3putEi", src_ + "/sink_inst.cpp"},   // template class VERDICT_API sinks::sink<int>
      {"_ZN14modern_verdict5scaleEi", src_ + "/scale.cpp"},   // the #else branch's namespace
      {"_Z10core_extrai", src_ + "/core_extra.cpp"},          // the build's own product lacks it
  };
  for (const auto& [symbol, file] : want) {
    ASSERT_TRUE(f.count(symbol)) << symbol << " not reported:\n" << report.dump(1);
    EXPECT_EQ(f[symbol].at("classification"), "missing-source") << symbol << ": " << f[symbol].dump(1);
    EXPECT_EQ(origin_file(f[symbol]), file) << symbol << ": " << f[symbol].dump(1);
    ASSERT_TRUE(f[symbol].at("fix").is_object()) << symbol;
    EXPECT_EQ(f[symbol].at("fix").at("kind"), "add-source") << symbol;
  }
  // The installed copy is mentioned, not blamed, and no shadowing cause is left for it.
  EXPECT_NE(
      f["_Z10core_extrai"].at("reason").get<std::string>().find(installed_ + "/libcore.so, another installed copy"),
      std::string::npos)
      << f["_Z10core_extrai"].dump(1);
  EXPECT_TRUE(!report.contains("causes") || report.at("causes").empty()) << report.at("causes").dump(1);
  // The report says what was compiled and what it cost.
  std::string placed;
  for (const auto& w : report.at("warnings"))
    if (w.get<std::string>().rfind("--confirm: the compiler placed ", 0) == 0) placed = w;
  EXPECT_NE(placed.find(src_ + "/shape.cpp ("), std::string::npos) << report.at("warnings").dump(1);

  // Text only (--no-confirm) compiles nothing: what only the compiler can see stays unplaced.
  json text = linkcheck(" --no-confirm");
  auto t = findings(text);
  EXPECT_NE(t["_ZN6fL_int15FLAGS_verbosityE"].at("classification"), "missing-source");
  // ... while the namespace macro resolves by the build's definitions without compiling anything.
  EXPECT_EQ(t["_ZN14modern_verdict5scaleEi"].at("classification"), "missing-source");
  EXPECT_EQ(origin_file(t["_ZN14modern_verdict5scaleEi"]), src_ + "/scale.cpp");
  for (const auto& w : text.at("warnings"))
    EXPECT_EQ(w.get<std::string>().rfind("--confirm", 0), std::string::npos) << w;

  // One --apply gives every source back; the rebuilt libraries load; a second --apply changes nothing.
  const std::string stub_args = context() + " --out-cpp " + quote(root_ + "/stubs/unimplemented_functions.cpp") +
                                " --out-header " + quote(root_ + "/stubs/unimplemented_functions.h") + " --apply";
  auto sg = run(kStubgen + " " + quote(build_ + "/libcore.so") + " " + quote(build_ + "/libapp.so") + stub_args);
  EXPECT_EQ(sg.status, 0) << sg.err;
  const std::string lists = test::read_file(src_ + "/CMakeLists.txt");
  for (const char* file : {"flags.cpp", "shape.cpp", "sink_inst.cpp", "scale.cpp", "core_extra.cpp"})
    EXPECT_NE(lists.find(file), std::string::npos) << file << " not given back:\n" << lists << sg.err;
  auto rb = run("cmake --build " + quote(build_));
  ASSERT_EQ(rb.status, 0) << rb.out << rb.err;
  std::string why;
  EXPECT_TRUE(loads_now(build_ + "/libcore.so", build_, why)) << why;
  EXPECT_TRUE(loads_now(build_ + "/libapp.so", build_, why)) << why;
  auto sg2 = run(kStubgen + " " + quote(build_ + "/libcore.so") + " " + quote(build_ + "/libapp.so") + stub_args);
  EXPECT_EQ(test::read_file(src_ + "/CMakeLists.txt"), lists) << sg2.err;
}

}  // namespace
}  // namespace mlc

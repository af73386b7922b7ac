// torch_musa's stand-ins (c10::musa::musaMallocAsync, declared for runtime APIs the SDK lacks):
// classified cuda-only with the CUDA counterpart, stubbed in their own namespace with their exact
// parameter types, and rebuilt until nothing is undefined - on a declaration header written here, and
// on torch_musa's real unimplemented_functions.h with the real CUDA headers and porting maps.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "build/model.h"
#include "porting/porting_map.h"
#include "source/scanner.h"
#include "stubgen/stubgen.h"
#include "test_support.h"

namespace mlc {
namespace {

namespace fs = std::filesystem;
using test::quote;
using test::run;

const std::string kSource = MLC_SOURCE_DIR;
const std::string kLinkcheck = MLC_LINKCHECK_BIN;
const std::string kStubgen = MLC_STUBGEN_BIN;

// A scratch directory in the tests' scratch area (test_support.h), removed when the test ends.
struct Scratch {
  std::string dir;
  explicit Scratch(const std::string& name) : dir(test::scratch_dir("stand-in-" + name)) {}
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

// The types a MUSA runtime header has (as the SDK spells them), none of the functions under test.
const char kSdkHeader[] = R"(#pragma once
#include <stddef.h>
#ifndef __host__
#define __host__
#endif
typedef enum musaError { musaSuccess = 0, musaErrorNotSupported = 801 } musaError_t;
typedef struct MUstream_st* musaStream_t;
typedef struct MUgraph_st* musaGraph_t;
typedef struct MUmemPoolHandle_st* musaMemPool_t;
enum musaStreamCaptureMode { musaStreamCaptureModeGlobal = 0 };
enum musaStreamCaptureStatus { musaStreamCaptureStatusNone = 0 };
enum musaMemPoolAttr { musaMemPoolReuseFollowEventDependencies = 1 };
#ifdef __cplusplus
extern "C" {
#endif
musaError_t musaGetLastError(void);
#ifdef __cplusplus
}
#endif
)";

// A fake SDK: that header, and a libmusart.so.4 that defines only musaGetLastError.
void make_sdk(const std::string& sdk, const std::string& more_definitions = "") {
  fs::create_directories(sdk + "/include");
  fs::create_directories(sdk + "/lib");
  test::write_file(sdk + "/include/musa_runtime_api.h", kSdkHeader);
  test::write_file(
      sdk + "/musart.cpp",
      "#include <musa_runtime_api.h>\nextern \"C\" musaError_t musaGetLastError(void) { return musaSuccess; }\n" +
          more_definitions);
  auto cc = run("c++ -shared -fPIC -I" + quote(sdk + "/include") + " -Wl,-soname,libmusart.so.4 -o " +
                quote(sdk + "/lib/libmusart.so.4") + " " + quote(sdk + "/musart.cpp") + " && ln -sf libmusart.so.4 " +
                quote(sdk + "/lib/libmusart.so"));
  ASSERT_EQ(cc.status, 0) << cc.err;
}

// A c10/util/Exception.h of our own: enough for C10_THROW_ERROR to compile.
void make_c10(const std::string& dir) {
  fs::create_directories(dir + "/c10/util");
  test::write_file(
      dir + "/c10/util/Exception.h",
      "#pragma once\n#include <stdexcept>\n#define C10_THROW_ERROR(kind, msg) throw std::runtime_error(msg)\n");
}

struct Declared {
  std::string name;                // unqualified
  std::vector<std::string> types;  // parameter types as written, names dropped
};

// The functions a stand-in header declares in c10::musa, read with our scanner.
std::vector<Declared> stand_ins_of(const std::string& header) {
  std::vector<Declared> out;
  std::set<std::string> seen;
  for (const auto& e : source::scan_source(header)) {
    if (e.kind != source::EntityKind::FunctionDeclaration || e.qualified.rfind("c10::musa::", 0) != 0) continue;
    std::string name(e.name());
    if (!seen.insert(name).second) continue;
    auto raw = source::raw_declaration(header, e.line, name, backend::api_macros());
    if (!raw) continue;
    Declared d{.name = name, .types = {}};
    for (size_t k = 0; k < raw->params.size(); ++k) {
      std::string t = raw->params[k];
      const std::string& n = k < raw->param_names.size() ? raw->param_names[k] : "";
      if (!n.empty() && t.size() > n.size() && t.compare(t.size() - n.size(), n.size(), n) == 0)
        t.resize(t.size() - n.size());
      while (!t.empty() && t.back() == ' ') t.pop_back();
      d.types.push_back(t);
    }
    out.push_back(d);
  }
  return out;
}

// Ported code calling every stand-in, unqualified from inside c10::musa, as torch_musa's ported
// sources do (cmake_macros.h includes the stand-in header into each of them).
std::string calling_code(const std::vector<Declared>& decls) {
  std::string out =
      "template <class T> T arg() { return T{}; }\nnamespace c10 {\nnamespace musa {\nvoid call_stand_ins() {\n";
  for (const auto& d : decls) {
    out += "  (void)" + d.name + "(";
    for (size_t k = 0; k < d.types.size(); ++k) out += (k ? ", " : "") + std::string("arg<") + d.types[k] + ">()";
    out += ");\n";
  }
  return out + "}\n}  // namespace musa\n}  // namespace c10\n";
}

std::set<std::string> nm(const std::string& flags, const std::string& file) {
  auto r = run("nm " + flags + " " + quote(file));
  std::set<std::string> out;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    std::string sym = line.substr(line.rfind(' ') + 1);
    if (sym.rfind("_ZN3c104musa", 0) == 0) out.insert(sym);
  }
  return out;
}

// Typedefs of a header, by our scanner: name -> normalized target.
std::map<std::string, std::string> aliases_of(const std::string& header) {
  std::map<std::string, std::string> out;
  for (const auto& e : source::scan_source(header))
    if (e.kind == source::EntityKind::Alias) out[std::string(e.name())] = e.extra;
  return out;
}

std::string resolved(const std::string& type, const std::map<std::string, std::string>& aliases) {
  std::string t = source::normalize_type(type, true);
  for (const auto& [name, target] : aliases) {
    for (size_t p = t.find(name); p != std::string::npos; p = t.find(name, p + 1)) {
      bool start = p == 0 || !(std::isalnum(static_cast<unsigned char>(t[p - 1])) || t[p - 1] == '_');
      size_t e = p + name.size();
      bool end = e >= t.size() || !(std::isalnum(static_cast<unsigned char>(t[e])) || t[e] == '_');
      if (start && end) t = source::normalize_type(t.substr(0, p) + target + t.substr(e), false);
    }
  }
  return t;
}

// The oracle for a counterpart: the map files themselves, read as plain JSON ("cudaX": "musaX"), not
// through porting::load_mapping and to_cuda_name, which are under test.
std::string cuda_name_in_maps(const std::string& maps_dir, const std::string& musa_name) {
  std::vector<std::string> found;
  for (const auto& entry : fs::directory_iterator(maps_dir)) {
    if (entry.path().extension() != ".json") continue;
    auto doc = nlohmann::json::parse(test::read_file(entry.path().string()), nullptr, false);
    if (!doc.is_object()) continue;
    for (const auto& [cuda, musa] : doc.items())
      if (musa.is_string() && musa.get<std::string>() == musa_name) found.push_back(cuda);
  }
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  EXPECT_EQ(found.size(), 1u) << musa_name << " has " << found.size() << " CUDA names in " << maps_dir;
  return found.empty() ? std::string() : found.front();
}

struct World {
  std::string dir, sdk, cuda, maps, header_dir, header_file, lib, out, c10;
};

// Builds the library against the fake SDK, runs musa-linkcheck (every stand-in cuda-only), then
// musa-stubgen, then rebuilds with the stubs; returns the generated header's text.
void rebuild(const World& w, const std::vector<Declared>& decls, const std::string& cuda_lib_dir) {
  test::write_file(w.dir + "/caller.cpp", calling_code(decls));
  std::string compile_lib = "c++ -std=c++17 -shared -fPIC -DREAL_MUSA_VERSION=4000 -I" + quote(w.sdk + "/include") +
                            " -include " + quote(w.header_file) + " " + quote(w.dir + "/caller.cpp");
  std::string link =
      " -o " + quote(w.lib) + " -L" + quote(w.sdk + "/lib") + " -lmusart -Wl,-rpath," + quote(w.sdk + "/lib");
  auto cc = run(compile_lib + link);
  ASSERT_EQ(cc.status, 0) << cc.err;
  std::set<std::string> wanted = nm("-u", w.lib);
  ASSERT_EQ(wanted.size(), decls.size()) << "every declared stand-in is referenced";

  std::string context = " --sdk-home " + quote(w.sdk) + " --cuda-home " + quote(w.cuda) + " --mapping " +
                        quote(w.maps) + " --source-root " + quote(w.header_dir) + " --cache-dir " +
                        quote(w.dir + "/cache");
  auto check =
      run(quote(kLinkcheck) + " " + quote(w.lib) + context + " --format json -o " + quote(w.dir + "/report.json"));
  ASSERT_EQ(check.status, 1) << check.err;
  auto report = read_json_report(w.dir + "/report.json");
  ASSERT_TRUE(report.ok());
  size_t in_cuda_lib = 0;
  ASSERT_EQ(report->libraries.size(), 1u);
  ASSERT_EQ(report->libraries[0].unresolved.size(), decls.size());
  for (const auto& u : report->libraries[0].unresolved) {
    EXPECT_EQ(to_string(u.classification), std::string("cuda-only")) << u.demangled << ": " << *u.reason;
    ASSERT_TRUE(u.counterpart.has_value()) << u.demangled;
    std::string name = u.demangled.substr(std::string("c10::musa::").size());
    name = name.substr(0, name.find('('));
    EXPECT_EQ(u.counterpart->name, cuda_name_in_maps(w.maps, name)) << u.demangled;
    if (u.counterpart->library) {
      EXPECT_EQ(u.counterpart->library->rfind(cuda_lib_dir, 0), 0u) << *u.counterpart->library;
      ++in_cuda_lib;
    }
  }
  EXPECT_GT(in_cuda_lib, 0u) << "CUDA's runtime library exports the counterparts";

  auto gen = run(quote(kStubgen) + " " + quote(w.lib) + context + " --c10 --out-cpp " +
                 quote(w.out + "/unimplemented_functions.cpp") + " --out-header " +
                 quote(w.out + "/unimplemented_functions.h"));
  ASSERT_EQ(gen.status, 0) << gen.out << gen.err;
  std::string cpp = test::read_file(w.out + "/unimplemented_functions.cpp");
  std::string hdr = test::read_file(w.out + "/unimplemented_functions.h");
  for (const auto& d : decls) {
    EXPECT_NE(cpp.find("    C10_THROW_ERROR(NotImplementedError, \"" + d.name + " is not supported now!\");\n"),
              std::string::npos)
        << d.name << "\n"
        << cpp;
  }
  EXPECT_NE(cpp.find("namespace c10 {\nnamespace musa {\n"), std::string::npos) << cpp;
  EXPECT_NE(hdr.find("namespace c10 {\nnamespace musa {\n"), std::string::npos) << hdr;

  // The oracle: the compiler's names for the stubs are exactly the names the library needs.
  std::string stub_obj = w.dir + "/stubs.o";
  std::string inc = " -I" + quote(w.out) + " -I" + quote(w.sdk + "/include") + " -I" + quote(w.c10);
  auto so = run("c++ -std=c++17 -Wall -Wextra -Werror -c -fPIC" + inc + " " +
                quote(w.out + "/unimplemented_functions.cpp") + " -o " + quote(stub_obj));
  ASSERT_EQ(so.status, 0) << so.err;
  EXPECT_EQ(nm("-g --defined-only", stub_obj), wanted);

  // Structurally, by our scanner: the same functions in the same namespace, each parameter the same
  // type once the SDK's typedefs are resolved.
  auto aliases = aliases_of(kSdkHeader);
  auto ours = stand_ins_of(hdr);
  std::map<std::string, std::vector<std::string>> theirs_by_name, ours_by_name;
  for (const auto& d : decls)
    for (const auto& t : d.types) theirs_by_name[d.name].push_back(resolved(t, aliases));
  for (const auto& d : ours)
    for (const auto& t : d.types) ours_by_name[d.name].push_back(resolved(t, aliases));
  for (const auto& d : decls) theirs_by_name.try_emplace(d.name);
  for (const auto& d : ours) ours_by_name.try_emplace(d.name);
  EXPECT_EQ(ours_by_name, theirs_by_name);

  // The rebuild: the library with the stubs compiled in has nothing undefined.
  auto rb = run(compile_lib + " " + quote(w.out + "/unimplemented_functions.cpp") + inc + link);
  ASSERT_EQ(rb.status, 0) << rb.err;
  auto again = run(quote(kLinkcheck) + " " + quote(w.lib) + context);
  EXPECT_EQ(again.status, 0) << again.out << again.err;
}

// The fixture: a fake SDK (with `sdk_definitions` added to its runtime library), a CUDA of our own,
// a small map, and torch_musa's convention in a header of our own: stand-ins declared in c10::musa.
World fixture_world(const std::string& dir, std::string& header, const std::string& sdk_definitions = "") {
  World w{.dir = dir,
          .sdk = dir + "/sdk",
          .cuda = dir + "/cuda",
          .maps = dir + "/maps",
          .header_dir = dir + "/torch_musa",
          .header_file = "",
          .lib = dir + "/build/libmusa_kernels.so",
          .out = dir + "/out",
          .c10 = dir + "/c10inc"};
  w.header_file = w.header_dir + "/unimplemented_functions.h";
  for (const auto& d : {w.maps, w.header_dir, w.out, dir + "/build", w.cuda + "/include", w.cuda + "/lib64"})
    fs::create_directories(d);
  make_sdk(w.sdk, sdk_definitions);
  make_c10(w.c10);
  // A CUDA of our own: the C API in its header and its runtime library.
  test::write_file(
      w.cuda + "/include/cuda_runtime_api.h",
      "#pragma once\n#include <stddef.h>\ntypedef enum cudaError { cudaSuccess = 0 } cudaError_t;\n"
      "typedef struct CUstream_st* cudaStream_t;\n#define CUDARTAPI\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
      "extern __host__ cudaError_t CUDARTAPI cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream);\n"
      "extern __host__ cudaError_t CUDARTAPI cudaFreeAsync(void *devPtr, cudaStream_t hStream);\n"
      "#ifdef __cplusplus\n}\n#endif\n");
  test::write_file(w.cuda + "/cudart.c",
                   "void* cudaMallocAsync(void) { return 0; }\nvoid* cudaFreeAsync(void) { return 0; }\n");
  auto cc = run("cc -shared -fPIC -Wl,-soname,libcudart.so.13 -o " + quote(w.cuda + "/lib64/libcudart.so.13") + " " +
                quote(w.cuda + "/cudart.c"));
  EXPECT_EQ(cc.status, 0) << cc.err;
  test::write_file(w.maps + "/general.json",
                   "{\"cudaMallocAsync\": \"musaMallocAsync\", \"cudaFreeAsync\": \"musaFreeAsync\", \"cudaError_t\": "
                   "\"musaError_t\", \"cudaStream_t\": \"musaStream_t\", \"CUstream_st\": \"MUstream_st\"}\n");
  // torch_musa's convention, in a header of our own: stand-ins declared in c10::musa.
  header =
      "#pragma once\n#include <musa_runtime_api.h>\nnamespace c10 {\nnamespace musa {\n"
      "__host__ musaError_t musaMallocAsync(void** devPtr, size_t size, musaStream_t hStream);\n"
      "__host__ musaError_t musaFreeAsync(void* devPtr, musaStream_t hStream);\n"
      "}  // namespace musa\n}  // namespace c10\n";
  test::write_file(w.header_file, header);
  return w;
}

TEST(StandIn, namespaced_stand_in_for_a_missing_c_api_is_cuda_only_and_stubbed_in_its_namespace) {
  Scratch s("fixture");
  std::string header;
  World w = fixture_world(s.dir, header);
  auto decls = stand_ins_of(header);
  ASSERT_EQ(decls.size(), 2u);
  rebuild(w, decls, w.cuda + "/lib64/");

  // The stub reads like torch_musa's: its SDK spellings and names, the message, the SDK's error.
  std::string cpp = test::read_file(w.out + "/unimplemented_functions.cpp");
  EXPECT_NE(
      cpp.find("namespace c10 {\nnamespace musa {\n__host__ musaError_t musaMallocAsync(void** devPtr, size_t size, "
               "musaStream_t hStream) {\n"),
      std::string::npos)
      << cpp;
  EXPECT_NE(cpp.find("    C10_THROW_ERROR(NotImplementedError, \"musaMallocAsync is not supported now!\");\n  }\n"
                     "  return musaErrorNotSupported;\n}\n}  // namespace musa\n}  // namespace c10\n"),
            std::string::npos)
      << cpp;
  std::string hdr = test::read_file(w.out + "/unimplemented_functions.h");
  EXPECT_NE(hdr.find("#include <musa_runtime_api.h>\n"), std::string::npos) << hdr;
  EXPECT_NE(
      hdr.find(
          "namespace c10 {\nnamespace musa {\n__host__ musaError_t musaFreeAsync(void* devPtr, musaStream_t hStream);\n"
          "}  // namespace musa\n}  // namespace c10\n"),
      std::string::npos)
      << hdr;
  // The JSON report names the counterpart and the CUDA library that has it.
  auto report = read_json_report(w.dir + "/report.json");
  ASSERT_TRUE(report.ok());
  for (const auto& u : report->libraries[0].unresolved) {
    ASSERT_TRUE(u.counterpart && u.counterpart->library);
    EXPECT_EQ(*u.counterpart->library, w.cuda + "/lib64/libcudart.so.13");
    ASSERT_TRUE(u.origin.has_value());
    EXPECT_EQ(u.origin->file, w.header_file);  // where the stand-in is declared
  }
}

TEST(StandIn, stand_in_that_hides_a_c_function_the_sdk_now_defines_is_not_stubbed) {
  Scratch s("sdk-has-it");
  std::string header;
  World w =
      fixture_world(s.dir, header,
                    "extern \"C\" musaError_t musaMallocAsync(void**, size_t, musaStream_t) { return musaSuccess; }\n");
  test::write_file(w.dir + "/caller.cpp", calling_code(stand_ins_of(header)));
  auto cc = run("c++ -shared -fPIC -I" + quote(w.sdk + "/include") + " -include " + quote(w.header_file) + " " +
                quote(w.dir + "/caller.cpp") + " -o " + quote(w.lib) + " -L" + quote(w.sdk + "/lib") + " -lmusart");
  ASSERT_EQ(cc.status, 0) << cc.err;
  auto check = run(quote(kLinkcheck) + " " + quote(w.lib) + " --sdk-home " + quote(w.sdk) + " --cuda-home " +
                   quote(w.cuda) + " --mapping " + quote(w.maps) + " --source-root " + quote(w.header_dir) +
                   " --cache-dir " + quote(w.dir + "/cache") + " --library-path " + quote(w.sdk + "/lib") +
                   " --format json -o " + quote(w.dir + "/report.json"));
  ASSERT_EQ(check.status, 1) << check.err;
  auto report = read_json_report(w.dir + "/report.json");
  ASSERT_TRUE(report.ok());
  std::map<std::string, const UnresolvedSymbol*> by_name;
  for (const auto& u : report->libraries[0].unresolved) by_name[u.demangled.substr(0, u.demangled.find('('))] = &u;
  ASSERT_TRUE(by_name.count("c10::musa::musaMallocAsync"));
  const UnresolvedSymbol& hidden = *by_name["c10::musa::musaMallocAsync"];
  EXPECT_EQ(to_string(hidden.classification), std::string("unknown"));
  ASSERT_TRUE(hidden.fix.has_value());
  EXPECT_EQ(hidden.fix->kind, FixKind::None);
  EXPECT_EQ(hidden.fix->detail,
            "remove the declaration of c10::musa::musaMallocAsync so the code calls libmusart.so.4's musaMallocAsync");
  ASSERT_TRUE(by_name.count("c10::musa::musaFreeAsync"));  // the other is still missing from the SDK
  EXPECT_EQ(to_string(by_name["c10::musa::musaFreeAsync"]->classification), std::string("cuda-only"));
}

// torch_musa's real files (v2.7.1, BSD-3-Clause), kept as test material in ../shared/data beside the
// project: unimplemented_functions.h and .cpp, and csrc/CMakeLists.txt as csrc-CMakeLists.txt.
const std::string kTorchMusa = MLC_TORCH_MUSA_DIR;

std::optional<std::string> real_file(const std::string& name) {
  if (!fs::exists(kTorchMusa + "/" + name)) return std::nullopt;
  return test::read_file(kTorchMusa + "/" + name);
}

// Return type and parameters, as written, of every function declared or defined in c10::musa.
std::map<std::string, std::vector<std::string>> c10_musa_functions(const std::string& text, source::EntityKind kind) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& e : source::scan_source(text)) {
    if (e.kind != kind || e.qualified.rfind("c10::musa::", 0) != 0) continue;
    if (auto raw = source::raw_declaration(text, e.line, e.name(), backend::api_macros())) {
      out[raw->name] = raw->params;
      out[raw->name].insert(out[raw->name].begin(), raw->return_type);
    }
  }
  return out;
}

TEST(StandIn, torch_musas_real_unimplemented_functions_are_rebuilt_from_the_real_cuda_headers_and_maps) {
  std::string maps = MLC_MAPPING_DIR;
  if (const char* m = std::getenv("MLC_MAPPING_DIR"); m && *m) maps = m;
  if (!fs::exists("/usr/local/cuda/include/cuda_runtime_api.h")) MLC_SKIP() << "no CUDA toolkit at /usr/local/cuda";
  if (!fs::exists(maps + "/general.json"))
    MLC_SKIP() << "no torch_musa porting maps at " << maps << " (MLC_MAPPING_DIR)";
  auto header = real_file("unimplemented_functions.h");
  auto definitions = real_file("unimplemented_functions.cpp");
  if (!header || !definitions) MLC_SKIP() << "torch_musa's real files are absent from " << kTorchMusa;
  Scratch s("real");
  World w{.dir = s.dir,
          .sdk = s.dir + "/sdk",
          .cuda = "/usr/local/cuda",
          .maps = maps,
          .header_dir = s.dir + "/torch_musa",
          .header_file = "",
          .lib = s.dir + "/build/libmusa_kernels.so",
          .out = s.dir + "/out",
          .c10 = s.dir + "/c10inc"};
  w.header_file = w.header_dir + "/unimplemented_functions.h";
  for (const auto& d : {w.header_dir, w.out, s.dir + "/build"}) fs::create_directories(d);
  make_sdk(w.sdk);
  make_c10(w.c10);
  test::write_file(w.header_file, *header);
  auto decls = stand_ins_of(*header);
  ASSERT_GE(decls.size(), 5u) << "the header declares torch_musa's stand-ins in c10::musa";
  rebuild(w, decls, "/usr/local/cuda/");
  // Beyond the types: each parameter spelled and named as torch_musa's hand-written declaration has
  // it (__host__ musaError_t; musaStream_t hStream, enum musaMemPoolAttr attr), taken from CUDA's declaration through
  // the map.
  std::string hdr = test::read_file(w.out + "/unimplemented_functions.h");
  auto theirs = c10_musa_functions(*header, source::EntityKind::FunctionDeclaration);
  EXPECT_EQ(theirs.size(), 9u) << "torch_musa v2.7.1 declares nine stand-ins";
  EXPECT_EQ(c10_musa_functions(hdr, source::EntityKind::FunctionDeclaration), theirs);
  // The stubs themselves: the same definitions as torch_musa's hand-written unimplemented_functions.cpp.
  std::string cpp = test::read_file(w.out + "/unimplemented_functions.cpp");
  auto defined_theirs = c10_musa_functions(*definitions, source::EntityKind::FunctionDefinition);
  EXPECT_EQ(defined_theirs.size(), 9u) << "torch_musa v2.7.1 defines nine stubs";
  EXPECT_EQ(c10_musa_functions(cpp, source::EntityKind::FunctionDefinition), defined_theirs);
  for (const auto& [name, signature] : defined_theirs) {
    EXPECT_NE(definitions->find("\"" + name + " is not supported now!\");"), std::string::npos) << name;
    EXPECT_NE(cpp.find("C10_THROW_ERROR(NotImplementedError, \"" + name + " is not supported now!\");"),
              std::string::npos)
        << name << "\n"
        << cpp;
  }
}

// torch_musa's real csrc/CMakeLists.txt: every entry of MU_SRCS, the list musa-stubgen patches, read
// where it is written. The oracle is the file's own layout (one entry a line, from the line after
// `MU_SRCS` to the closing parenthesis), read here line by line without our CMake parser.
TEST(StandIn, torch_musas_real_csrc_cmake_lists_give_every_mu_srcs_entry_at_its_line) {
  auto text = real_file("csrc-CMakeLists.txt");
  if (!text) MLC_SKIP() << "torch_musa's real files are absent from " << kTorchMusa;
  Scratch s("real-cmake");
  std::string file = s.dir + "/CMakeLists.txt";
  test::write_file(file, *text);
  std::vector<std::pair<uint32_t, std::string>> want;
  std::map<std::string, int> times;
  {
    std::istringstream in(*text);
    uint32_t line_no = 0;
    bool inside = false;
    for (std::string line; std::getline(in, line);) {
      ++line_no;
      std::string t =
          line.substr(line.find_first_not_of(' ') == std::string::npos ? line.size() : line.find_first_not_of(' '));
      if (!inside) {
        inside = t == "MU_SRCS";
        continue;
      }
      bool last = !t.empty() && t.back() == ')';
      if (last) t.pop_back();
      if (!t.empty()) {
        want.emplace_back(line_no, t);
        ++times[t];
      }
      if (last) break;
    }
  }
  ASSERT_GT(want.size(), 100u) << "MU_SRCS of torch_musa v2.7.1 lists over a hundred sources";
  std::vector<std::string> twice;
  for (const auto& [entry, n] : times)
    if (n > 1) twice.push_back(entry);
  auto info = build::read_build({.build_dir = "", .cmake_lists = {file}, .library_helper = {}});
  EXPECT_TRUE(info.errors.empty()) << info.errors[0].to_line();
  const build::SourceList* mu = nullptr;
  for (const auto& l : info.lists)
    if (l.variable == "MU_SRCS" && l.command == build::ListCommand::Glob) mu = &l;
  ASSERT_NE(mu, nullptr);
  EXPECT_EQ(mu->line, 58u);  // `file(` opens on line 58, MU_SRCS is on line 60
  std::vector<std::pair<uint32_t, std::string>> got;
  for (const auto& e : mu->entries) got.emplace_back(e.line, e.raw);
  EXPECT_EQ(got, want);
  std::vector<std::string> dups = mu->duplicates;
  std::sort(dups.begin(), dups.end());
  EXPECT_EQ(dups, twice);
}

}  // namespace
}  // namespace mlc

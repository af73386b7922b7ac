// A GPU backend as data: where its SDK lives and how it is laid out, what its ported sources and
// names are called, its stub runtime's names and its CMake and Python spellings. The passes read
// these fields; nothing else in the core knows a vendor's name, and a third backend is one more
// aggregate (plus a map reader if its map is new: tests/unit/backend_test.cpp shows one).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "porting/porting_map.h"
#include "source/source_index.h"

namespace mlc::backend {

struct Backend {
  std::string name;     // "musa", "hip": what --backend takes
  std::string display;  // "MUSA", "HIP": used in sentences
  std::string about;    // what --backend's help says of it ("" for the default)
  // SDK layout. The home is $<home_env>, else default_home; directories are relative to it.
  std::string home_env;
  std::string default_home;
  // Versions installed side by side as <default_home>-<version> (/usr/local/musa-3.1): where other
  // versions of a missing library are looked for.
  bool versioned_homes = false;
  std::vector<std::string> include_dirs;  // only these are indexed for declarations
  std::vector<std::string> library_dirs;
  // Library file-name prefixes that belong to the SDK ("libamdhip64"): empty means every library in
  // library_dirs (a vendor-private lib/ directory); a shared system directory needs the filter.
  std::vector<std::string> library_prefixes;
  bool index_archives = true;                  // read lib*.a members (static-archive findings)
  std::vector<std::string> source_extensions;  // ported kernel sources: ".mu" / ".hip"
  std::string api_prefix;                      // "musa", "hip": runtime API names start with it
  // When the map has no entry, hipX's CUDA counterpart is cudaX (HIP mirrors CUDA's runtime names;
  // PyTorch's map leaves out APIs PyTorch never calls, such as cudaLaunchHostFunc).
  bool counterpart_by_prefix = false;
  porting::PortNaming port_naming;  // how the porting script renames paths and scopes (cuda/X.cu -> musa/X.mu)
  // The stub runtime generated stubs call: musa_stub_enter(), MUSA_STUB_THROW, stubs bundled by
  // defining MUSA_STUBS_IMPLEMENTATION before including musa_stubs.h.
  std::string stub_prefix;        // "musa_stub_"
  std::string stubs_macro;        // "MUSA_STUBS_IMPLEMENTATION"
  std::string stubs_header;       // "musa_stubs.h"
  std::string version_macro;      // the SDK's version as a number, for --version-guard ("REAL_MUSA_VERSION")
  std::string cmake_add_library;  // the SDK's CMake helper that creates a library ("musa_add_library")
  std::string python_package;     // the backend's PyTorch extension package ("torch_musa"), "" for none
  // Its GPU driver's soname stems ("libmusa.so"): without the driver nothing runs, so a run-time
  // dlopen of one that finds nothing is a warning of its own.
  std::vector<std::string> driver_sonames = {};
  // File-name stems of the libraries a process built for its GPUs loads (its runtime, math libraries,
  // torch's build for it): where one is loaded, that driver is the stack's, and another's is a probe.
  std::vector<std::string> stack_prefixes = {};
  // Calling-convention macros its runtime headers write before a function's name ("MUSARTAPI_CDECL").
  std::vector<std::string> api_macros = {};
  // The PyTorch extension's own kernel list (torch_musa's `- func:` musa_functions.yaml) and the C++
  // namespace its kernels are defined in ("at::musa"); "" for none.
  std::string kernel_list_file = {};
  std::string kernel_namespace = {};
};

// The built-in backends: "musa" (the default) and "hip" (ROCm HIP as Debian ships it).
const Backend& musa();
const Backend& hip();
// Every built-in backend, the default first: what --backend accepts.
const std::vector<const Backend*>& all();
// nullptr for an unknown name.
const Backend* find(std::string_view name);
// Whether a soname is a GPU driver's: CUDA's or a backend's (driver_sonames), by stem.
bool is_gpu_driver(std::string_view soname);
// The GPU vendor whose driver `soname` is ("cuda", "musa", "hip"), "" for none.
std::string_view driver_vendor(std::string_view soname);
// The GPU vendor whose stack a library of this file name belongs to (stack_prefixes, CUDA's runtime
// and math libraries), "" for none: a process that loads one is built for that vendor's GPUs.
std::string_view stack_vendor(std::string_view file_name);
// The calling-convention macros of CUDA's runtime headers and of every backend's (api_macros).
const std::vector<std::string>& api_macros();
// The file kinds the scanner reads: C, C++ and CUDA's, and every backend's dialect (.mu .muh, .hip;
// a ported .cu is a translation unit), whichever backend this run checks.
const source::FileKinds& file_kinds();
// "musa|hip", for usage lines.
std::string names();

// The SDK home a run uses: the explicit one, else the environment's value (passed in: the core reads
// no environment), else the default.
std::string sdk_home(const Backend& b, const std::string& from_env);

// The naming rule the SDKs follow for CUDA's runtime API: cudaX -> hipX, cudaX -> musaX. What a
// counterpart is when no map says (coverage without --mapping, a name a map leaves out).
std::string naming_rule(const Backend& b);  // "cudaX -> hipX"
std::optional<std::string> counterpart_by_rule(const Backend& b, std::string_view cuda_name);
// The inverse: hipMalloc -> cudaMalloc (a ported tree's names, counted under CUDA's).
std::optional<std::string> cuda_name_by_rule(const Backend& b, std::string_view name);

// The stub runtime's names: stub_name(b, "enter") is "musa_stub_enter", stub_constant(b, "THROW")
// is "MUSA_STUB_THROW".
std::string stub_name(const Backend& b, std::string_view what);
std::string stub_constant(const Backend& b, std::string_view what);
// The stub runtime header for `b`, from the MUSA one the project ships (stubs/musa_stubs.h): its
// names (functions, macros, the MUSA_STUBS and MUSA_STUBS_TRACE variables, the "musa-stubs:" lines)
// renamed to b's, so a HIP build's stubs call hip_stub_enter() and read HIP_STUBS.
std::string stub_runtime_text(const Backend& b, std::string_view musa_runtime);

}  // namespace mlc::backend

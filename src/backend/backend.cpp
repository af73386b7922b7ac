// The two backends the toolkit knows, and the rules written once over any backend's fields. MUSA
// keeps every default the tools had before --backend existed; HIP describes ROCm 5.2 as Debian
// packages it (hipcc, libamdhip64-dev).
#include "backend/backend.h"
#include "backend/cuda_api.h"

#include <cctype>

namespace mlc::backend {
namespace {

// What CUDA's libraries call their C APIs (runtime, driver, math libraries, NCCL, NVRTC, NVTX); both
// backends port from these.
constexpr std::string_view kCudaApiPrefixes[] = {
    "cuda",  "cu",     "CU",     "cublas", "CUBLAS", "cusparse", "CUSPARSE", "cusolver", "CUSOLVER", "cufft",
    "CUFFT", "curand", "CURAND", "cudnn",  "CUDNN",  "nccl",     "nvrtc",    "NVRTC",    "nvtx"};

}  // namespace

const Backend& musa() {
  static const Backend b{
      .name = "musa",
      .display = "MUSA",
      .about = "",
      .home_env = "MUSA_HOME",
      .default_home = "/usr/local/musa",
      .versioned_homes = true,
      .include_dirs = {"include"},
      .library_dirs = {"lib", "lib64"},
      .library_prefixes = {},
      .index_archives = true,
      .source_extensions = {".mu", ".muh"},
      .api_prefix = "musa",
      .counterpart_by_prefix = false,
      // torch_musa's porting script: native/cuda/X.cu -> native/musa/X.mu, `namespace cuda` -> `namespace musa`.
      .port_naming = {.scope = "musa", .upper = "MUSA", .extensions = {{".cu", ".mu"}, {".cuh", ".muh"}}},
      .stub_prefix = "musa_stub_",
      .stubs_macro = "MUSA_STUBS_IMPLEMENTATION",
      .stubs_header = "musa_stubs.h",
      .version_macro = "REAL_MUSA_VERSION",
      .cmake_add_library = "musa_add_library",
      .python_package = "torch_musa",
      .driver_sonames = {"libmusa.so"},
      .stack_prefixes = {"libmusart.so", "libmublas", "libmudnn", "libmufft", "libmurand", "libmusparse", "libmccl",
                         "libtorch_musa", "libmusa_kernels"},
      .api_macros = {"MUSARTAPI_CDECL"},
      .kernel_list_file = "musa_functions.yaml",
      .kernel_namespace = "at::musa",
  };
  return b;
}

const Backend& hip() {
  // Debian: headers in /usr/include/hip (only those are indexed: all of /usr/include took 9.7 s),
  // libraries in the multiarch directory beside every other library, hence the prefix filter.
  static const Backend b{
      .name = "hip",
      .display = "HIP",
      .about = "ROCm HIP as Debian ships it",
      .home_env = "ROCM_PATH",
      .default_home = "/usr",
      .versioned_homes = false,
      .include_dirs = {"include/hip"},
      .library_dirs = {"lib/x86_64-linux-gnu", "lib"},
      .library_prefixes = {"libamdhip64", "libhiprtc", "libhipblas", "libhipfft", "libhiprand", "libhipsparse",
                           "libhipsolver", "librocblas", "librocfft", "librocrand", "librocsparse", "librocsolver",
                           "librccl", "libroctx64", "libMIOpen"},
      .index_archives = false,
      .source_extensions = {".hip"},
      .api_prefix = "hip",
      .counterpart_by_prefix = true,
      // PyTorch's hipify (torch/utils/hipify): native/cuda/X.cu -> native/hip/X.hip, headers keep .cuh.
      .port_naming = {.scope = "hip", .upper = "HIP", .extensions = {{".cu", ".hip"}}},
      .stub_prefix = "hip_stub_",
      .stubs_macro = "HIP_STUBS_IMPLEMENTATION",
      .stubs_header = "hip_stubs.h",
      .version_macro = "HIP_VERSION",          // hip_version.h: major * 10000000 + minor * 100000 + patch
      .cmake_add_library = "hip_add_library",  // FindHIP.cmake
      .python_package = "",                    // ROCm's PyTorch is torch itself
      .driver_sonames = {"libamdhip64.so"},
      .stack_prefixes = {"libamdhip64", "libhiprtc", "libhipblas", "libhipfft", "libhiprand", "libhipsparse",
                         "libhipsolver", "librocblas", "librocfft", "librocrand", "librocsparse", "librocsolver",
                         "librccl", "libMIOpen", "libtorch_hip", "libc10_hip"},
      .api_macros = {},
      .kernel_list_file = "",
      .kernel_namespace = "",
  };
  return b;
}

const std::vector<const Backend*>& all() {
  static const std::vector<const Backend*> backends{&musa(), &hip()};
  return backends;
}

const Backend* find(std::string_view name) {
  for (const Backend* b : all())
    if (b->name == name) return b;
  return nullptr;
}

bool is_gpu_driver(std::string_view soname) {
  if (soname.starts_with(kCudaDriverSoname)) return true;
  for (const Backend* b : all())
    for (const auto& stem : b->driver_sonames)
      if (soname.starts_with(stem)) return true;
  return false;
}

std::string_view driver_vendor(std::string_view soname) {
  if (soname.starts_with(kCudaDriverSoname)) return "cuda";
  for (const Backend* b : all())
    for (const auto& stem : b->driver_sonames)
      if (soname.starts_with(stem)) return b->name;
  return "";
}

std::string_view stack_vendor(std::string_view file_name) {
  for (std::string_view stem : kCudaStackPrefixes)
    if (file_name.starts_with(stem)) return "cuda";
  for (const Backend* b : all())
    for (const auto& stem : b->stack_prefixes)
      if (file_name.starts_with(stem)) return b->name;
  return "";
}

const std::vector<std::string>& api_macros() {
  static const std::vector<std::string> macros = [] {
    std::vector<std::string> out(std::begin(kCudaApiMacros), std::end(kCudaApiMacros));
    for (const Backend* b : all()) out.insert(out.end(), b->api_macros.begin(), b->api_macros.end());
    return out;
  }();
  return macros;
}

const source::FileKinds& file_kinds() {
  static const source::FileKinds kinds = [] {
    source::FileKinds out;
    for (const Backend* b : all()) {
      out.any.insert(out.any.end(), b->source_extensions.begin(), b->source_extensions.end());
      out.kernel.insert(out.kernel.end(), b->source_extensions.begin(), b->source_extensions.end());
      // A translation unit is what a .cu becomes once ported (.mu, .hip); a .cuh's port is a header.
      for (const auto& [from, to] : b->port_naming.extensions)
        if (from == ".cu") out.compiled.push_back(to);
    }
    return out;
  }();
  return kinds;
}

std::string names() {
  std::string out;
  for (const Backend* b : all()) out += (out.empty() ? "" : "|") + b->name;
  return out;
}

bool looks_like_cuda_api(const Backend& b, std::string_view symbol) {
  if (symbol.rfind("_Z", 0) == 0) return false;  // a C++ function: no CUDA C API is one
  auto starts_word = [](char c) { return (c >= 'A' && c <= 'Z') || c == '_'; };
  auto matches = [&](std::string_view prefix) {
    if (symbol.size() <= prefix.size() || symbol.substr(0, prefix.size()) != prefix) return false;
    return prefix.size() > 2 || starts_word(symbol[prefix.size()]);
  };
  if (!b.api_prefix.empty() && matches(b.api_prefix)) return true;
  for (std::string_view p : kCudaApiPrefixes)
    if (matches(p)) return true;
  return false;
}

std::string sdk_home(const Backend& b, const std::string& from_env) {
  return from_env.empty() ? b.default_home : from_env;
}

std::string naming_rule(const Backend& b) { return "cudaX -> " + b.api_prefix + "X"; }

std::optional<std::string> counterpart_by_rule(const Backend& b, std::string_view cuda_name) {
  if (cuda_name.size() <= 4 || cuda_name.substr(0, 4) != "cuda" ||
      !std::isupper(static_cast<unsigned char>(cuda_name[4])))
    return std::nullopt;
  return b.api_prefix + std::string(cuda_name.substr(4));
}

std::optional<std::string> cuda_name_by_rule(const Backend& b, std::string_view name) {
  const std::string& p = b.api_prefix;
  if (p.empty() || name.size() <= p.size() || name.substr(0, p.size()) != p ||
      !std::isupper(static_cast<unsigned char>(name[p.size()])))
    return std::nullopt;
  return "cuda" + std::string(name.substr(p.size()));
}

namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// "musa_stub_" -> "musa_stub": the stem every runtime name starts with (musa_stubs_first_time too).
std::string_view stem(const Backend& b) {
  std::string_view p = b.stub_prefix;
  return p.ends_with('_') ? p.substr(0, p.size() - 1) : p;
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  if (from.empty() || from == to) return;
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
}

}  // namespace

std::string stub_name(const Backend& b, std::string_view what) { return b.stub_prefix + std::string(what); }

std::string stub_constant(const Backend& b, std::string_view what) { return upper(b.stub_prefix) + std::string(what); }

std::string stub_runtime_text(const Backend& b, std::string_view musa_runtime) {
  std::string text(musa_runtime);
  const Backend& m = musa();
  // Every identifier of the runtime starts with the stem (musa_stub_enter, musa_stubs_traced,
  // MUSA_STUBS_IMPLEMENTATION, MUSA_STUBS_TRACE); its messages say "musa-stubs: ".
  std::string from_stem(stem(m)), to_stem(stem(b));
  replace_all(text, from_stem, to_stem);
  replace_all(text, upper(from_stem), upper(to_stem));
  replace_all(text, m.name + "-stubs: ", b.name + "-stubs: ");
  return text;
}

std::string_view cuda_api_family(std::string_view n) {
  // Longest prefixes first: cublasLt before cublas before cu.
  static const std::pair<std::string_view, std::string_view> prefixes[] = {
      {"cublasLt", "blas"},   {"cublas", "blas"},     {"CUBLAS", "blas"},     {"cusparse", "sparse"},
      {"CUSPARSE", "sparse"}, {"cusolver", "solver"}, {"CUSOLVER", "solver"}, {"cufft", "fft"},
      {"CUFFT", "fft"},       {"curand", "rand"},     {"CURAND", "rand"},     {"cudnn", "dnn"},
      {"CUDNN", "dnn"},       {"nccl", "nccl"},       {"nvrtc", "rtc"},       {"NVRTC", "rtc"},
      {"nvtx", "roctx"},      {"cuda", "runtime"},    {"CUDA_", "driver"},    {"CU_", "driver"},
      {"cu", "driver"},       {"CU", "driver"},
  };
  for (const auto& [prefix, family] : prefixes) {
    if (n.size() <= prefix.size() || n.substr(0, prefix.size()) != prefix) continue;
    // cuX is the driver only when X starts a word (cuMemAlloc, CUresult), not "cut" or "current".
    if ((prefix == "cu" || prefix == "CU") && !(n[2] >= 'A' && n[2] <= 'Z')) return "";
    return family;
  }
  return "";
}

}  // namespace mlc::backend

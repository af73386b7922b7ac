// The two backends the toolkit knows. MUSA keeps every default the tools had before --backend
// existed; HIP describes ROCm 5.2 as Debian packages it (hipcc, libamdhip64-dev).
#include "backend/backend.h"
#include "backend/cuda_api.h"

namespace mlc::backend {
namespace {

// What CUDA's libraries call their C APIs (runtime, driver, math libraries, NCCL, NVRTC, NVTX); both
// backends port from these.
constexpr std::string_view kCudaApiPrefixes[] = {"cuda",     "cu",    "CU",    "cublas", "CUBLAS", "cusparse", "CUSPARSE",
                                                 "cusolver", "CUSOLVER", "cufft", "CUFFT", "curand", "CURAND",
                                                 "cudnn",    "CUDNN", "nccl",  "nvrtc",  "NVRTC",  "nvtx"};

}  // namespace

const Backend& musa() {
  static const Backend b{
      .name = "musa",
      .display = "MUSA",
      .home_env = "MUSA_HOME",
      .default_home = "/usr/local/musa",
      .include_dirs = {"include"},
      .library_dirs = {"lib", "lib64"},
      .library_prefixes = {},
      .index_archives = true,
      .sonames = {"libmusart.so.4", "libmusa.so.4"},
      .source_extensions = {".mu", ".muh"},
      .map_format = MapFormat::TorchMusaJson,
      .compiler = "mcc",
      .error_type = "musaError_t",
      .not_supported = "musaErrorNotSupported",
      .runtime_header = "musa_runtime_api.h",
      .api_prefix = "musa",
      .counterpart_by_prefix = false,
  };
  return b;
}

const Backend& hip() {
  // Debian: headers in /usr/include/hip (only those are indexed: all of /usr/include took 9.7 s),
  // libraries in the multiarch directory beside every other library, hence the prefix filter.
  static const Backend b{
      .name = "hip",
      .display = "HIP",
      .home_env = "ROCM_PATH",
      .default_home = "/usr",
      .include_dirs = {"include/hip"},
      .library_dirs = {"lib/x86_64-linux-gnu", "lib"},
      .library_prefixes = {"libamdhip64", "libhiprtc", "libhipblas", "libhipfft", "libhiprand", "libhipsparse",
                           "libhipsolver", "librocblas", "librocfft", "librocrand", "librocsparse", "librocsolver",
                           "librccl", "libroctx64", "libMIOpen"},
      .index_archives = false,
      .sonames = {"libamdhip64.so.5"},
      .source_extensions = {".hip"},
      .map_format = MapFormat::HipifyPython,
      .compiler = "hipcc",
      .error_type = "hipError_t",
      .not_supported = "hipErrorNotSupported",
      .runtime_header = "hip/hip_runtime_api.h",
      .api_prefix = "hip",
      .counterpart_by_prefix = true,
  };
  return b;
}

const Backend* find(std::string_view name) {
  if (name == "musa") return &musa();
  if (name == "hip") return &hip();
  return nullptr;
}

std::string names() { return "musa|hip"; }

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

}  // namespace mlc::backend

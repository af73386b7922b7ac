// Which names look like the CUDA APIs a backend ports (cudaX runtime, cuX driver, cublasX...): a fact
// of the backends, so only a name that looks like one is said to have been looked for in CUDA.
#pragma once

#include <string_view>

#include "backend/backend.h"

namespace mlc::backend {

// True for a C name that starts like one of CUDA's APIs (runtime, driver, the math libraries, NCCL,
// NVRTC, NVTX) or like `b`'s own runtime (its api_prefix). A two-letter prefix ("cu") counts only where
// a word starts after it (cuMemAlloc, not cutlass_gemm); a C++ function (_Z...) never looks like one.
bool looks_like_cuda_api(const Backend& b, std::string_view symbol);

// The API family of a CUDA name by its prefix (cudaX runtime, cuX driver, cublasX blas, nvtxX roctx...),
// "" when it is no CUDA library name: what torch_musa's maps, which carry no family, are grouped by.
std::string_view cuda_api_family(std::string_view cuda_name);

// CUDA's driver library, by soname stem.
inline constexpr std::string_view kCudaDriverSoname = "libcuda.so";
// The libraries of a process built for CUDA GPUs (the runtime, the math libraries, NCCL, NVRTC,
// torch's CUDA build), by file-name stem.
inline constexpr std::string_view kCudaStackPrefixes[] = {
    "libcudart.so", "libcublas",  "libcudnn", "libcufft",     "libcurand",     "libcusparse", "libcusolver",
    "libnvrtc",     "libnccl.so", "libcupti", "libnvJitLink", "libtorch_cuda", "libc10_cuda"};
// The macros CUDA's runtime headers write before a function's name.
inline constexpr std::string_view kCudaApiMacros[] = {"__cudart_builtin__", "CUDARTAPI_CDECL"};

}  // namespace mlc::backend

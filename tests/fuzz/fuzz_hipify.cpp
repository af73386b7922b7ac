// The hipify map reader (PyTorch's cuda_to_hip_mappings.py read as data, never executed) on arbitrary
// bytes, then the identifier mapping with whatever map it read.
#include "backend/backend.h"
#include "backend/hipify_map.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto map = mlc::backend::parse_hipify_map(text, "cuda_to_hip_mappings.py");
  if (map.ok()) {
    (void)mlc::porting::map_identifiers("cudaMalloc(cudaStream_t s) at::cuda::f", map->to_musa);
    (void)mlc::porting::to_cuda_name("hipMallocAsync", *map, mlc::backend::hip().port_naming);
  } else if (map.error().to_line().empty()) {
    __builtin_trap();  // an error must say what is wrong
  }
  return 0;
}

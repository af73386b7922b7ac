// The porting-map loader (the fast flat-object reader and its nlohmann fallback) on arbitrary
// bytes, then the identifier mapping the tracer applies with whatever map loaded.
#include "backend/backend.h"
#include "fuzz_support.h"
#include "porting/porting_map.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto map = mlc::porting::load_mapping(mlc::fuzz::write_file("general.json", bytes));
  if (map.ok()) {
    (void)mlc::porting::map_identifiers("cudaMalloc(cudaStream_t s) at::cuda::f", map->to_musa);
    (void)mlc::porting::to_cuda_name("c10::musa::musaMallocAsync", *map, mlc::backend::musa().port_naming);
  }
  (void)mlc::porting::ported_path(bytes.substr(0, 512), mlc::backend::musa().port_naming);
  return 0;
}

// A GPU backend as data: where its SDK lives and how it is laid out, what its ported sources are
// called, which porting-map format it reads, its compiler and its stub conventions. The passes read
// these fields; nothing else in the core branches on the backend's name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mlc::backend {

enum class MapFormat {
  TorchMusaJson,  // torch_musa's flat JSON maps (a directory of *.json or one file)
  HipifyPython,   // PyTorch's torch/utils/hipify/cuda_to_hip_mappings.py, read as data
};

struct Backend {
  std::string name;     // "musa", "hip": what --backend takes
  std::string display;  // "MUSA", "HIP": used in sentences
  // SDK layout. The home is $<home_env>, else default_home; directories are relative to it.
  std::string home_env;
  std::string default_home;
  std::vector<std::string> include_dirs;  // only these are indexed for declarations
  std::vector<std::string> library_dirs;
  // Library file-name prefixes that belong to the SDK ("libamdhip64"): empty means every library in
  // library_dirs (a vendor-private lib/ directory); a shared system directory needs the filter.
  std::vector<std::string> library_prefixes;
  bool index_archives = true;             // read lib*.a members (static-archive findings)
  std::vector<std::string> sonames;       // the runtime's sonames, for documentation and checks
  std::vector<std::string> source_extensions;  // ported kernel sources: ".mu" / ".hip"
  MapFormat map_format = MapFormat::TorchMusaJson;
  std::string compiler;         // "mcc", "hipcc"
  std::string error_type;       // return type of the runtime's C API ("musaError_t")
  std::string not_supported;    // the runtime's "not supported" status ("musaErrorNotSupported")
  std::string runtime_header;   // what a stub file includes for those ("musa_runtime_api.h")
  std::string api_prefix;       // "musa", "hip": runtime API names start with it
  // When the map has no entry, hipX's CUDA counterpart is cudaX (HIP mirrors CUDA's runtime names;
  // PyTorch's map leaves out APIs PyTorch never calls, such as cudaLaunchHostFunc).
  bool counterpart_by_prefix = false;
};

// The built-in backends: "musa" (the default) and "hip" (ROCm HIP as Debian ships it).
const Backend& musa();
const Backend& hip();
// nullptr for an unknown name.
const Backend* find(std::string_view name);
// "musa|hip", for usage lines.
std::string names();

// The SDK home a run uses: the explicit one, else the environment's value (passed in: the core reads
// no environment), else the default.
std::string sdk_home(const Backend& b, const std::string& from_env);

}  // namespace mlc::backend

// torch_musa's porting rules: the flat JSON maps (CUDA name -> MUSA name) that the porting script
// applies at identifier boundaries, their inverse (MUSA -> CUDA), and the path rules that turn an
// original PyTorch file into its ported counterpart (native/cuda/X.cu -> native/musa/X.mu), spelled
// by the backend's PortNaming.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/result.h"

namespace mlc::porting {

// Views into texts the map owns: loading copies no string that needs no unescaping.
using NameMap = std::unordered_map<std::string_view, std::string_view>;

// What a map says about a CUDA name besides its target (PyTorch's hipify map: the API family and
// the HIP_UNSUPPORTED mark; torch_musa's JSON maps say neither, so family comes from the name).
struct ApiInfo {
  std::string_view family;   // "runtime", "driver", "blas", ... ("" when unknown)
  bool unsupported = false;  // marked HIP_UNSUPPORTED: the target name is a placeholder
  uint32_t line = 0;         // line of the entry in the map file (0: unknown)
};

// How the porting script renames what it does not find in the map (the backend states it:
// backend::Backend::port_naming): a directory or scope named cuda, CUDA in file names, extensions.
struct PortNaming {
  std::string scope;  // "musa": native/cuda/ -> native/musa/, `namespace cuda` -> `namespace musa`
  std::string upper;  // "MUSA": SparseCUDATensor -> SparseMUSATensor
  std::vector<std::pair<std::string, std::string>> extensions;  // {".cu", ".mu"}: the first that ends a name
};

struct PortingMap {
  // The backend's names: MUSA for torch_musa's maps, HIP for hipify's (the field keeps its name).
  NameMap to_musa;                                     // identifiers: general, extra, dnn-naming
  NameMap to_cuda;                                     // the inverse (general.json is one-to-one)
  NameMap headers;                                     // include.json, dnn-header.json
  std::vector<std::string> files;                      // the JSON files read
  std::deque<std::string> storage;                     // the texts and decoded strings the views point into
  std::unordered_map<std::string_view, ApiInfo> info;  // CUDA name -> family, mark (hipify maps only)
  size_t entries() const { return to_musa.size() + headers.size(); }
};

// A directory of *.json (include*.json and *header*.json are header maps) or one file.
// Errors (unreadable file, invalid JSON, a value that is not a string) name the file.
Result<PortingMap> load_mapping(const std::string& path);

// Replaces whole identifiers found in `map` (the porting script's text rule).
std::string map_identifiers(std::string_view text, const NameMap& map);

// The backend's spelling -> CUDA spelling of a qualified C++ name or a C name: inverse identifier
// map, then scope components named naming.scope back to "cuda" (the `namespace cuda {` ->
// `namespace musa {` rule).
std::string to_cuda_name(std::string_view ported_name, const PortingMap& map, const PortNaming& naming);

// With MUSA's naming: aten/src/ATen/native/cuda/SparseCUDATensor.cu -> aten/src/ATen/native/musa/SparseMUSATensor.mu
std::string ported_path(std::string_view original, const PortNaming& naming);

}  // namespace mlc::porting

// PyTorch's hipify map (torch/utils/hipify/cuda_to_hip_mappings.py) read as data: the Python literal
// tuples ("cudaMalloc", ("hipMalloc", CONV_MEM, API_RUNTIME[, HIP_UNSUPPORTED])) are parsed by our
// own reader; the file is never executed.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"
#include "porting/porting_map.h"

namespace mlc::backend {

// The map as hipify applies it to PyTorch (hipify_python.py): the dictionaries named in
// CUDA_TO_HIP_MAPPINGS, in that order, API_CAFFE2 entries left out, a later entry replacing an earlier
// one except that an API_SPARSE entry never replaces one already there. A conditional value
// ("a" if rocm_version < (5, 2, 0) else "b") takes its else branch: ROCm 5.2 or later.
// Identifiers go to to_musa/to_cuda (the HIP names), header names to headers, and every CUDA name's
// family and HIP_UNSUPPORTED mark to info. Errors name the file and the line.
Result<porting::PortingMap> load_hipify_map(const std::string& path);
Result<porting::PortingMap> parse_hipify_map(std::string text, const std::string& path);

// Any porting map by its form: a *.py file is a hipify map, anything else torch_musa's JSON maps.
Result<porting::PortingMap> load_any_map(const std::string& path);

}  // namespace mlc::backend

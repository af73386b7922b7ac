import collections

from .constants import (API_BLAS, API_RUNTIME, API_SPARSE, CONV_INCLUDE, CONV_MEM, CONV_TYPE, HIP_UNSUPPORTED)

CUDA_TYPE_NAME_MAP = collections.OrderedDict(
    [
        ("cudaStream_t", ("hipStream_t", CONV_TYPE, API_RUNTIME)),
        ("cudaError_t", ("hipError_t", CONV_TYPE, API_RUNTIME)),
    ]
)

CUDA_INCLUDE_MAP = collections.OrderedDict(
    [
        ("cuda_runtime.h", ("hip/hip_runtime.h", CONV_INCLUDE, API_RUNTIME)),
    ]
)

CUDA_IDENTIFIER_MAP = collections.OrderedDict(
    [
        ("cudaMalloc", ("hipMalloc", CONV_MEM, API_RUNTIME)),
        ("cudaMallocAsync", ("hipMallocAsync" if rocm_version >= (5, 2, 0) else "hipMalloc", CONV_MEM, API_RUNTIME)),
        ("cusparseCreate", ("hipsparseCreate", CONV_MEM, API_SPARSE)),
        ("cublasSgemm", ("hipblasSgemm", CONV_MEM, API_BLAS, HIP_UNSUPPORTED)),
    ]
)

CUDA_TO_HIP_MAPPINGS = [
    CUDA_TYPE_NAME_MAP,
    CUDA_INCLUDE_MAP,
    CUDA_IDENTIFIER_MAP,
]

#!/usr/bin/env bash
# A torch CUDAExtension built with setuptools (no CMake) that leaves its kernel file out of sources=,
# taken through the loop a user runs, with the natural calls only: the real import fails; musa-linkcheck
# on the module names the cause and setup.py's list; musa-stubgen --apply writes the entry; the rebuild
# links; the import works and the op computes the right result on the GPU. Needs a venv with torch
# (CUDA build), nvcc and a GPU: run on the device machine, not in CI.
#   usage: bash tests/bench/cuda_extension_e2e.sh BIN_DIR VENV WORK_DIR
set -euo pipefail
bin=$(cd "$1" && pwd) venv=$2 work=$3
export PATH="$venv/bin:$PATH"  # the venv activated, as its user has it
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
rm -rf "$work" && mkdir -p "$work/myext" "$work/csrc" && cd "$work"
cat >setup.py <<'EOF'
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="myext",
    packages=["myext"],
    ext_modules=[
        CUDAExtension(
            "myext._C",
            sources=[
                "csrc/ops.cpp",
                "csrc/add_kernel.cu",
            ],
            extra_compile_args={"cxx": ["-g"], "nvcc": ["-g"]},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
EOF
printf 'import torch\nfrom . import _C\n' >myext/__init__.py
cat >csrc/ops.cpp <<'EOF'
#include <torch/extension.h>
void launch_add(float* out, const float* a, const float* b, int64_t n);
void launch_scale(float* out, float by, int64_t n);
at::Tensor add(const at::Tensor& a, const at::Tensor& b) {
  auto out = torch::empty_like(a);
  launch_add(out.data_ptr<float>(), a.data_ptr<float>(), b.data_ptr<float>(), a.numel());
  return out;
}
at::Tensor scale(const at::Tensor& a, double by) {
  auto out = a.clone();
  launch_scale(out.data_ptr<float>(), static_cast<float>(by), a.numel());
  return out;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("add", &add);
  m.def("scale", &scale);
}
EOF
cat >csrc/add_kernel.cu <<'EOF'
#include <cstdint>
__global__ void add_kernel(float* out, const float* a, const float* b, int64_t n) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}
void launch_add(float* out, const float* a, const float* b, int64_t n) {
  add_kernel<<<(n + 255) / 256, 256>>>(out, a, b, n);
}
EOF
cat >csrc/scale_kernel.cu <<'EOF'
#include <cstdint>
__global__ void scale_kernel(float* out, float by, int64_t n) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] *= by;
}
void launch_scale(float* out, float by, int64_t n) {
  scale_kernel<<<(n + 255) / 256, 256>>>(out, by, n);
}
EOF
step() { echo; echo "== $*"; }
step "build (scale_kernel.cu left out of sources=)"
python setup.py -q build_ext --inplace >build1.log 2>&1 || { tail -30 build1.log; exit 1; }
module=$(ls "$work"/myext/_C*.so)
step "the real import"
python -c 'import myext' 2>&1 | tail -n 1 || true
step "musa-linkcheck $module (no flag)"
rc=0; "$bin/musa-linkcheck" "$module" || rc=$?; echo "exit $rc"
"$bin/musa-linkcheck" --format json -o "$work/linkcheck.json" "$module" || true
step "musa-stubgen --apply $module (no flag)"
"$bin/musa-stubgen" --apply "$module"
grep -n 'csrc/' setup.py
step "rebuild"
python setup.py -q build_ext --inplace --force >build2.log 2>&1 || { tail -30 build2.log; exit 1; }
step "the real import, and the ops on the GPU"
python -c '
import torch, myext
a = torch.arange(6, dtype=torch.float32, device="cuda"); b = torch.ones(6, device="cuda")
print(torch.cuda.get_device_name(), myext._C.add(a, b).tolist(), myext._C.scale(a, 3.0).tolist())
assert myext._C.scale(a, 3.0).tolist() == [0.0, 3.0, 6.0, 9.0, 12.0, 15.0]
print("ok")'
step "musa-linkcheck $module again"
rc=0; "$bin/musa-linkcheck" "$module" || rc=$?; echo "exit $rc"

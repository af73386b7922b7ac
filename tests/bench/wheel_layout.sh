#!/usr/bin/env bash
# Builds, under DIR, a replica of the layout a pip wheel of torch built for CUDA installs: torch/lib's
# libraries, each with a DT_RPATH of sixteen $ORIGIN/../../nvidia/*/lib directories and $ORIGIN, and
# two libraries in each of those directories (the second needing the first). libtorch_cuda needs all
# of them, so each of its names is searched up that list, and up its loaders' lists first, as on the
# device's torch 2.11 venv. Prints the path of torch/lib/libtorch_python.so (whose load brings in the
# 39 others). Facts of the layout only; the libraries are empty functions built here with cc.
# Usage: wheel_layout.sh DIR
set -euo pipefail
dir="$1"
sp="$dir/site-packages"
packages="cublas cuda_cupti cuda_nvrtc cuda_runtime cudnn cufft curand cusolver cusparse cusparselt nccl nvtx nvshmem cufile nvjitlink cu13"
rpath=""
for p in $packages; do rpath="$rpath\$ORIGIN/../../nvidia/$p/lib:"; done
rpath="$rpath\$ORIGIN"
lib() {  # path, rpath, then the sonames it needs (found through -L of every directory)
  local out="$1" rp="$2"; shift 2
  local name p; name=$(basename "$out")
  mkdir -p "$(dirname "$out")"
  printf 'int %s_f(void) { return 1; }\n' "$(echo "$name" | tr -c 'A-Za-z0-9\n' _)" >"$out.c"
  local args=(-shared -fPIC -o "$out" "$out.c" -Wl,--no-as-needed -Wl,--disable-new-dtags "-Wl,-soname,$name")
  [ -n "$rp" ] && args+=("-Wl,-rpath,$rp")
  for p in $packages; do args+=("-L$sp/nvidia/$p/lib"); done
  args+=("-L$sp/torch/lib")
  for n in "$@"; do args+=("-l:$n"); done
  cc "${args[@]}"
  rm -f "$out.c"
}
all=()
for p in $packages; do
  lib "$sp/nvidia/$p/lib/lib${p}_0.so.1" ""
  lib "$sp/nvidia/$p/lib/lib${p}_1.so.1" '$ORIGIN' "lib${p}_0.so.1"
  all+=("lib${p}_0.so.1" "lib${p}_1.so.1")
done
t="$sp/torch/lib"
lib "$t/libc10.so" "$rpath"
lib "$t/libtorch_cpu.so" "$rpath" libc10.so
lib "$t/libc10_cuda.so" "$rpath" libc10.so libcublas_1.so.1 libcuda_cupti_1.so.1 libcuda_nvrtc_1.so.1 libcuda_runtime_1.so.1
lib "$t/libtorch_cuda.so" "$rpath" libtorch_cpu.so libc10_cuda.so "${all[@]}"
lib "$t/libshm.so" "$rpath" libtorch_cpu.so
lib "$t/libtorch.so" "$rpath" libtorch_cpu.so libtorch_cuda.so
lib "$t/libtorch_python.so" "$rpath" libtorch.so libshm.so
echo "$t/libtorch_python.so"

#!/usr/bin/env bash
# Set-up and entry points on a fresh Debian bookworm machine (as root, or with sudo):
#   bash tools/dev.sh example   install what the build needs, build, run musa-linkcheck on the bundled example
#   bash tools/dev.sh test      install what the tests need (libtorch1.13 included), build with -Werror, run CTest
#   bash tools/dev.sh bench     build and run the benchmark against ldd -r
#   bash tools/dev.sh fuzz [S]  the long fuzzing campaign: every libFuzzer target for S seconds (default 600)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_DIR=${BUILD_DIR:-build}

BUILD_PACKAGES=(cmake make g++ pkg-config libelf-dev libdw-dev libiberty-dev nlohmann-json3-dev libcli11-dev
                libfmt-dev libtbb-dev libgtest-dev)
# Oracles and real data for the tests: c++filt (binutils), ldd/ldconfig (libc-bin), Debian's libtorch;
# dpkg-dev unpacks the real-code panel's source packages (apt-get source); the SARIF schema check
# (python3-jsonschema) and the JUnit check (xmllint); llvm's llvm-cxxfilt, a demangler independent of
# libiberty, as the second demangling oracle; man -l renders the man pages without warnings (man-db,
# groff-base); Debian's torch (python3-torch, whose torch/lib is an import's context) and torchvision,
# a real out-of-tree PyTorch extension, for --python; Debian's PIL
# (python3-pil), whose _imagingmath takes libm from its host interpreter; ROCm HIP 5.2.3
# (hipcc, libamdhip64-dev, librocprim-dev) for the HIP end-to-end test, and chromium for the coverage
# page's headless-browser test; PyYAML's extension module (python3-yaml) in the environment-tree test, and
# /usr/bin/time (time) for the environment benchmark's peak RSS; python3-torch's torchgen (gen_backend_stubs.py and
# its packaged native_functions.yaml) and libtorch-dev's headers for the codegen test's generated backend; Ninja
# (ninja-build) for the confirm tests that read CMake's CUDA commands as the Ninja generator writes them;
# python3-dev (Python.h, python3-config), pybind11-dev and python3-setuptools for the extensions the tests build
# as PyTorch's users do (torch.utils.cpp_extension); iproute2 (tc and its plugins) and systemd (a library
# whose sibling sits beside it, off its search path) as real material for the inferred load context; clang-format
# for the test that the sources are as .clang-format writes them; ccache, through which both trees compile the test
# programs, so the sanitized tree takes the plain tree's objects (tests/CMakeLists.txt); patchelf, whose
# command a missing library's fix spells, run as the fix says in the test of that fix.
TEST_PACKAGES=(binutils libc-bin patch git libtorch1.13 libtorch-dev binutils-s390x-linux-gnu binutils-powerpc-linux-gnu
               dpkg-dev python3-jsonschema libxml2-utils llvm python3-torch python3-torchvision python3-pil man-db groff-base
               hipcc libamdhip64-dev librocprim-dev chromium python3-yaml time ninja-build python3-dev pybind11-dev
               python3-setuptools iproute2 systemd clang-format ccache patchelf)
# The sanitizer build and the fuzz targets: clang with its ASan/UBSan/libFuzzer runtime.
FUZZ_PACKAGES=(clang libclang-rt-14-dev)

install_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]} == 0)) && return 0
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  echo "installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# BUILD_TARGETS (words): build only those, not every target (the example needs neither the 41 test
# programs nor the fixtures of the tests).
configure_and_build() {
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  local targets=()
  [ -z "${BUILD_TARGETS:-}" ] || read -r -a targets <<<"--target $BUILD_TARGETS"
  cmake --build "$BUILD_DIR" -j "$(nproc)" "${targets[@]}"
}

# Two more build trees. $BUILD_DIR-asan: the whole suite with ASan+UBSan on our own targets (g++,
# as the plain build, so fixtures and their DWARF are the same). $BUILD_DIR-fuzz: clang (libFuzzer
# needs it), only the fuzz targets and the fixtures they take seeds from.
configure_sanitized() {
  cmake -S . -B "$BUILD_DIR-asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMLC_BUILD_TESTS=ON \
    -DMLC_SANITIZE=ON "$@" >/dev/null
  cmake --build "$BUILD_DIR-asan" -j "$(nproc)"
}
configure_fuzz() {
  CC=clang CXX=clang++ cmake -S . -B "$BUILD_DIR-fuzz" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMLC_BUILD_TESTS=ON \
    -DMLC_FUZZ=ON "$@" >/dev/null
  cmake --build "$BUILD_DIR-fuzz" -j "$(nproc)" --target fuzz_all
}

# True when apt has an active source-package entry: apt's own reading of its sources (one-line and
# deb822 formats, comments, `Enabled: no`), not a grep that a commented "# deb-src" line satisfies.
# Extra arguments are apt options (the test points Dir::Etc::SourceList/SourceParts elsewhere).
has_active_deb_src() {
  apt-get indextargets --no-release-info --format '$(CREATED_BY)' "$@" 2>/dev/null | grep -qx Sources
}

# apt-get source needs a deb-src entry for bookworm; one is added (in its own file) when none is active.
ensure_deb_src() {
  if ! has_active_deb_src; then
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' |
      $sudo tee /etc/apt/sources.list.d/musa-linkcheck-deb-src.sources >/dev/null
    $sudo apt-get update -qq
  fi
}

# PyTorch 1.13.1's sources from Debian's source package, for the tracing benchmark.
# ctest with HOME and XDG_CACHE_HOME pointed at a fresh folder that must still be empty afterwards:
# every test keeps its state (caches, indexes) in the suite's scratch root, never in a person's home,
# so one run's index is never the next run's input (issue 29).
ctest_in_a_fresh_home() {
  local home rc=0 left
  home=$(mktemp -d "${TMPDIR:-/tmp}/suite-home.XXXXXX")
  HOME="$home" XDG_CACHE_HOME="$home/.cache" ctest "$@" || rc=$?
  left=$(find "$home" -mindepth 1 | head -20)
  rm -rf "$home"
  if [ -n "$left" ]; then
    echo "the suite wrote into its HOME (it must keep state in its scratch root):" >&2
    echo "$left" >&2
    return 1
  fi
  return "$rc"
}

fetch_pytorch_sources() {
  local data="$BUILD_DIR/bench-data"
  [ -d "$data/pytorch-1.13.1" ] && return 0
  mkdir -p "$data"
  ensure_deb_src
  # Only the upstream tarball is needed; a missing Debian diff does not matter.
  (cd "$data" && apt-get source --download-only pytorch >/dev/null 2>&1) || true
  local orig
  orig=$(ls "$data"/pytorch_1.13.1*.orig.tar.* 2>/dev/null | head -n 1)
  [ -n "$orig" ] || return 1
  tar -C "$data" -xf "$orig"
  [ -d "$data/pytorch-1.13.1" ]
}

# Sourced (by tests/dev_sh_test.sh): the functions only.
[[ "${BASH_SOURCE[0]}" == "$0" ]] || return 0

case "${1:-}" in
  example)
    install_packages "${BUILD_PACKAGES[@]}"
    # The fixtures' directory holds the example; of all it builds, only the example's targets are built.
    BUILD_TARGETS="musa-linkcheck musa-stubgen mlc_example" configure_and_build -DMLC_BUILD_TESTS=ON
    ex="$BUILD_DIR/fixtures/example"
    src=fixtures/example
    # The context a torch_musa developer passes: the build tree, the ported tree, the CMake file of
    # the kernel library, the porting map and the SDK; libc10 is what Python loaded before.
    args=(--build-dir "$BUILD_DIR" --porting-dir "$src/generated_cuda_compatible" --cmake-lists "$src/csrc/CMakeLists.txt"
          --mapping "$src/mapping" --sdk-home "$ex/sdk" --with "$ex/libc10.so" "$ex/libmusa_kernels.so")
    echo
    echo "\$ musa-linkcheck ${args[*]}"
    status=0
    "$BUILD_DIR/tools/musa-linkcheck" "${args[@]}" || status=$?
    echo "(exit status $status: 1 means unresolved symbols were found, as the example is built to have;"
    echo " 'musa-stubgen --dry-run' with the same arguments shows the stub and the CMake patch it would write)"
    [ "$status" -le 1 ]
    ;;
  test)
    install_packages "${BUILD_PACKAGES[@]}" "${TEST_PACKAGES[@]}" "${FUZZ_PACKAGES[@]}"
    configure_and_build -DMLC_BUILD_TESTS=ON -DMLC_WERROR=ON
    # The real-code panel fetches Debian source packages itself; without deb-src it skips.
    ensure_deb_src || echo "no deb-src entry could be added: the real-code panel will skip"
    # One test more than cores: the tests wait on the programs they start (Python, the loader, builds); with
    # -j2 on 2 cores the plain suite kept 1.7 cores busy (552 s), with -j3 1.97 (479 s, the same 473 tests).
    ctest_in_a_fresh_home --test-dir "$BUILD_DIR" --output-on-failure -j "$(($(nproc) + 1))"
    # The same suite under ASan+UBSan (our code only; fixtures stay plain; the real-code panel and
    # the Package tests are left to the plain build, tests/CMakeLists.txt says why), then each
    # libFuzzer target for a few seconds from the fixtures' and the system's files, and the crash
    # regressions.
    configure_sanitized -DMLC_WERROR=ON
    ctest_in_a_fresh_home --test-dir "$BUILD_DIR-asan" --output-on-failure -j "$(($(nproc) + 1))"
    configure_fuzz -DMLC_FUZZ_SECONDS=8 -DMLC_FUZZ_SEED=1
    ctest --test-dir "$BUILD_DIR-fuzz" --output-on-failure -j "$(nproc)" -L fuzz
    ;;
  fuzz)
    install_packages "${BUILD_PACKAGES[@]}" "${TEST_PACKAGES[@]}" "${FUZZ_PACKAGES[@]}"
    configure_fuzz -DMLC_FUZZ_SECONDS="${2:-600}" -DMLC_FUZZ_SEED=0
    ctest --test-dir "$BUILD_DIR-fuzz" --output-on-failure -L fuzz
    ;;
  bench)
    install_packages "${BUILD_PACKAGES[@]}" "${TEST_PACKAGES[@]}" xz-utils
    configure_and_build -DMLC_BUILD_TESTS=ON
    fetch_pytorch_sources || echo "PyTorch sources unavailable: the benchmark generates a tree of the same size"
    cmake --build "$BUILD_DIR" --target bench
    cmake --build "$BUILD_DIR" --target bench_dwarf
    ;;
  *)
    echo "usage: bash tools/dev.sh example|test|bench" >&2
    exit 2
    ;;
esac

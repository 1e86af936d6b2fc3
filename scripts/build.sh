#!/usr/bin/env bash
# Installs what is missing (scripts/setup.sh), configures and builds EPL-MLIR
# into build/, executables in build/bin/. Extra arguments go to ninja
# (e.g. `scripts/build.sh epl-opt`). EPL_BLAS=openblas+dnnl|openblas|blis|dnnl
# picks the GEMM library (lib/Runtime/CMakeLists.txt; default openblas+dnnl).
# EPL_SANITIZE="Address;Undefined" (or Thread) builds with sanitizers (LLVM's
# LLVM_USE_SANITIZER), best into a build directory of its own:
# EPL_BUILD_DIR=build-asan. UBSan's flags are ours (LLVM's package leaves
# LLVM_UBSAN_FLAGS empty): no vptr check (LLVM is built without RTTI), and
# the first report ends the run.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

BUILD_DIR=${EPL_BUILD_DIR:-build}
JOBS=${EPL_JOBS:-$(nproc)}
if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DCMAKE_BUILD_TYPE=${EPL_BUILD_TYPE:-Release} \
    ${EPL_BLAS:+-DEPL_BLAS=$EPL_BLAS} \
    ${EPL_SANITIZE:+"-DLLVM_USE_SANITIZER=$EPL_SANITIZE"} \
    "-DLLVM_UBSAN_FLAGS=-fsanitize=undefined -fno-sanitize=vptr -fno-sanitize-recover=all"
elif [[ -n "${EPL_BLAS:-}" ]]; then
  cmake -B "$BUILD_DIR" -DEPL_BLAS="$EPL_BLAS"
fi
ninja -C "$BUILD_DIR" -j "$JOBS" "$@"

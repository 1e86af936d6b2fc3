#!/usr/bin/env bash
# Installs what is missing (scripts/setup.sh), configures and builds EPL-MLIR
# into build/, executables in build/bin/. Extra arguments go to ninja
# (e.g. `scripts/build.sh epl-opt`).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

BUILD_DIR=${EPL_BUILD_DIR:-build}
JOBS=${EPL_JOBS:-$(nproc)}
if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DCMAKE_BUILD_TYPE=${EPL_BUILD_TYPE:-Release}
fi
ninja -C "$BUILD_DIR" -j "$JOBS" "$@"

#!/usr/bin/env bash
# Builds the epl-exec that a GPU machine runs (bench/gpu.sh run), which has
# the CUDA driver but maybe not Debian's libraries: no MPI (the GPU check's
# ranks are threads), OpenBLAS, libgfortran and libstdc++ linked in
# statically. It then needs only glibc (2.34 or newer) and libgcc_s, which
# every Linux has (linked statically, libgcc's unwinder would ask for glibc
# 2.35), and, loaded when a rank first asks, the CUDA driver, cuBLAS and
# NCCL; the script checks so. The runner exports the runtime's symbols,
# which the artifacts call, and none of the static libraries': cuBLAS and
# NCCL load the system's libstdc++, and a second copy exported by the
# runner would stand in for parts of it (--exclude-libs; checked below).
# Into build-gpu/ (EPL_BUILD_DIR to change). Artifacts come from the
# main build's epl-compile (bench/gpu.sh prepare): the runtime interface
# and the version they are checked against are the tree's, not the
# build's. Then `EPL_GPU_EXEC=build-gpu/bin/epl-exec bench/gpu.sh run DIR`
# there.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
BUILD_DIR=${EPL_BUILD_DIR:-build-gpu}
OPENBLAS=$(find /usr/lib/x86_64-linux-gnu -path '*openblas-pthread*' -name libopenblas.a | head -n 1)
if [[ -z "$OPENBLAS" ]]; then
  echo "build-gpu-runner.sh: no static OpenBLAS (libopenblas-pthread-dev)" >&2
  exit 1
fi
# Configured every time: a build directory of an older script gets its flags.
# CMAKE_CXX_STANDARD_LIBRARIES ends every link line: the static Fortran
# runtime OpenBLAS's LAPACK part needs, after OpenBLAS.
cmake -G Ninja -S . -B "$BUILD_DIR" > /dev/null \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
  -DCMAKE_BUILD_TYPE=Release \
  -DEPL_BLAS=openblas \
  -DEPL_OPENBLAS_LIBRARY="$OPENBLAS" \
  -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON \
  "-DCMAKE_EXE_LINKER_FLAGS=-static-libstdc++ -Wl,--exclude-libs,ALL" \
  "-DCMAKE_CXX_STANDARD_LIBRARIES=-Wl,-Bstatic -lgfortran -lquadmath -Wl,-Bdynamic -lm -lpthread"
ninja -C "$BUILD_DIR" -j "${EPL_JOBS:-$(nproc)}" epl-exec

EXEC=$BUILD_DIR/bin/epl-exec
needed=$(objdump -p "$EXEC" | awk '$1 == "NEEDED" { print $2 }' |
  grep -v -E '^(libc|libm|libdl|libpthread|librt|libgcc_s|ld-linux-x86-64)\.so' || true)
if [[ -n "$needed" ]]; then
  echo "build-gpu-runner.sh: $EXEC needs more than glibc: $needed" >&2
  exit 1
fi
newest=$(objdump -T "$EXEC" | grep -o 'GLIBC_[0-9.]*' | sort -V -u | tail -n 1)
if [[ "$(printf '%s\n' "$newest" GLIBC_2.34 | sort -V | tail -n 1)" != GLIBC_2.34 ]]; then
  echo "build-gpu-runner.sh: $EXEC needs $newest (more than glibc 2.34):" >&2
  objdump -T "$EXEC" | grep "$newest" >&2
  exit 1
fi
# The static libstdc++'s own (strong) symbols must not be exported; weak
# template instantiations of our code may (they are the same code).
exported=$(nm -D --defined-only "$EXEC" | awk '$2 ~ /^[TDBR]$/ &&
  $3 ~ /^(_ZN?K?St|_ZNS[sio]|__cxa_|__gxx_|_Zn[wa]|_Zd[la]|_ZTVN10__cxxabiv)/' | wc -l)
if [[ "$exported" != 0 ]]; then
  echo "build-gpu-runner.sh: $EXEC exports $exported symbols of its static libstdc++" >&2
  exit 1
fi
echo "$EXEC: needs only glibc (newest symbol version $newest) and libgcc_s, $(du -h "$EXEC" | cut -f1)"

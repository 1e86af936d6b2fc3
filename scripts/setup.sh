#!/usr/bin/env bash
# Installs the Debian packages EPL-MLIR needs (see docs/ and shared DESIGN).
# Idempotent: when everything is present it only checks and returns.
set -euo pipefail

PKGS=(
  # LLVM/MLIR 22: headers, shared libraries, lit/FileCheck, mlir-tblgen.
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  # Build.
  cmake ninja-build ccache g++
  # CPU collectives across processes, and CPU GEMM.
  libopenmpi-dev openmpi-bin libopenblas-dev
  # Unit tests.
  libgtest-dev
  # Reference numerics for end-to-end tests (Debian's /usr/bin/python3).
  python3 python3-numpy python3-pytest python3-torch
  # Real data: Fashion-MNIST for examples/fashion_mnist.py and its tests
  # (/usr/share/datasets/fashion-mnist).
  dataset-fashion-mnist
)
# The GEMM libraries the build picks (scripts/build.sh, EPL_BLAS; the
# default, openblas+dnnl, sends one-thread fp32 GEMMs to oneDNN).
case ${EPL_BLAS:-openblas+dnnl} in
  blis) PKGS+=(libblis-dev) ;;
  dnnl | openblas+dnnl) PKGS+=(libdnnl-dev) ;;
esac
# What an optional tool needs on top (scripts/fuzz.sh: clang and libFuzzer).
# shellcheck disable=SC2206
PKGS+=(${EPL_EXTRA_PKGS:-})

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: all packages present"
fi

#!/usr/bin/env bash
# Creates the optional PyTorch frontend environment: a venv from Debian's
# /usr/bin/python3 with a recent CPU torch and torch-mlir (PyPI package
# `torch-mlir`): 5.7 GB from PyPI alone (CUDA's libraries come along),
# much less with PyTorch's CPU index. Nothing in the default build or test
# needs it; python/epl/torch.py (the importer) and scripts/export-torch-inputs.py run
# inside it, and test/e2e/test_torch_mlir.py uses it when it exists.
#
#   scripts/setup-torch.sh            # venv in .venv-torch/ (git-ignored)
#   EPL_TORCH_VENV=/path scripts/setup-torch.sh
#
# Idempotent: an existing venv that already imports both packages is kept.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${EPL_TORCH_VENV:-.venv-torch}
PY=/usr/bin/python3
TORCH_INDEX=https://download.pytorch.org/whl/cpu

check() {
  "$VENV/bin/python" -c 'import torch, torch_mlir.fx; print("setup-torch: torch", torch.__version__)' 2>/dev/null
}

if [[ -x "$VENV/bin/python" ]] && check; then
  echo "setup-torch: $VENV is ready"
  exit 0
fi

if ! "$PY" -c 'import venv, ensurepip' 2>/dev/null; then
  echo "setup-torch: installing python3-venv"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q python3-venv
fi

"$PY" -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip install -q --disable-pip-version-check)

# CPU torch from PyTorch's own index (no CUDA libraries); where that index is
# unreachable, PyPI's torch, which pulls in CUDA's libraries (unused here).
if curl -fsS -o /dev/null 2>/dev/null --max-time 20 "$TORCH_INDEX/"; then
  "${PIP[@]}" torch --index-url "$TORCH_INDEX"
else
  echo "setup-torch: $TORCH_INDEX unreachable, using PyPI's torch"
  "${PIP[@]}" torch
fi
# torch-mlir's PyPI wheels (dated versions, e.g. 20261001) bundle MLIR's
# Python bindings and the FX importer (torch_mlir.fx.export_and_import); they
# need numpy and packaging and do not pin torch.
"${PIP[@]}" torch-mlir

check || { echo "setup-torch: torch or torch_mlir does not import" >&2; exit 1; }
echo "setup-torch: $VENV ready ($(du -sh "$VENV" | cut -f1))"

#!/usr/bin/env bash
# The GPU check of issue 12, in two halves, because GPU machines have the
# CUDA driver but not our LLVM/MLIR build:
#
#   bench/gpu.sh prepare DIR   here (a build of this tree, CUDA's toolkit):
#                              compiles cuda artifacts into DIR and records
#                              the CPU path's losses for them
#   bench/gpu.sh run DIR       on the GPU machine (driver, cuBLAS, PyTorch):
#                              runs them with build/bin/epl-exec and prints
#                              parity, cuBLAS TFLOP/s and step time, each
#                              next to PyTorch on the same GPU
#
# `run` takes well under 5 minutes on an H200. It needs build/bin/epl-exec
# and the shared libraries it links (`ldd build/bin/epl-exec`: OpenBLAS and
# Open MPI from Debian); it says which are missing. The default build also
# links oneDNN (40 MB), for the CPU's GEMMs only: for a machine without it,
# build with `EPL_BUILD_DIR=build-gpu EPL_BLAS=openblas scripts/build.sh
# epl-exec epl-compile epl-run` and run both halves with
# EPL_BUILD_DIR=build-gpu. Parity: the losses of
# every step within 1e-4 relative of the CPU run (TF32 off), 1 rank and 2
# ranks on one GPU (collectives staged through the host).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${EPL_BUILD_DIR:-$ROOT/build}/bin
INPUTS=$ROOT/test/e2e/Inputs/torch
STEPS=8
MATMUL=4096
# The host code runs on the GPU machine's CPU, which is not this one.
HOST_CPU=${EPL_HOST_CPU:-x86-64-v3}

usage() { echo "usage: bench/gpu.sh prepare|run DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
DIR=$2

# name, model, devices: the parity cases (torch-mlir exports with their
# recorded parameters and data).
CASES="mlp:mlp:1 transformer:transformer:1 transformer-dp2:transformer:2 transformer-split2:transformer-split:2"

matmul_model() {
  cat <<EOF
module attributes {epl.config = {}} {
  func.func @model(%a: tensor<${MATMUL}x${MATMUL}xf32> {epl.arg = "input", epl.name = "a"},
                   %b: tensor<${MATMUL}x${MATMUL}xf32> {epl.arg = "param", epl.name = "b"}) -> tensor<${MATMUL}x${MATMUL}xf32> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<${MATMUL}x${MATMUL}xf32>
    %f = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%z : f32) outs(%e : tensor<${MATMUL}x${MATMUL}xf32>) -> tensor<${MATMUL}x${MATMUL}xf32>
    %c = linalg.matmul {epl.scope = #epl.replicate<devices = 1>} ins(%a, %b : tensor<${MATMUL}x${MATMUL}xf32>, tensor<${MATMUL}x${MATMUL}xf32>) outs(%f : tensor<${MATMUL}x${MATMUL}xf32>) -> tensor<${MATMUL}x${MATMUL}xf32>
    return %c : tensor<${MATMUL}x${MATMUL}xf32>
  }
}
EOF
}

case $1 in
prepare)
  mkdir -p "$DIR"
  for c in $CASES; do
    IFS=: read -r name model devices <<<"$c"
    "$BIN/epl-compile" "$INPUTS/$model.mlir" --target cuda --devices "$devices" \
      --host-cpu "$HOST_CPU" -o "$DIR/$name.so"
    "$BIN/epl-run" "$INPUTS/$model.mlir" --ranks "$devices" --steps $STEPS \
      --params "$INPUTS/${model%-split}.params.safetensors" \
      --data "$INPUTS/${model%-split}.data.safetensors" |
      awk '$1 == "step" && $3 == "loss" { print $4 }' >"$DIR/$name.cpu-losses"
  done
  matmul_model >"$DIR/matmul.mlir"
  "$BIN/epl-compile" "$DIR/matmul.mlir" --no-train --target cuda \
    --host-cpu "$HOST_CPU" -o "$DIR/matmul.so"
  PYTHONPATH=$ROOT/python:$ROOT/bench /usr/bin/python3 -c \
    "import transformer_train as t; print(t.transformer_module())" >"$DIR/transformer-bench.mlir"
  "$BIN/epl-compile" "$DIR/transformer-bench.mlir" --target cuda \
    --host-cpu "$HOST_CPU" -o "$DIR/transformer-bench.so"
  cp "$INPUTS"/*.safetensors "$DIR/"
  echo "prepared $DIR: $(ls "$DIR" | wc -l) files, $(du -sh "$DIR" | cut -f1)"
  ;;
run)
  missing=$(ldd "$BIN/epl-exec" | awk '/not found/ { print $1 }')
  if [ -n "$missing" ]; then
    echo "bench/gpu.sh: epl-exec needs libraries this machine lacks: $missing" >&2
    exit 1
  fi
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
  echo "== parity: epl-exec --target cuda against the CPU run (rtol 1e-4)"
  status=0
  for c in $CASES; do
    IFS=: read -r name model devices <<<"$c"
    "$BIN/epl-exec" "$DIR/$name.so" --ranks "$devices" --steps $STEPS \
      --params "$DIR/${model%-split}.params.safetensors" \
      --data "$DIR/${model%-split}.data.safetensors" |
      awk '$1 == "step" && $3 == "loss" { print $4 }' >"$DIR/$name.gpu-losses"
    python3 - "$DIR/$name.cpu-losses" "$DIR/$name.gpu-losses" "$name" <<'EOF' || status=1
import sys
cpu = [float(v) for v in open(sys.argv[1])]
gpu = [float(v) for v in open(sys.argv[2])]
worst = max((abs(g - c) / abs(c) for c, g in zip(cpu, gpu)), default=float("inf"))
ok = len(cpu) == len(gpu) > 0 and worst <= 1e-4
print(f"{sys.argv[3]:20s} {'ok' if ok else 'FAILED'}  steps {len(gpu)}/{len(cpu)}  worst relative difference {worst:.2e}")
sys.exit(0 if ok else 1)
EOF
  done
  echo "== cuBLAS through epl-exec against torch.matmul, ${MATMUL}^3 fp32 (TF32 off)"
  "$BIN/epl-exec" "$DIR/matmul.so" --steps 20 --report "$DIR/matmul.json" >/dev/null
  python3 - "$DIR/matmul.json" $MATMUL <<'EOF'
import json, statistics, sys, time, torch
n = int(sys.argv[2])
steps = json.load(open(sys.argv[1]))["steps"][2:]
ours = statistics.median(s["time_ms"] for s in steps)
torch.backends.cuda.matmul.allow_tf32 = False
a, b = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
for _ in range(3):
    a @ b
torch.cuda.synchronize()
times = []
for _ in range(20):
    start = time.perf_counter(); a @ b; torch.cuda.synchronize()
    times.append((time.perf_counter() - start) * 1000)
theirs = statistics.median(times)
flop = 2 * n ** 3
print(f"epl-exec step {ours:.3f} ms ({flop / ours / 1e9:.1f} TFLOP/s, with the step's copies in and out)"
      f"  torch {theirs:.3f} ms ({flop / theirs / 1e9:.1f} TFLOP/s)  ratio {ours / theirs:.2f}")
EOF
  echo "== transformer training step (bench/transformer_train.py's model, AdamW) against PyTorch eager"
  "$BIN/epl-exec" "$DIR/transformer-bench.so" --steps 30 --report "$DIR/transformer.json" >/dev/null
  PYTHONPATH=$ROOT/bench python3 - "$DIR/transformer.json" <<'EOF'
import json, statistics, sys, time, torch
from transformer_train import BATCH as B, SEQ as S, DIM as D, HEADS as H, FF as F, CLASSES as C, BLOCKS as L, LR, WEIGHT_DECAY
ours = statistics.median(s["time_ms"] for s in json.load(open(sys.argv[1]))["steps"][3:])
torch.backends.cuda.matmul.allow_tf32 = False
class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = torch.nn.LayerNorm(D), torch.nn.LayerNorm(D)
        self.attn = torch.nn.MultiheadAttention(D, H, batch_first=True)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(D, F), torch.nn.GELU(), torch.nn.Linear(F, D))
    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))
model = torch.nn.Sequential(*[Block() for _ in range(L)], torch.nn.LayerNorm(D), torch.nn.Linear(D, C)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
x = torch.randn(B, S, D, device="cuda")
y = torch.nn.functional.one_hot(torch.randint(0, C, (B * S,), device="cuda"), C).float()
times = []
for _ in range(30):
    start = time.perf_counter()
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x).reshape(B * S, C), y).backward()
    opt.step()
    torch.cuda.synchronize()
    times.append((time.perf_counter() - start) * 1000)
theirs = statistics.median(times[3:])
print(f"epl-exec {ours:.3f} ms  PyTorch eager {theirs:.3f} ms  ratio {ours / theirs:.2f}")
EOF
  exit $status
  ;;
*) usage ;;
esac

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
#   bench/gpu.sh dry-run DIR   here, without a GPU: both halves with the
#                              kernels compiled for the host, run under the
#                              test suite's fake CUDA driver (docs/gpu.md),
#                              small matmuls; checks the script and the
#                              artifacts' host side before a GPU is spent
#
# `run` takes well under 5 minutes on an H200. It runs EPL_GPU_EXEC
# (default build/bin/epl-exec, which links Debian's OpenBLAS, Open MPI and
# oneDNN; it says which libraries are missing). For a GPU machine, build
# the one that needs only glibc, and carry it with DIR (about 30 MB, most
# of it static OpenBLAS; the device tool carries 64 MiB):
#
#   scripts/build-gpu-runner.sh            # build-gpu/bin/epl-exec
#   bench/gpu.sh prepare bench/gpu-out     # artifacts from build/'s epl-compile
#   EPL_GPU_EXEC=build-gpu/bin/epl-exec bench/gpu.sh run bench/gpu-out   # there
#
# Parity: the losses of every step within 1e-4 relative of the CPU run
# (TF32 off), 1 rank and 2 ranks on one GPU (collectives staged through
# the host).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${EPL_BUILD_DIR:-$ROOT/build}/bin
# The runner `run` uses: scripts/build-gpu-runner.sh's needs only glibc.
EXEC=${EPL_GPU_EXEC:-$BIN/epl-exec}
INPUTS=$ROOT/test/e2e/Inputs/torch
STEPS=8
MATMUL=${EPL_GPU_MATMUL:-4096}
# GEMMs chained in the long matmul step: (its time - the 1-GEMM step's) /
# (CHAIN - 1) is one GEMM's, the copies in and out cancelling.
CHAIN=9
# epl-compile options of every artifact (dry-run: kernels for the host):
# sm_90's cubins with their PTX, which GPUs newer than H100/H200 compile.
CUDA_FLAGS=${EPL_GPU_CUDA_FLAGS:---gpu-format fatbin}
# The host code runs on the GPU machine's CPU, which is not this one.
# Empty: this machine's (dry-run, which runs them here).
HOST_CPU=${EPL_HOST_CPU-x86-64-v3}

usage() { echo "usage: bench/gpu.sh prepare|run|dry-run DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
DIR=$2

# name, model, devices: the parity cases (torch-mlir exports with their
# recorded parameters and data).
CASES="mlp:mlp:1 transformer:transformer:1 transformer-dp2:transformer:2 transformer-split2:transformer-split:2"

# C = A B^count: `count` GEMMs of MATMUL^3 in one step.
matmul_model() {
  local count=$1 t="tensor<${MATMUL}x${MATMUL}xf32>"
  local scope="{epl.scope = #epl.replicate<devices = 1>}"
  echo "module attributes {epl.config = {}} {"
  echo "  func.func @model(%a: $t {epl.arg = \"input\", epl.name = \"a\"}, %b: $t {epl.arg = \"param\", epl.name = \"b\"}) -> $t {"
  echo "    %z = arith.constant 0.0 : f32"
  echo "    %e = tensor.empty() : $t"
  echo "    %f = linalg.fill $scope ins(%z : f32) outs(%e : $t) -> $t"
  local x=%a
  for k in $(seq 1 "$count"); do
    echo "    %c$k = linalg.matmul $scope ins($x, %b : $t, $t) outs(%f : $t) -> $t"
    x=%c$k
  done
  echo "    return $x : $t"
  echo "  }"
  echo "}"
}

# epl-exec with its output in $DIR/$1.out, under the fake CUDA libraries
# in EPL_GPU_FAKE_DIR if set (dry-run; PyTorch, which this script also
# runs, never sees them); each run at most EPL_GPU_TIMEOUT seconds (120),
# so that one that hangs leaves time for the others. A failure prints the
# end of the output and makes the script's status 1; the next part runs.
status=0
epl_exec() {
  local tag=$1
  shift
  local env=()
  if [ -n "${EPL_GPU_FAKE_DIR:-}" ]; then
    env=(env "LD_LIBRARY_PATH=$EPL_GPU_FAKE_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
  fi
  local rc=0
  ${env[@]+"${env[@]}"} timeout -k 10 "${EPL_GPU_TIMEOUT:-120}" "$EXEC" "$@" >"$DIR/$tag.out" 2>&1 || rc=$?
  if [ $rc != 0 ]; then
    echo "$tag: epl-exec failed (exit status $rc; 124: timed out):"
    tail -n 8 "$DIR/$tag.out"
    status=1
    return 1
  fi
}

case $1 in
prepare)
  mkdir -p "$DIR"
  for c in $CASES; do
    IFS=: read -r name model devices <<<"$c"
    "$BIN/epl-compile" "$INPUTS/$model.mlir" --target cuda --devices "$devices" \
      ${HOST_CPU:+--host-cpu "$HOST_CPU"} $CUDA_FLAGS -o "$DIR/$name.so"
    "$BIN/epl-run" "$INPUTS/$model.mlir" --ranks "$devices" --steps $STEPS \
      --params "$INPUTS/${model%-split}.params.safetensors" \
      --data "$INPUTS/${model%-split}.data.safetensors" |
      awk '$1 == "step" && $3 == "loss" { print $4 }' >"$DIR/$name.cpu-losses"
  done
  for count in 1 $CHAIN; do
    matmul_model "$count" >"$DIR/matmul$count.mlir"
    "$BIN/epl-compile" "$DIR/matmul$count.mlir" --no-train --target cuda \
      ${HOST_CPU:+--host-cpu "$HOST_CPU"} $CUDA_FLAGS -o "$DIR/matmul$count.so"
  done
  echo "$MATMUL" >"$DIR/matmul-size"
  PYTHONPATH=$ROOT/python:$ROOT/bench /usr/bin/python3 -c \
    "import transformer_train as t; print(t.transformer_module())" >"$DIR/transformer-bench.mlir"
  "$BIN/epl-compile" "$DIR/transformer-bench.mlir" --target cuda \
    ${HOST_CPU:+--host-cpu "$HOST_CPU"} $CUDA_FLAGS -o "$DIR/transformer-bench.so"
  cp "$INPUTS"/*.safetensors "$DIR/"
  echo "prepared $DIR: $(ls "$DIR" | wc -l) files, $(du -sh "$DIR" | cut -f1)"
  ;;
run)
  missing=$(ldd "$EXEC" | awk '/not found/ { print $1 }')
  if [ -n "$missing" ]; then
    echo "bench/gpu.sh: epl-exec needs libraries this machine lacks: $missing" >&2
    exit 1
  fi
  # cuBLAS and NCCL are opened with dlopen, by name: where the loader does
  # not know them (PyTorch's pip wheels keep them in site-packages/nvidia,
  # found through torch's own paths), point it at the first copy found.
  # cuBLAS 13, else 12 (the runtime takes either; PyTorch's CUDA 12 wheels
  # carry 12).
  for libs in "libcublas.so.13 libcublas.so.12" libnccl.so.2; do
    loadable=""
    for lib in $libs; do
      python3 -c "import ctypes, sys; ctypes.CDLL(sys.argv[1])" "$lib" 2>/dev/null && loadable=$lib && break
    done
    [ -n "$loadable" ] && continue
    mapfile -t roots < <(python3 -c 'import site
for p in site.getsitepackages() + [site.getusersitepackages()]: print(p)' 2>/dev/null || true)
    found=""
    for lib in $libs; do
      found=$(find "${roots[@]}" /usr/local /opt -name "$lib" -print -quit 2>/dev/null || true)
      [ -n "$found" ] && break
    done
    if [ -n "$found" ]; then
      echo "(the loader does not find $libs: using $found)"
      export LD_LIBRARY_PATH=$(dirname "$found")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    else
      echo "(no ${libs// / or } on this machine: runs that need it will say so)"
    fi
  done
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null ||
    echo "(no nvidia-smi here)"
  echo "== parity: epl-exec --target cuda against the CPU run (rtol 1e-4)"
  for c in $CASES; do
    IFS=: read -r name model devices <<<"$c"
    epl_exec "$name" "$DIR/$name.so" --ranks "$devices" --steps $STEPS \
      --params "$DIR/${model%-split}.params.safetensors" \
      --data "$DIR/${model%-split}.data.safetensors" || continue
    awk '$1 == "step" && $3 == "loss" { print $4 }' "$DIR/$name.out" >"$DIR/$name.gpu-losses"
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
  MATMUL=$(cat "$DIR/matmul-size")
  for math in fp32 tf32; do
    echo "== cuBLAS through epl-exec against torch.matmul, ${MATMUL}^3 fp32 inputs, $math math"
    flags=()
    [ $math = tf32 ] && flags=(--gpu-tf32)
    measured=1
    for count in 1 $CHAIN; do
      epl_exec "matmul$count-$math" "$DIR/matmul$count.so" --steps 12 ${flags[@]+"${flags[@]}"} \
        --report "$DIR/matmul$count-$math.json" || measured=0
    done
    [ $measured = 0 ] || python3 - "$DIR/matmul1-$math.json" "$DIR/matmul$CHAIN-$math.json" \
      "$MATMUL" $CHAIN $math <<'EOF' || status=1
import json, statistics, sys, time
def median_ms(path):
    return statistics.median(s["time_ms"] for s in json.load(open(path))["steps"][2:])
one, chain = median_ms(sys.argv[1]), median_ms(sys.argv[2])
n, count, math = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
ours = (chain - one) / (count - 1)
flop = 2 * n ** 3
if ours <= 0:
    print(f"epl-exec: the {count}-GEMM step ({chain:.3f} ms) is no slower than the 1-GEMM "
          f"step ({one:.3f} ms): no GEMM time to measure")
    sys.exit(1)
line = (f"epl-exec: one GEMM {ours:.3f} ms ({flop / ours / 1e9:.1f} TFLOP/s: the {count}-GEMM "
        f"step {chain:.3f} ms less the 1-GEMM step {one:.3f} ms, over {count - 1})")
try:
    import torch
    gpu = torch.cuda.is_available()
except ImportError:
    gpu = False
if not gpu:
    print(line + "  torch: no GPU here")
    sys.exit(0)
torch.backends.cuda.matmul.allow_tf32 = math == "tf32"
a, b = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
for _ in range(3):
    a @ b
torch.cuda.synchronize()
times = []
for _ in range(20):
    start = time.perf_counter(); a @ b; torch.cuda.synchronize()
    times.append((time.perf_counter() - start) * 1000)
theirs = statistics.median(times)
print(line + f"  torch.matmul {theirs:.3f} ms ({flop / theirs / 1e9:.1f} TFLOP/s)"
      f"  ratio {ours / theirs:.2f}")
EOF
  done
  echo "== transformer training step (bench/transformer_train.py's model, AdamW) against PyTorch eager"
  epl_exec transformer-bench "$DIR/transformer-bench.so" --steps 30 \
    --report "$DIR/transformer.json" &&
  PYTHONPATH=$ROOT/bench python3 - "$DIR/transformer.json" <<'EOF' || status=1
import json, statistics, sys, time
ours = statistics.median(s["time_ms"] for s in json.load(open(sys.argv[1]))["steps"][3:])
try:
    import torch
    gpu = torch.cuda.is_available()
except ImportError:
    gpu = False
if not gpu:
    print(f"epl-exec {ours:.3f} ms  PyTorch eager: no GPU here")
    sys.exit(0)
from transformer_train import BATCH as B, SEQ as S, DIM as D, HEADS as H, FF as F, CLASSES as C, BLOCKS as L, LR, WEIGHT_DECAY
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
dry-run)
  FAKE=${EPL_BUILD_DIR:-$ROOT/build}/lib/fake-cuda
  if [ ! -e "$FAKE/libcuda.so.1" ]; then
    echo "bench/gpu.sh: no fake CUDA driver in $FAKE (built where CUDA's headers are)" >&2
    exit 1
  fi
  # The fake's GPUs are its own: a GPU machine's selection is not theirs.
  unset CUDA_VISIBLE_DEVICES
  EPL_GPU_MATMUL=256 EPL_GPU_CUDA_FLAGS=--gpu-host-kernels EPL_HOST_CPU= "$0" prepare "$DIR"
  EPL_GPU_FAKE_DIR=$FAKE "$0" run "$DIR"
  ;;
*) usage ;;
esac

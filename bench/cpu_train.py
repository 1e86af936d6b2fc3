#!/usr/bin/env python3
"""Training-step time of an MLP, epl-run against PyTorch and XLA, side by side.

Model: batch 256, 784-1024-1024-10, fp32, ReLU, softmax cross-entropy,
momentum SGD; the L0 module of bench/cpu_forward.py, trained by epl-run
(epl-autodiff builds the step), the same model in torch.nn with
torch.optim.SGD, and, where a Python with jax is found (bench/machine.py;
$EPL_JAX_PYTHON), in jax.numpy: one jitted step (forward, grad, momentum
update written out as PyTorch's) with the parameters and momentum donated,
compiled ahead of the timed steps. Same threads for all three, on the
same cores (each process pinned to the first N CPUs; XLA's CPU client
sizes its thread pool by them), interleaved rounds; the machine's idle
state is checked before timing and during each round (bench/machine.py). Compile
times: epl-run's phases from `--timing` (parse to JIT), XLA's
lower + compile of the step.

Data parallel: epl-run on 2 ranks (threads backend, one BLAS thread per
rank, the same global batch of 256, 128 per rank; a model without `split`
is data parallel on every device) against the 1-rank step on 2 BLAS
threads, both on 2 cores (target: at most 1.15x); `--no-dp` skips it.

Memory: epl-run's peak is what the runtime counted for the step's buffers
plus what epl-run holds for the step (the report's host_bytes: parameters,
optimizer state and batch; the step writes the new parameters and state
over the old ones); PyTorch's is
the growth of the process's resident high-water mark over one run of the
same steps, measured in a fresh process.

usage: bench/cpu_train.py [--threads N] [--steps K] [--rounds R] [--wait-idle S] [--no-dp]
Prints the median step times, the ratios epl-run / PyTorch (target: at
most 0.8) and epl-run / XLA (at most 1.0), the data-parallel ratio and the peak memories.
"""

import argparse
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
BUILD = pathlib.Path(os.environ.get("EPL_BUILD_DIR", ROOT / "build"))
sys.path.insert(0, str(ROOT / "bench"))
from cpu_forward import BATCH, SIZES, mlp_module  # noqa: E402
import machine  # noqa: E402

# Issue 15's targets: at most 0.8x PyTorch's step and 1.0x XLA's.
TARGET, XLA_TARGET = 0.8, 1.0
DP_RANKS, DP_TARGET = 2, 1.15
LR, MOMENTUM = 0.01, 0.9

TORCH_STEPS = r"""
import resource, sys, time, torch
threads, steps, batch = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
sizes = [int(s) for s in sys.argv[4].split(",")]
torch.set_num_threads(threads)
def hwm():
    return int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) * 1024
layers = []
for i in range(len(sizes) - 1):
    layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
    if i < len(sizes) - 2:
        layers.append(torch.nn.ReLU())
model = torch.nn.Sequential(*layers)
opt = torch.optim.SGD(model.parameters(), lr=%(lr)r, momentum=%(momentum)r)
x = torch.randn(batch, sizes[0])
y = torch.nn.functional.one_hot(torch.randint(0, sizes[-1], (batch,)), sizes[-1]).float()
base = hwm()
times = []
for _ in range(steps):
    start = time.perf_counter()
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    times.append((time.perf_counter() - start) * 1000)
print(" ".join(map(str, times[1:])), hwm() - base)
""" % {"lr": LR, "momentum": MOMENTUM}


JAX_STEPS = machine.JAX_MLP + "lr, momentum = %(lr)r, %(momentum)r\n" % {
    "lr": LR, "momentum": MOMENTUM} + machine.JAX_MOMENTUM_STEPS


def epl_run(model, steps, threads, ranks=1):
    """epl-run on `ranks` ranks with `threads` BLAS threads (per rank: the
    runtime sets 1 with several ranks), pinned to cores(ranks * threads).
    Returns the step times but the first, the peak step buffers, host_bytes
    and the compile time in seconds (the sum of the `--timing` phases)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = pathlib.Path(tmp) / "report.json"
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads))
        cmd = [str(BUILD / "bin" / "epl-run"), str(model), "--steps", str(steps),
               "--ranks", str(ranks), "--timing", "--report", str(report)]
        if ranks == 1:
            cmd += ["--threads-per-rank", str(threads)]
        run = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True, preexec_fn=machine.pin(ranks * threads))
        if run.returncode:
            sys.stderr.write(run.stderr)
            raise subprocess.CalledProcessError(run.returncode, cmd)
        data = json.loads(report.read_text())
    compile_s = sum(float(v) for v in
                    re.findall(r"^epl-run: [\w-]+ +([0-9.]+) s$", run.stderr, re.M))
    return {"times": [s["time_ms"] for s in data["steps"]][1:],
            "peak": max(data["peak_bytes"]),
            "host_bytes": data["per_rank"][0]["host_bytes"], "compile_s": compile_s}


def xla_line(times, compile_ms, e, idle, unit=".3f", target=None):
    """The XLA lines: median step and compile time, then the ratio to epl-run
    (against `target`, if any); or why XLA did not run."""
    if times is None:
        return [machine.xla_note()]
    x = statistics.median(times)
    met = ("" if target is None else
           f"  (target <= {target}: {'met' if e / x <= target else 'NOT met'})")
    return [f"  XLA      median step {x:8{unit}} ms   compile "
            f"{statistics.median(compile_ms) / 1000:.2f} s (jax {machine.jax_python()[1]}: "
            "lower + compile of the step)",
            f"  ratio epl-run / XLA     = {e / x:{unit}}{met}{idle.flag()}"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    machine.add_arguments(parser)
    parser.add_argument("--no-dp", action="store_true", help="skip the data-parallel line")
    args = parser.parse_args()
    dp = not args.no_dp and len(machine.cores(DP_RANKS)) == DP_RANKS

    text = mlp_module(BATCH, SIZES).replace(
        "module {", "module attributes {epl.config = {\"optimizer.type\" = \"momentum\", "
        f"\"optimizer.lr\" = {LR!r} : f64, \"optimizer.momentum\" = {MOMENTUM!r} : f64}}}} {{")
    print(f"cpu_train: MLP batch {BATCH}, {'-'.join(map(str, SIZES))}, fp32, momentum SGD, "
          f"{args.threads} thread(s) on cpus {','.join(map(str, machine.cores(args.threads)))}, "
          f"{args.rounds}x{args.steps - 1} steps each", flush=True)
    idle = machine.check_idle(max(args.threads, DP_RANKS if dp else 1), args.wait_idle)
    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        model = pathlib.Path(tmp) / "mlp.mlir"
        model.write_text(text)
        for _ in idle.rounds(args.rounds):
            # host_bytes: what epl-run holds for the step (parameters,
            # momentum and batch; new parameters and momentum are written
            # over the old ones).
            r = epl_run(model, args.steps, args.threads)
            out = subprocess.run([sys.executable, "-c", TORCH_STEPS, str(args.threads),
                                  str(args.steps), str(BATCH), ",".join(map(str, SIZES))],
                                 check=True, capture_output=True, text=True,
                                 preexec_fn=machine.pin(args.threads)).stdout.split()
            r["torch"], r["torch_peak"] = [float(v) for v in out[:-1]], int(out[-1])
            out = machine.run_jax(JAX_STEPS, [args.threads, args.steps, BATCH,
                                              ",".join(map(str, SIZES))], args.threads)
            r["xla"], r["xla_compile"] = machine.xla_times(out)
            if dp:
                r["dp"] = epl_run(model, args.steps, 1, ranks=DP_RANKS)["times"]
                r["one"] = (r["times"] if args.threads == DP_RANKS else
                            epl_run(model, args.steps, DP_RANKS)["times"])
            rounds.append(r)
    kept = idle.keep(rounds)
    e, p = machine.median(kept, "times"), machine.median(kept, "torch")
    epl_peak, host_bytes = max(r["peak"] for r in kept), kept[0]["host_bytes"]
    mib = 1024 * 1024
    print(f"  epl-run  median step {e:8.3f} ms   compile "
          f"{statistics.median(r['compile_s'] for r in kept):.2f} s   "
          f"peak {(epl_peak + host_bytes) / mib:7.1f} MiB "
          f"({epl_peak / mib:.1f} step buffers + {host_bytes / mib:.1f} held by epl-run)")
    print(f"  PyTorch  median step {p:8.3f} ms                  "
          f"peak {max(r['torch_peak'] for r in kept) / mib:7.1f} MiB (resident growth)")
    print(f"  ratio epl-run / PyTorch = {e / p:.3f}  (target <= {TARGET}: "
          f"{'met' if e / p <= TARGET else 'NOT met'}){idle.flag()}")
    xla = None if kept[0]["xla"] is None else machine.pooled(kept, "xla")
    print("\n".join(xla_line(xla, [r["xla_compile"] for r in kept], e, idle,
                             target=XLA_TARGET)))
    if dp:
        d, o = machine.median(kept, "dp"), machine.median(kept, "one")
        print(f"  data parallel: {DP_RANKS} ranks x 1 BLAS thread {d:.3f} ms, 1 rank x "
              f"{DP_RANKS} BLAS threads {o:.3f} ms, global batch {BATCH}: ratio {d / o:.3f} "
              f"(target <= {DP_TARGET}: {'met' if d / o <= DP_TARGET else 'NOT met'}){idle.flag()}")
    elif not args.no_dp:
        print(f"  data parallel: skipped (fewer than {DP_RANKS} cores)")


if __name__ == "__main__":
    main()

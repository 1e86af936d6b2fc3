#!/usr/bin/env python3
"""Training-step time of an MLP, epl-run against PyTorch, side by side.

Model: batch 256, 784-1024-1024-10, fp32, ReLU, softmax cross-entropy,
momentum SGD; the L0 module of bench/cpu_forward.py, trained by epl-run
(epl-autodiff builds the step), and the same model in torch.nn with
torch.optim.SGD. Same threads for both, interleaved rounds.

Memory: epl-run's peak is what the runtime counted for the step's buffers
plus what epl-run holds for the step (the report's host_bytes: parameters,
optimizer state and batch; the step writes the new parameters and state
over the old ones); PyTorch's is
the growth of the process's resident high-water mark over one run of the
same steps, measured in a fresh process.

usage: bench/cpu_train.py [--threads N] [--steps K] [--rounds R]
Prints the median step times, their ratio (target: at most 1.2) and the
peak memories.
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
BUILD = pathlib.Path(os.environ.get("EPL_BUILD_DIR", ROOT / "build"))
sys.path.insert(0, str(ROOT / "bench"))
from cpu_forward import BATCH, SIZES, mlp_module  # noqa: E402

TARGET = 1.2
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


def epl_step_times(model, steps, threads):
    with tempfile.TemporaryDirectory() as tmp:
        report = pathlib.Path(tmp) / "report.json"
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads))
        subprocess.run([str(BUILD / "bin" / "epl-run"), str(model), "--steps",
                        str(steps), "--report", str(report)], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        data = json.loads(report.read_text())
    return ([s["time_ms"] for s in data["steps"]][1:], max(data["peak_bytes"]),
            data["per_rank"][0]["host_bytes"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    text = mlp_module(BATCH, SIZES).replace(
        "module {", "module attributes {epl.config = {\"optimizer.type\" = \"momentum\", "
        f"\"optimizer.lr\" = {LR!r} : f64, \"optimizer.momentum\" = {MOMENTUM!r} : f64}}}} {{")
    with tempfile.TemporaryDirectory() as tmp:
        model = pathlib.Path(tmp) / "mlp.mlir"
        model.write_text(text)
        epl, pt, epl_peak, pt_peak = [], [], 0, 0
        for _ in range(args.rounds):
            # host_bytes: what epl-run holds for the step (parameters,
            # momentum and batch; new parameters and momentum are written
            # over the old ones).
            t, peak, host_bytes = epl_step_times(model, args.steps, args.threads)
            epl += t
            epl_peak = max(epl_peak, peak)
            out = subprocess.run([sys.executable, "-c", TORCH_STEPS, str(args.threads),
                                  str(args.steps), str(BATCH), ",".join(map(str, SIZES))],
                                 check=True, capture_output=True, text=True).stdout.split()
            pt += [float(v) for v in out[:-1]]
            pt_peak = max(pt_peak, int(out[-1]))
    e, p = statistics.median(epl), statistics.median(pt)
    mib = 1024 * 1024
    print(f"cpu_train: MLP batch {BATCH}, {'-'.join(map(str, SIZES))}, fp32, momentum SGD, "
          f"{args.threads} thread(s), {args.rounds}x{args.steps - 1} steps each")
    print(f"  epl-run  median step {e:8.3f} ms   peak {(epl_peak + host_bytes) / mib:7.1f} MiB "
          f"({epl_peak / mib:.1f} step buffers + {host_bytes / mib:.1f} held by epl-run)")
    print(f"  PyTorch  median step {p:8.3f} ms   peak {pt_peak / mib:7.1f} MiB (resident growth)")
    print(f"  ratio epl-run / PyTorch = {e / p:.3f}  (target <= {TARGET}: "
          f"{'met' if e / p <= TARGET else 'NOT met'})")


if __name__ == "__main__":
    main()

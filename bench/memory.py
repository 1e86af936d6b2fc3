#!/usr/bin/env python3
"""Gradient checkpointing: peak memory and step time, epl-run against
PyTorch, side by side.

Model: 16 identical blocks, each two layers Dense(W) + tanh (an MLP block,
four activations the backward reads), on a batch of B rows, then a
Dense(10) head and softmax cross-entropy, momentum SGD, fp32. EPL: the
plain step, `gradient_checkpoint.type = "auto"` with no budget (the least
memory), and with a budget of a third of the plain step's measured peak.
PyTorch: the plain step and torch.utils.checkpoint.checkpoint_sequential
over 8 segments (Chen's sqrt(n) for 64 modules). Same threads for both.

Memory: epl-run's peak is what the runtime counted for the step's buffers
(activations, gradients, temporaries; parameters and optimizer state are
held by epl-run outside it); PyTorch's is the growth of the process's
resident high-water mark over the steps (reset after the model is built),
in a fresh process, minus the momentum buffers the first step creates, so
that both count activations, gradients and temporaries.

usage: bench/memory.py [--batch B] [--width W] [--steps K] [--threads N]
Prints each run's median step time and peak, and the ratios to the plain
step of the same framework (targets: budget met within 10%, at most 1.4x
the plain step time).
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
sys.path.insert(0, str(ROOT / "python"))
import epl  # noqa: E402

BLOCKS = 16
TIME_TARGET = 1.4

TORCH_STEPS = r"""
import resource, sys, time, torch
from torch.utils.checkpoint import checkpoint_sequential
threads, steps, batch, width, blocks, segments = map(int, sys.argv[1:7])
torch.set_num_threads(threads)
def hwm():
    return int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) * 1024
layers = []
for _ in range(2 * blocks):
    layers += [torch.nn.Linear(width, width), torch.nn.Tanh()]
body = torch.nn.Sequential(*layers)
head = torch.nn.Linear(width, 10)
params = list(body.parameters()) + list(head.parameters())
opt = torch.optim.SGD(params, lr=0.01, momentum=0.9)
x = torch.randn(batch, width)
y = torch.randint(0, 10, (batch,))
def rss():
    return int(open("/proc/self/status").read().split("VmRSS:")[1].split()[0]) * 1024
# Peak resident memory from here on (Linux: writing 5 to clear_refs resets
# the high-water mark to the current resident size).
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
base = rss()
times = []
for _ in range(steps):
    start = time.perf_counter()
    opt.zero_grad(set_to_none=True)
    h = checkpoint_sequential(body, segments, x) if segments else body(x)
    loss = torch.nn.functional.cross_entropy(head(h), y)
    loss.backward()
    opt.step()
    times.append((time.perf_counter() - start) * 1000)
# The momentum buffers the steps create; epl-run holds its optimizer state
# outside the step's buffers.
held = sum(p.numel() * 4 for p in params)
print(" ".join(map(str, times[1:])), hwm() - base - held)
"""


def model(batch, width, checkpointing):
    epl.init(epl.Config({"optimizer.type": "momentum", "optimizer.lr": 0.01,
                         "optimizer.momentum": 0.9, **checkpointing}))
    x = epl.input("x", (batch, width))
    y = epl.label("y", (batch, 10))
    h = x
    for i in range(BLOCKS):
        for j in range(2):
            h = epl.layers.Dense(width, activation="tanh", name=f"fc{i}_{j}")(h)
    logits = epl.layers.Dense(10, name="head")(h)
    return epl.to_mlir(epl.layers.softmax_cross_entropy(logits, y))


def epl_run(path, steps, threads):
    with tempfile.TemporaryDirectory() as tmp:
        report = pathlib.Path(tmp) / "report.json"
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads))
        subprocess.run([str(BUILD / "bin" / "epl-run"), str(path), "--blas", "--steps",
                        str(steps), "--report", str(report)], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        data = json.loads(report.read_text())
    return statistics.median(s["time_ms"] for s in data["steps"][1:]), max(data["peak_bytes"])


def torch_run(args, segments):
    out = subprocess.run([sys.executable if "torch" in sys.modules else "/usr/bin/python3",
                          "-c", TORCH_STEPS, str(args.threads), str(args.steps),
                          str(args.batch), str(args.width), str(BLOCKS), str(segments)],
                         check=True, capture_output=True, text=True).stdout.split()
    return statistics.median(float(v) for v in out[:-1]), int(out[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    mib = 1024 * 1024

    with tempfile.TemporaryDirectory() as tmp:
        def run(name, checkpointing):
            path = pathlib.Path(tmp) / f"{name}.mlir"
            path.write_text(model(args.batch, args.width, checkpointing))
            return epl_run(path, args.steps, args.threads)

        plain = run("plain", {})
        budget = plain[1] // 3
        rows = [("epl-run plain", plain, None),
                ("epl-run auto (least memory)", run("auto", {"gradient_checkpoint.type": "auto"}), None),
                ("epl-run auto, budget 1/3 of plain peak",
                 run("budget", {"gradient_checkpoint.type": "auto",
                                "gradient_checkpoint.memory_budget": float(budget)}), budget)]
    torch_plain = torch_run(args, 0)
    torch_rows = [("PyTorch plain", torch_plain, None),
                  ("PyTorch checkpoint_sequential(8)", torch_run(args, 8), None)]

    print(f"memory: {BLOCKS} blocks of 2 x (Dense({args.width}) + tanh), batch {args.batch}, fp32, "
          f"momentum SGD, {args.threads} thread(s), median of {args.steps - 1} steps")
    for (name, (ms, peak), b), base in ([(r, plain) for r in rows] +
                                       [(r, torch_plain) for r in torch_rows]):
        line = (f"  {name:40s} step {ms:8.2f} ms ({ms / base[0]:.2f}x)   "
                f"peak {peak / mib:7.1f} MiB ({peak / base[1]:.2f}x)")
        if b is not None:
            line += (f"   budget {b / mib:.1f} MiB: peak/budget {peak / b:.2f} "
                     f"({'met' if peak <= 1.1 * b else 'NOT met'}), time "
                     f"{'met' if ms / base[0] <= TIME_TARGET else 'NOT met'}")
        print(line)
    (_, (e_ms, e_peak), _), (_, (t_ms, t_peak), _) = rows[1], torch_rows[1]
    print(f"  checkpointed, epl-run / PyTorch: step {e_ms / t_ms:.2f}x, peak {e_peak / t_peak:.2f}x")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""How epl-run's compile time grows with depth: the transformer of
bench/transformer_train.py with 2 and with 12 blocks.

Each depth is compiled by `epl-run --steps 1 --timing` (pinned to the first
N CPUs, all by default: MLIR's pass manager compiles functions in parallel)
in interleaved rounds after an idle check
(bench/machine.py); prints the median of each `--timing` phase, the total,
and the ratio of the deep model's total to the shallow one's (issue 15's
target: under 3x, kernels shared across identical blocks).

usage: bench/compile_time.py [--threads N] [--rounds R] [--blocks 2,12] [--wait-idle S]
"""

import argparse
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "python"))
import machine  # noqa: E402
import transformer_train  # noqa: E402
from cpu_train import BUILD  # noqa: E402


def compile_phases(model, threads):
    run = subprocess.run([str(BUILD / "bin" / "epl-run"), str(model), "--steps", "1",
                          "--timing", "--threads-per-rank", str(threads)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         preexec_fn=machine.pin(threads), check=True)
    return {k: float(v) for k, v in
            re.findall(r"^epl-run: ([\w-]+) +([0-9.]+) s$", run.stderr, re.M)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--blocks", default="2,12")
    machine.add_arguments(parser)
    args = parser.parse_args()
    depths = [int(b) for b in args.blocks.split(",")]
    idle = machine.check_idle(args.threads, args.wait_idle)
    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        models = {}
        for d in depths:
            transformer_train.BLOCKS = d
            models[d] = pathlib.Path(tmp) / f"transformer{d}.mlir"
            models[d].write_text(transformer_train.transformer_module())
        for _ in idle.rounds(args.rounds):
            rounds.append({d: compile_phases(models[d], args.threads) for d in depths})
    kept = idle.keep(rounds)
    phases = {d: [r[d] for r in kept] for d in depths}
    totals = {}
    for d in depths:
        names = list(phases[d][0])
        median = {n: statistics.median(p[n] for p in phases[d]) for n in names}
        totals[d] = statistics.median(sum(p.values()) for p in phases[d])
        print(f"{d:3d} blocks: total {totals[d]:6.2f} s   " +
              "  ".join(f"{n} {v:.2f}" for n, v in median.items() if v >= 0.01))
    for d in depths[1:]:
        print(f"{d} blocks / {depths[0]} blocks: {totals[d] / totals[depths[0]]:.2f}x "
              f"(target < 3x){idle.flag()}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Forward time of an MLP, epl-run against PyTorch and XLA, side by side.

Model: batch 256, 784-1024-1024-10, fp32, ReLU, softmax cross-entropy, as
one L0 module run by epl-run, the same model in torch.nn and, where a
Python with jax is found (bench/machine.py; $EPL_JAX_PYTHON), as one
jitted jax.numpy function compiled ahead of the timed calls. All use the
same number of threads (OpenBLAS's, PyTorch's intra-op pool, XLA's pool)
on the same cores (this process pins itself, and so its children, to the
first N CPUs) and run in interleaved rounds on the same machine, so that
the ratio is meaningful even where absolute times are noisy; the
machine's idle state is checked before timing and during each round
(busy rounds are run again, bench/machine.py).

usage: bench/cpu_forward.py [--threads N] [--steps K] [--rounds R] [--wait-idle S]
Prints the median step times and the ratios epl-run / PyTorch (target: at
most 1.25) and epl-run / XLA.
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
BUILD = pathlib.Path(os.environ.get("EPL_BUILD_DIR", ROOT / "build"))
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))
import machine  # noqa: E402

BATCH, SIZES = 256, [784, 1024, 1024, 10]
TARGET = 1.25

JAX_FORWARD = machine.JAX_MLP + r"""
start = time.perf_counter()
compiled = jax.jit(loss_fn).lower(params, x, y).compile()
compile_ms = (time.perf_counter() - start) * 1000
times = []
for _ in range(steps):
    start = time.perf_counter()
    jax.block_until_ready(compiled(params, x, y))
    times.append((time.perf_counter() - start) * 1000)
print(" ".join(map(str, times[1:])), compile_ms)
"""


def mlp_module(batch, sizes):
    """The L0 forward: relu(x @ w_i + b_i) ..., then mean cross-entropy."""
    n = len(sizes) - 1
    args = [f"%x: tensor<{batch}x{sizes[0]}xf32> {{epl.arg = \"input\", epl.name = \"x\"}}",
            f"%y: tensor<{batch}x{sizes[-1]}xf32> {{epl.arg = \"label\", epl.name = \"y\"}}"]
    for i in range(n):
        args.append(f"%w{i}: tensor<{sizes[i]}x{sizes[i+1]}xf32> {{epl.arg = \"param\", epl.name = \"w{i}\"}}")
        args.append(f"%b{i}: tensor<{sizes[i+1]}xf32> {{epl.arg = \"param\", epl.name = \"b{i}\"}}")
    body = ["    %zero = arith.constant 0.0 : f32",
            "    %ninf = arith.constant 0xFF800000 : f32",
            f"    %nbatch = arith.constant {float(batch)} : f32"]
    h = "%x"
    for i in range(n):
        t = f"tensor<{batch}x{sizes[i+1]}xf32>"
        body += [
            f"    %e{i} = tensor.empty() : {t}",
            f"    %z{i} = linalg.fill ins(%zero : f32) outs(%e{i} : {t}) -> {t}",
            f"    %mm{i} = linalg.matmul ins({h}, %w{i} : tensor<{batch}x{sizes[i]}xf32>, tensor<{sizes[i]}x{sizes[i+1]}xf32>) outs(%z{i} : {t}) -> {t}",
            f"    %bb{i} = linalg.broadcast ins(%b{i} : tensor<{sizes[i+1]}xf32>) outs(%e{i} : {t}) dimensions = [0]",
            f"    %a{i} = linalg.add ins(%mm{i}, %bb{i} : {t}, {t}) outs(%e{i} : {t}) -> {t}",
        ]
        if i < n - 1:
            body.append(f"    %h{i} = linalg.max ins(%a{i}, %z{i} : {t}, {t}) outs(%e{i} : {t}) -> {t}")
            h = f"%h{i}"
        else:
            h = f"%a{i}"
    c = sizes[-1]
    t = f"tensor<{batch}x{c}xf32>"
    body += [
        f"    %er = tensor.empty() : tensor<{batch}xf32>",
        f"    %fm = linalg.fill ins(%ninf : f32) outs(%er : tensor<{batch}xf32>) -> tensor<{batch}xf32>",
        f"    %m = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = [\"parallel\", \"reduction\"]}} ins({h} : {t}) outs(%fm : tensor<{batch}xf32>) {{",
        "    ^bb0(%l: f32, %acc: f32):",
        "      %r = arith.maximumf %l, %acc : f32",
        "      linalg.yield %r : f32",
        f"    }} -> tensor<{batch}xf32>",
        f"    %fs = linalg.fill ins(%zero : f32) outs(%er : tensor<{batch}xf32>) -> tensor<{batch}xf32>",
        f"    %se = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>], iterator_types = [\"parallel\", \"reduction\"]}} ins({h}, %m : {t}, tensor<{batch}xf32>) outs(%fs : tensor<{batch}xf32>) {{",
        "    ^bb0(%l: f32, %mx: f32, %acc: f32):",
        "      %s = arith.subf %l, %mx : f32",
        "      %e = math.exp %s : f32",
        "      %r = arith.addf %acc, %e : f32",
        "      linalg.yield %r : f32",
        f"    }} -> tensor<{batch}xf32>",
        "    %es = tensor.empty() : tensor<f32>",
        "    %f0 = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>",
        f"    %tot = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> ()>], iterator_types = [\"reduction\", \"reduction\"]}} ins({h}, %y, %m, %se : {t}, {t}, tensor<{batch}xf32>, tensor<{batch}xf32>) outs(%f0 : tensor<f32>) {{",
        "    ^bb0(%l: f32, %t: f32, %mx: f32, %s: f32, %acc: f32):",
        "      %ls = math.log %s : f32",
        "      %d = arith.subf %l, %mx : f32",
        "      %lp = arith.subf %d, %ls : f32",
        "      %p = arith.mulf %t, %lp : f32",
        "      %r = arith.subf %acc, %p : f32",
        "      linalg.yield %r : f32",
        "    } -> tensor<f32>",
        "    %loss = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%tot : tensor<f32>) outs(%es : tensor<f32>) {",
        "    ^bb0(%a: f32, %o: f32):",
        "      %r = arith.divf %a, %nbatch : f32",
        "      linalg.yield %r : f32",
        "    } -> tensor<f32>",
        "    return %loss : tensor<f32>",
    ]
    return ("module {\n  func.func @mlp(" + ",\n      ".join(args) +
            ") -> tensor<f32> {\n" + "\n".join(body) + "\n  }\n}\n")


def epl_times(model, steps, threads):
    with tempfile.TemporaryDirectory() as tmp:
        report = pathlib.Path(tmp) / "report.json"
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads))
        subprocess.run([str(BUILD / "bin" / "epl-run"), str(model), "--steps",
                        str(steps), "--no-train", "--report", str(report)], env=env,
                       check=True, stdout=subprocess.DEVNULL)
        data = json.loads(report.read_text())
    return [s["time_ms"] for s in data["steps"]][1:], data["steps"][0].get("loss")


def torch_times(steps, threads):
    import torch
    torch.set_num_threads(threads)
    layers = []
    for i in range(len(SIZES) - 1):
        layers.append(torch.nn.Linear(SIZES[i], SIZES[i + 1]))
        if i < len(SIZES) - 2:
            layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers)
    x = torch.randn(BATCH, SIZES[0])
    y = torch.nn.functional.one_hot(torch.randint(0, SIZES[-1], (BATCH,)),
                                    SIZES[-1]).float()
    times = []
    with torch.no_grad():
        for _ in range(steps):
            start = time.perf_counter()
            torch.nn.functional.cross_entropy(model(x), y)
            times.append((time.perf_counter() - start) * 1000)
    return times[1:]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    machine.add_arguments(parser)
    args = parser.parse_args()

    print(f"cpu_forward: MLP batch {BATCH}, {'-'.join(map(str, SIZES))}, fp32, "
          f"{args.threads} thread(s) on cpus {','.join(map(str, machine.cores(args.threads)))}, "
          f"{args.rounds}x{args.steps - 1} steps each", flush=True)
    idle = machine.check_idle(args.threads, args.wait_idle)
    os.sched_setaffinity(0, set(machine.cores(args.threads)))  # PyTorch runs in here
    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        model = pathlib.Path(tmp) / "mlp.mlir"
        model.write_text(mlp_module(BATCH, SIZES))
        for _ in idle.rounds(args.rounds):  # interleaved, so drift hits all
            r = {"epl": epl_times(model, args.steps, args.threads)[0],
                 "torch": torch_times(args.steps, args.threads)}
            out = machine.run_jax(JAX_FORWARD, [args.threads, args.steps, BATCH,
                                                ",".join(map(str, SIZES))], args.threads)
            r["xla"] = None if out is None else [float(v) for v in out[:-1]]
            rounds.append(r)
    kept = idle.keep(rounds)
    e, p = machine.median(kept, "epl"), machine.median(kept, "torch")
    ratio = e / p
    print(f"  epl-run  median step {e:8.3f} ms")
    print(f"  PyTorch  median step {p:8.3f} ms  (torch {__import__('torch').__version__})")
    print(f"  ratio epl-run / PyTorch = {ratio:.3f}  (target <= {TARGET}: "
          f"{'met' if ratio <= TARGET else 'NOT met'}){idle.flag()}")
    if kept[0]["xla"] is None:
        print(machine.xla_note())
    else:
        x = machine.median(kept, "xla")
        print(f"  XLA      median step {x:8.3f} ms  (jax {machine.jax_python()[1]})")
        print(f"  ratio epl-run / XLA     = {e / x:.3f}{idle.flag()}")


if __name__ == "__main__":
    main()

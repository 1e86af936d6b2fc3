#!/usr/bin/env python3
"""Sharding propagation plus collective insertion on chains of Megatron MLP
blocks, against upstream MLIR's shard dialect, side by side.

For each chain length, the same program (K blocks of a column-parallel
then a row-parallel matmul on 4 devices) is written twice: as EPL
(`epl.mesh`, `epl.sharding` seeds; `epl-opt --linalg-generalize-named-ops
--epl-sharding-propagation --epl-insert-collectives`) and as the shard
dialect (`shard.grid`, `shard.shard`; `mlir-opt
func.func(sharding-propagation,shard-partition)`). Both report their pass
times with --mlir-timing, next to the time each took to parse its module.

usage: bench/propagation.py [--blocks 100,500,1000,2000,5000]
Prints, per chain: time per op of each, each relative to its parse time,
and upstream/EPL. Targets: linear scaling, and faster than upstream.
"""

import argparse
import os
import pathlib
import re
import subprocess
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
BUILD = pathlib.Path(os.environ.get("EPL_BUILD_DIR", ROOT / "build"))
MLIR_OPT = "/usr/lib/llvm-22/bin/mlir-opt"
B, D, F, DEVICES = 8, 16, 32, 4


def chain(blocks, dialect):
    lines = []
    t_x, t_h = f"tensor<{B}x{D}xf32>", f"tensor<{B}x{F}xf32>"
    t_w1, t_w2 = f"tensor<{D}x{F}xf32>", f"tensor<{F}x{D}xf32>"
    args = [f"%x: {t_x}"]
    for i in range(blocks):
        if dialect == "epl":
            args.append(f'%w1_{i}: {t_w1} {{epl.sharding = #epl.sharding<@mesh, [[], ["tensor"]]>}}')
            args.append(f'%w2_{i}: {t_w2} {{epl.sharding = #epl.sharding<@mesh, [["tensor"], []]>}}')
        else:
            args += [f"%w1_{i}: {t_w1}", f"%w2_{i}: {t_w2}"]
    lines.append(f'epl.mesh @mesh ["tensor" = {DEVICES}]' if dialect == "epl"
                 else f"shard.grid @grid(shape = {DEVICES})")
    lines.append(f"func.func @chain({', '.join(args)}) -> {t_x} {{")
    lines.append("  %zero = arith.constant 0.0 : f32")
    if dialect == "shard":
        lines.append("  %col = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding")
        lines.append("  %row = shard.sharding @grid split_axes = [[0], []] : !shard.sharding")
    h = "%x"
    for i in range(blocks):
        w1, w2 = f"%w1_{i}", f"%w2_{i}"
        if dialect == "shard":
            lines.append(f"  %s1_{i} = shard.shard {w1} to %col : {t_w1}")
            lines.append(f"  %s2_{i} = shard.shard {w2} to %row : {t_w2}")
            w1, w2 = f"%s1_{i}", f"%s2_{i}"
        lines += [
            f"  %e1_{i} = tensor.empty() : {t_h}",
            f"  %z1_{i} = linalg.fill ins(%zero : f32) outs(%e1_{i} : {t_h}) -> {t_h}",
            f"  %a_{i} = linalg.matmul ins({h}, {w1} : {t_x}, {t_w1}) outs(%z1_{i} : {t_h}) -> {t_h}",
            f"  %e2_{i} = tensor.empty() : {t_x}",
            f"  %z2_{i} = linalg.fill ins(%zero : f32) outs(%e2_{i} : {t_x}) -> {t_x}",
            f"  %b_{i} = linalg.matmul ins(%a_{i}, {w2} : {t_h}, {t_w2}) outs(%z2_{i} : {t_x}) -> {t_x}",
        ]
        h = f"%b_{i}"
    lines.append(f"  return {h} : {t_x}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def timing(cmd):
    """Seconds per row of --mlir-timing (wall time column)."""
    out = subprocess.run(cmd + ["--mlir-timing", "-o", os.devnull], check=True,
                         capture_output=True, text=True).stderr
    rows = {}
    for line in out.splitlines():
        m = re.match(r"\s*([0-9.]+) \(\s*[0-9.]+%\)\s+(?:[0-9.]+ \(\s*[0-9.]+%\)\s+)?(.+)$", line)
        if m:
            rows[m.group(2).strip()] = rows.get(m.group(2).strip(), 0) + float(m.group(1))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", default="100,500,1000,2000,5000")
    args = parser.parse_args()
    print(f"propagation + partitioning of K Megatron MLP blocks on {DEVICES} devices")
    print(f"{'blocks':>7} {'ops':>7} | {'EPL us/op':>9} {'x parse':>8} | "
          f"{'upstream us/op':>14} {'x parse':>8} | {'upstream/EPL':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        for k in map(int, args.blocks.split(",")):
            ops = 6 * k
            epl_file = pathlib.Path(tmp) / f"epl{k}.mlir"
            shard_file = pathlib.Path(tmp) / f"shard{k}.mlir"
            epl_file.write_text(chain(k, "epl"))
            shard_file.write_text(chain(k, "shard"))
            ours = timing([str(BUILD / "bin" / "epl-opt"), str(epl_file),
                           "--linalg-generalize-named-ops", "--epl-sharding-propagation",
                           "--epl-insert-collectives"])
            theirs = timing([MLIR_OPT, str(shard_file), "--pass-pipeline=builtin.module("
                             "func.func(sharding-propagation,shard-partition))"])
            ours_t = sum(v for n, v in ours.items()
                         if "Sharding" in n or "Collectives" in n or "Generalize" in n)
            theirs_t = sum(v for n, v in theirs.items()
                           if n in ("ShardingPropagation", "PartitionPass")
                           or "Partition" in n or "ShardingPropagation" in n)
            print(f"{k:>7} {ops:>7} | {1e6 * ours_t / ops:>9.2f} "
                  f"{ours_t / ours['Parser']:>8.2f} | {1e6 * theirs_t / ops:>14.2f} "
                  f"{theirs_t / theirs['Parser']:>8.2f} | {theirs_t / ours_t:>12.2f}")


if __name__ == "__main__":
    main()

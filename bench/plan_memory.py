#!/usr/bin/env python3
"""Peak memory of `epl-opt --epl-parallelize` on a wide model: P parameters,
three ops each (h = h + h * p_i on a [8, 4] activation), then a sum as the
loss. Issue 16: 16,669 parameters (50k ops) took 4.7 GiB; the target is
memory linear in the model, under 1 GiB there.

usage: bench/plan_memory.py [--params 1000,4000,16669] [--devices 4]
Prints, per size: ops, parameters, peak RSS (MiB) and seconds.
"""

import argparse
import os
import pathlib
import re
import subprocess
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
BUILD = pathlib.Path(os.environ.get("EPL_BUILD_DIR", ROOT / "build"))


def model(params):
    t = "tensor<8x4xf32>"
    lines = ["module {",
             f"  func.func @model(%x: {t} {{epl.arg = \"input\", epl.name = \"x\"}},"]
    args = [f"      %p{i}: {t} {{epl.arg = \"param\", epl.name = \"p{i}\"}}"
            for i in range(params)]
    lines.append(",\n".join(args) + ") -> tensor<f32> {")
    h = "%x"
    for i in range(params):
        lines.append(f"    %e{i} = tensor.empty() : {t}")
        lines.append(f"    %m{i} = linalg.mul ins({h}, %p{i} : {t}, {t}) outs(%e{i} : {t}) -> {t}")
        lines.append(f"    %h{i} = linalg.add ins(%m{i}, {h} : {t}, {t}) outs(%e{i} : {t}) -> {t}")
        h = f"%h{i}"
    lines += ["    %zero = arith.constant 0.0 : f32",
              "    %s0 = tensor.empty() : tensor<f32>",
              "    %s1 = linalg.fill ins(%zero : f32) outs(%s0 : tensor<f32>) -> tensor<f32>",
              f"    %loss = linalg.reduce ins({h} : {t}) outs(%s1 : tensor<f32>) dimensions = [0, 1]",
              "      (%a: f32, %b: f32) { %r = arith.addf %a, %b : f32",
              "        linalg.yield %r : f32 }",
              "    return %loss : tensor<f32>", "  }", "}"]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--params", default="1000,4000,16669")
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--timing", action="store_true")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for p in map(int, options.params.split(",")):
            path = pathlib.Path(tmp) / f"wide-{p}.mlir"
            path.write_text(model(p))
            cmd = ["/usr/bin/time", "-v", str(BUILD / "bin" / "epl-opt"),
                   str(path), f"--epl-parallelize=devices={options.devices}",
                   "-o", os.devnull]
            if options.timing:
                cmd.append("--mlir-timing")
            r = subprocess.run(cmd, capture_output=True, text=True, check=True)
            rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)",
                                r.stderr).group(1))
            wall = re.search(r"Elapsed \(wall clock\) time.*: (\S+)", r.stderr).group(1)
            if options.timing:
                print("\n".join(l for l in r.stderr.splitlines() if "%" in l)[:3000])
            print(f"params {p:6d} ops {3 * p + 4:6d} peak {rss / 1024:8.1f} MiB "
                  f"wall {wall}", flush=True)


if __name__ == "__main__":
    main()

"""Checks a pipelined run of pipeline-2stage.mlir against the same step on
one device (pipeline-2stage-reference.mlir), and the report and the trace
the pipelined run wrote.

usage: check-pipeline.py PIPELINED REFERENCE --stages 0,0,1,1 --steps K
  PIPELINED: prefix of the pipelined run's files: .out (stdout),
    .safetensors (--save), .json (--report), .trace.json (--trace),
    .dump.safetensors (--dump-results)
  REFERENCE: prefix of the one-device run's .out and .safetensors
  --stages: the stage of each rank
"""

import argparse
import collections
import json
import pathlib
import re
import struct
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[4] / "python"))
from epl import safetensors  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("pipelined")
parser.add_argument("reference")
parser.add_argument("--stages", required=True)
parser.add_argument("--steps", type=int, required=True)
args = parser.parse_args()
stages = [int(s) for s in args.stages.split(",")]
steps = args.steps


def losses(path):
    return [float(m.group(1)) for m in
            re.finditer(r"^step \d+ loss (\S+)", pathlib.Path(path).read_text(), re.M)]


def header(path):
    raw = pathlib.Path(path).read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8:8 + n])


# Per-step losses equal the one-device run's.
mine, theirs = losses(args.pipelined + ".out"), losses(args.reference + ".out")
assert len(mine) == steps and len(theirs) == steps, (mine, theirs)
np.testing.assert_allclose(mine, theirs, rtol=1e-5)

# The checkpoint is laid out as the one-device run's (same tensors, shapes,
# types and offsets; only the metadata's entry may differ), values within
# 1e-5 relative.
mine_header = header(args.pipelined + ".safetensors")
theirs_header = header(args.reference + ".safetensors")
mine_header.pop("__metadata__")
theirs_header.pop("__metadata__")
assert mine_header == theirs_header, (mine_header, theirs_header)
mine_ckpt = safetensors.load(args.pipelined + ".safetensors")
theirs_ckpt = safetensors.load(args.reference + ".safetensors")
for name, value in theirs_ckpt.items():
    np.testing.assert_allclose(mine_ckpt[name], value, rtol=1e-5, atol=1e-6,
                               err_msg=name)

# The dump: each stage's results, under stage<s>/, from the stage's first
# rank, and rank<r>/stage<s>/ from its others (all equal: the data-parallel
# replicas all-reduce). Stage 0 returns its kernel; stage 1 the loss, its
# kernel and its momentum.
dump = safetensors.load(args.pipelined + ".dump.safetensors")
first = {}
for rank, stage in enumerate(stages):
    first.setdefault(stage, rank)
expected = set()
for rank, stage in enumerate(stages):
    prefix = "" if first[stage] == rank else f"rank{rank}/"
    for i in range([1, 3][stage]):
        expected.add(f"{prefix}stage{stage}/result{i}")
assert set(dump) == expected, (sorted(dump), sorted(expected))
np.testing.assert_allclose(dump["stage0/result0"], mine_ckpt["fc0/kernel"])
np.testing.assert_allclose(dump["stage1/result1"], mine_ckpt["fc1/kernel"])

# The report: per rank, its stage, time in actions and the bubble, and the
# point-to-point traffic: 2 activations (stage 0) or their gradients
# (stage 1) of 5 f32 sent and received per step.
report = json.loads(pathlib.Path(args.pipelined + ".json").read_text())
assert len(report["per_rank"]) == len(stages)
for rank, r in enumerate(report["per_rank"]):
    assert r["stage"] == stages[rank], r
    assert r["busy_ms"] > 0 and r["wait_ms"] >= 0, r
    assert 0 <= r["bubble"] < 1, r
    assert r["peak_bytes"] > 0, r
    assert r["p2p_sent_bytes"] == r["p2p_received_bytes"] == 2 * 20 * steps, r

# The trace: valid JSON, one named row per rank, and each rank's slices in
# the order of its stage's schedule, every step.
trace = json.loads(pathlib.Path(args.pipelined + ".trace.json").read_text())
rows = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"]
        if e["ph"] == "M" and e["name"] == "thread_name"}
assert rows == {r: f"rank {r} (stage {s})" for r, s in enumerate(stages)}, rows
slices = collections.defaultdict(list)
for e in trace["traceEvents"]:
    if e["ph"] == "X":
        assert e["pid"] == 0 and e["ts"] >= 0 and e["dur"] >= 0, e
        slices[e["tid"]].append(e)
schedule = {
    0: ["F0", "send", "F1", "send", "recv wait", "W0", "recv wait", "W1"],
    1: ["recv wait", "F0", "B0", "send", "W0", "recv wait", "F1", "B1",
        "send", "W1"],
}
for rank, stage in enumerate(stages):
    events = slices[rank]
    assert [e["name"] for e in events] == schedule[stage] * steps, (
        rank, [e["name"] for e in events])
    for e in events:
        if e["name"][0] in "FBW":
            assert e["args"]["stage"] == stage, e
print("pipeline checks passed")

"""Checks the results of collectives.mlir on every rank against values
computed here with numpy, and optionally that two runs are bit-identical.

usage: check-collectives.py RESULTS [--same-as OTHER_RESULTS]
"""

import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
from epl import safetensors  # noqa: E402

DATA, TENSOR = 2, 2


def x_of(rank):
    i, j = np.meshgrid(np.arange(4), np.arange(8), indexing="ij")
    return (100 * rank + 8 * i + j).astype(np.float32)


def rank_of(d, t):
    return d * TENSOR + t


def expected(rank):
    d, t = divmod(rank, TENSOR)
    tensor_group = [rank_of(d, k) for k in range(TENSOR)]
    data_group = [rank_of(k, t) for k in range(DATA)]
    everyone = list(range(DATA * TENSOR))
    xs = {r: x_of(r) for r in everyone}
    out = [
        sum(xs[r] for r in tensor_group),
        np.concatenate([xs[r] for r in tensor_group], axis=1),
        np.concatenate([xs[r] for r in data_group], axis=0),
        # reduce_scatter over (data, tensor): this rank keeps columns
        # [2 * index, 2 * index + 2) where index = rank in that group.
        sum(xs[r] for r in everyone)[:, 2 * rank:2 * rank + 2],
        # all_to_all: piece `t` of every tensor-group member, stacked.
        np.concatenate([xs[r][:, 4 * t:4 * t + 4] for r in tensor_group], axis=0),
        xs[data_group[1]],
        sum(xs[r] for r in everyone) / np.float32(4),
        xs[data_group[1 - d]],
        np.array([3, 0, 7], dtype=np.int32),
    ]
    return out


def main():
    path = sys.argv[1]
    results = safetensors.load(path)
    failures = []
    for rank in range(DATA * TENSOR):
        prefix = "" if rank == 0 else f"rank{rank}/"
        for i, want in enumerate(expected(rank)):
            got = results[f"{prefix}result{i}"]
            if got.shape != want.shape or not np.array_equal(got, want):
                failures.append(f"rank {rank} result {i}: got\n{got}\nwant\n{want}")
    if "--same-as" in sys.argv:
        other = safetensors.load(sys.argv[sys.argv.index("--same-as") + 1])
        for name, value in other.items():
            if results[name].tobytes() != value.tobytes():
                failures.append(f"{name} differs between the two runs")
    if failures:
        sys.exit("\n".join(failures))
    print(f"{path}: {len(results)} tensors as expected")


if __name__ == "__main__":
    main()

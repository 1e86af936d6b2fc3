"""Writes the safetensors files errors.test feeds to epl-run: a good set of
parameters for examples/mlp.mlir and one broken file per kind of mistake."""

import pathlib
import struct
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[4] / "python"))
from epl import safetensors  # noqa: E402

out = pathlib.Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
good = {"w1": np.zeros((784, 512), np.float32),
        "b1": np.zeros(512, np.float32),
        "w2": np.zeros((512, 10), np.float32)}
safetensors.save(out / "good.safetensors", good)
safetensors.save(out / "missing-w2.safetensors",
                 {k: v for k, v in good.items() if k != "w2"})
safetensors.save(out / "wrong-shape.safetensors",
                 {**good, "w1": np.zeros((784, 256), np.float32)})
safetensors.save(out / "wrong-dtype.safetensors",
                 {**good, "b1": np.zeros(512, np.float64)})

raw = (out / "good.safetensors").read_bytes()
(out / "truncated.safetensors").write_bytes(raw[:len(raw) // 2])
(out / "not-json.safetensors").write_bytes(struct.pack("<Q", 5) + b"{oops")
(out / "huge-header.safetensors").write_bytes(struct.pack("<Q", 1 << 40) + b"{}")
(out / "tiny.safetensors").write_bytes(b"abc")
# A header nesting 100,000 arrays (a recursive JSON parser overflows the
# stack on it), and brackets inside strings, which do not nest.
deep = b"[" * 100000 + b"]" * 100000
(out / "deep-header.safetensors").write_bytes(struct.pack("<Q", len(deep)) + deep)


def raw_file(header: bytes, data: bytes) -> bytes:
    return struct.pack("<Q", len(header)) + header + data


# A shape whose byte size wraps around 2^64 to the 128 bytes it holds.
(out / "wrapping-shape.safetensors").write_bytes(raw_file(
    b'{"w1": {"dtype": "F32", "shape": [4611686018427387912, 4], '
    b'"data_offsets": [0, 128]}}', bytes(128)))
(out / "fractional-offsets.safetensors").write_bytes(raw_file(
    b'{"w1": {"dtype": "F32", "shape": [3], "data_offsets": [0.0, 12.5]}}',
    bytes(12)))
# Two entries of one name (the second written with an escape): a JSON
# parser keeps the last, the format allows one.
(out / "repeated-name.safetensors").write_bytes(raw_file(
    b'{"b1": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, '
    b'"\\u00621": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}',
    bytes(8)))
# Two tensors over the same bytes (an empty one between them changes
# nothing).
(out / "overlapping.safetensors").write_bytes(raw_file(
    b'{"w1": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}, '
    b'"e": {"dtype": "F32", "shape": [0], "data_offsets": [4, 4]}, '
    b'"b1": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}, '
    b'"names": {"dtype": "F32", "shape": [1], "data_offsets": [16, 20]}}',
    bytes(20)))

"""Writes broken copies of an artifact for errors.test: one of another
version, one for another architecture, one cut short, one whose manifest
is not JSON, one that targets cuda, and ones whose input `x` (32x784 f32)
has a shape, dtype or local shape its type does not have.

usage: patch-artifact.py ARTIFACT OUTDIR"""

import pathlib
import sys

artifact = pathlib.Path(sys.argv[1]).read_bytes()
out = pathlib.Path(sys.argv[2])


def patched(name, old, new):
    assert len(old) == len(new) and old in artifact, old
    (out / name).write_bytes(artifact.replace(old, new))


patched("old-version.so", b'"producer": "EPL-MLIR ', b'"producer": "EPL-MLIX ')
patched("not-json.so", b'"format": 1', b'"format"; 1')
patched("cuda.so", b'"target": "cpu"', b'"target":"cuda"')
arm = bytearray(artifact)
arm[18:20] = (183).to_bytes(2, "little")  # EM_AARCH64
(out / "aarch64.so").write_bytes(bytes(arm))
(out / "truncated.so").write_bytes(artifact[:4096])
x = b'"local_shape": [\n          32,\n          784\n        ],\n        "name": "x",\n        "shape": [\n          32,\n          784\n'
assert x in artifact
patched("x-local-shape.so", x, x.replace(b"[\n          32,", b"[\n          16,", 1))
patched("x-shape.so", x, x.replace(b'"shape": [\n          32,', b'"shape": [\n          16,'))
patched("x-dtype.so", b'"dtype": "F32",\n        "kind": "input"', b'"dtype": "F64",\n        "kind": "input"')

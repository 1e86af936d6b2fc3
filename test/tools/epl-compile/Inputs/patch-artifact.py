"""Writes broken copies of an artifact for errors.test: one of another
version, one for another architecture, one cut short, one whose manifest
is not JSON, one that targets cuda, ones whose input `x` (32x784 f32)
has a shape, dtype or local shape its type does not have, one damaged
after it was compiled and one without its checksum.

usage: patch-artifact.py ARTIFACT OUTDIR"""

import hashlib
import pathlib
import struct
import sys

# The trailer epl-compile appends (Artifact.h): SHA-256 of the image, magic.
MAGIC = b"EPL-SHA256"
signed = pathlib.Path(sys.argv[1]).read_bytes()
assert signed.endswith(MAGIC)
artifact = signed[:-32 - len(MAGIC)]
assert hashlib.sha256(artifact).digest() == signed[-32 - len(MAGIC):-len(MAGIC)]
out = pathlib.Path(sys.argv[2])


def sign(image):
    """The image with its checksum: each broken copy is refused for what
    it breaks, not for its checksum (damaged.so keeps the old one)."""
    return image + hashlib.sha256(image).digest() + MAGIC


def patched(name, old, new):
    assert len(old) == len(new) and old in artifact, old
    (out / name).write_bytes(sign(artifact.replace(old, new)))


def section(name):
    """(offset, size) of ELF64 section `name`."""
    shoff, = struct.unpack_from("<Q", artifact, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", artifact, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", artifact, shoff + i * shentsize)
               for i in range(shnum)]
    names = headers[shstrndx][4]
    for h in headers:
        end = artifact.index(b"\0", names + h[0])
        if artifact[names + h[0]:end] == name:
            return h[4], h[5]
    raise AssertionError(name)


patched("old-version.so", b'"producer": "EPL-MLIR ', b'"producer": "EPL-MLIX ')
patched("not-json.so", b'"format": 3', b'"format"; 3')
patched("cuda.so", b'"target": "cpu"', b'"target":"cuda"')
arm = bytearray(artifact)
arm[18:20] = (183).to_bytes(2, "little")  # EM_AARCH64
(out / "aarch64.so").write_bytes(sign(bytes(arm)))
(out / "truncated.so").write_bytes(artifact[:4096])
# One byte of code (.text) changed after compiling: run, it crashed
# (SIGILL).
text, size = section(b".text")
damaged = bytearray(signed)
damaged[text + size // 2] ^= 0xFF
(out / "damaged.so").write_bytes(bytes(damaged))
(out / "unsigned.so").write_bytes(artifact)
x = b'"local_shape": [\n          32,\n          784\n        ],\n        "name": "x",\n        "shape": [\n          32,\n          784\n'
assert x in artifact
patched("x-local-shape.so", x, x.replace(b"[\n          32,", b"[\n          16,", 1))
patched("x-shape.so", x, x.replace(b'"shape": [\n          32,', b'"shape": [\n          16,'))
patched("x-dtype.so", b'"dtype": "F32",\n        "kind": "input"', b'"dtype": "F64",\n        "kind": "input"')
# Devices no run can have (it said --ranks, which was not given, was wrong).
patched("no-devices.so", b'"devices": 1,', b'"devices": 0,')
# The loss as f64 throughout the manifest (consistent in itself): the code
# returns f32, which it would have been read as (a result dropped crashed).
loss = (b'"dtype": "F32",\n            "grad_bytes": 0,\n            "kind": "loss",\n'
        b'            "local_shape": [],\n            "name": "result0",\n'
        b'            "shape": [],\n            "shard": [],\n'
        b'            "type": "tensor<f32>"')
patched("f64-loss.so", loss, loss.replace(b"F32", b"F64").replace(b"<f32>", b"<f64>"))

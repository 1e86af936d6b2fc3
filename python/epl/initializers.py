"""epl-run's seeded initialisers, reimplemented in numpy.

epl-run fills parameters and synthetic data from `--seed` with the scheme of
lib/Runner/Initializers.cpp (documented in docs/epl-run.md); this module
reproduces it bit for bit so that tests can check a seeded run against an
independent model without exchanging files.
"""

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MASK = (1 << 64) - 1


def _fnv1a(name):
    h = 0xCBF29CE484222325
    for byte in name.encode():
        h ^= byte
        h = (h * 0x100000001B3) & _MASK
    return h


def _splitmix64(start, count):
    """Outputs 1..count of the SplitMix64 stream whose state starts at
    `start`."""
    with np.errstate(over="ignore"):
        k = np.arange(1, count + 1, dtype=np.uint64)
        z = np.uint64(start) + k * _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def _uniform(bits):
    return (bits >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def _normal(start, count):
    bits = _splitmix64(start, 2 * count)
    u1 = 1.0 - _uniform(bits[0::2])
    u2 = _uniform(bits[1::2])
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)


def initialize(name, kind, shape, dtype=np.float32, seed=0, init=None, fan_in=None,
               index_bound=None):
    """The value epl-run gives argument `name` of `kind` ("param", "state",
    "input", "label" or None) with `--seed seed`; `init` is its `epl.init`. epl-run
    reads `fan_in` (the dimensions a contraction reduces over) and
    `index_bound` (the size of what an integer input indexes) off the
    model; without them, all dimensions but the last and 10."""
    start = (seed ^ _fnv1a(name)) & _MASK
    shape = tuple(shape)
    n = int(np.prod(shape, dtype=np.int64))
    dtype = np.dtype(dtype)
    if kind in ("param", "state"):
        init = init or ("normal" if len(shape) >= 2 and kind == "param" else "zeros")
        if init == "zeros":
            return np.zeros(shape, dtype)
        if init == "ones":
            return np.ones(shape, dtype)
        if fan_in is None:
            fan_in = int(np.prod(shape[:-1], dtype=np.int64)) if len(shape) >= 2 else 1
        return (_normal(start, n) * (1.0 / np.sqrt(fan_in))).astype(dtype).reshape(shape)
    if dtype.kind in "iu":
        bound = np.uint64(index_bound or 10)
        return (_splitmix64(start, n) % bound).astype(dtype).reshape(shape)
    if kind == "label" and len(shape) == 2:
        rows, classes = shape
        labels = np.zeros(shape, dtype)
        picks = _splitmix64(start, rows) % np.uint64(classes)
        labels[np.arange(rows), picks.astype(np.int64)] = 1
        return labels
    return _normal(start, n).astype(dtype).reshape(shape)

"""Parallel strategies on the IR users really produce: the frontend's
models after `epl-opt --cse --canonicalize` (one zero fill shared by every
layer of the same output shape, folded constants) train like one device and
communicate no more than the models as written."""

import json

import numpy as np
import pytest

from conftest import BUILD, epl_run, losses, run
import epl
from epl import safetensors

STEPS = 6
RTOL = 1e-5


def megatron_block():
    """A Megatron MLP block whose two layers have the same output shape, so
    that CSE shares their zero-filled accumulators."""
    epl.init(epl.Config({"optimizer.type": "momentum", "optimizer.lr": 0.05}))
    x = epl.input("x", (16, 16))
    y = epl.label("y", (16, 8))
    h = epl.layers.Dense(16, activation="tanh", name="embed")(x)
    with epl.split(device_count=4):
        f = epl.layers.Dense(16, activation="gelu", name="mlp_in")(h)
        h = epl.layers.add(h, epl.layers.Dense(16, name="mlp_out")(f))
    logits = epl.layers.Dense(8, name="head")(h)
    return epl.to_mlir(epl.layers.softmax_cross_entropy(logits, y))


def write_models(tmp_path, text):
    written = tmp_path / "model.mlir"
    written.write_text(text)
    canonical = tmp_path / "model.cse.mlir"
    run([BUILD / "bin" / "epl-opt", written, "--cse", "--canonicalize", "-o", canonical])
    data = tmp_path / "d.safetensors"
    rng = np.random.default_rng(4)
    safetensors.save(data, {"x": rng.standard_normal((16, 16)).astype(np.float32),
                            "y": np.eye(8, dtype=np.float32)[rng.integers(0, 8, 16)]})
    return written, canonical, data


def train(model, data, ranks):
    report = model.with_suffix(f".{ranks}.json")
    out = epl_run(model, "--data", data, "--steps", STEPS, "--seed", 1, "--report", report,
                  ranks=ranks)
    return losses(out.stdout), json.loads(report.read_text())["collectives"]


def counts(collectives):
    return sorted((c["kind"], tuple(c["axes"]), c["count"]) for c in collectives)


def test_cheap_values_are_never_communicated(tmp_path):
    written, canonical, data = write_models(tmp_path, megatron_block())
    assert canonical.read_text().count("linalg.fill") < written.read_text().count("linalg.fill")
    one, _ = train(written, data, 1)
    plain, plain_comm = train(written, data, 4)
    cse, cse_comm = train(canonical, data, 4)
    # One all-reduce forward and one backward per step, and nothing else,
    # however the zeros are shared.
    assert counts(plain_comm) == [("all_reduce", ("tensor",), 2 * STEPS)]
    assert counts(cse_comm) == counts(plain_comm)
    np.testing.assert_allclose(plain, one, rtol=RTOL)
    np.testing.assert_allclose(cse, one, rtol=RTOL)

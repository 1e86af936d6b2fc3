"""Megatron's tensor parallelism falls out of sharding propagation: an MLP
block and a pre-LN transformer's attention (q/k/v column parallel, heads
split, the output projection row parallel) and MLP under `split` make one
all-reduce forward and one backward each, nothing else, and train exactly
like one device: as written by the frontend, and after
`epl-opt --cse --canonicalize` (one zero fill shared by every layer of the
same output shape, folded constants), threads and MPI."""

import json
import re

import numpy as np
import pytest

from conftest import BUILD, MPIRUN, epl_run, losses, run
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


def transformer(devices, scope, micro_batches=1, batch=4):
    """Two pre-LN blocks (LayerNorm, 4-head attention, GELU MLP): with
    `scope` "parts" the attention and the MLP are each split, with "block"
    the whole block (LayerNorms too), with "stages" each block is a
    pipeline stage."""
    # Momentum, not Adam: the key bias's true gradient is zero (softmax does
    # not see a shift of all keys), and Adam would turn each run's rounding
    # noise in it into full-size steps.
    epl.init(epl.Config({"optimizer.type": "momentum", "optimizer.lr": 0.05,
                         "pipeline.num_micro_batch": micro_batches}))
    seq, dim = 8, 32
    x = epl.input("x", (batch, seq, dim))
    y = epl.label("y", (batch * seq, 8))
    h = x
    for i in range(2):
        if scope == "stages":
            # Each block a pipeline stage (EPL's named replicate scopes).
            with epl.replicate(device_count=1, name=f"block{i}"):
                a = epl.layers.LayerNorm(name=f"ln1_{i}")(h)
                h = epl.layers.add(h, epl.layers.MultiHeadAttention(4, name=f"attn{i}")(a))
                a = epl.layers.LayerNorm(name=f"ln2_{i}")(h)
                f = epl.layers.Dense(4 * dim, activation="gelu", name=f"fc1_{i}")(a)
                h = epl.layers.add(h, epl.layers.Dense(dim, name=f"fc2_{i}")(f))
        elif scope == "block":
            with epl.split(device_count=devices):
                a = epl.layers.LayerNorm(name=f"ln1_{i}")(h)
                h = epl.layers.add(h, epl.layers.MultiHeadAttention(4, name=f"attn{i}")(a))
                a = epl.layers.LayerNorm(name=f"ln2_{i}")(h)
                f = epl.layers.Dense(4 * dim, activation="gelu", name=f"fc1_{i}")(a)
                h = epl.layers.add(h, epl.layers.Dense(dim, name=f"fc2_{i}")(f))
        else:
            a = epl.layers.LayerNorm(name=f"ln1_{i}")(h)
            with epl.split(device_count=devices):
                attended = epl.layers.MultiHeadAttention(4, name=f"attn{i}")(a)
            h = epl.layers.add(h, attended)
            a = epl.layers.LayerNorm(name=f"ln2_{i}")(h)
            with epl.split(device_count=devices):
                f = epl.layers.Dense(4 * dim, activation="gelu", name=f"fc1_{i}")(a)
                f = epl.layers.Dense(dim, name=f"fc2_{i}")(f)
            h = epl.layers.add(h, f)
    logits = epl.layers.Dense(8, name="head")(epl.layers.reshape(h, (batch * seq, dim)))
    return epl.to_mlir(epl.layers.softmax_cross_entropy(logits, y))


def write_models(tmp_path, text):
    written = tmp_path / "model.mlir"
    written.write_text(text)
    canonical = tmp_path / "model.cse.mlir"
    run([BUILD / "bin" / "epl-opt", written, "--cse", "--canonicalize", "-o", canonical])
    data = tmp_path / "d.safetensors"
    safetensors.save(data, problem(written))
    return written, canonical, data


def problem(model):
    """Seeded inputs and one-hot labels of the shapes the model takes."""
    rng = np.random.default_rng(4)
    arrays = {}
    for shape, kind, name in re.findall(
            r'tensor<([0-9x]+)xf32> \{epl.arg = "(input|label)", epl.name = "(\w+)"',
            model.read_text()):
        dims = tuple(int(d) for d in shape.split("x"))
        arrays[name] = (rng.standard_normal(dims).astype(np.float32) if kind == "input"
                        else np.eye(dims[-1], dtype=np.float32)[rng.integers(0, dims[-1], dims[0])])
    return arrays


def train(model, data, ranks, mpi=False):
    tag = f"{ranks}{'.mpi' if mpi else ''}"
    report = model.with_suffix(f".{tag}.json")
    save = model.with_suffix(f".{tag}.safetensors")
    out = epl_run(model, "--data", data, "--steps", STEPS, "--seed", 1, "--report", report,
                  "--save", save, ranks=ranks, mpi=mpi)
    return (losses(out.stdout), json.loads(report.read_text())["collectives"],
            safetensors.load(save))


def counts(collectives):
    return sorted((c["kind"], tuple(c["axes"]), c["count"]) for c in collectives)


def test_cheap_values_are_never_communicated(tmp_path):
    written, canonical, data = write_models(tmp_path, megatron_block())
    assert canonical.read_text().count("linalg.fill") < written.read_text().count("linalg.fill")
    one, _, _ = train(written, data, 1)
    plain, plain_comm, _ = train(written, data, 4)
    cse, cse_comm, _ = train(canonical, data, 4)
    # One all-reduce forward and one backward per step, and nothing else,
    # however the zeros are shared.
    assert counts(plain_comm) == [("all_reduce", ("tensor",), 2 * STEPS)]
    assert counts(cse_comm) == counts(plain_comm)
    np.testing.assert_allclose(plain, one, rtol=RTOL)
    np.testing.assert_allclose(cse, one, rtol=RTOL)


@pytest.mark.parametrize("devices, scope", [(2, "parts"), (4, "parts"), (4, "block")])
def test_transformer_under_split_is_megatron(tmp_path, devices, scope):
    """Per block and step: one all-reduce forward and one backward for the
    attention, the same for the MLP (2 + 2); the attention core runs on
    each device's heads; 1 rank = N ranks, as written and canonicalized."""
    written, canonical, data = write_models(tmp_path, transformer(devices, scope))
    program = run([BUILD / "bin" / "epl-opt", written,
                   f"--epl-parallelize=devices={devices}"]).stdout
    # Scores [batch, heads, seq, 1, seq, 1] (the unit dimensions are the
    # frontend's keep-dim maps, folded into the loops by epl-fold-reshapes):
    # 4 heads, 4 / devices on each, and no tensor of every head.
    assert f"tensor<4x{4 // devices}x8x1x8x1xf32>" in program
    assert not re.search(r"tensor<4x4x8x", program)
    one, _, one_params = train(written, data, 1)
    assert one[-1] < one[0]
    for model in (written, canonical):
        n, comm, params = train(model, data, devices)
        assert counts(comm) == [("all_reduce", ("tensor",), 2 * (2 + 2) * STEPS)], model
        np.testing.assert_allclose(n, one, rtol=RTOL)
        for name, value in one_params.items():
            np.testing.assert_allclose(params[name], value, rtol=RTOL, atol=1e-6,
                                       err_msg=name)


def test_transformer_under_split_on_mpi(tmp_path):
    if not MPIRUN:
        pytest.skip("mpirun is not installed")
    written, _, data = write_models(tmp_path, transformer(4, "parts"))
    one, _, _ = train(written, data, 1)
    four, comm, _ = train(written, data, 4, mpi=True)
    assert counts(comm) == [("all_reduce", ("tensor",), 2 * (2 + 2) * STEPS)]
    np.testing.assert_allclose(four, one, rtol=RTOL)


@pytest.mark.parametrize("strategy", ["PreferBackward", "ZeroBubbleH1"])
def test_transformer_pipeline(tmp_path, strategy):
    # Two pre-LN blocks as two stages, 4 micro-batches, written and after
    # --cse --canonicalize: the 2-rank pipeline equals the 1-rank run.
    text = transformer(1, "stages", micro_batches=4, batch=8).replace(
        '"pipeline.num_micro_batch"',
        f'"pipeline.strategy" = "{strategy}", "pipeline.num_micro_batch"')
    written, canonical, data = write_models(tmp_path, text)
    one_losses, _, one_params = train(written, data, 1)
    for model in (written, canonical):
        got_losses, _, got_params = train(model, data, 2)
        np.testing.assert_allclose(got_losses, one_losses, rtol=1e-5)
        for name, value in one_params.items():
            np.testing.assert_allclose(got_params[name], value, rtol=1e-5, atol=1e-6,
                                       err_msg=f"{model.name}: {name}")


def test_transformer_data_times_split_with_micro_batches(tmp_path):
    """4 ranks as 2 replicas x split 2, 2 micro-batches: per micro-batch the
    Megatron all-reduces over "tensor"; per step the gradient buckets and
    the micro-batches' losses over "data"; equal to 1 rank."""
    written, _, data = write_models(tmp_path, transformer(2, "parts", micro_batches=2,
                                                          batch=8))
    one, _, one_params = train(written, data, 1)
    four, comm, params = train(written, data, 4)
    np.testing.assert_allclose(four, one, rtol=RTOL)
    for name, value in one_params.items():
        np.testing.assert_allclose(params[name], value, rtol=RTOL, atol=1e-6, err_msg=name)
    assert ("all_reduce", ("tensor",), 2 * 2 * (2 + 2) * STEPS) in counts(comm)
    (data_axis,) = [c for c in comm if c["axes"] == ["data"]]
    assert data_axis["kind"] == "all_reduce"
    assert data_axis["count"] <= (5 + 2) * STEPS
    assert not [c for c in comm if c["kind"] != "all_reduce"]


def test_split_reaches_a_weight_behind_a_transpose(tmp_path):
    """A classifier multiplying by W^T (a tied embedding, torch's Linear):
    the split shards W through the transpose instead of running whole on
    every device."""
    epl.init(epl.Config({"optimizer.type": "momentum", "optimizer.lr": 0.05}))
    x = epl.input("x", (8, 16))
    y = epl.label("y", (8, 32))
    w = epl.param("W", (32, 16))
    h = epl.layers.Dense(16, activation="tanh", name="fc")(x)
    with epl.split(device_count=2):
        loss = epl.layers.softmax_cross_entropy(h @ epl.layers.transpose(w, (1, 0)), y)
    written, _, data = write_models(tmp_path, epl.to_mlir(loss))
    program = run([BUILD / "bin" / "epl-opt", written, "--epl-parallelize=devices=2"]).stdout
    assert 'epl.shard = #epl.sharding<@mesh, [["tensor"], []]>' in program
    one, _, _ = train(written, data, 1)
    two, comm, _ = train(written, data, 2)
    assert comm, "a split layer communicates"
    np.testing.assert_allclose(two, one, rtol=RTOL)

"""Gradient checkpointing (epl-rematerialize): every setting trains exactly
like the plain step (per-step losses and final parameters within 1e-5), on
one rank, data parallel on 4, data 2 x split 2 and a 2-stage pipeline
(threads and mpirun), with micro-batches, on an MLP and on a pre-LN
transformer (LayerNorm, attention, GELU), also after `epl-opt --cse
--canonicalize`. The plain run equals PyTorch in test_training and
test_megatron; here the recomputed step equals the plain one.

Memory: on 16 identical blocks, `auto` under a budget of a third of the
plain step's measured peak keeps the measured peak within 10% of the
budget. Bad input: a budget below the least any plan needs names both
numbers; "collection" with nothing marked says what to mark."""

import json
import re

import numpy as np
import pytest

from conftest import BUILD, epl_run, losses, run
import epl
from epl import safetensors

STEPS = 3
RTOL = 1e-5

SETTINGS = {
    "plain": {},
    "collection": {"gradient_checkpoint.type": "collection"},
    "auto": {"gradient_checkpoint.type": "auto"},
    "auto-half": {"gradient_checkpoint.type": "auto",
                  "gradient_checkpoint.memory_budget": 0.5},
}


def mlp(setting, kind="single", blocks=4, batch=16, width=16, micro_batches=1,
        mark_every=2):
    config = {"optimizer.type": "momentum", "optimizer.lr": 0.05,
              "pipeline.num_micro_batch": micro_batches, **SETTINGS[setting]}
    epl.init(epl.Config(config))
    x = epl.input("x", (batch, width))
    y = epl.label("y", (batch, 8))
    h = x
    for i in range(blocks):
        def block(h):
            return epl.layers.Dense(width, activation="tanh", name=f"fc{i}")(h)
        if kind == "data":
            with epl.replicate(device_count=1):
                h = block(h)
        elif kind == "data_split" and i % 2:
            with epl.split(device_count=2):
                f = epl.layers.Dense(2 * width, activation="gelu", name=f"up{i}")(h)
                h = epl.layers.add(h, epl.layers.Dense(width, name=f"down{i}")(f))
        elif kind == "stages":
            with epl.replicate(device_count=1, name=f"stage{i * 2 // blocks}"):
                h = block(h)
        else:
            h = block(h)
        if i % mark_every == mark_every - 1:
            epl.checkpoint(h)
    logits = epl.layers.Dense(8, name="head")(h)
    return epl.to_mlir(epl.layers.softmax_cross_entropy(logits, y))


def transformer(setting, blocks=2, batch=4, seq=8, dim=16):
    epl.init(epl.Config({"optimizer.type": "momentum", "optimizer.lr": 0.05,
                         **SETTINGS[setting]}))
    x = epl.input("x", (batch, seq, dim))
    y = epl.label("y", (batch * seq, 8))
    h = x
    for i in range(blocks):
        a = epl.layers.LayerNorm(name=f"ln1_{i}")(h)
        h = epl.checkpoint(epl.layers.add(h, epl.layers.MultiHeadAttention(
            4, name=f"attn{i}")(a)))
        a = epl.layers.LayerNorm(name=f"ln2_{i}")(h)
        f = epl.layers.Dense(4 * dim, activation="gelu", name=f"fc1_{i}")(a)
        h = epl.layers.add(h, epl.layers.Dense(dim, name=f"fc2_{i}")(f))
    logits = epl.layers.Dense(8, name="head")(epl.layers.reshape(h, (batch * seq, dim)))
    return epl.to_mlir(epl.layers.softmax_cross_entropy(logits, y))


def problem(shapes):
    rng = np.random.default_rng(5)
    return {name: (np.eye(8, dtype=np.float32)[rng.integers(0, 8, shape[0])]
                   if name == "y" else rng.standard_normal(shape).astype(np.float32))
            for name, shape in shapes.items()}


def train(tmp_path, text, tag, ranks=1, mpi=False, shapes=None, extra=()):
    path = tmp_path / f"{tag}.mlir"
    path.write_text(text)
    data = tmp_path / "data.safetensors"
    if not data.exists():
        safetensors.save(data, problem(shapes or {"x": (16, 16), "y": (16, 8)}))
    save = tmp_path / f"{tag}.safetensors"
    report = tmp_path / f"{tag}.json"
    out = epl_run(path, "--data", data, "--steps", STEPS, "--seed", 3, "--save", save,
                  "--report", report, *extra, ranks=ranks, mpi=mpi)
    return losses(out.stdout), safetensors.load(save), json.loads(report.read_text())


def assert_same(got, want):
    np.testing.assert_allclose(got[0], want[0], rtol=RTOL)
    assert sorted(got[1]) == sorted(want[1])
    for name, value in want[1].items():
        np.testing.assert_allclose(got[1][name], value, rtol=RTOL, atol=1e-6, err_msg=name)
    assert want[0][-1] < want[0][0]


def recomputed_ops(text):
    out = run([BUILD / "bin" / "epl-opt", "-", "--epl-autodiff", "--epl-rematerialize"],
              input=text).stdout
    return out.count("#epl.phase<recompute>")


@pytest.mark.parametrize("setting", ["collection", "auto", "auto-half"])
def test_one_rank_equals_plain(tmp_path, setting):
    text = mlp(setting)
    assert recomputed_ops(text) > 0
    assert_same(train(tmp_path, text, setting), train(tmp_path, mlp("plain"), "plain"))


@pytest.mark.parametrize("setting", ["collection", "auto"])
def test_transformer_equals_plain(tmp_path, setting):
    shapes = {"x": (4, 8, 16), "y": (32, 8)}
    text = transformer(setting)
    assert recomputed_ops(text) > 0
    assert_same(train(tmp_path, text, setting, shapes=shapes),
                train(tmp_path, transformer("plain"), "plain", shapes=shapes))


def test_after_cse_and_canonicalize(tmp_path):
    # One zero fill shared by every layer, folded constants: still exact.
    text = run([BUILD / "bin" / "epl-opt", "-", "--cse", "--canonicalize"],
               input=mlp("collection")).stdout
    assert recomputed_ops(text) > 0
    assert_same(train(tmp_path, text, "cse"), train(tmp_path, mlp("plain"), "plain"))


def test_micro_batches_equal_plain(tmp_path):
    assert_same(train(tmp_path, mlp("auto", micro_batches=4), "auto"),
                train(tmp_path, mlp("plain", micro_batches=4), "plain"))


@pytest.mark.parametrize("mpi", [False, True], ids=["threads", "mpi"])
@pytest.mark.parametrize("kind, setting", [("data", "auto"), ("data", "collection"),
                                           ("data", "auto-half"), ("data_split", "auto"),
                                           ("data_split", "collection"),
                                           ("stages", "auto"), ("stages", "collection")])
def test_parallel_equals_plain(tmp_path, kind, setting, mpi):
    ranks = 2 if kind == "stages" else 4
    micro_batches = 4 if kind == "stages" else 1
    got = train(tmp_path, mlp(setting, kind, micro_batches=micro_batches), setting,
                ranks=ranks, mpi=mpi)
    want = train(tmp_path, mlp("plain", kind, micro_batches=micro_batches), "plain")
    assert_same(got, want)


def test_auto_meets_a_third_of_the_plain_peak(tmp_path):
    # 16 identical blocks whose activations outweigh the weights.
    shapes = {"x": (1024, 64), "y": (1024, 8)}
    def peak(text, tag):
        got = train(tmp_path, text, tag, shapes=shapes, extra=("--blas",))
        return got, got[2]["per_rank"][0]["peak_bytes"]
    plain, plain_peak = peak(mlp("plain", blocks=16, batch=1024, width=64), "plain")
    budget = plain_peak // 3
    SETTINGS["budget"] = {"gradient_checkpoint.type": "auto",
                          "gradient_checkpoint.memory_budget": float(budget)}
    remat, remat_peak = peak(mlp("budget", blocks=16, batch=1024, width=64), "budget")
    assert_same(remat, plain)
    assert remat_peak <= 1.1 * budget, (remat_peak, budget, plain_peak)


def test_a_byte_budget_is_each_devices(tmp_path):
    """On 4 data-parallel ranks each holds a quarter of the batch's
    activations: a budget in bytes is what one device holds (it was
    checked against the whole batch's, so a third of a rank's peak was
    refused as below the least any plan needs)."""
    shapes = {"x": (1024, 64), "y": (1024, 8)}
    def peak(text, tag):
        got = train(tmp_path, text, tag, ranks=4, shapes=shapes, extra=("--blas",))
        return got, max(r["peak_bytes"] for r in got[2]["per_rank"])
    plain, plain_peak = peak(mlp("plain", "data", blocks=16, batch=1024, width=64), "plain")
    budget = plain_peak // 3
    SETTINGS["device-budget"] = {"gradient_checkpoint.type": "auto",
                                 "gradient_checkpoint.memory_budget": float(budget)}
    remat, remat_peak = peak(mlp("device-budget", "data", blocks=16, batch=1024, width=64),
                             "device-budget")
    assert_same(remat, plain)
    # The budget holds the activations; each rank's gradients come on top.
    gradients = remat[2]["per_rank"][0]["grad_bytes"]
    assert remat_peak <= budget + gradients, (remat_peak, budget, gradients, plain_peak)


def test_budget_below_the_least_is_an_error(tmp_path):
    SETTINGS["tiny"] = {"gradient_checkpoint.type": "auto",
                        "gradient_checkpoint.memory_budget": 0.05}
    path = tmp_path / "tiny.mlir"
    path.write_text(mlp("tiny"))
    out = epl_run(path, "--steps", 1, expect_ok=False)
    assert out.returncode == 1
    # The activations the backward reads (f32): each of the 4 blocks'
    # matmul+bias and tanh outputs (16 x 16), two 16 x 8 tensors of the
    # head's cross-entropy and two of its per-row vectors (16); the budget
    # is 5% of them, and the least any plan needs is above it.
    total = 4 * (4 * 2 * 16 * 16 + 2 * 16 * 8 + 2 * 16)
    match = re.search(r"gradient_checkpoint.memory_budget of (\d+) bytes \(0.05 of (\d+)\) "
                      r"is below the least any plan needs, (\d+) bytes of activations",
                      out.stderr)
    assert match, out.stderr
    budget, of, least = map(int, match.groups())
    assert of == total and budget == int(0.05 * total) and budget < least <= total
    # Located at the user's line that wrote the model.
    assert f"{__file__}:" in out.stderr


@pytest.mark.parametrize("setting", ["plain", "auto"])
def test_marks_nothing_reads_are_warned_about_in_python(setting):
    """epl.checkpoint marks under a config that does not read them: the
    tool's warning reaches the Python user (the run still trains)."""
    epl.init(epl.Config({"optimizer.type": "sgd", **SETTINGS[setting]}))
    x = epl.input("x", (8, 4))
    y = epl.label("y", (8, 2))
    h = epl.checkpoint(epl.layers.Dense(4, activation="tanh", name="fc")(x))
    loss = epl.layers.softmax_cross_entropy(epl.layers.Dense(2, name="head")(h), y)
    with pytest.warns(epl.EPLWarning, match="epl.checkpoint marks this tensor to keep, which "
                                            "only gradient_checkpoint.type = \"collection\" "
                                            "reads") as record:
        ran = epl.train(loss, steps=2, devices=1)
    assert len(ran.losses) == 2
    # At the user's line, without the temporary module's path.
    warning = next(w for w in record if issubclass(w.category, epl.EPLWarning))
    assert warning.filename == __file__
    assert str(warning.message).startswith("epl-run: epl-rematerialize: epl.checkpoint marks")


def test_collection_without_marks_is_an_error(tmp_path):
    path = tmp_path / "nomarks.mlir"
    path.write_text(mlp("collection", mark_every=100))
    out = epl_run(path, "--steps", 1, expect_ok=False)
    assert out.returncode == 1
    assert "no tensor is marked to keep: mark ops with epl.checkpoint" in out.stderr


def residual_mlp(setting, blocks=8, batch=256, width=64):
    epl.init(epl.Config({"optimizer.type": "sgd", "optimizer.lr": 0.01, **SETTINGS[setting]}))
    x = epl.input("x", (batch, width))
    y = epl.label("y", (batch, 8))
    h = x
    for i in range(blocks):
        f = epl.layers.Dense(width, activation="tanh", name=f"fc{i}")(h)
        h = epl.layers.add(h, f)
        if i % 3 == 2:
            epl.checkpoint(h)
    logits = epl.layers.Dense(8, name="head")(h)
    return epl.to_mlir(epl.layers.softmax_cross_entropy(logits, y))


@pytest.mark.parametrize("build, shapes", [
    (residual_mlp, {"x": (256, 64), "y": (256, 8)}),
    (lambda s: transformer(s, blocks=4, seq=32, dim=64),
     {"x": (4, 32, 64), "y": (128, 8)}),
], ids=["residual-mlp", "transformer"])
def test_residual_models_save_memory(tmp_path, build, shapes):
    # Runs are recomputed from kept points of the residual stream (cut
    # points), not from the model's input: the peak falls well below the
    # plain step's, with the same results.
    plain = train(tmp_path, build("plain"), "plain", shapes=shapes)
    for setting in ("auto", "collection"):
        got = train(tmp_path, build(setting), setting, shapes=shapes)
        assert_same(got, plain)
        peak, plain_peak = (r[2]["per_rank"][0]["peak_bytes"] for r in (got, plain))
        assert peak < 0.65 * plain_peak, (setting, peak, plain_peak)


@pytest.mark.parametrize("kind, ranks, mpi", [("single", 1, False), ("data", 4, False),
                                              ("stages", 2, True)],
                         ids=["one-rank", "data-4", "stages-2-mpi"])
def test_check_gradients(tmp_path, kind, ranks, mpi):
    # EPL's gradient_checkpoint.check_gradients: epl-run runs one step with
    # and one without checkpointing first and says they agree; training
    # then goes on as without the check.
    SETTINGS["checked"] = {"gradient_checkpoint.type": "auto",
                           "gradient_checkpoint.check_gradients": True}
    micro_batches = 4 if kind == "stages" else 1
    path = tmp_path / "checked.mlir"
    path.write_text(mlp("checked", kind, micro_batches=micro_batches))
    data = tmp_path / "data.safetensors"
    safetensors.save(data, problem({"x": (16, 16), "y": (16, 8)}))
    out = epl_run(path, "--data", data, "--steps", STEPS, "--seed", 3, ranks=ranks, mpi=mpi)
    assert out.stdout.count("gradient_checkpoint.check_gradients: the checkpointed step "
                            "equals the step keeping every activation") == 1, out.stdout
    want = train(tmp_path, mlp("auto", kind, micro_batches=micro_batches), "auto",
                 ranks=ranks, mpi=mpi)
    np.testing.assert_allclose(losses(out.stdout), want[0], rtol=RTOL)

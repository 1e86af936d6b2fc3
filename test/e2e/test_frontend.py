"""The Python frontend: EPL's API and its rules, the MLIR each layer emits,
training through the API against torch.nn, the examples, and errors that
name the user's line before any tool runs."""

import contextlib
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import pytest
import torch

from conftest import BUILD, ROOT, run
import epl
from epl import safetensors

THIS = os.path.basename(__file__)


def line_of(marker):
    """The line number in this file that contains `marker`."""
    with open(__file__) as f:
        for number, text in enumerate(f, 1):
            if marker in text and "line_of(" not in text:
                return number
    raise AssertionError(marker)


@pytest.fixture(autouse=True)
def fresh():
    epl.init()
    yield


# --- epl.Config ----------------------------------------------------------------

def test_config_accepts_epl_keys_and_defaults():
    config = epl.Config({"pipeline.num_micro_batch": 4, "communication.fp16": True,
                         "optimizer.lr": 0.1, "amp.loss_scale": "dynamic"})
    assert config["pipeline.num_micro_batch"] == 4
    assert config["communication.max_splits"] == 5          # EPL's default
    assert config["communication.gradients_reduce_method"] == "mean"


@pytest.mark.parametrize("strategy", ["PreferForward", "PreferBackward",
                                      "PreferBackwardOptimizer", "Interleaved1F1B",
                                      "ZeroBubbleH1"])
def test_config_accepts_every_pipeline_schedule(strategy):
    config = epl.Config({"pipeline.strategy": strategy, "pipeline.num_virtual_stages": 2})
    assert config["pipeline.strategy"] == strategy
    assert config["pipeline.num_virtual_stages"] == 2
    assert epl.Config()["pipeline.strategy"] == "PreferBackward"   # 1F1B, as in EPL
    assert epl.Config()["pipeline.num_virtual_stages"] == 1


def test_config_unknown_key_names_it_and_suggests():
    with pytest.raises(epl.ConfigError) as e:
        epl.Config({"pipeline.num_micro_batches": 4})  # marker: unknown-key
    message = str(e.value)
    assert 'unknown EPL config key "pipeline.num_micro_batches"' in message
    assert 'did you mean "pipeline.num_micro_batch"' in message
    assert f"{THIS}:{line_of('marker: unknown-key')}" in message


@pytest.mark.parametrize("key, value, expected", [
    ("pipeline.num_micro_batch", "4", "expects an integer"),
    ("pipeline.num_micro_batch", 0, "must be at least 1"),
    ("communication.fp16", 1, "expects a boolean"),
    ("zero.level", "v3", 'expects one of "", "v0", "v1", "v2"'),
    ("optimizer.type", "lamb", 'expects one of "sgd", "momentum", "adam", "adamw"'),
    ("optimizer.beta2", 1.0, "must be less than 1"),
    ("pipeline.strategy", "1F1B", 'expects one of "PreferForward", "PreferBackward", '
     '"PreferBackwardOptimizer", "Interleaved1F1B", "ZeroBubbleH1", got \'1F1B\''),
    ("pipeline.num_virtual_stages", 0, "must be at least 1"),
    # Past 64 bits: an MLIR error in a temporary file, at the model's line.
    ("pipeline.num_micro_batch", 2**70, "must fit in 64 bits, got 1180591620717411303424"),
    ("optimizer.lr", 10**400, "must be a finite number"),
    (1, 2, 'EPL config keys are strings such as "optimizer.lr", got 1 (int)'),
])
def test_config_wrong_values_say_what_was_expected(key, value, expected):
    with pytest.raises(epl.ConfigError, match=re.escape(expected)):
        epl.Config({key: value})


def test_config_takes_numpy_scalars_as_numbers():
    """np.float32(0.1) is a number, np.int64(2) an integer, np.bool_ a
    boolean (values computed with numpy). Before, "expects a number, got
    0.1"; a value of the wrong kind says its type."""
    import numpy as np
    config = epl.Config({"optimizer.lr": np.float32(0.5), "pipeline.num_micro_batch": np.int64(2),
                         "communication.fp16": np.bool_(True)})
    assert config["optimizer.lr"] == 0.5 and type(config["optimizer.lr"]) is float
    assert config["pipeline.num_micro_batch"] == 2 and type(config["pipeline.num_micro_batch"]) is int
    assert config["communication.fp16"] is True
    with pytest.raises(epl.ConfigError, match=re.escape("expects an integer, got 2.0 (float)")):
        epl.Config({"pipeline.num_micro_batch": np.float64(2.0)})


@pytest.mark.parametrize("key, value, feature", [
    ("amp.level", "O1", "automatic mixed precision"),
    ("auto.auto_parallel", True, "automatic parallelism"),
])
def test_config_keys_not_implemented_yet_are_errors(key, value, feature):
    # Accepted and ignored would be a silent wrong result: rejected instead.
    with pytest.raises(epl.ConfigError, match=re.escape(
            f'EPL config key "{key}" = {value!r} is not implemented yet ({feature})')):
        epl.Config({key: value})
    epl.Config({key: epl.config._parse_default(epl.config.SCHEMA[key])})


def test_compiler_rejects_keys_not_implemented_yet(tmp_path):
    model = tmp_path / "offload.mlir"
    model.write_text(
        'module attributes {epl.config = {"offload.level" = "v0"}} {\n'
        '  func.func @f(%w: tensor<4xf32> {epl.arg = "param"}) -> tensor<f32> {\n'
        '    %c = arith.constant dense<0.0> : tensor<f32>\n'
        '    return %c : tensor<f32>\n  }\n}\n')
    with pytest.raises(epl.ToolError) as e:
        epl.run_tool("epl-run", model)
    assert e.value.returncode == 1
    # offload moves parameters between host and GPU memory: the CPU target
    # rejects it, naming the key (the cuda target implements it: gpu.md).
    assert 'offload.mlir:1:1: error: epl-run: EPL config key "offload.level" ' \
        '= "v0" moves parameters and optimizer state between host and GPU ' \
        'memory: it needs the cuda target' in str(e.value)


def test_config_environment_variables(monkeypatch):
    monkeypatch.setenv("EPL_PIPELINE_NUM_MICRO_BATCH", "8")
    monkeypatch.setenv("EPL_COMMUNICATION_FP16", "true")
    config = epl.Config()
    assert config["pipeline.num_micro_batch"] == 8
    assert config["communication.fp16"] is True
    # The dictionary wins over the environment.
    assert epl.Config({"pipeline.num_micro_batch": 2})["pipeline.num_micro_batch"] == 2
    monkeypatch.setenv("EPL_PIPELINE_NUM_MICRO_BATCH", "many")
    with pytest.raises(epl.ConfigError, match="EPL_PIPELINE_NUM_MICRO_BATCH='many'"):
        epl.Config()
    # A value of the right kind that is still wrong names the variable too.
    monkeypatch.setenv("EPL_PIPELINE_NUM_MICRO_BATCH", "0")
    with pytest.raises(epl.ConfigError,
                       match="environment variable EPL_PIPELINE_NUM_MICRO_BATCH='0': .*at least 1"):
        epl.Config()


def test_a_misspelled_config_environment_variable_is_an_error(monkeypatch):
    """A variable of a config section that names no key would be ignored;
    the project's other variables (EPL_BUILD_DIR, ...) are no section's."""
    monkeypatch.setenv("EPL_BUILD_DIR", str(BUILD))
    monkeypatch.setenv("EPL_OPTIMIZER_TYP", "adam")
    with pytest.raises(epl.ConfigError, match="environment variable EPL_OPTIMIZER_TYP names "
                                              "no EPL config key; did you mean "
                                              "EPL_OPTIMIZER_TYPE?"):
        epl.Config()
    monkeypatch.delenv("EPL_OPTIMIZER_TYP")
    assert epl.Config()["optimizer.type"] == "sgd"
    # A key of EPL's io section, which EPL-MLIR does not have: not ignored.
    monkeypatch.setenv("EPL_IO_SLICING", "true")
    with pytest.raises(epl.ConfigError, match="environment variable EPL_IO_SLICING names "
                                              "no EPL config key"):
        epl.Config()


# --- strategies ----------------------------------------------------------------

@pytest.mark.parametrize("outer, inner, rule", [
    (lambda: epl.split(2), lambda: epl.replicate(1), "nothing may be nested inside a split"),
    (lambda: epl.split(2), lambda: epl.split(2), "nothing may be nested inside a split"),
    (lambda: epl.replicate(1), lambda: epl.split(2),
     "a split may not be nested inside a replicate"),
    (lambda: epl.replicate(1), lambda: epl.replicate(2),
     "a scope may not be nested inside one of its own type"),
])
def test_forbidden_nesting(outer, inner, rule):
    with pytest.raises(epl.StrategyError, match=rule) as e:
        with outer():
            with inner():  # marker: nested-scope
                pass
    assert f"{THIS}:{line_of('marker: nested-scope')}" in str(e.value)


def test_strategy_arguments_are_checked():
    with pytest.raises(epl.StrategyError, match="device_count must be a positive integer"):
        epl.split(device_count=0)
    with pytest.raises(epl.StrategyError, match="name must be a non-empty string"):
        epl.replicate(1, name="")
    with pytest.raises(epl.StrategyError, match="set_default_strategy expects"):
        epl.set_default_strategy("replicate")


def test_the_default_strategy_is_planned_and_reported():
    """set_default_strategy(split(2)) puts every op in a split(2): training
    runs on the 2 devices it asks for, as with the scope written out, and
    the plan says so (it ran on 1 device, saying "none")."""
    rng = np.random.default_rng(0)
    data = {"x": rng.standard_normal((8, 6)).astype(np.float32),
            "y": np.eye(4, dtype=np.float32)[rng.integers(0, 4, 8)]}
    results = []
    for default in (None, epl.split(2)):
        epl.init(epl.Config({"optimizer.lr": 0.1}))
        if default:
            epl.set_default_strategy(default)
        x, y = epl.input("x", (8, 6)), epl.label("y", (8, 4))
        h = epl.layers.Dense(8, activation="tanh", name="a")(x)
        loss = epl.layers.softmax_cross_entropy(epl.layers.Dense(4, name="b")(h), y)
        results.append(epl.train(loss, steps=2, data=data, seed=3))
    one, split = results
    assert split.plan.devices == 2
    assert "scopes in the model: epl.split(device_count=2)" in str(split.plan)
    assert '["tensor" = 2]' in str(split.plan)
    np.testing.assert_allclose(split.losses, one.losses, rtol=1e-5)


def test_a_default_strategy_set_before_init_is_an_error():
    """epl.init starts the model afresh, default strategy included: one set
    before it (for a model nothing was traced in) was dropped without a
    word, and the model ran data parallel instead of split. Set before any
    init, with no init after it, it is the model's."""
    epl.set_default_strategy(epl.split(2))  # marker: default-before-init
    with pytest.raises(epl.StrategyError) as e:
        epl.init(epl.Config({"optimizer.lr": 0.1}))  # marker: init-after-default
    assert (f"epl.set_default_strategy(epl.split(device_count=2)) at "
            f"{__file__}:{line_of('marker: default-before-init')} is called before "
            "epl.init()") in str(e.value)
    assert f"(at {__file__}:{line_of('marker: init-after-default')})" in str(e.value)
    epl.init()  # said once: the next init starts a model
    epl.set_default_strategy(epl.split(2))
    epl.input("x", (4, 6))
    epl.init()  # a default the model used: init starts the next one quietly
    code = ("import sys; sys.path.insert(0, 'python'); import epl\n"
            "epl.set_default_strategy(epl.split(2))\n"
            "x, y = epl.input('x', (4, 6)), epl.label('y', (4, 2))\n"
            "loss = epl.layers.softmax_cross_entropy(epl.layers.Dense(2)(x), y)\n"
            "print(epl.to_mlir(loss))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    assert "#epl.split<devices = 2>" in out and "#epl.replicate" not in out


@pytest.mark.parametrize("devices", [2, 1])
def test_colocation_without_a_split_is_warned_about(devices):
    """docs/parallelism.md: beside a model without `split`,
    cluster.colocate_split_and_replicate is warned about, on one device
    too (where it was not)."""
    epl.init(epl.Config({"cluster.colocate_split_and_replicate": True}))
    x, y = epl.input("x", (8, 6)), epl.label("y", (8, 3))
    with epl.replicate(1):
        loss = epl.layers.softmax_cross_entropy(epl.layers.Dense(3)(x), y)
    with pytest.warns(epl.EPLWarning, match='"cluster.colocate_split_and_replicate" '
                      "has no split part to share devices with"):
        epl.train(loss, steps=1, devices=devices)


def test_scopes_and_config_reach_the_mlir():
    epl.init(epl.Config({"pipeline.num_micro_batch": 2}))
    epl.set_default_strategy(epl.replicate(1))
    x = epl.input("x", (4, 8))
    y = epl.label("y", (4, 3))
    with epl.replicate(device_count=2, name="stage_0"):
        h = epl.layers.Dense(8, activation="relu", name="fc")(x)
    with epl.split(device_count=3):
        logits = epl.layers.Dense(3, name="head")(h)
    loss = epl.layers.softmax_cross_entropy(logits, y)
    text = epl.to_mlir(loss)
    assert 'epl.config = {"pipeline.num_micro_batch" = 2 : i64}' in text
    assert '#epl.replicate<devices = 2, name = "stage_0">' in text
    assert "#epl.split<devices = 3>" in text
    assert "#epl.replicate<devices = 1>" in text     # the default, outside scopes
    assert '{epl.arg = "param", epl.name = "head/kernel", epl.init = "normal"}' in text


# --- layers --------------------------------------------------------------------

def layer_models():
    def dense():
        x = epl.input("x", (4, 6))
        return epl.nn.mean(epl.layers.Dense(5, activation="tanh")(x))

    def layer_norm():
        x = epl.input("x", (4, 6))
        return epl.nn.mean(epl.layers.LayerNorm()(x))

    def embedding():
        ids = epl.input("ids", (4, 3), dtype="i64")
        return epl.nn.mean(epl.layers.Embedding(10, 6)(ids))

    def attention():
        x = epl.input("x", (2, 3, 8))
        return epl.nn.mean(epl.layers.MultiHeadAttention(2)(x))

    def activations():
        x = epl.input("x", (4, 6))
        return epl.nn.mean(epl.layers.gelu(x) + epl.layers.relu(x) + epl.layers.tanh(x))

    def cross_entropy():
        x = epl.input("x", (4, 6))
        y = epl.label("y", (4, 6))
        return epl.layers.softmax_cross_entropy(x, y)

    def residual_reshape_transpose():
        x = epl.input("x", (4, 6))
        r = epl.layers.add(x, epl.layers.Dense(6)(x))
        t = epl.layers.transpose(epl.layers.reshape(r, (2, 2, 6)), (2, 0, 1))
        return epl.nn.mean(t)

    return {f.__name__: f for f in (dense, layer_norm, embedding, attention, activations,
                                    cross_entropy, residual_reshape_transpose)}


@pytest.mark.parametrize("layer", sorted(layer_models()))
def test_each_layer_emits_mlir_that_verifies(tmp_path, layer):
    loss = layer_models()[layer]()
    path = tmp_path / "m.mlir"
    path.write_text(epl.to_mlir(loss))
    run([BUILD / "bin" / "epl-opt", path, "-o", os.devnull])
    # and that the compiler can train: gradients, then the update
    run([BUILD / "bin" / "epl-opt", path, "--epl-autodiff", "--epl-apply-optimizer",
         "-o", os.devnull])


# --- mistakes, before any tool runs ---------------------------------------------

def test_shape_mismatch_between_layers_names_layer_and_line(monkeypatch):
    monkeypatch.setenv("EPL_BUILD_DIR", "/nonexistent")   # no tool can run
    a = epl.input("a", (4, 6))
    b = epl.input("b", (4, 7))
    dense = epl.layers.Dense(3, name="shared")
    dense(a)
    with pytest.raises(epl.ShapeError) as e:
        dense(b)  # marker: reused-dense
    assert "Dense 'shared' takes inputs with 6 features, got a tensor of shape (4, 7)" \
        in str(e.value)
    assert f"{THIS}:{line_of('marker: reused-dense')}" in str(e.value)
    with pytest.raises(epl.ShapeError, match=r"shapes \(4, 6\) and \(4, 7\) do not broadcast"):
        a + b


def test_mixed_float_types_name_the_line(monkeypatch):
    """An f64 batch into f32 parameters is refused where it happens (the
    frontend has no casts; it wrote MLIR that did not parse)."""
    monkeypatch.setenv("EPL_BUILD_DIR", "/nonexistent")
    x = epl.input("x", (4, 6), dtype="f64")
    with pytest.raises(epl.DTypeError) as e:
        epl.layers.Dense(3, name="fc")(x)  # marker: mixed-dtypes
    assert "an op mixes f64 and f32 tensors" in str(e.value)
    assert f"{THIS}:{line_of('marker: mixed-dtypes')}" in str(e.value)


@pytest.mark.parametrize("devices", [1, 2])
def test_an_f64_model_trains_like_pytorch_in_float64(devices):
    """epl.init(dtype="f64") makes a model that computes in f64, layers'
    parameters too (f64 tensors had no op that would take them), and its
    losses come back with all their digits (9 were printed)."""
    rng = np.random.default_rng(4)
    x0, y0 = rng.normal(size=(8, 6)), np.eye(3)[rng.integers(0, 3, 8)]
    w0, b0 = rng.normal(size=(6, 3)) * 0.5, rng.normal(size=3) * 0.1
    config = {"optimizer.type": "momentum", "optimizer.lr": 0.1, "optimizer.momentum": 0.9}
    epl.init(epl.Config(config), dtype="f64")
    x, y = epl.input("x", (8, 6)), epl.label("y", (8, 3))
    with epl.replicate(device_count=devices):
        logits = epl.layers.Dense(3, activation="tanh", name="fc")(x)
        loss = epl.layers.softmax_cross_entropy(logits, y)
    result = epl.train(loss, steps=4, devices=devices,
                       params={"fc/kernel": w0, "fc/bias": b0}, data={"x": x0, "y": y0})
    assert result.params["fc/kernel"].dtype == np.float64

    w, b = torch.tensor(w0, requires_grad=True), torch.tensor(b0, requires_grad=True)
    opt = torch.optim.SGD([w, b], lr=0.1, momentum=0.9)
    theirs = []
    for _ in range(4):
        opt.zero_grad()
        logits = torch.tanh(torch.from_numpy(x0) @ w + b)
        l = -(torch.from_numpy(y0) * torch.log_softmax(logits, -1)).sum(-1).mean()
        theirs.append(l.item())
        l.backward()
        opt.step()
    np.testing.assert_allclose(result.losses, theirs, rtol=1e-13)
    np.testing.assert_allclose(result.params["fc/kernel"], w.detach().numpy(), rtol=1e-12)
    with pytest.raises(epl.DTypeError, match="a model computes in"):
        epl.init(dtype="f16")


def _conv(padding):
    return epl.layers.Conv2D(2, 3, padding=padding)(epl.input("x", (2, 4, 4, 1)))


@pytest.mark.parametrize("build, error, message", [
    (lambda: epl.layers.MultiHeadAttention(0), epl.ShapeError,
     "num_heads must be a positive int, got 0"),
    (lambda: epl.param("a", (3,)) @ epl.param("b", (3, 2)), epl.ShapeError,
     "matmul takes matrices (rank 2 or more)"),
    (lambda: epl.layers.Dense(2)(epl.input("x", (2, 3), "i32")), epl.DTypeError,
     "an op computing in f32 is given an integer tensor (tensor<2x3xi32>)"),
    (lambda: epl.nn.gelu(epl.input("x", (2, 3)), approximate="Tanh"), epl.EPLError,
     'approximate must be "none" or "tanh"'),
    (lambda: _conv("full"), epl.ShapeError, 'padding must be "valid", "same"'),
    (lambda: epl.nn.one_hot(epl.input("x", (2,)), 3), epl.DTypeError,
     "one_hot takes integer ids"),
    (lambda: epl.input("x", (4, -6)), epl.ShapeError,
     "the shape of input 'x' must be a sequence of positive integers, not (4, -6)"),
    (lambda: epl.input("x", (4.0, 6)), epl.ShapeError,
     "the shape of input 'x' must be a sequence of positive integers, not (4.0, 6)"),
    (lambda: epl.layers.Dense(0, name="fc")(epl.input("x", (2, 6))), epl.ShapeError,
     "the shape of param 'fc/kernel' must be a sequence of positive integers"),
    (lambda: epl.label('y"', (4,)), epl.ShapeError,
     "the label name 'y\"' must be a non-empty string of printable characters"),
    (lambda: epl.replicate(1, name='enc"oder'), epl.StrategyError,
     "replicate(name='enc\"oder'): name must be a non-empty string of printable "
     "characters without quotes or backslashes"),
    (lambda: epl.split(2, name="stage\\0"), epl.StrategyError,
     "split(name='stage\\\\0'): name must be a non-empty string of printable"),
    (lambda: epl.layers.LayerNorm(epsilon=None, name="ln"), epl.ShapeError,
     "LayerNorm 'ln': epsilon must be a finite number of at least 0, got None"),
    (lambda: epl.layers.LayerNorm(epsilon="1e-5", name="ln"), epl.ShapeError,
     "LayerNorm 'ln': epsilon must be a finite number of at least 0, got '1e-5'"),
    (lambda: epl.layers.BatchNorm(momentum=1.5, name="bn"), epl.ShapeError,
     "BatchNorm 'bn': momentum must be a finite number in [0, 1], got 1.5"),
    (lambda: epl.input("x", (4, 6)) + np.ones((4, 6), np.float32), epl.ShapeError,
     "a numpy.ndarray of shape (4, 6) is neither a tensor of the model nor a number"),
    (lambda: np.ones((4, 6)) * epl.input("x", (4, 6)), epl.ShapeError,
     "a numpy.ndarray of shape (4, 6) is neither a tensor of the model nor a number"),
    (lambda: epl.nn.layer_norm(epl.input("x", (4, 6)), epl.param("g", (6,)),
                               epl.param("b", (6,)), "1e-5"), epl.ShapeError,
     "'1e-5' (a str) is neither a tensor of the model nor a number"),
], ids=["heads", "vector-matmul", "integer-dense", "gelu", "padding", "float-ids",
       "negative-dim", "float-dim", "zero-units", "quoted-name", "quoted-scope-name",
       "backslash-stage-name", "epsilon-none", "epsilon-string", "momentum",
       "array-constant", "reflected-array-constant", "string-constant"])
def test_frontend_mistakes_are_errors_at_the_users_line(monkeypatch, build, error, message):
    """Each used to be a raw Python exception, a misleading message, MLIR
    that did not verify, or (gelu) a silent fallback to another function."""
    monkeypatch.setenv("EPL_BUILD_DIR", "/nonexistent")
    with pytest.raises(error) as e:
        build()
    assert message in str(e.value)
    assert f"(at {__file__}:" in str(e.value)


def test_compiler_errors_name_the_users_line():
    """What the compiler finds in the model (here a split that does not
    divide 5 classes) names the user's line, as the frontend's own errors
    do. Before, a line of the module epl.train had written, and deleted."""
    epl.init()
    x, y = epl.input("x", (8, 6)), epl.label("y", (8, 5))
    with epl.split(2):
        logits = epl.layers.Dense(5, name="head")(x)  # marker: split-does-not-divide
        loss = epl.layers.softmax_cross_entropy(logits, y)
    with pytest.raises(epl.ToolError) as e:
        epl.train(loss, steps=1)
    assert f"{__file__}:{line_of('marker: split-does-not-divide')}:" in str(e.value)
    assert "does not divide dimension 1 of size 5 of weight 'head/kernel'" in str(e.value)


@pytest.mark.parametrize("classes", [3, 5])
def test_seeded_ids_fit_the_embedding_and_one_hot(classes):
    """Without data, epl-run seeds integer inputs below the bound the model
    checks them against (the Embedding's and one_hot's `id < n`): a model
    with fewer than 10 classes trains (its checks pass) where the ids were
    drawn below 10 and the first step failed."""
    epl.init(epl.Config({"optimizer.type": "sgd"}))
    ids, labels = epl.input("ids", (4, 6), dtype="i32"), epl.input("y", (4,), dtype="i32")
    h = epl.layers.Embedding(classes, 8, name="emb")(ids)
    logits = epl.layers.Dense(classes, name="fc")(epl.nn.mean(h, 1))
    loss = epl.layers.softmax_cross_entropy(logits, epl.nn.one_hot(labels, classes))
    assert len(epl.train(loss, steps=2).losses) == 2


@pytest.mark.parametrize("stages,devices", [(None, 2), (("s0", "s1"), 2), (("s0", "s1"), 4)])
def test_split_of_one_device_trains_like_one_device(stages, devices):
    """split()'s default device_count is 1: one device, nothing to split,
    as replicate(1): on more devices, data parallel (in a pipeline, each
    stage's). Before, epl-plan seeded shardings on a tensor axis the mesh
    did not have (an internal error)."""
    rng = np.random.default_rng(0)
    data = {"x": rng.standard_normal((8, 6)).astype(np.float32),
            "y": np.eye(4, dtype=np.float32)[rng.integers(0, 4, 8)]}

    def build(scope):
        epl.init(epl.Config({"optimizer.type": "sgd", "optimizer.lr": 0.3}))
        x, y = epl.input("x", (8, 6)), epl.label("y", (8, 4))
        with scope(name=stages[0]) if stages else contextlib.nullcontext():
            h = epl.layers.Dense(8, name="fc1", activation="relu")(x)
        with scope(name=stages[1]) if stages else scope():
            return epl.layers.softmax_cross_entropy(epl.layers.Dense(4, name="fc2")(h), y)

    params = {"fc1/kernel": rng.standard_normal((6, 8)).astype(np.float32) * 0.3,
              "fc1/bias": np.zeros(8, np.float32),
              "fc2/kernel": rng.standard_normal((8, 4)).astype(np.float32) * 0.3,
              "fc2/bias": np.zeros(4, np.float32)}
    one = epl.train(build(epl.replicate), steps=3, params=params, data=data, devices=1)
    got = epl.train(build(epl.split), steps=3, params=params, data=data, devices=devices)
    np.testing.assert_allclose(got.losses, one.losses, rtol=1e-5)
    for name in params:
        np.testing.assert_allclose(got.params[name], one.params[name], rtol=1e-4, atol=1e-6)


def test_errors_of_the_whole_model_name_the_users_line_and_inputs():
    """What the compiler says of the whole model (micro-batches that do not
    divide the batch) names the line that trained it, and what epl-run says
    of a tensor given to train names it as given, not as the temporary
    file it was written to (gone when the error is read)."""
    epl.init(epl.Config({"optimizer.type": "momentum", "pipeline.num_micro_batch": 3}))
    x, y = epl.input("x", (8, 6)), epl.label("y", (8, 5))
    with epl.replicate(device_count=1):
        loss = epl.layers.softmax_cross_entropy(epl.layers.Dense(5, name="head")(x), y)
    with pytest.raises(epl.ToolError) as e:
        epl.train(loss, steps=1)  # marker: micro-batches-do-not-divide
    assert f"{__file__}:{line_of('marker: micro-batches-do-not-divide')}:" in str(e.value)
    assert "cannot split a batch of 8 into 3 micro-batches" in str(e.value)
    # No temporary directory of the frontend's (tempfile's tmpXXXXXXXX).
    assert os.path.join(tempfile.gettempdir(), "tmp") not in str(e.value)

    epl.init(epl.Config({"optimizer.type": "momentum"}))
    x, y = epl.input("x", (8, 6)), epl.label("y", (8, 5))
    loss = epl.layers.softmax_cross_entropy(epl.layers.Dense(5, name="head")(x), y)
    with pytest.raises(epl.ToolError) as e:
        epl.train(loss, steps=1, params={"head/kernl": np.zeros((6, 5), np.float32)})
    assert ("parameter 'head/kernel' is not in the `params` given to train "
            "(it holds: head/kernl)") in str(e.value)
    # Warnings too.
    params = {"head/kernel": np.zeros((6, 5), np.float32),
              "head/bias": np.zeros(5, np.float32), "head/kernl": np.zeros((6, 5), np.float32)}
    with pytest.warns(epl.EPLWarning, match="reads nothing of the `params` given to train "
                                            "named head/kernl"):
        epl.train(loss, steps=1, params=params)


@pytest.mark.parametrize("layer,message", [
    (lambda: epl.layers.Conv2D(4, 3, strides=0, name="c"),
     "conv2d: strides must be a positive int or a pair of positive ints, got 0"),
    (lambda: epl.layers.Conv2D(4, 3, dilation_rate=(1, 0), name="c"),
     "conv2d: dilations must be a positive int or a pair of positive ints, got (1, 0)"),
    (lambda: epl.layers.MaxPool2D(0),
     "max_pool2d: the window must be a positive int or a pair of positive ints, got 0"),
    (lambda: epl.layers.MaxPool2D(2, strides=0),
     "max_pool2d: strides must be a positive int or a pair of positive ints, got 0"),
    (lambda: epl.layers.MaxPool2D(2, strides=2, padding=2),
     "max_pool2d: padding 2 is more than half the 2x2 window"),
])
def test_window_arguments_are_checked(layer, message):
    """A zero stride or window was a ZeroDivisionError, a zero dilation an
    MLIR error, MaxPool2D(strides=0) its window's stride, and padding past
    half the window NaN losses (windows of padding alone): each is a
    ShapeError naming the argument, as torch refuses them."""
    epl.init()
    x = epl.input("x", (2, 6, 6, 2))
    with pytest.raises(epl.ShapeError, match=re.escape(message)):
        layer()(x)


@pytest.mark.parametrize("apply, message", [
    (lambda x: epl.nn.softmax(x, 2), "softmax: axis 2 is out of range for a tensor of shape "
     "(4, 3) (rank 2: axes -2 to 1)"),
    (lambda x: epl.nn.sum(x, 7), "sum: axis 7 is out of range"),
    (lambda x: epl.nn.amax(x, -5), "amax: axis -5 is out of range"),
    (lambda x: epl.nn.log_softmax(x, 3), "log_softmax: axis 3 is out of range"),
    (lambda x: epl.nn.mean(x, 2), "mean: axis 2 is out of range"),
    (lambda x: epl.nn.sum(x, 1.0), "sum: axis must be an integer, got 1.0"),
    (lambda x: epl.nn.softmax(epl.nn.mean(x), 0), "softmax: a scalar has no axis 0"),
])
def test_axes_out_of_range_are_errors(apply, message):
    """An axis past the rank wrapped modulo it: softmax over axis 2 of a
    [4, 3] tensor normalized over the batch and trained without a word, and
    mean(x, 2) was an IndexError. Axes go from -rank to rank - 1, as in
    numpy and torch; -2 is the first of two."""
    epl.init()
    x = epl.input("x", (4, 3))
    with pytest.raises(epl.ShapeError, match=re.escape(message)):
        apply(x)
    assert epl.nn.softmax(x, -2).shape == (4, 3)
    assert epl.nn.sum(x, -2).shape == (3,)


def test_a_tensor_of_an_earlier_model_is_an_error():
    """A tensor made before the last epl.init in an op of the next model:
    the module printed a name the model does not define, and epl-opt failed
    to parse a temporary file ("use of undeclared SSA value name")."""
    epl.init()
    x = epl.input("x", (4, 3))
    epl.init()
    y = epl.label("y", (4, 2))
    message = "a tensor of an earlier model (described before the last epl.init())"
    with pytest.raises(epl.ShapeError, match=re.escape(message)):
        epl.layers.Dense(2, name="d")(x)
    with pytest.raises(epl.ShapeError, match=re.escape(message)):
        epl.nn.relu(x)
    with pytest.raises(epl.ShapeError, match=re.escape(message)):
        x + y
    with pytest.raises(epl.ShapeError, match=re.escape(message)):
        y * x


def test_a_number_given_as_a_large_integer_trains():
    """optimizer.lr = 10**30 (an integer for a number key) was written as
    an i64 attribute and failed to parse; it is a number."""
    assert dict(epl.Config({"optimizer.lr": 10**30}).items()) == {"optimizer.lr": 1e30}


@pytest.mark.parametrize("arguments, message", [
    ({"steps": 1.5}, "train: steps must be an integer of at least 0, got 1.5"),
    ({"seed": -1}, "train: seed must be an integer of at least 0, got -1"),
    ({"devices": 0}, "train: devices must be an integer of at least 1, got 0"),
    ({"steps": True}, "train: steps must be an integer of at least 0, got True"),
    ({"timeout": 0}, "train: timeout must be a positive number of seconds, got 0"),
    ({"params": [np.zeros((3, 2), np.float32)]},
     "train: params must be a dict of numpy arrays by tensor name ({name: array}) "
     "or a checkpoint's path, got list"),
    ({"data": (np.zeros((4, 3), np.float32),)},
     "train: data must be a dict of numpy arrays by tensor name ({name: array}), "
     "got tuple"),
    ({"params": {"d/kernel": None}},
     "train: params['d/kernel'] is an array of object, which a safetensors file "
     "cannot hold"),
])
def test_train_arguments_are_checked_at_the_call(arguments, message):
    """Were epl-run's words about its command line ("for the --steps
    option: '1.5' value invalid for integer argument")."""
    epl.init()
    x, y = epl.input("x", (4, 3)), epl.label("y", (4, 2))
    loss = epl.layers.softmax_cross_entropy(epl.layers.Dense(2, name="d")(x), y)
    with pytest.raises(epl.EPLError, match=re.escape(message)):
        epl.train(loss, **arguments)


def test_checkpoint_of_an_argument_alone_is_said():
    """Arguments are always kept: marking one does nothing (a block boundary
    that is the model's input is fine), but a "collection" model marking
    only arguments was refused by the compiler as marking no tensor."""
    epl.init(epl.Config({"gradient_checkpoint.type": "collection"}))
    x, y = epl.input("x", (4, 3)), epl.label("y", (4, 2))
    h = epl.checkpoint(x)
    assert h is x
    loss = epl.layers.softmax_cross_entropy(epl.layers.Dense(2, name="d")(h), y)
    with pytest.raises(epl.ShapeError, match=re.escape(
            "gradient_checkpoint.type = \"collection\" keeps what epl.checkpoint marks, "
            "and it marked only the model's input 'x', which the backward keeps anyway")):
        epl.to_mlir(loss)
    # With a computed tensor marked too, the argument's mark is harmless.
    epl.init(epl.Config({"gradient_checkpoint.type": "collection"}))
    x, y = epl.input("x", (4, 3)), epl.label("y", (4, 2))
    h = epl.checkpoint(epl.layers.Dense(3, name="a")(epl.checkpoint(x)))
    loss = epl.layers.softmax_cross_entropy(epl.layers.Dense(2, name="d")(h), y)
    assert "epl.checkpoint" in epl.to_mlir(loss)


def test_an_unknown_element_type_is_an_error_at_the_argument():
    """dtype="float32" made a tensor<...xfloat32>, refused at the first op."""
    epl.init()
    with pytest.raises(epl.DTypeError, match=re.escape(
            "the input 'x' has the element type 'float32'; the model's take "
            "'f32', 'f64', 'i32', 'i64'")):
        epl.input("x", (2, 3), dtype="float32")


def test_a_script_under_any_path_trains_and_its_errors_name_it(tmp_path):
    """The location of each op is the user's file: a path with non-ASCII
    characters, a quote or a backslash is written as MLIR reads it. Before
    (JSON escapes), a script under /home/josé could not train at all."""
    folder = tmp_path / 'josé "x" \\ 模型'
    folder.mkdir()
    script = folder / "model.py"
    script.write_text(
        f"import sys; sys.path.insert(0, {str(ROOT / 'python')!r})\n"
        "import numpy as np, epl\n"
        "epl.init()\n"
        "x, y = epl.input('x', (4, 6)), epl.label('y', (4, 5))\n"
        "logits = epl.layers.Dense(5, name='head')(x)\n"
        "loss = epl.layers.softmax_cross_entropy(logits, y)\n"
        "print(epl.train(loss, steps=1).losses)\n"
        "with epl.split(2):\n"
        "    bad = epl.layers.Dense(5, name='split_head')(x)\n"
        "try:\n"
        "    epl.train(epl.layers.softmax_cross_entropy(bad, y), steps=1)\n"
        "except epl.ToolError as e:\n"
        "    print(e)\n")
    out = run([sys.executable, script], env={**os.environ, "EPL_BUILD_DIR": str(BUILD)})
    assert out.stdout.startswith("["), out.stdout
    assert f"{script}:9:" in out.stdout and "does not divide" in out.stdout, out.stdout


def test_tensorflow_spellings_and_reflected_division(monkeypatch):
    monkeypatch.setenv("EPL_BUILD_DIR", "/nonexistent")
    for padding, shape in (("SAME", (2, 4, 4, 2)), ("VALID", (2, 2, 2, 2))):
        epl.init()
        assert _conv(padding).shape == shape
    epl.init()
    assert "arith.divf" in epl.to_mlir(epl.nn.mean(1.0 / epl.input("x", (2, 3))))


def test_tool_errors_carry_the_tools_message(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text('module attributes {epl.config = {"zero.levl" = "v1"}} {\n}\n')
    with pytest.raises(epl.ToolError) as e:
        epl.run_tool("epl-opt", bad)
    assert e.value.tool == "epl-opt" and e.value.returncode == 1
    assert 'unknown EPL config key "zero.levl"; did you mean "zero.level"?' in str(e.value)


def test_gradient_accumulation_on_devices_trains_like_one_device():
    def train(devices):
        epl.init(epl.Config({"pipeline.num_micro_batch": 2}))
        x, y = epl.input("x", (8, 4)), epl.label("y", (8, 3))
        with epl.replicate(device_count=1):
            logits = epl.layers.Dense(3, name="fc")(x)
        return epl.train(epl.layers.softmax_cross_entropy(logits, y), steps=3,
                         devices=devices)
    one, four = train(1), train(4)
    np.testing.assert_allclose(four.losses, one.losses, rtol=1e-5)
    plan = str(four.plan)
    assert "ran on 4 device(s)" in plan and "2 micro-batches per device" in plan


# --- pipelines through the API --------------------------------------------------

def pipelined(stages=2, device_count=1, kind="replicate", devices=None, **config):
    """A chain of `stages` named scopes, one tanh Dense layer each, trained 3
    steps on `devices` (None: the default)."""
    epl.init(epl.Config({"pipeline.num_micro_batch": 4, **config}))
    x, y = epl.input("x", (16, 8)), epl.label("y", (16, 4))
    h = x
    scope = epl.replicate if kind == "replicate" else epl.split
    for s in range(stages):
        with scope(device_count=device_count, name=f"stage_{s}"):
            h = epl.layers.Dense(8, activation="tanh", name=f"fc{s}")(h)
    with scope(device_count=device_count, name=f"stage_{stages - 1}"):
        loss = epl.layers.softmax_cross_entropy(epl.layers.Dense(4, name="head")(h), y)
    return epl.train(loss, steps=3, devices=devices)


@pytest.mark.parametrize("setup, devices, note, mesh", [
    (dict(), 2, "2 pipeline stages (stage_0, stage_1) on 2 devices, 4 micro-batches, "
     "schedule PreferBackward (1F1B)", '["stage" = 2]'),
    (dict(stages=4, **{"pipeline.strategy": "PreferForward"}), 4,
     "4 pipeline stages (stage_0, stage_1, stage_2, stage_3) on 4 devices, "
     "4 micro-batches, schedule PreferForward (GPipe)", '["stage" = 4]'),
    (dict(**{"pipeline.strategy": "PreferBackwardOptimizer"}), 2,
     "schedule PreferBackwardOptimizer (1F1B, each stage updating as soon as its backward "
     "ends)", '["stage" = 2]'),
    (dict(stages=4, **{"pipeline.strategy": "ZeroBubbleH1"}), 4,
     "schedule ZeroBubbleH1 (zero bubble ZB-H1)", '["stage" = 4]'),
    (dict(stages=4, **{"pipeline.strategy": "Interleaved1F1B",
                       "pipeline.num_virtual_stages": 2}), 2,
     "4 pipeline stages (stage_0, stage_1, stage_2, stage_3) on 2 devices "
     "(2 per stage device), 4 micro-batches, schedule Interleaved1F1B", '["stage" = 2]'),
    (dict(device_count=2), 4, "on 4 devices (2 stage devices x 2 devices each)",
     '["stage" = 2, "data" = 2]'),
    (dict(device_count=2, kind="split"), 4, "on 4 devices (2 stage devices x 2 devices "
     "each)", '["stage" = 2, "tensor" = 2]'),
], ids=["1f1b", "gpipe-4", "1f1b-optimizer", "zb-h1-4", "interleaved-4-on-2", "data-2",
       "split-2"])
def test_pipeline_runs_on_its_devices_and_trains_like_one_device(setup, devices, note, mesh):
    """By default a pipeline runs on its stage devices x its largest scope,
    the plan says so, and the step equals the one-device step."""
    ran = pipelined(**setup)
    plan = str(ran.plan)
    assert ran.plan.devices == devices and f"ran on {devices} device(s)" in plan
    assert note in plan
    # The whole line: no location of the compiled step on it.
    assert re.search(rf"partitioned by epl-parallelize: epl\.mesh @mesh {re.escape(mesh)}$",
                     plan, re.M), plan
    one = pipelined(devices=1, **setup)
    assert "ran in sequence on one device; 4 micro-batches as gradient accumulation" \
        in str(one.plan)
    np.testing.assert_allclose(ran.losses, one.losses, rtol=1e-5)


def test_pipeline_on_a_device_count_its_stages_do_not_divide():
    with pytest.raises(epl.ToolError, match="3 devices are not divisible by 2 stage "
                                            "devices x 1 device"):
        pipelined(devices=3)


def test_an_empty_named_scope_is_no_stage():
    # epl-plan sees stages on ops only: an empty scope must not make the
    # frontend plan one more stage device than the compiler does.
    epl.init(epl.Config({"pipeline.num_micro_batch": 2}))
    x = epl.input("x", (8, 6))
    y = epl.label("y", (8, 4))
    with epl.replicate(device_count=1, name="a"):
        h = epl.layers.Dense(4, name="fc0")(x)
    with epl.replicate(device_count=1, name="unused"):
        pass
    with epl.replicate(device_count=1, name="b"):
        h = epl.layers.Dense(4, name="fc1")(h)
    result = epl.train(epl.layers.softmax_cross_entropy(h, y), steps=2)
    assert result.plan.devices == 2
    assert "2 pipeline stages (a, b)" in str(result.plan)


# --- a 2-block transformer through the API equals torch.nn ----------------------

def test_transformer_through_the_api_trains_like_pytorch():
    from test_training import (B, BLOCKS, CLASSES, D, HEADS, S, STEPS, VOCAB,
                               TorchTransformer, torch_losses, torch_optimizer,
                               transformer_params)
    params, data = transformer_params(seed=9)
    epl.init(epl.Config({"optimizer.type": "adamw", "optimizer.lr": 1e-4,
                         "optimizer.weight_decay": 0.01}))
    ids = epl.input("ids", (B, S), dtype="i64")
    y = epl.label("y", (B * S, CLASSES))
    x = epl.layers.Embedding(VOCAB, D, name="embedding")(ids) + \
        epl.param("position", (S, D))
    for l in range(BLOCKS):
        h = epl.layers.LayerNorm(name=f"b{l}.ln1")(x)
        x = epl.layers.add(x, epl.layers.MultiHeadAttention(HEADS, name=f"b{l}.attn")(h))
        h = epl.layers.LayerNorm(name=f"b{l}.ln2")(x)
        h = epl.layers.Dense(4 * D // 2, activation="gelu", name=f"b{l}.fc1")(h)
        x = epl.layers.add(x, epl.layers.Dense(D, name=f"b{l}.fc2")(h))
    x = epl.layers.LayerNorm(name="lnf")(x)
    logits = epl.layers.Dense(CLASSES, name="head")(epl.layers.reshape(x, (B * S, D)))
    loss = epl.layers.softmax_cross_entropy(logits, y)

    # The same numbers under the frontend's parameter names.
    ours = {"embedding/table": params["embedding"], "position": params["position"],
            "lnf/gamma": params["lnf.g"], "lnf/beta": params["lnf.b"],
            "head/kernel": params["head.w"], "head/bias": params["head.b"]}
    for l in range(BLOCKS):
        for ln in ("ln1", "ln2"):
            ours[f"b{l}.{ln}/gamma"] = params[f"b{l}.{ln}.g"]
            ours[f"b{l}.{ln}/beta"] = params[f"b{l}.{ln}.b"]
        for p in "qkvo":
            ours[f"b{l}.attn/w{p}"] = params[f"b{l}.w{p}"]
            ours[f"b{l}.attn/b{p}"] = params[f"b{l}.b{p}"]
        for fc in ("fc1", "fc2"):
            ours[f"b{l}.{fc}/kernel"] = params[f"b{l}.{fc}.w"]
            ours[f"b{l}.{fc}/bias"] = params[f"b{l}.{fc}.b"]
    result = epl.train(loss, steps=STEPS, params=ours, data=data)

    model = TorchTransformer(params)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
    theirs = torch_losses(model, opt, (torch.from_numpy(data["ids"]),
                                       torch.from_numpy(data["y"])))
    np.testing.assert_allclose(result.losses, theirs, rtol=1e-5)
    assert "ran on 1 device" in str(result.plan)


@pytest.mark.parametrize("devices", [1, 2])
def test_a_one_element_parameter_broadcasts_like_pytorch(devices):
    """A [1, 1] parameter times a [4, 3] one: the frontend collapses it to a
    0-d tensor (no reassociation groups), which every pass takes (the
    reshape's rule refused it); 1 device and data parallel on 2 equal
    PyTorch's SGD."""
    rng = np.random.default_rng(2)
    params = {"a": np.full((1, 1), 0.7, np.float32),
              "b": rng.standard_normal((4, 3)).astype(np.float32)}
    data = {"x": rng.standard_normal((4, 3)).astype(np.float32)}
    epl.init(epl.Config({"optimizer.lr": 0.1}))
    x = epl.input("x", (4, 3))
    a, b = epl.param("a", (1, 1)), epl.param("b", (4, 3))
    loss = epl.nn.mean(epl.nn.tanh(a * b + x))
    got = epl.train(loss, steps=3, params=params, data=data, devices=devices)

    ta, tb = (torch.tensor(params[k], requires_grad=True) for k in ("a", "b"))
    opt = torch.optim.SGD([ta, tb], lr=0.1)
    want = []
    for _ in range(3):
        opt.zero_grad()
        l = torch.tanh(ta * tb + torch.from_numpy(data["x"])).mean()
        want.append(l.item())
        l.backward()
        opt.step()
    np.testing.assert_allclose(got.losses, want, rtol=1e-5)


@pytest.mark.parametrize("devices, micro_batches", [(1, 1), (1, 2), (2, 1)])
def test_a_parameter_the_loss_does_not_read_is_not_updated(devices, micro_batches):
    """torch.optim.AdamW skips a parameter whose gradient is None; a zero
    gradient would still decay it. Trained tensors come back as
    TrainResult.params, equal to PyTorch's (the unread one unchanged)."""
    rng = np.random.default_rng(4)
    params = {"unused": np.ones((2, 2), np.float32),
              "fc/kernel": rng.standard_normal((3, 2)).astype(np.float32),
              "fc/bias": np.zeros(2, np.float32)}
    data = {"x": rng.standard_normal((4, 3)).astype(np.float32),
            "y": np.eye(2, dtype=np.float32)[[0, 1, 1, 0]]}
    epl.init(epl.Config({"optimizer.type": "adamw", "optimizer.lr": 0.1,
                         "optimizer.weight_decay": 0.5,
                         "pipeline.num_micro_batch": micro_batches}))
    x, y = epl.input("x", (4, 3)), epl.label("y", (4, 2))
    epl.param("unused", (2, 2))
    loss = epl.layers.softmax_cross_entropy(epl.layers.Dense(2, name="fc")(x), y)
    with pytest.warns(epl.EPLWarning, match="parameter 'unused' does not affect the loss"):
        got = epl.train(loss, steps=3, params=params, data=data, devices=devices)

    u = torch.tensor(params["unused"], requires_grad=True)
    w = torch.tensor(params["fc/kernel"], requires_grad=True)
    b = torch.tensor(params["fc/bias"], requires_grad=True)
    opt = torch.optim.AdamW([u, w, b], lr=0.1, weight_decay=0.5)
    for _ in range(3):
        opt.zero_grad()
        logits = torch.from_numpy(data["x"]) @ w + b
        torch.nn.functional.cross_entropy(logits, torch.tensor([0, 1, 1, 0])).backward()
        opt.step()
    np.testing.assert_array_equal(got.params["unused"], params["unused"])
    np.testing.assert_allclose(got.params["fc/kernel"], w.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(got.params["fc/bias"], b.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert {"optimizer.step", "fc/kernel.exp_avg"} <= set(got.params)


@pytest.mark.parametrize("ids, devices, stages", [
    ([0, 1, 2, 5], 1, False), ([0, -1, 2, 3], 2, False), ([0, 1, 7, 3], 2, True)],
    ids=["vocab", "negative-2-ranks", "pipeline"])
def test_embedding_ids_out_of_range_are_an_error(ids, devices, stages):
    """An id outside the vocabulary would pick an all-zero one-hot row and
    train on nothing, where torch.nn.Embedding raises: the step stops,
    naming the layer (on data-parallel ranks and in a pipeline stage too)."""
    epl.init(epl.Config({"pipeline.num_micro_batch": 2} if stages else {}))
    i, y = epl.input("ids", (4,), "i32"), epl.label("y", (4, 3))
    if stages:
        with epl.replicate(device_count=1, name="embed"):
            h = epl.layers.Embedding(5, 4, name="emb")(i)
        with epl.replicate(device_count=1, name="head"):
            loss = epl.layers.softmax_cross_entropy(epl.layers.Dense(3, name="fc")(h), y)
    else:
        loss = epl.layers.softmax_cross_entropy(
            epl.layers.Dense(3, name="fc")(epl.layers.Embedding(5, 4, name="emb")(i)), y)
    data = {"ids": np.array(ids, np.int32), "y": np.eye(3, dtype=np.float32)[[0, 1, 2, 0]]}
    with pytest.raises(epl.ToolError, match=re.escape(
            "the model's assertion failed in step 1: \"an id of Embedding 'emb' is out of range: "
            f"an id or class must be in [0, 5) at {__file__}:")):
        epl.train(loss, steps=1, data=data, devices=devices)


# --- the examples -------------------------------------------------------------

@pytest.mark.parametrize("example, expected", [
    ("data_parallel.py", ["epl.replicate(device_count=1)", "ran on 4 device(s)",
                          'epl.mesh @mesh ["data" = 4]']),
    ("pipeline.py", ["name='stage_0'", "name='stage_1'", "ran on 2 device(s)",
                     "2 pipeline stages (stage_0, stage_1) on 2 devices, 4 micro-batches, "
                     "schedule PreferBackward (1F1B)", 'epl.mesh @mesh ["stage" = 2]']),
    ("split.py", ["epl.replicate(device_count=8)", "epl.split(device_count=8)",
                  "ran on 8 device(s)", 'epl.mesh @mesh ["tensor" = 8]']),
])
def test_examples_run_and_say_what_ran(example, expected):
    out = subprocess.run([sys.executable, ROOT / "examples" / example],
                         capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, EPL_BUILD_DIR=str(BUILD)))
    assert out.returncode == 0, out.stderr
    steps = [l for l in out.stdout.splitlines() if l.startswith("step ")]
    assert len(steps) == 5
    assert float(steps[-1].split()[3]) < float(steps[0].split()[3])
    for text in expected:
        assert text in out.stdout


def test_resuming_adam_from_a_checkpoint_through_python(tmp_path):
    """Scalars (Adam's step) keep their shape [] through epl.safetensors, so
    a checkpoint loaded in Python resumes training."""
    safetensors.save(tmp_path / "s.st", {"step": np.array(3, dtype=np.int64)})
    assert safetensors.load(tmp_path / "s.st")["step"].shape == ()
    epl.init(epl.Config({"optimizer.type": "adam"}))
    x, y = epl.input("x", (8, 16)), epl.label("y", (8, 8))
    loss = epl.layers.softmax_cross_entropy(epl.layers.Dense(8, name="fc")(x), y)
    model = tmp_path / "m.mlir"
    model.write_text(epl.to_mlir(loss))
    run([BUILD / "bin" / "epl-run", model, "--steps", 2, "--save", tmp_path / "c.st"])
    checkpoint = safetensors.load(tmp_path / "c.st")
    assert checkpoint["optimizer.step"].shape == ()
    resumed = epl.train(loss, steps=2, params=checkpoint).losses
    straight = run([BUILD / "bin" / "epl-run", model, "--steps", 4]).stdout
    expected = [float(l.split()[3]) for l in straight.splitlines() if l.startswith("step ")]
    np.testing.assert_allclose(resumed, expected[2:], rtol=1e-6)


@pytest.mark.parametrize("devices", [1, 2, 4, 8])
def test_a_tied_embedding_under_split_trains_like_pytorch(devices):
    """An embedding table that is also the output projection (h @ table^T),
    all under split(2): its gradient is accumulated from both uses, each
    split its own way. On 4 and 8 devices (data x tensor) the accumulation
    keeps the data-parallel sum pending while it moves the tensor split.
    Before, 4 devices failed with "cannot reshard ... to ..., partial sum
    ["data"]"."""
    B, V, D = 4, 8, 6
    rng = np.random.default_rng(4)
    params = {"table": rng.standard_normal((V, D)).astype(np.float32),
              "fc/kernel": (rng.standard_normal((D, D)) / 2).astype(np.float32),
              "fc/bias": rng.standard_normal(D).astype(np.float32)}
    ids = rng.integers(0, V, B).astype(np.int32)
    data = {"ids": ids, "y": np.eye(V, dtype=np.float32)[rng.integers(0, V, B)]}
    epl.init(epl.Config({"optimizer.lr": 0.2}))
    table = epl.param("table", (V, D))
    with epl.split(2):
        h = epl.nn.embedding(epl.input("ids", (B,), "i32"), table)
        h = epl.layers.Dense(D, activation="tanh", name="fc")(h)
        logits = h @ epl.layers.transpose(table, (1, 0))
        loss = epl.layers.softmax_cross_entropy(logits, epl.label("y", (B, V)))
    got = epl.train(loss, steps=4, params=params, data=data, devices=devices)

    t = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    opt = torch.optim.SGD(t.values(), lr=0.2)
    want = []
    for _ in range(4):
        opt.zero_grad()
        h = torch.tanh(t["table"][torch.from_numpy(ids).long()] @ t["fc/kernel"]
                       + t["fc/bias"])
        l = -(torch.from_numpy(data["y"]) *
              torch.log_softmax(h @ t["table"].T, dim=1)).sum(1).mean()
        want.append(l.item())
        l.backward()
        opt.step()
    assert want[-1] < want[0]
    np.testing.assert_allclose(got.losses, want, rtol=1e-5)


def test_a_parameter_not_trained_is_state_micro_batches_do_not_cut():
    """Per-feature scales shared by every example: as an input, micro-batches
    cut it like the batch (an error told to make it "a parameter", which
    then trained); `epl.param(..., trainable=False)` is model state: the
    same losses with 1 and 2 micro-batches as the scales folded into the
    data, and it is saved unchanged. `dtype` makes f64 parameters."""
    rng = np.random.default_rng(3)
    data = {"x": rng.standard_normal((8, 4)).astype(np.float32),
            "y": np.eye(3, dtype=np.float32)[rng.integers(0, 3, 8)]}

    def train_with(micro, state):
        epl.init(epl.Config({"optimizer.type": "sgd", "optimizer.lr": 0.1,
                             "pipeline.num_micro_batch": micro}))
        x, y = epl.input("x", (8, 4)), epl.label("y", (8, 3))
        if state:
            x = x * epl.param("scales", (4,), init="ones", trainable=False) * 2.0
        logits = epl.layers.Dense(3, name="fc")(x)
        return epl.train(epl.layers.softmax_cross_entropy(logits, y), steps=3, seed=1,
                         data=data if state else {**data, "x": data["x"] * 2})

    folded = train_with(1, state=False)
    for micro in (1, 2):
        r = train_with(micro, state=True)
        np.testing.assert_allclose(r.losses, folded.losses, rtol=1e-6)
        np.testing.assert_array_equal(r.params["scales"], np.ones(4, np.float32))
        np.testing.assert_allclose(r.params["fc/kernel"], folded.params["fc/kernel"],
                                   rtol=1e-6)
    epl.init()
    assert epl.param("w", (2,), dtype="f64").dtype == "f64"

"""PyTorch models through torch-mlir (python/epl/torch.py): the L0 modules
exported from test/e2e/Inputs/torch/models.py train under epl-run like
PyTorch, on 1 rank and data or tensor parallel on 2 and 4.

The checked-in inputs need nothing beyond the default test environment;
scripts/export-torch-inputs.py regenerates them inside the venv of
scripts/setup-torch.sh, and test_fresh_export_* does so end to end when
that venv exists (.venv-torch/, or EPL_TORCH_VENV).

What these models need from the compiler, as torch-mlir writes them:
gathers in generic bodies (integer-label cross-entropy, w[i]), keep-dim
reduction maps, math.fpowi, argmax results nobody reads, f64 statistics,
i1 masks crossing devices, and a gather's table split over devices."""

import json
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from conftest import BUILD, ROOT, epl_run, losses, run
import epl
import epl.torch

INPUTS = ROOT / "test" / "e2e" / "Inputs" / "torch"
EPL_OPT = BUILD / "bin" / "epl-opt"
VENV = os.environ.get("EPL_TORCH_VENV", str(ROOT / ".venv-torch"))
VENV_PYTHON = os.path.join(VENV, "bin", "python")
RTOL = 1e-5
MODELS = ["mlp", "regression", "transformer", "transformer-sdpa", "gather", "conv",
          "seqfirst"]
#: The batch of each model's inputs (data parallelism splits it).
BATCH = {"mlp": 8, "regression": 8, "transformer": 4, "transformer-sdpa": 4, "gather": 2,
         "conv": 4, "seqfirst": 4}

def record(name, directory=INPUTS):
    return json.loads((directory / f"{name}.json").read_text())


def with_config(text, config):
    """`text` with its module's epl.config replaced by `config`."""
    items = ", ".join(f'"{k}" = {epl.graph._config_value(v)}' for k, v in config.items())
    new, count = re.subn(r"^module attributes \{epl\.config = \{.*\}\} \{$",
                         f"module attributes {{epl.config = {{{items}}}}} {{", text,
                         count=1, flags=re.M)
    assert count == 1, "the module has no epl.config to replace"
    return new


def train(tmp_path, name, variant="", optimizer=None, ranks=1, steps=None,
          directory=INPUTS, extra=()):
    """epl-run's per-step losses of NAME{variant}.mlir from its checked-in
    parameters and data, with `optimizer`'s recorded config."""
    rec = record(name, directory)
    text = (directory / f"{name}{variant}.mlir").read_text()
    if optimizer:
        text = with_config(text, rec["optimizers"][optimizer]["config"])
    model = tmp_path / f"{name}{variant}-{optimizer}-{ranks}.mlir"
    model.write_text(text)
    out = epl_run(model, "--params", directory / f"{name}.params.safetensors",
                  "--data", directory / f"{name}.data.safetensors",
                  "--steps", steps or rec["steps"], *extra, ranks=ranks)
    return losses(out.stdout)


# -- the checked-in inputs ---------------------------------------------------


@pytest.mark.parametrize("path", sorted(INPUTS.glob("*.mlir")), ids=lambda p: p.stem)
def test_inputs_verify_and_follow_the_contract(path):
    """Small, verified by epl-opt, every argument tagged, every compute op
    scoped, the config set."""
    text = path.read_text()
    assert len(text) < 100_000, f"{path.name} is {len(text)} bytes"
    run([EPL_OPT, path, "-o", os.devnull])
    signature = re.search(r"func\.func @model\((.*)\) -> tensor<f32>", text).group(1)
    args = re.findall(r"%arg\d+: tensor<[^>]*> \{([^}]*)\}", signature)
    assert args and all(re.fullmatch(r'epl\.arg = "(param|input|label)", epl\.name = "[^"]+"',
                                     a) for a in args), signature
    assert "epl.config = {" in text
    ops = re.findall(r"= (linalg\.(?!yield|index)[a-z_]+)[^\n]*", text)
    unscoped = [op for op in re.findall(r"^    %\S+ = (linalg\.[a-z_]+.*)$", text, re.M)
                if "epl.scope" not in op]
    assert ops and not unscoped, unscoped[:3]


@pytest.mark.parametrize("name", MODELS)
def test_forward_equals_pytorch(name):
    """The exported forward (no training step) computes PyTorch's loss."""
    rec = record(name)
    out = epl_run(INPUTS / f"{name}.mlir", "--params", INPUTS / f"{name}.params.safetensors",
                  "--data", INPUTS / f"{name}.data.safetensors", "--no-train")
    first = next(iter(rec["optimizers"].values()))["losses"][0]
    np.testing.assert_allclose(losses(out.stdout), [first], rtol=RTOL)


def test_gather_record_is_the_hand_computed_one():
    """sum_k w[i[k]] with w = [1, 2, 3, 4], i = [1, 3]: 6, then 5.98 after
    one SGD step at lr 0.01."""
    sgd = record("gather")["optimizers"]["sgd"]
    assert sgd["config"]["optimizer.lr"] == 0.01
    np.testing.assert_allclose(sgd["losses"][:2], [6.0, 5.98], rtol=1e-6)


# -- (i) training on one rank equals PyTorch -----------------------------------


def _optimizer_cases():
    return [pytest.param(name, optimizer, id=f"{name}-{optimizer}")
            for name in MODELS for optimizer in record(name)["optimizers"]]


@pytest.mark.parametrize("name,optimizer", _optimizer_cases())
def test_training_equals_pytorch(tmp_path, name, optimizer):
    """Per-step losses of epl-run on 1 rank equal torch.optim's (recorded
    when exported) within 1e-5 relative."""
    expected = record(name)["optimizers"][optimizer]["losses"]
    got = train(tmp_path, name, optimizer=optimizer)
    np.testing.assert_allclose(got, expected, rtol=RTOL)


# -- (ii) N ranks equal one ----------------------------------------------------


def _parallel_cases():
    return [pytest.param(name, ranks, id=f"{name}-{ranks}")
            for name in MODELS for ranks in (2, 4) if BATCH[name] % ranks == 0]


@pytest.mark.parametrize("name,ranks", _parallel_cases())
def test_data_parallel_equals_one_rank(tmp_path, name, ranks):
    """Every op replicate(1): N ranks split the batch and train like one
    rank, and like PyTorch."""
    one = train(tmp_path, name, optimizer="momentum", ranks=1)
    many = train(tmp_path, name, optimizer="momentum", ranks=ranks)
    np.testing.assert_allclose(many, one, rtol=RTOL)
    np.testing.assert_allclose(one, record(name)["optimizers"]["momentum"]["losses"],
                               rtol=RTOL)


def two_stages(text, first_of_second):
    """`text` with every scoped op before the line that defines
    `first_of_second` on stage s0, the rest on s1."""
    lines = text.split("\n")
    cut = next(i for i, line in enumerate(lines) if f"{first_of_second} = " in line)
    scope = "#epl.replicate<devices = 1>"
    return "\n".join(line.replace(scope, f'#epl.replicate<devices = 1, name = "s{int(i >= cut)}">')
                     for i, line in enumerate(lines))


@pytest.mark.parametrize("name,ranks,pipeline", [
    ("mlp", 1, False), ("mlp", 2, False), ("mlp", 2, True), ("gather", 1, False)])
def test_micro_batches_equal_pytorch(tmp_path, name, ranks, pipeline):
    """2 micro-batches (pipeline.num_micro_batch) of torch-mlir's
    integer-label cross-entropy and gather: each micro-batch reads its own
    examples' scores at its own positions and divides by the whole batch's
    count of labels (computed before the micro-batches). The steps equal
    PyTorch's on the whole batch: gradient accumulation on 1 rank, with
    data parallelism, and as a 2-stage pipeline (mlp's last layer and loss
    on the second stage)."""
    rec = record(name)
    config = dict(rec["optimizers"]["momentum"]["config"], **{"pipeline.num_micro_batch": 2})
    text = with_config((INPUTS / f"{name}.mlir").read_text(), config)
    if pipeline:
        text = two_stages(text, "%transposed_4")
    model = tmp_path / f"{name}-micro.mlir"
    model.write_text(text)
    out = epl_run(model, "--params", INPUTS / f"{name}.params.safetensors",
                  "--data", INPUTS / f"{name}.data.safetensors", "--steps", rec["steps"],
                  ranks=ranks)
    if pipeline:
        assert "(stage 1)" in out.stdout, out.stdout
    np.testing.assert_allclose(losses(out.stdout), rec["optimizers"]["momentum"]["losses"],
                               rtol=RTOL)


@pytest.mark.parametrize("variant,ranks", [("", 1), ("", 2), ("-pipeline", 2),
                                           ("-pipeline", 4)])
def test_seq_first_layers_take_micro_batches(tmp_path, variant, ranks):
    """nn.TransformerEncoderLayer and nn.GRU in their default seq-first
    layout, exported with batch_dims={"x": 1}: their linear layers merge
    the batch below the sequence ((L * B, E)), and nn.MultiheadAttention
    merges it above the heads ((B * H, L, d)). 2 micro-batches train as
    PyTorch on the whole batch: gradient accumulation on 1 rank, with data
    parallelism on 2, and as a 2-stage pipeline (the encoder layer, then
    the GRU and the loss) on 2 ranks and on 4 (each stage on 2)."""
    rec = record("seqfirst")
    config = dict(rec["optimizers"]["momentum"]["config"], **{"pipeline.num_micro_batch": 2})
    model = tmp_path / f"seqfirst{variant}-micro.mlir"
    model.write_text(with_config((INPUTS / f"seqfirst{variant}.mlir").read_text(), config))
    out = epl_run(model, "--params", INPUTS / "seqfirst.params.safetensors",
                  "--data", INPUTS / "seqfirst.data.safetensors", "--steps", rec["steps"],
                  ranks=ranks)
    if variant:
        assert "(stage 1)" in out.stdout, out.stdout
    np.testing.assert_allclose(losses(out.stdout), rec["optimizers"]["momentum"]["losses"],
                               rtol=RTOL)


@pytest.mark.parametrize("ranks", [2, 4])
def test_seq_first_data_parallelism_splits_the_batch(tmp_path, ranks):
    """Data parallel, the seq-first encoder layer and GRU keep each
    device's share of the batch through their (L * B, E) linear layers and
    (B * H, L, d) attention (epl-fold-reshapes): no float activation is
    gathered (23 were on 2 ranks, every device computing the whole batch),
    and they train as PyTorch."""
    rec = record("seqfirst")
    program = run([EPL_OPT, INPUTS / "seqfirst.mlir",
                   f"--epl-parallelize=devices={ranks}"]).stdout
    gathers = [l for l in program.splitlines() if "epl.all_gather" in l and "f32>" in l]
    assert not gathers, gathers
    out = epl_run(INPUTS / "seqfirst.mlir", "--params", INPUTS / "seqfirst.params.safetensors",
                  "--data", INPUTS / "seqfirst.data.safetensors", "--steps", rec["steps"],
                  ranks=ranks)
    np.testing.assert_allclose(losses(out.stdout), rec["optimizers"]["sgd"]["losses"],
                               rtol=RTOL)


@pytest.mark.parametrize("ranks", [1, 2])
def test_micro_batches_count_the_whole_batchs_labels(tmp_path, ranks):
    """Cross-entropy's mean is over the labels not ignored (-100): with two
    ignored in the first micro-batch and none in the second, each
    micro-batch divides by the whole batch's count (6), not its own (2 or
    4), and the steps equal the whole batch's."""
    rec = record("mlp")
    data = epl.safetensors.load(INPUTS / "mlp.data.safetensors")
    data["y"] = data["y"].copy()
    data["y"][[0, 2]] = -100
    ignored = tmp_path / "ignored.safetensors"
    epl.safetensors.save(ignored, data)
    config = rec["optimizers"]["momentum"]["config"]
    runs = []
    for micro_batches in (1, 2):
        model = tmp_path / f"mlp-{micro_batches}.mlir"
        model.write_text(with_config((INPUTS / "mlp.mlir").read_text(),
                                     dict(config, **{"pipeline.num_micro_batch": micro_batches})))
        out = epl_run(model, "--params", INPUTS / "mlp.params.safetensors", "--data", ignored,
                      "--steps", 4, ranks=ranks)
        runs.append(losses(out.stdout))
    np.testing.assert_allclose(runs[1], runs[0], rtol=RTOL)
    assert not np.allclose(runs[0], rec["optimizers"]["momentum"]["losses"][:4], rtol=1e-3), \
        "the ignored labels change the loss"


@pytest.mark.parametrize("name,ranks", [
    ("mlp", 2), ("mlp", 4), ("regression", 2), ("regression", 4), ("transformer", 2),
    ("transformer", 4)])
def test_split_classifier_equals_one_rank(tmp_path, name, ranks):
    """The last layer (mlp's and regression's fc3, transformer's head) in split(2), the rest
    replicate(1): on 2 ranks tensor parallel, on 4 also data parallel; the
    classifier's weight is really split and the run trains like one rank."""
    report = tmp_path / "report.json"
    split = train(tmp_path, name, "-split", optimizer="momentum", ranks=ranks,
                  extra=("--report", report))
    one = train(tmp_path, name, optimizer="momentum", ranks=1)
    np.testing.assert_allclose(split, one, rtol=RTOL)
    np.testing.assert_allclose(one, record(name)["optimizers"]["momentum"]["losses"],
                               rtol=RTOL)
    params = epl.safetensors.load(INPUTS / f"{name}.params.safetensors")
    total = sum(v.nbytes for v in params.values())
    rank0 = json.loads(report.read_text())["per_rank"][0]
    assert rank0["param_bytes"] < total, "split(2) on the classifier split no parameter"
    if ranks == 2:
        # Tensor parallel only: the collectives the split layer needs, per
        # step. Its output features are split: the input gradient is a
        # partial sum (one all-reduce) and, for the squared error, so is
        # the loss; cross-entropy's max and sum over the split classes
        # reduce in the forward (and in the backward, the sum for the
        # max's gradient and the count of tied maxima that share it; the
        # backward reads the forward's max, which it reduced again while
        # a reshape hid it, before epl-fold-reshapes) and the label gather
        # reads the log-probabilities whole (one all-gather).
        counts = {kind: c["count_per_step"] for kind, c in rank0["communication"].items()}
        assert counts == EXPECTED_SPLIT_COLLECTIVES[name], counts


EXPECTED_SPLIT_COLLECTIVES = {"mlp": {"all_reduce": 5, "all_gather": 1},
                              "regression": {"all_reduce": 2},
                              "transformer": {"all_reduce": 2}}


# -- the importer's pure-Python parts --------------------------------------------


def test_scope_of_module_patterns():
    strategy = epl.torch._strategies({"blocks.*.mlp": "split(2)", "fc3": epl.split(4),
                                      "*": "replicate(1)"})
    assert epl.torch.scope_of("fc3", strategy).attribute == "#epl.split<devices = 4>"
    assert epl.torch.scope_of("fc3.act", strategy).attribute == "#epl.split<devices = 4>"
    assert epl.torch.scope_of("blocks.1.mlp.0", strategy).device_count == 2
    assert epl.torch.scope_of("fc30", strategy).kind == "replicate"
    assert epl.torch.scope_of("", strategy).kind == "replicate"
    assert epl.torch.scope_of("fc1", epl.torch._strategies({"fc3": "split(2)"})) is None
    s = epl.torch.parse_strategy('replicate(device_count=2, name="stage_0")')
    assert s.attribute == '#epl.replicate<devices = 2, name = "stage_0">'
    with pytest.raises(epl.StrategyError, match="not a strategy"):
        epl.torch.parse_strategy("shard(2)")


def test_epl_does_not_import_torch_mlir():
    """`import epl` works without torch 2 and torch-mlir: the importer is
    only loaded on request, and itself imports torch lazily."""
    code = ("import sys; sys.path.insert(0, 'python'); import epl, epl.torch; "
            "assert 'torch' not in sys.modules and 'torch_mlir' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


# -- (iii) fresh exports, when the torch-mlir venv exists ------------------------


needs_venv = pytest.mark.skipif(
    not os.path.exists(VENV_PYTHON),
    reason=f"no torch-mlir venv at {VENV} (scripts/setup-torch.sh makes one; "
           "EPL_TORCH_VENV points elsewhere)")


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    out = tmp_path_factory.mktemp("fresh")
    run([VENV_PYTHON, ROOT / "scripts" / "export-torch-inputs.py", "--out", out])
    return out


@needs_venv
@pytest.mark.parametrize("name", MODELS)
def test_fresh_export_trains_like_pytorch(tmp_path, fresh, name):
    """Exports the models now, with the venv's torch and torch-mlir, and
    trains them: epl-run's losses equal the PyTorch losses recorded by the
    same export (SGD)."""
    expected = record(name, fresh)["optimizers"]["sgd"]["losses"]
    got = train(tmp_path, name, optimizer="sgd", directory=fresh)
    np.testing.assert_allclose(got, expected, rtol=RTOL)


@needs_venv
def test_fresh_export_command_line(tmp_path):
    """`python -m epl.torch FILE -o PREFIX --strategy ... --torch-losses N`
    writes a module epl-run runs, with the strategy asked for."""
    script = tmp_path / "model.py"
    script.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(INPUTS)!r})\n"
        "import models\n"
        "def epl_model():\n"
        "    spec = models.mlp()\n"
        "    spec['config'] = {'optimizer.type': 'sgd', 'optimizer.lr': 0.1}\n"
        "    return spec\n")
    prefix = tmp_path / "out" / "mlp"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    run([VENV_PYTHON, "-m", "epl.torch", script, "-o", prefix, "--strategy", "fc3=split(2)",
         "--strategy", "*=replicate(1)", "--torch-losses", "3"], env=env)
    text = prefix.with_suffix(".mlir").read_text()
    assert "#epl.split<devices = 2>" in text and "#epl.replicate<devices = 1>" in text
    rec = json.loads((tmp_path / "out" / "mlp.losses.json").read_text())
    np.testing.assert_allclose(rec["losses"][0],
                               record("mlp")["optimizers"]["sgd"]["losses"][0], rtol=RTOL)
    out = epl_run(prefix.with_suffix(".mlir"), "--params",
                  f"{prefix}.params.safetensors", "--data", f"{prefix}.data.safetensors",
                  "--no-train")
    np.testing.assert_allclose(losses(out.stdout), rec["losses"][:1], rtol=RTOL)


def test_seeded_values_follow_the_model(tmp_path):
    """Without --params/--data, epl-run draws a torch (out, in) weight with
    fan-in `in` (the dimension its matmul reduces over, behind the
    transpose) and class ids below the number of classes: the seeded run
    trains instead of failing torch-mlir's bounds assertion."""
    from epl import initializers
    save = tmp_path / "seeded.safetensors"
    out = epl_run(INPUTS / "mlp.mlir", "--steps", 0, "--save", save, "--seed", 3)
    params = epl.safetensors.load(save)
    for name, fan_in in (("fc1.weight", 12), ("fc3.weight", 16)):
        expected = initializers.initialize(name, "param", params[name].shape, seed=3,
                                           fan_in=fan_in)
        np.testing.assert_array_equal(params[name], expected)
    out = epl_run(INPUTS / "mlp.mlir", "--steps", 30, "--seed", 3)
    got = losses(out.stdout)
    assert got[-1] < 0.5 * got[0], got
    # An embedding's ids behind torch-mlir's wrap of negative indices,
    # select(i < 0, i + n, i), are below the table's n rows too.
    for seed in range(4):
        epl_run(INPUTS / "gather.mlir", "--steps", 1, "--seed", seed)



@pytest.mark.parametrize("ranks", [1, 2])
def test_a_failed_model_assertion_is_one_error_line(tmp_path, ranks):
    """A class id out of range trips torch-mlir's bounds check in the
    cross-entropy gather: the run ends with the model's message, naming the
    rank, exit 1 (no abort, no stack dump)."""
    data = epl.safetensors.load(INPUTS / "mlp.data.safetensors")
    labels = next(k for k, v in data.items() if v.dtype == np.int64)
    data[labels] = data[labels].copy()
    data[labels][3] = 8  # 8 classes: 0..7
    bad = tmp_path / "bad.safetensors"
    epl.safetensors.save(bad, data)
    out = epl_run(INPUTS / "mlp.mlir", "--params", INPUTS / "mlp.params.safetensors",
                  "--data", bad, "--steps", 2, ranks=ranks, expect_ok=False)
    assert out.returncode == 1, out.stderr
    assert re.search(r'epl-run: rank \d: the model\'s assertion failed in step 1: '
                     r'"index must be smaller than dim size at .*mlp.mlir:\d+:\d+"',
                     out.stderr), out.stderr
    assert "Stack dump" not in out.stderr


@pytest.mark.parametrize("ranks", [2, 4])
def test_split_mlp_block_is_megatron(tmp_path, ranks):
    """The transformer's MLP block (`block.mlp*`, two torch Linears behind
    transposes) in split(2): the first column parallel, the second row
    parallel, so exactly one all-reduce forward and one backward per step
    (on 4 ranks also data parallel); it trains like one rank and PyTorch."""
    report = tmp_path / "report.json"
    split = train(tmp_path, "transformer", "-mlp-split", optimizer="momentum", ranks=ranks,
                  extra=("--report", report))
    one = train(tmp_path, "transformer", optimizer="momentum", ranks=1)
    np.testing.assert_allclose(split, one, rtol=RTOL)
    np.testing.assert_allclose(one, record("transformer")["optimizers"]["momentum"]["losses"],
                               rtol=RTOL)
    program = run([EPL_OPT, INPUTS / "transformer-mlp-split.mlir",
                   f"--epl-parallelize=devices={ranks}"]).stdout
    tensor_reduces = [l for l in program.splitlines()
                      if "epl.all_reduce" in l and 'over ["tensor"]' in l]
    assert len(tensor_reduces) == 2, tensor_reduces
    assert "phase<forward>" in tensor_reduces[0]
    assert "phase<backward_input>" in tensor_reduces[1]


def test_export_takes_the_dialects_the_tools_register():
    """epl.torch's list of the dialects the tools parse is epl-opt's."""
    out = run([EPL_OPT, "--show-dialects"]).stdout
    registered = set(out.split(":", 1)[1].strip().split(","))
    assert epl.torch._DIALECTS == registered, out


@pytest.mark.parametrize("name", ["mlp", "transformer"])
def test_export_checks_the_forward_against_pytorchs_loss(name):
    """export's last check, without torch-mlir: epl-run's forward of the
    exported module (a recorded export, its step-1 loss PyTorch's) passes
    at check_rtol; a loss PyTorch computed 1e-5 otherwise (torch-mlir's
    gelu-tanh constant) is an ExportError giving both."""
    from epl import safetensors
    exported = epl.torch.Exported(
        (INPUTS / f"{name}.mlir").read_text(),
        safetensors.load(INPUTS / f"{name}.params.safetensors"),
        safetensors.load(INPUTS / f"{name}.data.safetensors"), {})
    pytorch = record(name)["optimizers"]["sgd"]["losses"][0]
    epl.torch._check_forward(exported, pytorch, 2e-6)
    with pytest.raises(epl.torch.ExportError,
                       match=r"the exported forward's loss is \S+ where PyTorch's is "
                             # (1e-5 and the forward's own rounding, which
                             # depends on the CPU's vector width.)
                             r"\S+ \(relative difference (9\.\de-06|1\.\de-05), over "
                             r"check_rtol=2e-06\)"):
        epl.torch._check_forward(exported, pytorch * (1 + 1e-5), 2e-6)


@pytest.mark.parametrize("batch_dims, message", [
    ({"z": 1}, "batch_dims names 'z', which is no input or label (they are: x, y)"),
    ({"x": 3}, "batch_dims['x'] is 3: the batch must be one of the 3 dimensions of 'x' "
               "(shape (6, 4, 2))"),
    ({"y": True}, "batch_dims['y'] is True: the batch must be one of the 1 dimensions"),
])
def test_batch_dims_name_an_input_and_one_of_its_dimensions(batch_dims, message):
    """Said before torch-mlir runs (Debian's torch suffices)."""
    import torch
    with pytest.raises(epl.torch.ExportError, match=re.escape(message)):
        epl.torch.export(torch.nn.Linear(2, 1), {"x": torch.zeros(6, 4, 2)},
                         {"y": torch.zeros(4)}, batch_dims=batch_dims)


def test_export_without_torch_mlir_is_one_error_line(tmp_path):
    """`python -m epl.torch` in a Python without torch-mlir (the default
    test environment) says so and where to get it, exit 1; no traceback."""
    if subprocess.run([sys.executable, "-c", "import torch_mlir"],
                      capture_output=True).returncode == 0:
        pytest.skip("this Python has torch-mlir")
    out = subprocess.run([sys.executable, "-m", "epl.torch", f"{INPUTS / 'models.py'}:mlp",
                          "-o", tmp_path / "mlp"], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "python")})
    assert out.returncode == 1, out.stderr
    assert out.stderr.startswith("epl.torch: error: torch-mlir is not importable in this "
                                 "Python"), out.stderr
    assert "scripts/setup-torch.sh" in out.stderr and "Traceback" not in out.stderr


#: Models export() must refuse, each named by its case; the script prints
#: {case: the error} as JSON (one torch start for all).
REFUSED = '''
import json, sys
import torch, torch.nn as nn, torch.nn.functional as F
import epl.torch

class Emb(nn.Module):
    def __init__(self, **kw):
        super().__init__(); self.emb = nn.Embedding(10, 6, **kw); self.fc = nn.Linear(6, 3)
    def forward(self, i, y):
        return F.cross_entropy(self.fc(self.emb(i).mean(1)), y)

class FEmb(Emb):
    def forward(self, i, y):
        return F.cross_entropy(self.fc(F.embedding(i, self.emb.weight, padding_idx=3).mean(1)), y)

class Act(nn.Module):
    def __init__(self, f, dtype=torch.float32):
        super().__init__(); self.f = f; self.fc = nn.Linear(6, 3).to(dtype)
        self.drop = nn.Dropout(0.1)
    def forward(self, x, y):
        return F.mse_loss(self.f(self, self.fc(x)), y)

class Masked(nn.Module):
    def __init__(self):
        super().__init__(); self.fc = nn.Linear(6, 3)
    def forward(self, x, m, y):
        return F.mse_loss(self.fc(x) * m[:, None], y)

def no_grad(m, h):
    with torch.no_grad():
        t = h * 2
    return h - t

class Reverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, h):
        return h.view_as(h)
    @staticmethod
    def backward(ctx, g):
        return -g

class Ema(nn.Module):
    """Normalizes by a running scale it updates in forward (a buffer)."""
    def __init__(self):
        super().__init__(); self.fc = nn.Linear(6, 3); self.register_buffer("scale", torch.ones(3))
    def forward(self, x, y):
        self.scale.mul_(0.5).add_(0.5 * x.abs().mean(0)[:3])
        return F.mse_loss(self.fc(x) / self.scale, y)

class Writes(nn.Module):
    """A forward that writes in place, or stops a gradient inside autocast."""
    def __init__(self, mode):
        super().__init__(); self.fc = nn.Linear(6, 3); self.mode = mode
        self.register_buffer("count", torch.zeros(1))
    def forward(self, x, y):
        h = self.fc(x)
        if self.mode == "clamp":
            with torch.no_grad():
                self.fc.weight.clamp_(-0.1, 0.1)
        if self.mode == "input":
            x.mul_(2)
        if self.mode == "reassign":
            self.count = self.count + 1
        if self.mode == "autocast":
            with torch.autocast("cpu", enabled=False):
                h = h * h.detach()
        return F.mse_loss(h, y)

class Distill(nn.Module):
    """A student regressing onto a teacher through .detach(): trained or
    frozen (requires_grad=False), when the stop changes nothing."""
    def __init__(self, frozen):
        super().__init__(); self.fc = nn.Linear(6, 3); self.teacher = nn.Linear(6, 3)
        self.teacher.requires_grad_(not frozen)
    def forward(self, x, y):
        return F.mse_loss(self.fc(x.detach()), self.teacher(x).detach()) + F.mse_loss(self.fc(x), y)

class CausalMask(nn.Module):
    """An encoder given a float causal mask without is_causal=True."""
    def __init__(self):
        super().__init__(); self.fc = nn.Linear(6, 3)
        self.enc = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(6, 2, 8, dropout=0.0, batch_first=True), 1,
            enable_nested_tensor=False)
    def forward(self, x, y):
        mask = nn.Transformer.generate_square_subsequent_mask(x.shape[1])
        return F.mse_loss(self.fc(self.enc(x, mask=mask)), y)

i, y = torch.randint(0, 10, (8, 5)), torch.randint(0, 3, (8,))
x, yr = torch.randn(4, 6), torch.randn(4, 3)
cases = {
    "padding_idx": (Emb(padding_idx=0), {"i": i}, {"y": y}),
    "functional-padding_idx": (FEmb(), {"i": i}, {"y": y}),
    "max_norm": (Emb(max_norm=1.0), {"i": i}, {"y": y}),
    "scale_grad_by_freq": (Emb(scale_grad_by_freq=True), {"i": i}, {"y": y}),
    "sparse": (Emb(sparse=True), {"i": i}, {"y": y}),
    "dropout": (Act(lambda m, h: m.drop(h)), {"x": x}, {"y": yr}),
    "dropout-eval": (Act(lambda m, h: m.drop(h)).eval(), {"x": x}, {"y": yr}),
    "cumsum": (Act(lambda m, h: torch.cumsum(h, 1)), {"x": x}, {"y": yr}),
    "rand": (Act(lambda m, h: h + torch.rand_like(h)), {"x": x}, {"y": yr}),
    "bf16": (Act(lambda m, h: h, torch.bfloat16), {"x": x.bfloat16()}, {"y": yr.bfloat16()}),
    "bool-input": (Masked(), {"x": x, "m": torch.rand(4) > 0.5}, {"y": yr}),
    "uint8-input": (Masked(), {"x": x, "m": torch.ones(4, dtype=torch.uint8)}, {"y": yr}),
    "detach": (Act(lambda m, h: h * h.detach()), {"x": x}, {"y": yr}),
    "no_grad": (Act(no_grad), {"x": x}, {"y": yr}),
    "autograd-function": (Act(lambda m, h: Reverse.apply(h)), {"x": x}, {"y": yr}),
    "detach-trained-teacher": (Distill(frozen=False), {"x": x}, {"y": yr}),
    "detach-frozen-teacher": (Distill(frozen=True), {"x": x}, {"y": yr}),
    "buffer-update": (Ema(), {"x": x}, {"y": yr}),
    "parameter-write": (Writes("clamp"), {"x": x}, {"y": yr}),
    "input-write": (Writes("input"), {"x": x.clone()}, {"y": yr}),
    "buffer-reassigned": (Writes("reassign"), {"x": x}, {"y": yr}),
    "autocast-detach": (Writes("autocast"), {"x": x}, {"y": yr}),
    "boolean-mask-index": (Act(lambda m, h: h[h > 0].sum() + 0 * h), {"x": x}, {"y": yr}),
    "complex": (Act(lambda m, h: torch.fft.rfft(h).abs().sum() + 0 * h), {"x": x}, {"y": yr}),
    "missing-label": (Act(lambda m, h: h), {"x": x}, {}),
    "causal-mask": (CausalMask(), {"x": torch.randn(2, 5, 6)}, {"y": torch.randn(2, 5, 3)}),
}
out = {}
for case, (model, inputs, labels) in cases.items():
    try:
        epl.torch.export(model, inputs, labels)  # marker: export
        out[case] = "exported"
    except Exception as e:  # a raw one fails its case alone
        out[case] = f"{type(e).__name__}: {e}"
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def refused(tmp_path_factory):
    script = tmp_path_factory.mktemp("refused") / "refused.py"
    script.write_text(REFUSED)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    out = run([VENV_PYTHON, script], env=env).stdout
    line = next(i for i, l in enumerate(REFUSED.splitlines(), 1) if "marker: export" in l)
    return json.loads(out.splitlines()[-1]), f"(at {script}:{line})"


@needs_venv
@pytest.mark.parametrize("case, message", [
    ("padding_idx", "the embedding of module 'emb' (Embedding) has padding_idx=0: PyTorch "
                    "never updates that row"),
    ("functional-padding_idx", "the embedding of the model's own forward has padding_idx=3"),
    ("max_norm", "the embedding of module 'emb' (Embedding) has max_norm=1.0"),
    ("scale_grad_by_freq", "(Embedding) has scale_grad_by_freq=True"),
    ("sparse", "(Embedding) has sparse=True"),
    ("dropout", "the dropout of module 'drop' (Dropout) (p=0.1) is in training mode, which "
                "draws random numbers the EPL tools do not: export the model in eval mode "
                "(model.eval()) or with p=0"),
    ("cumsum", "torch-mlir lowered 'cumsum' of the model's own forward to 'tm_tensor.scan', "
               "of the tm_tensor dialect, which the EPL tools do not take (they take arith, "),
    ("rand", "torch-mlir lowered 'rand_like' of the model's own forward to "
             "'ml_program.global_load'"),
    ("bf16", "the parameter 'fc.weight' is a torch.bfloat16 tensor; epl-run passes "
             "f32 (float32), f64 (float64), i32 (int32), i64 (int64) tensors"),
    ("bool-input", "the input or label 'm' is a torch.bool tensor"),
    ("uint8-input", "the input or label 'm' is a torch.uint8 tensor"),
    ("detach", "the model's own forward stops the gradient (.detach()) of a value computed "
               "from a trained parameter; torch-mlir drops the stop, so epl-run would train "
               "through it (a silent wrong gradient)"),
    ("no_grad", "the model's own forward stops the gradient (torch.no_grad()) of a value "
                "computed from a trained parameter"),
    ("autograd-function", "the model calls the custom torch.autograd.Function Reverse on a "
                          "value computed from a trained parameter: the export traces its "
                          "forward only"),
    ("detach-trained-teacher", "stops the gradient (.detach()) of a value computed from a "
                               "trained parameter"),
    ("buffer-update", "the model's forward updates its buffer(s) ['scale'] in place (a "
                      "statistic the model keeps itself); the exported step carries no such "
                      "update"),
    ("parameter-write", "the model's forward changes ['fc.weight'] in place (a parameter or "
                        "input); the exported step carries no such write"),
    ("input-write", "the model's forward changes ['x'] in place"),
    ("buffer-reassigned", "the model's forward updates its buffer(s) ['count'] in place"),
    ("autocast-detach", "stops the gradient (a .detach() or torch.no_grad() inside a "
                        "torch.autocast block) of a value computed from a trained parameter"),
    ("boolean-mask-index", "the model's own forward makes a tensor whose shape depends on "
                           "the data (aten.index.Tensor"),
    ("complex", "of the model's own forward: 'math.absf' op operand #0 must be "
                "floating-point-like, but got 'complex<f32>'"),
    ("missing-label", "the model's forward cannot be called with the 1 inputs and labels "
                      "given (x), in that order: "),
    ("causal-mask", "torch.export cannot trace the model: Could not guard on data-dependent "
                    "expression"),
    ("causal-mask", "say so instead, is_causal=True with the mask (nn.TransformerEncoder"
                    "(Layer), nn.MultiheadAttention) or tgt_is_causal=True"),
])
def test_export_refuses_what_it_cannot_train_exactly(refused, case, message):
    """Each exported a module that trained unlike PyTorch (a padding row,
    scaled or renormalized rows updated; through a stop-gradient, or
    through a custom autograd.Function's forward instead of its backward:
    a distilled student's loss 0.143 after a step, PyTorch's 0.340; a
    buffer the forward updates, "epl-run printed no loss"), that epl-run
    could not parse
    (MLIR's "Dialect not found") or refused (a bool mask), or ended in
    numpy's TypeError (bf16), a raw TypeError (a label missing) or
    torch-mlir's page of pass-pipeline diagnostics (a complex tensor), or
    that ran torch-mlir out of 24 GB (a boolean mask's indexing): an
    ExportError naming the module, op or tensor, at the line calling
    export."""
    errors, at = refused
    assert errors[case].startswith("ExportError: ") and message in errors[case], errors[case]
    assert errors[case].endswith(at), errors[case]


@needs_venv
@pytest.mark.parametrize("case", ["dropout-eval", "detach-frozen-teacher"])
def test_what_trains_exactly_exports(refused, case):
    """Dropout in eval mode; a stop-gradient of what no trained parameter
    reaches (an input, a frozen teacher), which changes nothing."""
    assert refused[0][case] == "exported"


def export_with_reference(tmp_path, name, body, steps, export_args=""):
    """Runs `body` in the venv (a model class, then `model`, `x`, `y` and
    `config`), which exports the model to tmp_path/name (more keyword
    arguments of export in `export_args`) and trains it in PyTorch
    (torch_losses): the prefix, and PyTorch's `steps` losses."""
    script = tmp_path / f"{name}.py"
    script.write_text(
        "import json, sys\n"
        "import torch, torch.nn as nn, torch.nn.functional as F\n"
        "import epl.torch\n" + body +
        f"epl.torch.export(model, {{'x': x}}, {{'y': y}}, config=config{export_args})"
        ".save(sys.argv[1])\n"
        "print(json.dumps(epl.torch.torch_losses(model, {'x': x}, {'y': y}, config, "
        f"{steps})))\n")
    prefix = tmp_path / name
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    return prefix, json.loads(run([VENV_PYTHON, script, prefix], env=env).stdout.splitlines()[-1])


def trains_as_pytorch(prefix, expected, steps, ranks):
    """epl-run trains the export at `prefix` on each of `ranks` as PyTorch
    did (`expected`, its losses)."""
    for n in ranks:
        out = epl_run(prefix.with_suffix(".mlir"), "--params", f"{prefix}.params.safetensors",
                      "--data", f"{prefix}.data.safetensors", "--steps", steps, ranks=n)
        np.testing.assert_allclose(losses(out.stdout), expected, rtol=RTOL)


@needs_venv
@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_frozen_parameters_stay_unchanged(tmp_path, optimizer):
    """Parameters with requires_grad=False (fine-tuning fc2 over a frozen
    fc1) were exported as "param" and trained: they are model state now,
    carried unchanged (no optimizer state) and saved with the rest; the
    losses are PyTorch's."""
    prefix, expected = export_with_reference(
        tmp_path, "frozen",
        "class Frozen(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc1 = nn.Linear(12, 16); self.fc2 = nn.Linear(16, 8)\n"
        "        for p in self.fc1.parameters(): p.requires_grad_(False)\n"
        "    def forward(self, x, y):\n"
        "        return F.mse_loss(self.fc2(torch.tanh(self.fc1(x))), y)\n"
        "torch.manual_seed(11)\n"
        "model, x, y = Frozen(), torch.randn(8, 12), torch.randn(8, 8)\n"
        f"config = {{'optimizer.type': {optimizer!r}, 'optimizer.lr': 0.1}}\n", 6)
    text = (tmp_path / "frozen.mlir").read_text()
    assert '{epl.arg = "state", epl.name = "fc1.weight"}' in text
    assert '{epl.arg = "param", epl.name = "fc2.weight"}' in text
    saved = tmp_path / "trained.safetensors"
    out = epl_run(prefix.with_suffix(".mlir"), "--params", f"{prefix}.params.safetensors",
                  "--data", f"{prefix}.data.safetensors", "--steps", 6, "--save", saved)
    np.testing.assert_allclose(losses(out.stdout), expected, rtol=RTOL)
    before = epl.safetensors.load(f"{prefix}.params.safetensors")
    after = epl.safetensors.load(saved)
    for name in ("fc1.weight", "fc1.bias"):
        np.testing.assert_array_equal(after[name], before[name])
        assert not any(k.startswith(name + ".") for k in after), sorted(after)
    assert not np.array_equal(after["fc2.weight"], before["fc2.weight"])


@needs_venv
def test_gelu_tanh_constant_is_put_right(tmp_path):
    """torch-mlir writes gelu(approximate="tanh")'s sqrt(2/pi) as
    0.7977240 (2e-4 off): a transformer block trained on it drifted 1e-4
    from PyTorch in 40 steps while its first loss passed the export check.
    The exported module holds the right constant and trains as PyTorch."""
    prefix, expected = export_with_reference(
        tmp_path, "gelu",
        "class Block(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__(); self.fc1 = nn.Linear(8, 32); self.fc2 = nn.Linear(32, 4)\n"
        "    def forward(self, x, y):\n"
        "        return F.mse_loss(self.fc2(F.gelu(self.fc1(x), approximate='tanh')), y)\n"
        "torch.manual_seed(3)\n"
        "model, x, y = Block(), torch.randn(16, 8) * 3, torch.randn(16, 4)\n"
        "config = {'optimizer.type': 'adam', 'optimizer.lr': 0.05}\n", 20)
    text = (tmp_path / "gelu.mlir").read_text()
    # sqrt(2/pi) as MLIR prints an f32, not torch-mlir's 0.797724.
    assert f"{np.float32(math.sqrt(2 / math.pi)):.9g}" in text and "0.797724" not in text
    got = losses(epl_run(tmp_path / "gelu.mlir", "--params", tmp_path / "gelu.params.safetensors",
                         "--data", tmp_path / "gelu.data.safetensors", "--steps", 20).stdout)
    np.testing.assert_allclose(got, expected, rtol=RTOL)


def test_torch_losses_follow_the_cosine_schedule():
    """torch_losses, the PyTorch reference export's --torch-losses prints,
    ignored optimizer.lr_schedule (a cosine run's reference 8% off epl-run,
    which was right): it follows it now, as PyTorch's CosineAnnealingLR
    does up to decay_steps, then holds 0 (docs/training.md)."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(5)
    model = torch.nn.Sequential(torch.nn.Linear(6, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    x, y = torch.randn(8, 6), torch.randn(8, 1)

    class Loss(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = model

        def forward(self, x, y):
            return torch.nn.functional.mse_loss(self.net(x), y)

    config = {"optimizer.type": "adam", "optimizer.lr": 0.05,
              "optimizer.lr_schedule": "cosine", "optimizer.decay_steps": 4}
    got = epl.torch.torch_losses(Loss(), {"x": x}, {"y": y}, config, 6)
    constant = epl.torch.torch_losses(Loss(), {"x": x}, {"y": y},
                                      {**config, "optimizer.lr_schedule": "constant",
                                       "optimizer.decay_steps": 0}, 6)
    reference = Loss()  # (trains `model` itself: after the copies above)
    optimizer = torch.optim.Adam(reference.parameters(), lr=0.05)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=4)
    want = []
    for t in range(6):
        optimizer.zero_grad()
        loss = reference(x, y)
        want.append(float(loss))
        loss.backward()
        optimizer.step()
        if t < 3:
            schedule.step()
        else:
            for group in optimizer.param_groups:
                group["lr"] = 0.0
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert abs(constant[-1] - got[-1]) > 1e-3 * abs(got[-1])


def command_line_on_a_linear_model(tmp_path, loss, more=""):
    """`python -m epl.torch` on a file whose model is one nn.Linear(4, 2)
    with forward(x, y) returning `loss`; epl_model()'s dict gets `more`
    entries. The file, and the finished process."""
    model = tmp_path / "model.py"
    model.write_text(
        "import torch, torch.nn as nn, torch.nn.functional as F\n"
        "class M(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__(); self.fc = nn.Linear(4, 2)\n"
        "    def forward(self, x, y):\n"
        f"        return {loss}\n"
        "def epl_model():\n"
        "    return {'model': M(), 'inputs': {'x': torch.randn(3, 4)},\n"
        f"            'labels': {{'y': torch.randn(3, 2)}}, {more}}}\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    return model, subprocess.run([VENV_PYTHON, "-m", "epl.torch", model, "-o",
                                  tmp_path / "out"], capture_output=True, text=True, env=env)


@needs_venv
def test_command_line_errors_name_the_model_file(tmp_path):
    """From `python -m epl.torch FILE`, an ExportError ended "(at <frozen
    runpy>:88)" and torch.export's own failures (a `.data` in forward) a
    page of traceback: one line each, naming the model's file and function."""
    model, out = command_line_on_a_linear_model(
        tmp_path, "F.mse_loss(self.fc(x), y * self.fc(x).detach())")
    assert out.returncode == 1
    assert out.stderr.startswith("epl.torch: error: the model's own forward stops the "
                                 "gradient (.detach())"), out.stderr
    assert out.stderr.endswith(f"(in {model}, epl_model())\n"), out.stderr
    assert len(out.stderr.splitlines()) == 1, out.stderr


#: Piecewise ops, each on x + its own zero bias at its kinks (and between).
KINKED = {
    "relu": "F.relu(h)", "leaky_relu": "F.leaky_relu(h, 0.1)",
    "rrelu_eval": "F.rrelu(h, training=False)", "elu": "F.elu(h)",
    "elu_alpha": "F.elu(h, 2.0)", "selu": "F.selu(h)", "celu": "F.celu(h, 2.0)",
    "hardtanh": "F.hardtanh(h)", "relu6": "F.relu6(h)", "clamp": "torch.clamp(h, -1.0, 1.0)",
    "clamp_min": "torch.clamp(h, min=0.0)", "clamp_max": "torch.clamp(h, max=1.0)",
    "clamp_min_op": "torch.clamp_min(h, -1.0)", "clamp_crossed": "torch.clamp(h, 1.0, -1.0)",
    "hardsigmoid": "F.hardsigmoid(h)", "hardswish": "F.hardswish(h)",
    "threshold": "F.threshold(h, 1.0, -2.0)", "hardshrink": "F.hardshrink(h)",
    "softshrink": "F.softshrink(h)", "softplus": "F.softplus(h, 1.0, 2.0)",
    "maximum_tie": "torch.maximum(h, 2 * h - 1.0)", "minimum_tie": "torch.minimum(h, 2 * h - 1.0)",
    "max_other": "torch.max(h, torch.zeros_like(h))",
    "maximum_int": "torch.maximum(h, torch.tensor(0))",
    "clamp_tensor": "torch.clamp(h, min=2 * h - 1, max=3 * h - 1)",
    "clamp_min_tensor": "torch.clamp_min(h, torch.zeros_like(h))",
    "prelu": "self.prelu(h)",
}


#: Saturated sigmoids under a log: the derivative must be s (1 - s) of the
#: rounded s, as PyTorch's, for the log's 1 / (1 - s) to cancel.
SATURATED = {
    "bce_sigmoid": "F.binary_cross_entropy(torch.sigmoid(h), (h < 0).float(), reduction='none')",
    "log_one_minus_sigmoid": "torch.log(1 - torch.sigmoid(h))",
    "log_sigmoid_of_sigmoid": "torch.log(torch.sigmoid(h))",
    "std_of_constant_rows": "h.view(4, 2).std(-1, keepdim=True).expand(4, 2)",
    "std_mean": "torch.std_mean(h.view(4, 2), -1)[0].repeat_interleave(2)",
}


#: Smooth ops whose lowering overflows in a branch the select does not take.
OVERFLOWING = {
    "sigmoid": "torch.sigmoid(h)", "silu": "F.silu(h)", "softplus": "F.softplus(h)",
    "softplus_beta": "F.softplus(h, 2.0, 10.0)", "elu": "F.elu(h)", "selu": "F.selu(h)",
    "celu": "F.celu(h, 2.0)", "mish": "F.mish(h)", "logsigmoid": "F.logsigmoid(h)",
    "tanh": "torch.tanh(h)", "gelu": "F.gelu(h)",
    "bce_logits": "F.binary_cross_entropy_with_logits(h, (h > 0).float(), reduction='none')",
}


def gradients_against_pytorch(tmp_path, ops, points):
    """Exports a model summing each of `ops` (name: expression of `h`) on
    `points` + its own zero bias, weighted by position, and takes one SGD
    step with lr 1 in epl-run: {bias: (epl-run's gradient, PyTorch's)}
    where they differ. PReLU (`self.prelu`) has one slope per column of
    `h` seen as (2, n)."""
    n = len(points)
    forward = []
    for name, e in ops.items():
        view = f".view(2, {n // 2})" if "self.prelu" in e else ""
        forward.append(f"        h = (x + self.b[{name!r}]){view}\n"
                       f"        t.append(({e}).flatten().mul(self.w).sum())\n")
    script = tmp_path / "model.py"
    script.write_text(
        "import json, sys\n"
        "import torch, torch.nn as nn, torch.nn.functional as F\n"
        "import epl.torch\n"
        "class Model(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        f"        self.b = nn.ParameterDict({{n: nn.Parameter(torch.zeros({n})) "
        f"for n in {list(ops)!r}}})\n"
        f"        self.prelu = nn.PReLU({n // 2}, init=0.25)\n"
        f"        self.register_buffer('w', torch.arange(1.0, {n + 1}.0))\n"
        "    def forward(self, x, y):\n"
        "        t = []\n" + "".join(forward) +
        "        return sum(t) + 0 * y.sum()\n"
        "model = Model()\n"
        f"x = torch.tensor({[float(p) for p in points]!r})\n"
        "y = torch.zeros(1)\n"
        "config = {'optimizer.type': 'sgd', 'optimizer.lr': 1.0}\n"
        "with torch.no_grad():  # the export does not depend on the caller's grad mode\n"
        "    epl.torch.export(model, {'x': x}, {'y': y}, config=config).save(sys.argv[1])\n"
        "model(x, y).backward()\n"
        "print(json.dumps({n: p.grad.tolist() for n, p in model.named_parameters() "
        "if p.grad is not None}))\n")
    prefix = tmp_path / "model"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    grads = json.loads(run([VENV_PYTHON, script, prefix], env=env).stdout.splitlines()[-1])
    saved = tmp_path / "stepped.safetensors"
    epl_run(prefix.with_suffix(".mlir"), "--params", f"{prefix}.params.safetensors",
            "--data", f"{prefix}.data.safetensors", "--steps", 1, "--save", saved)
    before = epl.safetensors.load(f"{prefix}.params.safetensors")
    after = epl.safetensors.load(saved)
    return {n: ((before[n] - after[n]).tolist(), g) for n, g in grads.items()
            if not np.allclose(before[n] - after[n], g, rtol=1e-6, atol=1e-7)}


@needs_venv
def test_gradients_at_kinks_are_pytorchs(tmp_path):
    """torch-mlir lowers leaky_relu to max(0, x) + slope * min(0, x), ELU to
    max(0, x) + min(0, elu), clamps to a max then a min: at a kink the
    derivative of the select it takes was not PyTorch's (leaky_relu'(0)
    was 1.1, not the slope; ELU'(0) 2, not 1), and a bias summing such
    positions (a zero input under a zero bias) got a wrong gradient. Each
    bias's gradient, and PReLU's slopes', is now the one PyTorch computes
    on the installed torch (whose conventions at bounds differ between
    versions)."""
    wrong = gradients_against_pytorch(
        tmp_path, KINKED, [0.0, 1.0, -1.0, 6.0, 3.0, -3.0, 0.5, -0.5, 2.0] * 2)
    assert not wrong, "\n".join(f"{n}: got {g}, PyTorch {e}" for n, (g, e) in wrong.items())


@needs_venv
def test_overflowing_branches_give_pytorchs_gradients(tmp_path):
    """sigmoid's exp(-x) at x = -100, softplus's, ELU's and mish's exp(x)
    at x = 100 overflow in the branch torch-mlir's select does not take:
    0 * inf made the gradients NaN. They are PyTorch's now."""
    wrong = gradients_against_pytorch(
        tmp_path, OVERFLOWING, [-100.0, 100.0, -90.0, 90.0, 0.5, -30.0, 30.0, 0.0])
    assert not wrong, "\n".join(f"{n}: got {g}, PyTorch {e}" for n, (g, e) in wrong.items())


@pytest.mark.parametrize("shape", [(4, 6, 5, 5), (3, 6, 7)])
@pytest.mark.parametrize("affine", [True, False])
def test_group_norm_decomposition_is_pytorchs(shape, affine):
    """epl/torch_reshapes.py's GroupNorm computes PyTorch's value (the CPU
    kernel's order of operations; here Debian's torch 1.13) and its
    gradients, mean and rstd."""
    torch = pytest.importorskip("torch")
    from epl import torch_reshapes
    decompose = torch_reshapes.decompositions()[torch.ops.aten.native_group_norm.default]
    torch.manual_seed(3)
    x = (torch.randn(*shape) * 3 + 1).requires_grad_()
    w = (torch.randn(shape[1]) if affine else None)
    b = (torch.randn(shape[1]) if affine else None)
    n, c, inner = shape[0], shape[1], int(np.prod(shape[2:]))
    expected = torch.ops.aten.native_group_norm(x, w, b, n, c, inner, 3, 1e-5)
    got = decompose(x, w, b, n, c, inner, 3, 1e-5)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g.detach().numpy(), e.detach().numpy(), rtol=1e-5, atol=1e-6)
    probe = torch.randn(*shape)
    (e_grad,) = torch.autograd.grad((expected[0] * probe).sum(), x)
    (g_grad,) = torch.autograd.grad((got[0] * probe).sum(), x)
    np.testing.assert_allclose(g_grad.numpy(), e_grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("case", ["bilinear", "rows-only", "negative", "not-separable",
                                  "scalar", "rank-2-pair"])
def test_separable_index_is_indexing(case):
    """epl/torch_reshapes.py's index_selects read what x[indices] reads,
    separable or not (then indexing as before), on Debian's torch 1.13."""
    torch = pytest.importorskip("torch")
    from epl import torch_reshapes
    x = torch.arange(2 * 3 * 5 * 4, dtype=torch.float32).reshape(2, 3, 5, 4)
    rows, cols = torch.tensor([0, 0, 1, 4, 2, 3]), torch.tensor([3, 1, 1, 0, 2])
    indices = {"bilinear": [None, None, rows[:, None], cols],
               "rows-only": [None, None, rows],
               "negative": [None, None, -rows[:, None] - 1, cols - 4],
               "not-separable": [None, None, rows[:5], cols],
               "scalar": [None, torch.tensor(2)],
               "rank-2-pair": [None, None, rows[3:4, None], cols[1:2, None]]}[case]
    expected = x[tuple(slice(None) if i is None else i for i in indices)]
    got = torch_reshapes.separable_index(x, indices)
    assert got.shape == expected.shape and torch.equal(got, expected)


def test_kink_decompositions_follow_the_installed_torch():
    """Each decomposition of epl/torch_kinks.py computes its op's value
    bit for bit and, through the selects it takes, PyTorch's gradient (to
    rounding: g / 6 against PyTorch's g * (1 / 6)), on
    whichever torch runs it: here Debian's 1.13, whose clamp and hardswish
    keep other conventions at their bounds than the venv's torch 2.x."""
    torch = pytest.importorskip("torch")
    from epl import torch_kinks
    decompositions = torch_kinks.decompositions(epl.torch.ExportError)
    aten = torch.ops.aten
    cases = {
        aten.leaky_relu.default: lambda t: (t, 0.1),
        aten.rrelu.default: lambda t: (t, 0.1, 0.3),
        aten.prelu.default: lambda t: (t, torch.tensor([0.25])),
        aten.elu.default: lambda t: (t, 2.0),
        aten.selu.default: lambda t: (t,),
        aten.celu.default: lambda t: (t, 2.0),
        aten.hardtanh.default: lambda t: (t, -1.0, 3.0),
        aten.relu6.default: lambda t: (t,),
        aten.clamp.default: lambda t: (t, -1.0, 1.0),
        aten.clamp_min.default: lambda t: (t, 0.0),
        aten.clamp_max.default: lambda t: (t, 1.0),
        aten.hardsigmoid.default: lambda t: (t,),
        aten.hardswish.default: lambda t: (t,),
        aten.maximum.default: lambda t: (t, 2 * t - 1),
        aten.minimum.default: lambda t: (t, 2 * t - 1),
        aten.max.other: lambda t: (t, 2 * t - 1),
        aten.min.other: lambda t: (t, 2 * t - 1),
        aten.clamp.Tensor: lambda t: (t, 2 * t - 1, 3 * t - 1),
        aten.clamp_min.Tensor: lambda t: (t, 2 * t - 1),
        aten.clamp_max.Tensor: lambda t: (t, 2 * t - 1),
    }
    # std: a constant row has a zero std, whose gradient PyTorch makes 0.
    rows = torch.tensor([[1.0, 1.0, 1.0, 1.0], [0.0, 1.0, 2.0, 3.0], [0.0, 0.0, 0.0, 0.0]])
    statistics = {
        aten.std.correction: lambda t: ((t, [1]), {"correction": 1, "keepdim": True}),
        aten.std_mean.correction: lambda t: ((t, [1]), {"correction": 0}),
    }
    assert set(cases) | set(statistics) == set(decompositions)
    for op, arguments in statistics.items():
        results = []
        for f in (op, decompositions[op]):
            t = rows.clone().requires_grad_()
            args, kwargs = arguments(t)
            value = f(*args, **kwargs)
            value = value[0] if isinstance(value, tuple) else value
            value.sum().backward()
            results.append((value.detach(), t.grad))
        (value, grad), (got_value, got_grad) = results
        assert torch.equal(value, got_value) and torch.allclose(grad, got_grad), op
    # 48 elements: whole vectors of PyTorch's kernels, whose scalar tail
    # can keep another convention (torch 1.13's hardswish'(3): 1.5 in the
    # tail, 1.0 in the vectors, as the probe measures it).
    x = torch.tensor([0.0, 1.0, -1.0, 6.0, 3.0, -3.0, 0.5, -0.5, 2.0, 100.0, -100.0,
                      1e-3]).repeat(4)
    wrong = []
    for op, args in cases.items():
        results = []
        for f in (op, decompositions[op]):
            t = x.clone().requires_grad_()
            value = f(*args(t))
            value.backward(torch.arange(1.0, len(x) + 1))
            results.append((value.detach(), t.grad))
        (value, grad), (got_value, got_grad) = results
        if not torch.equal(value, got_value) or not torch.allclose(grad, got_grad,
                                                                    rtol=1e-6):
            wrong.append(f"{op}: {got_value.tolist()} {got_grad.tolist()}, "
                         f"PyTorch {value.tolist()} {grad.tolist()}")
    assert not wrong, "\n".join(wrong)
    # Integer operands keep the op.
    assert decompositions[aten.maximum.default](torch.tensor([1]), torch.tensor([2])) \
        is NotImplemented


@needs_venv
def test_saturated_sigmoids_and_zero_stds_give_pytorchs_gradients(tmp_path):
    """-log(1 - sigmoid(x))'s derivative at x = 16: the chain through
    exp(-x) gave 0.944 where PyTorch (and the exact value) say sigmoid(16)
    = 1, as the log divides by the rounded 1 - s; BCE on sigmoid outputs
    drifted in training. And the
    std of a constant row (zero padding) had a NaN gradient where
    PyTorch's is 0."""
    wrong = gradients_against_pytorch(
        tmp_path, SATURATED, [10.0, 12.0, 16.0, -10.0, -12.0, -16.0, 3.0, 3.0])
    assert not wrong, "\n".join(f"{n}: got {g}, PyTorch {e}" for n, (g, e) in wrong.items())


@needs_venv
def test_command_line_reports_a_config_epl_run_refuses(tmp_path):
    """A config key epl.Config takes and epl-run refuses (optimizer.momentum
    with the default sgd) ended `python -m epl.torch` in a traceback of
    epl's ToolError: epl-run's own error now, exit 1."""
    _, out = command_line_on_a_linear_model(tmp_path, "F.mse_loss(self.fc(x), y)",
                                            "'config': {'optimizer.momentum': 0.9}")
    assert out.returncode == 1
    assert out.stderr.startswith("epl.torch: error: epl-run failed with exit code 1:\n"), out.stderr
    assert 'EPL config key "optimizer.momentum" is read only by "optimizer.type" = ' \
           '"momentum"' in out.stderr and "Traceback" not in out.stderr, out.stderr


@needs_venv
def test_unbound_qkv_attention_takes_micro_batches(tmp_path):
    """timm's and nanoGPT's attention, qkv.reshape(B, N, 3, H, d).permute(2,
    0, 3, 1, 4).unbind(0), merges the batch below the unit dimension
    unbind leaves: refused with micro-batches ("this reshape merges it
    below another dimension"), it trains as PyTorch now, also on 2 ranks."""
    prefix, expected = export_with_reference(
        tmp_path, "attention",
        "class Attention(nn.Module):\n"
        "    def __init__(self, D=16, H=2):\n"
        "        super().__init__(); self.H = H\n"
        "        self.qkv = nn.Linear(D, 3 * D); self.proj = nn.Linear(D, D)\n"
        "    def forward(self, x, y):\n"
        "        B, N, C = x.shape\n"
        "        q, k, v = self.qkv(x).reshape(B, N, 3, self.H, C // self.H)"
        ".permute(2, 0, 3, 1, 4).unbind(0)\n"
        "        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)\n"
        "        return F.mse_loss(self.proj(a.transpose(1, 2).reshape(B, N, C)), y)\n"
        "torch.manual_seed(5)\n"
        "model, x, y = Attention(), torch.randn(4, 6, 16), torch.randn(4, 6, 16)\n"
        "config = {'optimizer.type': 'sgd', 'optimizer.lr': 0.5, "
        "'pipeline.num_micro_batch': 2}\n", 4)
    trains_as_pytorch(prefix, expected, 4, ranks=(1, 2))


STRATEGY_TYPOS = r'''
import json, torch, torch.nn as nn, epl.torch
class Block(nn.Module):
    def __init__(self):
        super().__init__(); self.attn = nn.Linear(8, 8); self.mlp = nn.Linear(8, 8)
    def forward(self, x):
        return self.mlp(self.attn(x))
class Net(nn.Module):
    def __init__(self):
        super().__init__(); self.blocks = nn.Sequential(Block(), Block())
        self.head = nn.Linear(8, 2)
    def forward(self, x, y):
        return nn.functional.mse_loss(self.head(self.blocks(x)), y)
out = {}
for case, strategy in {"typo": {"blocks.*.mpl": "split(2)", "*": "replicate(1)"},
                       "shadowed": {"*": "replicate(1)", "blocks.*.mlp": "split(2)"},
                       "other-model": {"transformer.h.*": "split(2)"},
                       "fine": {"blocks.*.mlp": "split(2)", "*": "replicate(1)"}}.items():
    try:
        epl.torch.export(Net(), {"x": torch.randn(4, 8)}, {"y": torch.randn(4, 2)},
                         strategy=strategy)
        out[case] = "exported"
    except epl.torch.ExportError as e:
        out[case] = str(e)
print(json.dumps(out))
'''


@needs_venv
def test_an_error_at_an_exported_op_names_its_module(tmp_path):
    """Every exported linalg and tensor op carries epl.source, its module
    and torch op, on its line: an error epl-run reports at the op (here a
    seq-first attention fed without batch_dims, under micro-batches)
    names the module where the .mlir position alone did not."""
    prefix, _ = export_with_reference(
        tmp_path, "seqfirst",
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__(); self.attn = nn.MultiheadAttention(8, 2)\n"
        "        self.fc = nn.Linear(8, 3)\n"
        "    def forward(self, x, y):\n"
        "        return F.cross_entropy(self.fc(self.attn(x, x, x)[0].mean(0)), y)\n"
        "torch.manual_seed(2)\n"
        "model, x, y = Net(), torch.randn(5, 4, 8), torch.randint(0, 3, (4,))\n"
        "config = {'optimizer.type': 'sgd', 'optimizer.lr': 0.1, "
        "'pipeline.num_micro_batch': 2}\n", 1)
    text = prefix.with_suffix(".mlir").read_text()
    assert re.search(r'epl\.source = "fc: mm(_\d+)?"', text), text
    assert re.search(r'epl\.source = "<forward>: mean(_\d+)?"', text), text
    out = subprocess.run([BUILD / "bin" / "epl-run", prefix.with_suffix(".mlir"), "--steps", "1"],
                         capture_output=True, text=True)
    assert out.returncode == 1
    assert "cannot split the batch" in out.stderr and 'epl.source = "attn: ' in out.stderr, \
        out.stderr


@needs_venv
def test_a_gpu_only_config_exports(tmp_path):
    """offload.level = "v0" (a cuda-target key) failed export's own
    forward check on the CPU with epl-run's refusal, a ToolError: the
    check runs without the offload keys now, the module keeps them, and
    it trains as PyTorch where offload runs (--emulate-gpu)."""
    prefix, expected = export_with_reference(
        tmp_path, "offload",
        "class Loss(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.net = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))\n"
        "    def forward(self, x, y):\n"
        "        return F.mse_loss(self.net(x), y)\n"
        "torch.manual_seed(1)\n"
        "model, x, y = Loss(), torch.randn(4, 6), torch.randn(4, 1)\n"
        "config = {'optimizer.type': 'sgd', 'optimizer.lr': 0.1, 'offload.level': 'v0'}\n", 3)
    assert 'offload.level = "v0"' in prefix.with_suffix(".mlir").read_text()
    out = epl_run(prefix.with_suffix(".mlir"), "--params", f"{prefix}.params.safetensors",
                  "--data", f"{prefix}.data.safetensors", "--steps", 3, "--emulate-gpu")
    np.testing.assert_allclose(losses(out.stdout), expected, rtol=RTOL)


@needs_venv
def test_a_strategy_pattern_that_scopes_nothing_is_an_error(tmp_path):
    """A pattern misspelled, of another model's names, or behind an
    earlier "*" exported a module without the split it asked for, which
    then trained data parallel, silently: an ExportError naming the
    pattern (and the pattern that takes its ops)."""
    script = tmp_path / "typos.py"
    script.write_text(STRATEGY_TYPOS)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    errors = json.loads(run([VENV_PYTHON, script], env=env).stdout.splitlines()[-1])
    assert errors["typo"].startswith(
        "the strategy pattern 'blocks.*.mpl' matches no module that computes an op "
        "(top-level modules: blocks, head;"), errors["typo"]
    assert errors["shadowed"].startswith(
        "the strategy pattern 'blocks.*.mlp' scopes no op: the earlier pattern '*' takes "
        "every op it matches"), errors["shadowed"]
    assert errors["other-model"].startswith(
        "the strategy pattern 'transformer.h.*' matches no module"), errors["other-model"]
    assert errors["fine"] == "exported"


#: Layers of test_recurrent_and_seq_first_layers_take_micro_batches: how
#: each is made, called on x, and the batch_dims x needs.
SEQ_LAYERS = {
    "lstm": ("nn.LSTM(8, 8, num_layers=2)", "self.layer(x)[0].mean(0)", ", batch_dims={'x': 1}"),
    "mha": ("nn.MultiheadAttention(8, 2)", "self.layer(x, x, x)[0].mean(0)",
            ", batch_dims={'x': 1}"),
    "gru-h_n": ("nn.GRU(8, 8, num_layers=2, batch_first=True)", "self.layer(x)[1][-1]", ""),
    "lstm-h_n": ("nn.LSTM(8, 8, num_layers=2)", "self.layer(x)[1][0][-1]",
                 ", batch_dims={'x': 1}"),
}


@needs_venv
@pytest.mark.parametrize("layer", list(SEQ_LAYERS))
def test_recurrent_and_seq_first_layers_take_micro_batches(tmp_path, layer):
    """nn.LSTM (two layers) and nn.MultiheadAttention in their default
    seq-first layout, the input (L, B, E) exported with batch_dims={'x': 1},
    and the final states h_n of 2-layer GRUs and LSTMs (torch-mlir stacks
    the layers' (B, H) into (2 * B, H)): 2 micro-batches were refused
    ("this reshape merges it below another dimension", "operands batch
    different loops", "needs it whole"); they train as PyTorch on the
    whole batch now, on 1 and 2 ranks."""
    make, call, batch_dims = SEQ_LAYERS[layer]
    x = "torch.randn(4, 5, 8)" if "batch_first" in make else "torch.randn(5, 4, 8)"
    prefix, expected = export_with_reference(
        tmp_path, layer,
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        f"        super().__init__(); self.layer = {make}; self.fc = nn.Linear(8, 3)\n"
        "    def forward(self, x, y):\n"
        f"        return F.cross_entropy(self.fc({call}), y)\n"
        "torch.manual_seed(2)\n"
        f"model, x, y = Net(), {x}, torch.randint(0, 3, (4,))\n"
        "config = {'optimizer.type': 'adam', 'optimizer.lr': 0.05, "
        "'pipeline.num_micro_batch': 2}\n", 3, batch_dims)
    trains_as_pytorch(prefix, expected, 3, ranks=(1, 2))


@needs_venv
@pytest.mark.parametrize("up", ["nn.Upsample(scale_factor=2, mode='bilinear')",
                                "nn.Upsample(size=(7, 6), mode='bilinear', align_corners=True)",
                                "nn.Upsample(scale_factor=2, mode='nearest')"])
def test_upsampling_takes_micro_batches(tmp_path, up):
    """torch's bilinear upsampling reads its neighbours as x[:, :, rows[:,
    None], cols], which torch-mlir lowered with an index table over the
    batch too: refused under micro-batches ("does not keep dimension 0").
    As index_selects (epl/torch_reshapes.py) it trains as PyTorch with 2
    micro-batches, on 1 and 2 ranks."""
    prefix, expected = export_with_reference(
        tmp_path, "upsample",
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__(); self.conv = nn.Conv2d(2, 3, 3, padding=1)\n"
        f"        self.up = {up}; self.out = nn.Conv2d(3, 1, 1)\n"
        "    def forward(self, x, y):\n"
        "        return F.mse_loss(self.out(self.up(torch.relu(self.conv(x)))), y)\n"
        "torch.manual_seed(0)\n"
        "x = torch.randn(4, 2, 4, 3)\n"
        "model, y = Net(), torch.randn(4, 1, *Net().up(x).shape[2:])\n"
        "config = {'optimizer.type': 'sgd', 'optimizer.lr': 0.1, "
        "'pipeline.num_micro_batch': 2}\n", 3)
    trains_as_pytorch(prefix, expected, 3, ranks=(1, 2))


@needs_venv
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("micro_batches", [1, 2])
def test_group_norm_is_data_parallel(tmp_path, affine, micro_batches):
    """torch's decomposition of nn.GroupNorm gathers its per-channel scale
    through index tables with a row per example (as_strided): "cannot shard
    a non-splat constant" on 2 ranks, "does not keep dimension 0" under
    micro-batches. epl/torch_reshapes.py writes it with reshapes: no table
    is left, and 1, 2 and 4 ranks train as PyTorch, 1 and 2 with 2
    micro-batches."""
    prefix, expected = export_with_reference(
        tmp_path, "groupnorm",
        "class CNN(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__(); self.c = nn.Conv2d(3, 6, 3, padding=1)\n"
        f"        self.gn = nn.GroupNorm(3, 6, affine={affine}); self.fc = nn.Linear(6, 4)\n"
        "    def forward(self, x, y):\n"
        "        return F.cross_entropy(self.fc(F.silu(self.gn(self.c(x))).mean((2, 3))), y)\n"
        "torch.manual_seed(0)\n"
        "model, x, y = CNN(), torch.randn(4, 3, 5, 5), torch.randint(0, 4, (4,))\n"
        "config = {'optimizer.type': 'momentum', 'optimizer.lr': 0.1, "
        f"'pipeline.num_micro_batch': {micro_batches}}}\n", 3)
    assert "dense_resource" not in prefix.with_suffix(".mlir").read_text()
    # A batch of 4: 4 ranks of 2 micro-batches would not divide it.
    trains_as_pytorch(prefix, expected, 3, ranks=(1, 2, 4) if micro_batches == 1 else (1, 2))


@needs_venv
def test_a_non_persistent_buffer_is_a_constant(tmp_path):
    """A buffer registered with persistent=False (LLaMA's rotary cos/sin
    caches) ended the export with torch-mlir's "Could not find state
    mapping for buffer". It is frozen into the module as every buffer is:
    rotary embeddings over a non-persistent cache train as PyTorch on 1 and
    2 ranks."""
    prefix, expected = export_with_reference(
        tmp_path, "rotary",
        "class Rotary(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__(); self.q = nn.Linear(8, 8); self.out = nn.Linear(8, 3)\n"
        "        t = torch.arange(6.0)[:, None] * torch.tensor([1.0, 0.1, 0.01, 0.001])\n"
        "        self.register_buffer('cos', torch.cat([t.cos(), t.cos()], -1), persistent=False)\n"
        "        self.register_buffer('sin', torch.cat([t.sin(), t.sin()], -1), persistent=False)\n"
        "    def forward(self, x, y):\n"
        "        q = self.q(x)\n"
        "        half = torch.cat([-q[..., 4:], q[..., :4]], -1)\n"
        "        return F.cross_entropy(self.out(q * self.cos + half * self.sin).mean(1), y)\n"
        "torch.manual_seed(0)\n"
        "model, x, y = Rotary(), torch.randn(4, 6, 8), torch.randint(0, 3, (4,))\n"
        "config = {'optimizer.type': 'adam', 'optimizer.lr': 0.01}\n"
        "assert 'cos' not in model.state_dict()\n", 3)
    trains_as_pytorch(prefix, expected, 3, ranks=(1, 2))

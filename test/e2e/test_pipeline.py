"""Pipeline parallelism: for every schedule, 2 and 4 stages and 1, 4 and 8
micro-batches, the pipelined run's per-step losses and final parameters
equal the 1-rank run of the same model on the same global batch (stages in
sequence, micro-batches as gradient accumulation), on threads and under
mpirun; so do pipelines composed with data and tensor parallelism. Peak
memory per stage follows the schedule: 1F1B holds p - s micro-batches on
stage s, GPipe all of them."""

import functools
import json

import numpy as np
import pytest

from conftest import ROOT, epl_run, losses
import epl
from epl import safetensors

STEPS = 4
RTOL = 1e-5
BATCH = 16
STRATEGIES = ["PreferForward", "PreferBackward", "PreferBackwardOptimizer",
              "ZeroBubbleH1", "Interleaved1F1B"]


def model(scopes, micro_batches, strategy="PreferBackward", virtual=1, kind="pipeline",
          batch=BATCH, width=8, features=6, config=(), skip=None):
    """`scopes` named stages of Dense layers (EPL's consecutive replicate
    scopes); with kind "split" each stage is a Megatron pair in a named
    split(2). `config`: more keys, as pairs. `skip` = (a, b): stage b adds
    stage a's output to its own (a skip connection across stages)."""
    epl.init(epl.Config({"optimizer.type": "adam", "optimizer.lr": 0.01,
                         "pipeline.num_micro_batch": micro_batches,
                         "pipeline.strategy": strategy,
                         "pipeline.num_virtual_stages": virtual, **dict(config)}))
    x = epl.input("x", (batch, features))
    y = epl.label("y", (batch, 4))
    h = x
    for s in range(scopes):
        if kind == "split":
            with epl.split(device_count=2, name=f"stage_{s}"):
                f = epl.layers.Dense(2 * width, activation="gelu", name=f"up{s}")(h)
                h = epl.layers.Dense(width, activation="tanh", name=f"down{s}")(f)
        else:
            devices = 2 if kind == "data" else 1
            with epl.replicate(device_count=devices, name=f"stage_{s}"):
                h = epl.layers.Dense(width, activation="tanh", name=f"fc{s}")(h)
                if skip and s == skip[1]:
                    h = epl.layers.add(h, saved)
        if skip and s == skip[0]:
            saved = h
    logits = epl.layers.Dense(4, name="head")(h)
    return epl.to_mlir(epl.layers.softmax_cross_entropy(logits, y))


def problem(batch=BATCH):
    rng = np.random.default_rng(7)
    return {"x": rng.standard_normal((batch, 6)).astype(np.float32),
            "y": np.eye(4, dtype=np.float32)[rng.integers(0, 4, batch)]}


def train(tmp_path, text, ranks, mpi=False, extra=()):
    tag = f"{abs(hash(text))}.{ranks}.{int(mpi)}"
    path = tmp_path / f"m{tag}.mlir"
    path.write_text(text)
    data = tmp_path / "data.safetensors"
    if not data.exists():
        safetensors.save(data, problem())
    save = tmp_path / f"p{tag}.safetensors"
    report = tmp_path / f"r{tag}.json"
    out = epl_run(path, "--data", data, "--steps", STEPS, "--seed", 3, "--save", save,
                  "--report", report, *extra, ranks=ranks, mpi=mpi)
    return losses(out.stdout), safetensors.load(save), json.loads(report.read_text())


@functools.lru_cache(maxsize=None)
def reference(scopes, micro_batches, kind="pipeline"):
    """The 1-rank run: the same model and global batch, stages in sequence."""
    import tempfile, pathlib
    with tempfile.TemporaryDirectory() as tmp:
        got_losses, params, _ = train(pathlib.Path(tmp), model(scopes, micro_batches, kind=kind), 1)
    return got_losses, params


def assert_same(tmp_path, got, scopes, micro_batches, kind="pipeline"):
    got_losses, got_params, report = got
    want_losses, want_params = reference(scopes, micro_batches, kind)
    np.testing.assert_allclose(got_losses, want_losses, rtol=RTOL)
    assert sorted(got_params) == sorted(want_params)
    for name, value in want_params.items():
        np.testing.assert_allclose(got_params[name], value, rtol=RTOL, atol=1e-6,
                                   err_msg=name)
    assert want_losses[-1] < want_losses[0]
    return report


CASES = [(p, m, s) for p in (2, 4) for m in (1, 4, 8) for s in STRATEGIES
         if not (s == "Interleaved1F1B" and m % p)]


@pytest.mark.parametrize("mpi", [False, True], ids=["threads", "mpi"])
@pytest.mark.parametrize("stages, micro_batches, strategy", CASES,
                         ids=[f"{p}stages-{m}mb-{s}" for p, m, s in CASES])
def test_pipeline_equals_one_rank(tmp_path, stages, micro_batches, strategy, mpi):
    # Interleaved: twice the scopes, two per stage device, round-robin.
    virtual = 2 if strategy == "Interleaved1F1B" else 1
    scopes = stages * virtual
    got = train(tmp_path, model(scopes, micro_batches, strategy, virtual), stages, mpi=mpi)
    report = assert_same(tmp_path, got, scopes, micro_batches)
    ranks = report["per_rank"]
    assert [r["stage"] for r in ranks] == list(range(stages))
    # Activations forward, their gradients backward, every micro-batch.
    assert all(r["p2p_sent_bytes"] > 0 and r["p2p_received_bytes"] > 0 for r in ranks)


@pytest.mark.parametrize("mpi", [False, True], ids=["threads", "mpi"])
@pytest.mark.parametrize("kind", ["data", "split"])
def test_pipeline_composes(tmp_path, kind, mpi):
    # 2 stages x 2 replicas (each stage's gradients reduced over its
    # replicas), or 2 stages x split(2) inside each stage: 4 ranks.
    got = train(tmp_path, model(2, 4, kind=kind), 4, mpi=mpi)
    report = assert_same(tmp_path, got, 2, 4, kind=kind)
    assert [r["stage"] for r in report["per_rank"]] == [0, 0, 1, 1]
    assert report["collectives"], "replicas and splits communicate within a stage"


def column_split_stages(stages, skip, strategy):
    """`stages` named split(2) stages of one Dense each (column-split: the
    activation between stages is sharded), stage skip[1] adding stage
    skip[0]'s output."""
    epl.init(epl.Config({"optimizer.type": "adam", "optimizer.lr": 0.01,
                         "pipeline.num_micro_batch": 4, "pipeline.strategy": strategy}))
    x, y = epl.input("x", (BATCH, 6)), epl.label("y", (BATCH, 4))
    h, outputs = x, []
    for s in range(stages):
        with epl.split(device_count=2, name=f"stage_{s}"):
            h = epl.layers.Dense(8, activation="tanh", name=f"fc{s}")(h)
            if s == skip[1]:
                h = epl.layers.add(h, outputs[skip[0]])
            outputs.append(h)
            if s == stages - 1:
                loss = epl.layers.softmax_cross_entropy(epl.layers.Dense(4, name="head")(h), y)
    return epl.to_mlir(loss)


@pytest.mark.parametrize("stages, skip", [(4, (0, 3)), (5, (1, 4))])
@pytest.mark.parametrize("strategy", ["PreferBackward", "ZeroBubbleH1"])
def test_skip_over_split_stages(tmp_path, stages, skip, strategy):
    """Column-split stages with a skip over two or more of them: the gather
    of the previous stage's activation that the last stage's weight
    gradient reads ran in that previous stage's backward, which every
    schedule runs after the last stage's, and the model was refused ("uses
    a value of stage 2 (backward_weight) that no pipeline schedule has
    made by then"). The gather belongs to the stage that reads it now;
    the 2 x stages ranks equal 1 rank."""
    text = column_split_stages(stages, skip, strategy)
    got_losses, got_params, report = train(tmp_path, text, 2 * stages)
    want_losses, want_params = train(tmp_path, text, 1)[:2]
    np.testing.assert_allclose(got_losses, want_losses, rtol=RTOL)
    for name, value in want_params.items():
        np.testing.assert_allclose(got_params[name], value, rtol=RTOL, atol=1e-6, err_msg=name)
    assert [r["stage"] for r in report["per_rank"]] == [s for s in range(stages) for _ in "ab"]


def test_fp16_gradients_in_a_pipeline(tmp_path):
    """2 stages x 2 replicas with each stage's gradients summed over its
    replicas in fp16: close to the f32 run (the check for overflow, an
    assertion, is copied into each stage that needs it, as pure ops are); a
    scale that overflows fp16 stops the step, naming the key."""
    fp16 = model(2, 4, kind="data", config={"communication.fp16": True}.items())
    got = train(tmp_path, fp16, 4)
    want_losses, want_params = reference(2, 4, "data")
    np.testing.assert_allclose(got[0], want_losses, rtol=2e-3)
    # Adam's steps are lr-sized whatever the gradient's size: fp16's rounding
    # of a near-zero gradient moves its parameter by a fraction of one.
    for name, value in want_params.items():
        np.testing.assert_allclose(got[1][name], value, rtol=2e-3, atol=1e-3, err_msg=name)
    overflow = model(2, 4, kind="data", config={"communication.fp16": True,
                                                "communication.fp16_scale": 1e9}.items())
    path = tmp_path / "overflow.mlir"
    path.write_text(overflow)
    out = epl_run(path, "--steps", 1, ranks=4, expect_ok=False)
    assert out.returncode == 1, out.stderr
    assert "is not finite" in out.stderr and "communication.fp16_scale = 1e+09" in out.stderr


@pytest.mark.parametrize("replicas", [1, 2])
def test_one_micro_batch_keeps_batch_statistics(tmp_path, replicas):
    """With one micro-batch the pipeline's micro-batch is the whole batch:
    a statistic over it (the batch mean subtracted from each example) is
    exact, so it trains as on one device (with more micro-batches it is an
    error, epl-autodiff-errors.mlir)."""
    def centered(stages):
        epl.init(epl.Config({"optimizer.lr": 0.1}))
        x, y = epl.input("x", (BATCH, 6)), epl.label("y", (BATCH, 4))
        with epl.replicate(replicas, name="s0" if stages else None):
            h = epl.layers.Dense(6, activation="tanh", name="fc0")(x)
            h = h - epl.nn.mean(h, 0, keepdims=True)
        with epl.replicate(replicas, name="s1" if stages else None):
            logits = epl.layers.Dense(4, name="fc1")(h)
        return epl.to_mlir(epl.layers.softmax_cross_entropy(logits, y))
    piped, _, report = train(tmp_path, centered(True), 2 * replicas)
    one, _, _ = train(tmp_path, centered(False), 1)
    assert [r["stage"] for r in report["per_rank"]] == [0] * replicas + [1] * replicas
    np.testing.assert_allclose(piped, one, rtol=RTOL)


def test_memory_follows_the_schedule(tmp_path):
    # 4 stages of equal width, 8 micro-batches: under 1F1B stage s holds the
    # activations of p - s micro-batches, so peak memory falls with s, and
    # stays below GPipe's, which holds all 8 on every stage. (Stage 0 keeps
    # less per micro-batch: its input is a slice of the step's argument, not
    # a received buffer; it is compared with GPipe only.)
    peaks = {}
    for strategy in ("PreferForward", "PreferBackward"):
        # Activations (micro-batches of 256 x 32) outweigh the weights.
        text = model(4, 8, strategy, batch=2048, width=32, features=32)
        path = tmp_path / f"{strategy}.mlir"
        path.write_text(text)
        report = tmp_path / f"{strategy}.json"
        epl_run(path, "--steps", 1, "--report", report, ranks=4)
        peaks[strategy] = [r["peak_bytes"] for r in json.loads(report.read_text())["per_rank"]]
    one_f_one_b, gpipe = peaks["PreferBackward"], peaks["PreferForward"]
    assert one_f_one_b[1] > one_f_one_b[2] > one_f_one_b[3], one_f_one_b
    assert all(a < g for a, g in zip(one_f_one_b, gpipe)), (one_f_one_b, gpipe)


def test_trace_shows_the_schedule(tmp_path):
    text = model(2, 4, "PreferForward")
    path = tmp_path / "gpipe.mlir"
    path.write_text(text)
    trace = tmp_path / "trace.json"
    epl_run(path, "--steps", 1, "--trace", trace, ranks=2)
    events = json.loads(trace.read_text())["traceEvents"]
    for rank in (0, 1):
        names = [e["name"] for e in events
                 if e.get("ph") == "X" and e["tid"] == rank and e["name"][0] in "FBW"]
        # GPipe: every forward, then every backward.
        assert names == ["F0", "F1", "F2", "F3", "B0", "W0", "B1", "W1", "B2", "W2",
                         "B3", "W3"], names


def test_pipeline_trains_like_pytorch(tmp_path):
    # The 2-stage pipeline (4 micro-batches, 1F1B) against PyTorch's
    # accumulation loop on the same weights and data, written here with
    # torch.nn: each micro-batch's mean loss scaled by 1/4, one Adam step.
    import torch
    rng = np.random.default_rng(11)
    params = {}
    for name, fan_in, fan_out in (("fc0", 6, 8), ("fc1", 8, 8), ("head", 8, 4)):
        params[f"{name}/kernel"] = (rng.standard_normal((fan_in, fan_out)) /
                                    np.sqrt(fan_in)).astype(np.float32)
        params[f"{name}/bias"] = (0.1 * rng.standard_normal(fan_out)).astype(np.float32)
    safetensors.save(tmp_path / "p.safetensors", params)
    safetensors.save(tmp_path / "d.safetensors", problem())
    (tmp_path / "m.mlir").write_text(model(2, 4))
    ours = losses(epl_run(tmp_path / "m.mlir", "--params", tmp_path / "p.safetensors",
                          "--data", tmp_path / "d.safetensors", "--steps", STEPS,
                          ranks=2).stdout)

    layers = []
    for name, fan_in, fan_out in (("fc0", 6, 8), ("fc1", 8, 8), ("head", 8, 4)):
        layer = torch.nn.Linear(fan_in, fan_out)
        with torch.no_grad():
            layer.weight.copy_(torch.from_numpy(params[f"{name}/kernel"]).T)
            layer.bias.copy_(torch.from_numpy(params[f"{name}/bias"]))
        layers.append(layer)
    opt = torch.optim.Adam([p for l in layers for p in l.parameters()], lr=0.01)
    data = problem()
    xs = torch.from_numpy(data["x"]).chunk(4)
    ys = torch.from_numpy(data["y"]).argmax(1).chunk(4)
    theirs = []
    for _ in range(STEPS):
        opt.zero_grad()
        total = 0.0
        for x, y in zip(xs, ys):
            h = torch.tanh(layers[1](torch.tanh(layers[0](x))))
            loss = torch.nn.functional.cross_entropy(layers[2](h), y)
            (loss / 4).backward()
            total += loss.item() / 4
        opt.step()
        theirs.append(total)
    np.testing.assert_allclose(ours, theirs, rtol=RTOL)


def shape_model(shape):
    """Models whose stages are not a plain chain of layers (found by trying
    to break the pipeline): each must run, and equal the 1-rank run."""
    epl.init(epl.Config({"optimizer.type": "adam", "optimizer.lr": 0.01,
                         "pipeline.num_micro_batch": 2}))
    x = epl.input("x", (BATCH, 8))
    y = epl.label("y", (BATCH, 4))
    stage = lambda s: epl.replicate(device_count=1, name=f"s{s}")
    dense = lambda name, **kw: epl.layers.Dense(8, activation="tanh", name=name, **kw)
    if shape == "unused-parameter":
        epl.param("unused", (3, 3))
    if shape == "embedding-first":
        ids = epl.input("ids", (BATCH, 4), dtype="i32")
        with stage(0):
            x = epl.layers.reshape(epl.layers.Embedding(10, 2, name="emb")(ids), (BATCH, 8))
    if shape == "no-parameter-first":
        with stage(0):
            x = epl.layers.tanh(x)
    if shape == "layer-before-stages":
        x = dense("pre")(x)
    with stage(0 if shape not in ("embedding-first", "no-parameter-first") else 1):
        first = shape in ("embedding-first", "no-parameter-first")
        h = dense("fc0", use_bias=shape != "bias-free-first")(x)
        if shape == "dead-layer":
            dense("dead")(x)
    if shape == "skip":          # a stage that does not read its predecessor
        with stage(1):
            b = dense("fc1")(x)
        with stage(2):
            h = dense("fc2")(epl.layers.add(h, b))
    elif not first:
        with stage(1):
            h = dense("fc1")(h)
            if shape == "layer-before-stages":
                h = epl.layers.add(h, x)
    logits = epl.layers.Dense(4, name="head")(h)
    return epl.to_mlir(epl.layers.softmax_cross_entropy(logits, y))


SHAPES = {"unused-parameter": 2, "dead-layer": 2, "bias-free-first": 2,
          "no-parameter-first": 2, "embedding-first": 2, "skip": 3,
          "layer-before-stages": 2}


def run_both(tmp_path, path, ranks):
    one = epl_run(path, "--steps", 3, "--seed", 2, "--save", tmp_path / "one.st")
    many = epl_run(path, "--steps", 3, "--seed", 2, "--save", tmp_path / "many.st",
                   ranks=ranks)
    np.testing.assert_allclose(losses(many.stdout), losses(one.stdout), rtol=RTOL)
    want, got = safetensors.load(tmp_path / "one.st"), safetensors.load(tmp_path / "many.st")
    assert sorted(got) == sorted(want)
    for name, value in want.items():
        np.testing.assert_allclose(got[name], value, rtol=RTOL, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_pipeline_shapes(tmp_path, shape):
    path = tmp_path / f"{shape}.mlir"
    path.write_text(shape_model(shape))
    run_both(tmp_path, path, SHAPES[shape])


@pytest.mark.parametrize("name, ranks", [
    # Stage 1 has no op: its device runs empty pieces and joins the gathers.
    ("pipeline-stage-gap", 3),
    # A stage-0 value read by stage 1 first, then by stage 0: its gradient
    # is summed on stage 0 whatever the order of its users.
    ("pipeline-gradient-sum", 2)])
def test_pipeline_written_stages(tmp_path, name, ranks):
    run_both(tmp_path, ROOT / "test" / "e2e" / "Inputs" / f"{name}.mlir", ranks)

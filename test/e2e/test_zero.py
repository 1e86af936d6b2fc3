"""ZeRO (`zero.level`) and grouped updates (`optimizer.num_apply_group`):
every level trains exactly like plain data parallelism (on data 4 and on
data 2 x split 2, with momentum and Adam, threads and mpirun); the report
shows each level's memory (1/N of the state, of the gradients, of the
parameters at rest) and its communication (1x, 1x, 1.5x the bytes a plain
data-parallel all-reduce moves)."""

import json

import numpy as np
import pytest

from conftest import BUILD, MPIRUN, epl_run, losses, run
import epl
from epl import safetensors

STEPS = 4
RTOL = 1e-5
LEVELS = ["v0", "v1", "v2"]


def model(kind, optimizer="momentum", micro_batches=1, **extra):
    config = {"optimizer.type": optimizer, "optimizer.lr": 0.05,
              "pipeline.num_micro_batch": micro_batches, **extra}
    epl.init(epl.Config(config))
    x = epl.input("x", (16, 12))
    y = epl.label("y", (16, 8))
    if kind == "data":
        with epl.replicate(device_count=1):
            h = epl.layers.Dense(32, activation="tanh", name="fc1")(x)
            logits = epl.layers.Dense(8, name="head")(h)
    else:  # data 2 x split 2: a Megatron MLP block between replicated layers
        h = epl.layers.Dense(16, activation="tanh", name="embed")(x)
        with epl.split(device_count=2):
            f = epl.layers.Dense(32, activation="gelu", name="mlp_in")(h)
            h = epl.layers.add(h, epl.layers.Dense(16, name="mlp_out")(f))
        logits = epl.layers.Dense(8, name="head")(h)
    return epl.to_mlir(epl.layers.softmax_cross_entropy(logits, y))


def train(tmp_path, kind, ranks, mpi=False, params=None, **config):
    tag = "-".join(f"{k}={v}" for k, v in sorted(config.items()))
    path = tmp_path / f"{kind}-{tag}-{ranks}{'mpi' * mpi}.mlir"
    path.write_text(model(kind, **config))
    rng = np.random.default_rng(2)
    data = tmp_path / "d.safetensors"
    safetensors.save(data, {
        "x": rng.standard_normal((16, 12)).astype(np.float32),
        "y": np.eye(8, dtype=np.float32)[rng.integers(0, 8, 16)]})
    save = path.with_suffix(".safetensors")
    report = path.with_suffix(".json")
    extra = ["--params", params] if params else []
    out = epl_run(path, "--data", data, "--steps", STEPS, "--seed", 5, "--save", save,
                  "--report", report, *extra, ranks=ranks, mpi=mpi)
    return losses(out.stdout), safetensors.load(save), json.loads(report.read_text()), out


def assert_same(a, b):
    np.testing.assert_allclose(a[0], b[0], rtol=RTOL)
    assert sorted(a[1]) == sorted(b[1])
    for name, value in b[1].items():
        np.testing.assert_allclose(a[1][name], value, rtol=RTOL, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("optimizer", ["momentum", "adam"])
@pytest.mark.parametrize("kind", ["data", "data_split"])
def test_every_level_trains_like_plain_data_parallelism(tmp_path, kind, optimizer):
    plain = train(tmp_path, kind, 4, optimizer=optimizer)
    for level in LEVELS:
        assert_same(train(tmp_path, kind, 4, optimizer=optimizer,
                          **{"zero.level": level}), plain)
    assert plain[0][-1] < plain[0][0]


@pytest.mark.skipif(not MPIRUN, reason="mpirun is not installed")
@pytest.mark.parametrize("kind", ["data", "data_split"])
def test_every_level_under_mpirun(tmp_path, kind):
    plain = train(tmp_path, kind, 4, optimizer="adam")
    for level in LEVELS:
        assert_same(train(tmp_path, kind, 4, mpi=True, optimizer="adam",
                          **{"zero.level": level}), plain)


def test_gradient_accumulation(tmp_path):
    """2 micro-batches: v0 reduce-scatters the accumulated gradients once per
    step, v1 and v2 every micro-batch into 1/N accumulators."""
    plain = train(tmp_path, "data", 4, micro_batches=2)
    counts = {}
    for level in LEVELS:
        result = train(tmp_path, "data", 4, micro_batches=2, **{"zero.level": level})
        assert_same(result, plain)
        counts[level] = sum(c["count"] for c in result[2]["collectives"]
                            if c["kind"] == "reduce_scatter")
    params = 4  # fc1 and head: kernel and bias
    assert counts == {"v0": STEPS * params, "v1": 2 * STEPS * params,
                      "v2": 2 * STEPS * params}


def test_checkpoints_stay_global(tmp_path):
    """--save writes whole tensors at every level; --params re-shards them:
    a run resumed from a v2 checkpoint under v0 continues like one run."""
    _, one, _, _ = train(tmp_path, "data", 1, optimizer="adam")
    _, saved, _, _ = train(tmp_path, "data", 4, optimizer="adam", **{"zero.level": "v2"})
    for name, value in one.items():
        assert saved[name].shape == value.shape, name
    checkpoint = sorted(tmp_path.glob("data-optimizer=adam-zero.level=v2-4.safetensors"))[0]
    resumed = train(tmp_path, "data", 4, optimizer="adam", params=checkpoint,
                    **{"zero.level": "v0"})
    again = train(tmp_path, "data", 1, optimizer="adam", params=checkpoint)
    assert_same(resumed, again)


def memory(report, key):
    return [r[key] for r in report["per_rank"]]


def traffic(report, kind):
    return report["per_rank"][0]["communication"][kind]["traffic_bytes_per_step"]


def test_report_memory_and_communication(tmp_path):
    n = 4
    plain = train(tmp_path, "data", n, optimizer="adam")[2]
    levels = {l: train(tmp_path, "data", n, optimizer="adam", **{"zero.level": l})[2]
              for l in LEVELS}
    params = memory(plain, "param_bytes")[0]
    assert memory(plain, "opt_state_bytes")[0] == 2 * params + 8  # exp_avg(_sq), step
    assert memory(plain, "grad_bytes") == [params] * n
    for level, report in levels.items():
        assert memory(report, "opt_state_bytes") == [2 * params // n + 8] * n, level
        assert memory(report, "grad_bytes") == [params // n] * n, level
        expected = params // n if level == "v2" else params
        assert memory(report, "param_bytes") == [expected] * n, level
    # What a plain all-reduce of the gradients moves (ring algorithms; the
    # loss's all-reduce aside), against each level's reduce-scatter and
    # all-gathers.
    loss = 2 * (n - 1) * 4 / n
    all_reduce = traffic(plain, "all_reduce") - loss
    assert all_reduce == pytest.approx(2 * (n - 1) / n * params)
    for level, report in levels.items():
        assert traffic(report, "all_reduce") == pytest.approx(loss)
        moved = traffic(report, "reduce_scatter") + traffic(report, "all_gather")
        ratio = moved / all_reduce
        print(f"zero {level}: communication {ratio:.3f}x the plain all-reduce")
        if level != "v2":
            assert ratio == pytest.approx(1.0), level
            continue
        # v2 gathers each parameter again for the backward, if the backward
        # reads it: of fc1 and head, only head/kernel (32x8) is (for the
        # input gradient of head). ZeRO-3's 1.5x is the bound, reached
        # when the backward reads every parameter.
        backward = 32 * 8 * 4
        assert ratio == pytest.approx(1.0 + 0.5 * backward / params)
        assert ratio <= 1.5


def test_v2_with_checkpointing_moves_one_and_a_half_all_reduces(tmp_path):
    """With gradient checkpointing the backward recomputes the forward, so
    it reads every parameter: ZeRO-3's bound, 1.5x a plain all-reduce's
    bytes (a reduce-scatter and two all-gathers), is reached exactly. The
    recomputation and the backward share one gather per parameter (gathered
    apart it was 1.69x); training is unchanged."""
    n = 4
    plain = train(tmp_path, "data", n, optimizer="adam")
    zero = train(tmp_path, "data", n, optimizer="adam",
                 **{"zero.level": "v2", "gradient_checkpoint.type": "auto"})
    assert_same(zero, plain)
    loss = 2 * (n - 1) * 4 / n
    all_reduce = traffic(plain[2], "all_reduce") - loss
    moved = traffic(zero[2], "reduce_scatter") + traffic(zero[2], "all_gather")
    assert moved / all_reduce == pytest.approx(1.5)


@pytest.mark.parametrize("kind", ["data", "data_split"])
def test_num_apply_group_changes_nothing_but_the_order(tmp_path, kind):
    plain = train(tmp_path, kind, 4, optimizer="adam")
    assert_same(train(tmp_path, kind, 4, optimizer="adam",
                      **{"optimizer.num_apply_group": 3}), plain)
    if MPIRUN:
        assert_same(train(tmp_path, kind, 4, mpi=True, optimizer="adam",
                          **{"optimizer.num_apply_group": 3}), plain)
    one = train(tmp_path, kind, 1, optimizer="adam")
    assert_same(train(tmp_path, kind, 1, optimizer="adam",
                      **{"optimizer.num_apply_group": 2, "zero.level": ""}), one)


def test_zero_on_one_device_is_an_error(tmp_path):
    path = tmp_path / "m.mlir"
    path.write_text(model("data", **{"zero.level": "v1"}))
    out = epl_run(path, "--steps", 1, expect_ok=False)
    assert out.returncode == 1
    assert "ZeRO needs at least 2 data-parallel workers (EPL: >= 2 workers)" in out.stderr
    # Located at the user's line that wrote the model (its function's).
    assert f"{__file__}:" in out.stderr


def test_composes_with_pipeline_stages(tmp_path):
    """examples/pipeline.mlir on 2 stages x 2 data-parallel replicas: every
    level trains like the plain pipeline."""
    from conftest import ROOT
    text = (ROOT / "examples" / "pipeline.mlir").read_text()

    def run_level(level):
        path = tmp_path / f"pipeline-{level or 'plain'}.mlir"
        path.write_text(text.replace("epl.config = {", f'epl.config = {{"zero.level" = "{level}", ', 1))
        save = path.with_suffix(".safetensors")
        out = epl_run(path, "--steps", 3, "--seed", 1, "--save", save, ranks=4)
        return losses(out.stdout), safetensors.load(save)

    plain = run_level("")
    for level in LEVELS:
        assert_same(run_level(level), plain)

"""Training on a dataset (epl-run --dataset, epl.train(dataset=...)): the
batches, the per-epoch shuffle and each rank's shard against an independent
reimplementation, data parallelism against one rank, Fashion-MNIST, the
evaluation, and bad input."""

import pathlib
import re
import sys

import numpy as np
import pytest
import torch

from conftest import EPL_RUN, ROOT, run
import epl
from epl import data
from epl.initializers import initialize

# --- the order of the samples ------------------------------------------------


def test_shuffled_order_is_a_permutation_per_epoch_and_seed():
    a, b = data.shuffled_order(1000, 0, 1), data.shuffled_order(1000, 0, 2)
    assert sorted(a.tolist()) == list(range(1000))
    assert (a != b).any() and (a != data.shuffled_order(1000, 1, 1)).any()
    assert (a == data.shuffled_order(1000, 0, 1)).all()


def linear_model(batch, features, classes, lr):
    epl.init(epl.Config({"optimizer.type": "sgd", "optimizer.lr": lr}))
    x = epl.input("x", (batch, features))
    y = epl.label("y", (batch, classes))
    with epl.replicate(device_count=1):
        return epl.layers.softmax_cross_entropy(epl.layers.Dense(classes, name="fc")(x), y)


@pytest.mark.parametrize("ranks,shuffle", [(1, False), (1, True), (2, True), (4, True)])
def test_batches_shuffle_and_shards_match_numpy(ranks, shuffle):
    """43 samples, global batch 8: 5 batches an epoch (3 samples dropped),
    3 epochs; the losses equal plain SGD in PyTorch on the batches
    data.batches cuts in the order data.shuffled_order defines. On 2 and 4
    ranks each reads its rows of each batch: any other rows would change
    the gradients."""
    rng = np.random.default_rng(7)
    n, batch, features, classes, lr, seed = 43, 8, 6, 3, 0.5, 3
    arrays = {"x": rng.normal(size=(n, features)).astype(np.float32),
              "y": np.eye(classes, dtype=np.float32)[rng.integers(0, classes, n)]}
    loss = linear_model(batch, features, classes, lr)
    result = epl.train(loss, devices=ranks, seed=seed, dataset=arrays, epochs=3,
                       shuffle=shuffle)
    assert len(result.losses) == 3 * (n // batch)
    assert [e[0] for e in result.epochs] == [1, 2, 3]

    w = torch.tensor(initialize("fc/kernel", "param", (features, classes), seed=seed),
                     dtype=torch.float64, requires_grad=True)
    b = torch.zeros(classes, dtype=torch.float64, requires_grad=True)
    want = []
    for step in data.batches(arrays, batch, seed=seed, epochs=3, shuffle=shuffle):
        x, y = (torch.tensor(step[k], dtype=torch.float64) for k in ("x", "y"))
        value = -(y * torch.log_softmax(x @ w + b, dim=1)).sum(1).mean()
        want.append(value.item())
        value.backward()
        with torch.no_grad():
            for p in (w, b):
                p -= lr * p.grad
                p.grad = None
    np.testing.assert_allclose(result.losses, want, rtol=1e-5, atol=1e-6)
    # Each epoch line's mean loss is the mean of its steps'.
    for epoch, mean, _ in result.epochs:
        np.testing.assert_allclose(mean, np.mean(result.losses[(epoch - 1) * 5:epoch * 5]),
                                   rtol=1e-6)


# --- Fashion-MNIST --------------------------------------------------------------


def test_data_beside_a_dataset_is_an_error():
    """Batches from a dataset would leave `data` unread."""
    arrays = {"x": np.zeros((16, 6), np.float32), "y": np.zeros((16, 3), np.float32)}
    loss = linear_model(8, 6, 3, 0.1)
    with pytest.raises(epl.EPLError, match="train: `data` and `dataset` both give the inputs "
                                           "and labels; give one"):
        epl.train(loss, dataset=arrays, data={"x": arrays["x"][:8], "y": arrays["y"][:8]})


@pytest.mark.parametrize("keywords, message", [
    ({"epochs": 3}, "train: epochs need `dataset`"),
    ({"shuffle": True, "eval_each_epoch": True, "eval_dataset": {}},
     "train: shuffle, eval_each_epoch need `dataset`"),
    ({"eval_model": "module {}"}, "train: eval_model and eval_each_epoch need `eval_dataset`"),
    ({"epochs": 2, "steps": 1, "dataset": {}},
     "train: epochs and steps both say how long to train; give one"),
])
def test_options_without_what_they_act_on_are_errors(keywords, message):
    """Dataset and evaluation options given without a dataset or an
    evaluation set were accepted and dropped (steps steps ran, no epochs,
    no evaluation), and so was `steps` beside `epochs`: the command line's
    errors, from Python."""
    loss = linear_model(8, 6, 3, 0.1)
    with pytest.raises(epl.EPLError, match=re.escape(message)):
        epl.train(loss, **keywords)


@pytest.mark.parametrize("ranks", [1, 2])
def test_resuming_goes_on_where_the_dataset_stopped(tmp_path, ranks):
    """A checkpoint records how many batches its run read: 7 steps and then
    6 from it (mid-epoch, shuffled, Adam and a cosine schedule) equal 13
    straight, bit for bit, through Python (result.params) and through a
    checkpoint file; --epochs counts the checkpoint's epochs. A checkpoint
    of another order (another seed), or one without its metadata, starts
    the dataset over, with a warning."""
    rng = np.random.default_rng(5)
    n, batch = 43, 8
    arrays = {"x": rng.normal(size=(n, 6)).astype(np.float32),
              "y": np.eye(3, dtype=np.float32)[rng.integers(0, 3, n)]}
    config = {"optimizer.type": "adam", "optimizer.lr": 0.05,
              "optimizer.lr_schedule": "cosine", "optimizer.decay_steps": 13}
    epl.init(epl.Config(config))
    x, y = epl.input("x", (batch, 6)), epl.label("y", (batch, 3))
    with epl.replicate(device_count=1):
        loss = epl.layers.softmax_cross_entropy(epl.layers.Dense(3, name="fc")(x), y)
    kw = dict(devices=ranks, seed=3, dataset=arrays, shuffle=True)
    straight = epl.train(loss, steps=13, **kw)
    first = epl.train(loss, steps=7, save=tmp_path / "c.safetensors", **kw)
    assert first.params.metadata["dataset.batches"] == "7"
    on = epl.train(loss, steps=6, params=first.params, **kw)
    assert first.losses + on.losses == straight.losses
    for name, value in straight.params.items():
        np.testing.assert_array_equal(on.params[name], value, err_msg=name)
    assert on.params.metadata["dataset.batches"] == "13"

    # 3 epochs of 5 batches in all: 8 more steps after the checkpoint's 7.
    rest = epl.train(loss, epochs=3, params=tmp_path / "c.safetensors", **kw)
    assert len(rest.losses) == 8 and [e[0] for e in rest.epochs] == [2, 3]
    assert rest.losses[:6] == straight.losses[7:]
    with pytest.raises(epl.ToolError, match="--epochs 1: the checkpoint has done those "
                                            "epochs; it read 7 batches of 5 per epoch"):
        epl.train(loss, epochs=1, params=first.params, **kw)
    with pytest.warns(epl.EPLWarning, match=r"another dataset or order \(seed 3 there, "
                                            r"4 here\): this one starts at its first batch"):
        other = epl.train(loss, steps=2, params=first.params, **dict(kw, seed=4))
    assert other.params.metadata["dataset.batches"] == "2"
    # Other data of the same size and order: its contents differ (it went
    # on at batch 8 of data it had never read).
    changed = dict(arrays, x=arrays["x"] + 1)
    with pytest.warns(epl.EPLWarning, match=r"another dataset or order \(its contents differ "
                                            r"\(fingerprint [0-9a-f]+ there, [0-9a-f]+ here\)\): "
                                            r"this one starts at its first batch"):
        fresh = epl.train(loss, steps=2, params=first.params, **dict(kw, dataset=changed))
    assert fresh.params.metadata["dataset.batches"] == "2"
    # A copy of the checkpoint without its metadata (a dict of it, saved
    # with np.savez) keeps the Adam state: it went on from the first batch
    # with no word.
    with pytest.warns(epl.EPLWarning, match=r"holds optimizer state but no position in a "
                                            r"dataset .*: this run starts at the dataset's "
                                            r"first batch"):
        copy = epl.train(loss, steps=2, params=dict(first.params), **kw)
    assert copy.params.metadata["dataset.batches"] == "2"


def fashion_mnist_or_skip():
    try:
        return data.find_fashion_mnist()
    except data.DatasetError as e:
        pytest.skip(f"Fashion-MNIST is not installed: {e}")


def mlp(batch):
    """784-256-10, AdamW: loss and logits traced at `batch`."""
    epl.init(epl.Config({"optimizer.type": "adamw", "optimizer.lr": 1e-3}))
    x = epl.input("x", (batch, 784))
    y = epl.label("y", (batch, 10))
    with epl.replicate(device_count=1):
        h = epl.layers.Dense(256, activation="relu", name="fc1")(x)
        logits = epl.layers.Dense(10, name="fc2")(h)
        return epl.layers.softmax_cross_entropy(logits, y), logits


@pytest.fixture(scope="module")
def fashion(tmp_path_factory):
    """A slice of Fashion-MNIST: 6400 training and 2000 test images."""
    directory = fashion_mnist_or_skip()
    tmp = tmp_path_factory.mktemp("fashion")
    data.fashion_mnist_safetensors(tmp / "train.safetensors", "train", directory, limit=6400)
    data.fashion_mnist_safetensors(tmp / "test.safetensors", "test", directory, limit=2000)
    return tmp


def test_fashion_mnist_four_ranks_follow_one_rank(fashion):
    """Data parallelism on 4 ranks, each reading its quarter of every
    shuffled global batch, gives the 1-rank run's losses within 1e-5 for
    the first 20 steps, and the same test accuracy."""
    eval_loss, eval_logits = mlp(500)
    eval_model = epl.to_mlir(eval_loss, outputs=[eval_logits])
    runs = {}
    for ranks in (1, 4):
        loss, _ = mlp(128)
        runs[ranks] = epl.train(loss, devices=ranks, steps=20, shuffle=True,
                                dataset=fashion / "train.safetensors",
                                eval_model=eval_model,
                                eval_dataset=fashion / "test.safetensors")
    assert len(runs[1].losses) == len(runs[4].losses) == 20
    np.testing.assert_allclose(runs[4].losses, runs[1].losses, rtol=0, atol=1e-5)
    assert runs[1].evaluation.samples == runs[4].evaluation.samples == 2000
    assert runs[4].evaluation.accuracy == pytest.approx(runs[1].evaluation.accuracy,
                                                        abs=1e-3)


def test_fashion_mnist_slice_trains(fashion):
    """300 steps (3 epochs of 6400 images, batch 64) of the MLP: the last
    epoch's mean loss falls below 0.45 and the test accuracy passes 80%."""
    eval_loss, eval_logits = mlp(1000)
    eval_model = epl.to_mlir(eval_loss, outputs=[eval_logits])
    loss, _ = mlp(64)
    result = epl.train(loss, epochs=3, shuffle=True, dataset=fashion / "train.safetensors",
                       eval_model=eval_model, eval_dataset=fashion / "test.safetensors",
                       eval_each_epoch=True)
    assert len(result.losses) == 300
    assert [e[0] for e in result.epochs] == [1, 2, 3]
    assert result.epochs[-1][1] < 0.45, result.epochs
    assert all(e[2] > 0 for e in result.epochs)            # samples per second
    assert len(result.evaluations) == 3
    assert result.evaluation.accuracy > 0.80, result.evaluations
    # The step lines end with the throughput.
    step = next(l for l in result.output.splitlines() if l.startswith("step 1 "))
    assert step.split()[6] == "samples_per_s" and float(step.split()[7]) > 0


def test_fashion_mnist_missing_directory_is_one_clear_error(tmp_path):
    result = run([sys.executable, ROOT / "examples" / "fashion_mnist.py", "--data-dir",
                  tmp_path / "nowhere"], expect_ok=False)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "nowhere" in lines[0]
    assert "apt-get install dataset-fashion-mnist" in lines[0]


# --- bad input -----------------------------------------------------------------

MLP = ROOT / "examples" / "mlp.mlir"        # x: 32x784 f32, y: 32x10 f32


def one_error_line(args):
    result = run([EPL_RUN, MLP, *args], expect_ok=False)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert result.stdout == ""
    return lines[0]


def write(path, **arrays):
    data.save(path, arrays)
    return path


def test_sample_shape_mismatch_names_file_and_shapes(tmp_path):
    f = write(tmp_path / "images.safetensors", x=np.zeros((64, 28, 28), np.float32),
              y=np.zeros((64, 10), np.float32))
    line = one_error_line(["--dataset", f])
    assert str(f) in line and "'x'" in line
    assert "[28, 28] F32" in line and "[784] F32" in line


def test_sample_dtype_mismatch_names_file_and_types(tmp_path):
    f = write(tmp_path / "ids.safetensors", x=np.zeros((64, 784), np.float32),
              y=np.zeros((64,), np.int64))
    line = one_error_line(["--dataset", f])
    assert str(f) in line and "'y'" in line
    assert "[] I64" in line and "[10] F32" in line


def test_fewer_samples_than_a_global_batch(tmp_path):
    f = write(tmp_path / "few.safetensors", x=np.zeros((20, 784), np.float32),
              y=np.zeros((20, 10), np.float32))
    line = one_error_line(["--dataset", f])
    assert str(f) in line and "20 samples" in line and "batch of 32" in line


def test_missing_dataset_and_missing_tensor(tmp_path):
    line = one_error_line(["--dataset", tmp_path / "absent.safetensors"])
    assert "absent.safetensors" in line
    f = write(tmp_path / "x-only.safetensors", x=np.zeros((64, 784), np.float32))
    line = one_error_line(["--dataset", f])
    assert str(f) in line and "'y'" in line and "it holds: x" in line


def test_npy_dataset_trains_like_the_safetensors_one(tmp_path):
    """NAME=FILE.npy pairs (numpy.save's own format, versions 1 and 2)
    feed the same batches as one safetensors file: identical losses, on
    1 and 2 ranks, shuffled."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=(96, 784)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 96)]
    st = write(tmp_path / "d.safetensors", x=x, y=y)
    np.save(tmp_path / "x.npy", x)
    with open(tmp_path / "y.npy", "wb") as f:
        np.lib.format.write_array(f, y, version=(2, 0))
    spec = f"x={tmp_path / 'x.npy'},y={tmp_path / 'y.npy'}"
    for ranks in ("1", "2"):
        args = ["--epochs", "2", "--shuffle", "--ranks", ranks]
        want = run([EPL_RUN, MLP, "--dataset", st, *args]).stdout
        got = run([EPL_RUN, MLP, "--dataset", spec, *args]).stdout
        strip = [l.split(" time_ms")[0] for l in want.splitlines() if l.startswith("step ")]
        assert strip == [l.split(" time_ms")[0] for l in got.splitlines()
                         if l.startswith("step ")]
        assert len(strip) == 6


def test_bad_npy_datasets_are_one_clear_error(tmp_path):
    y = tmp_path / "y.npy"
    np.save(y, np.zeros((64, 10), np.float32))
    cases = {
        "fortran": (np.asfortranarray(np.zeros((64, 784), np.float32)), "Fortran order"),
        "big": (np.zeros((64, 784), ">f4"), "elements '>f4'"),
        "ints": (np.zeros((64, 784), np.uint8), "[784] U8"),
        "rows": (np.zeros((64, 783), np.float32), "[783] F32"),
    }
    for stem, (array, says) in cases.items():
        x = tmp_path / f"{stem}.npy"
        np.save(x, array)
        line = one_error_line(["--dataset", f"x={x},y={y}"])
        assert str(x) in line and says in line, line
    long = tmp_path / "long.npy"
    long.write_bytes((tmp_path / "rows.npy").read_bytes() + b"\0\0\0\0")
    line = one_error_line(["--dataset", f"x={long},y={y}"])
    assert str(long) in line and "more than shape" in line
    huge = tmp_path / "huge.npy"
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 16777216), }"
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    huge.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") +
                     header.encode())
    line = one_error_line(["--dataset", f"x={huge},y={y}"])
    assert str(huge) in line and "too large" in line
    truncated = tmp_path / "truncated.npy"
    truncated.write_bytes((tmp_path / "rows.npy").read_bytes()[:1000])
    line = one_error_line(["--dataset", f"x={truncated},y={y}"])
    assert str(truncated) in line and "fewer than shape" in line
    line = one_error_line(["--dataset", f"x={tmp_path / 'absent.npy'},y={y}"])
    assert "absent.npy" in line
    good = tmp_path / "good.npy"
    np.save(good, np.zeros((64, 784), np.float32))
    line = one_error_line(["--dataset", f"x={good}"])
    assert "'y'" in line and "it holds: x" in line
    line = one_error_line(["--dataset", f"x:{y}=a"])
    assert "is not NAME=FILE.npy" in line


def test_safetensors_dataset_whose_path_holds_an_equals_sign(tmp_path):
    folder = tmp_path / "lr=0.1"
    folder.mkdir()
    f = write(folder / "train.safetensors", x=np.zeros((64, 784), np.float32),
              y=np.zeros((64, 10), np.float32))
    result = run([EPL_RUN, MLP, "--dataset", f, "--steps", 1])
    assert "step 1 loss" in result.stdout


def test_evaluation_dataset_is_checked_before_training(tmp_path):
    good = write(tmp_path / "train.safetensors", x=np.zeros((64, 784), np.float32),
                 y=np.zeros((64, 10), np.float32))
    bad = write(tmp_path / "test.safetensors", x=np.zeros((64, 785), np.float32),
                y=np.zeros((64, 10), np.float32))
    line = one_error_line(["--dataset", good, "--eval-dataset", bad])
    assert str(bad) in line and "[785] F32" in line and "[784] F32" in line


def test_evaluation_says_which_samples_it_leaves_out(tmp_path):
    """The evaluation runs whole batches: 80 samples at a batch of 32 are 64
    evaluated, and the 16 left are said, not left out in silence."""
    rng = np.random.default_rng(0)
    train = write(tmp_path / "train.safetensors", x=np.zeros((64, 784), np.float32),
                  y=np.zeros((64, 10), np.float32))
    test = write(tmp_path / "test.safetensors",
                 x=rng.standard_normal((80, 784)).astype(np.float32),
                 y=np.eye(10, dtype=np.float32)[rng.integers(0, 10, 80)])
    out = run([EPL_RUN, MLP, "--dataset", train, "--eval-dataset", test, "--epochs", 1])
    assert (f"epl-run: warning: the last 16 of the 80 samples of {test} fill no batch "
            "of 32 and are not evaluated") in out.stderr
    assert "samples 64" in out.stdout + out.stderr


def test_fashion_mnist_example_runs_on_a_slice():
    """examples/fashion_mnist.py end to end on 4 ranks, 1280 training images
    for 1 epoch (the README's full run: 8 epochs, 89.3%)."""
    fashion_mnist_or_skip()
    result = run([sys.executable, ROOT / "examples" / "fashion_mnist.py", "--limit", "1280",
                  "--epochs", "1"])
    out = result.stdout
    assert "epl-run: epoch 1 mean_loss" in out and "epl-run: eval loss" in out
    assert 'partitioned by epl-parallelize: epl.mesh @mesh ["data" = 4]' in out
    accuracy = float(out.split("test accuracy ")[1].split()[0])
    assert 0.5 < accuracy <= 1 and "(10000 images)" in out

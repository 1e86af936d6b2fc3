"""Convolutional models: a small ResNet written with the frontend
(epl.layers.Conv2D, BatchNorm, MaxPool2D, GlobalAvgPool, resnet) trains like
the same network in torch.nn (Conv2d, BatchNorm2d in train mode, MaxPool2d,
AdaptiveAvgPool2d, Linear) for 20 steps with momentum SGD and AdamW, keeps
the same running statistics and evaluates like it in eval(), and data
parallelism on 2 and 4 ranks (synchronized batch norm) equals 1 rank.
Layouts: ours NHWC with HWCF filters, torch's NCHW with FCHW filters."""

import json
import re
import subprocess

import numpy as np
import pytest
import torch

from conftest import BUILD, epl_run, losses
import epl
from epl import safetensors

STEPS = 20
RTOL = 1e-5
BATCH, SIZE, CHANNELS, CLASSES = 8, 8, 3, 5

OPTIMIZERS = {
    "momentum": {"optimizer.type": "momentum", "optimizer.lr": 0.05,
                 "optimizer.momentum": 0.9, "optimizer.weight_decay": 1e-3},
    "adamw": {"optimizer.type": "adamw", "optimizer.lr": 1e-3, "optimizer.beta1": 0.9,
              "optimizer.beta2": 0.999, "optimizer.eps": 1e-8,
              "optimizer.weight_decay": 1e-2},
}


def model(optimizer, training=True):
    epl.init(epl.Config(OPTIMIZERS[optimizer]))
    x = epl.input("x", (BATCH, SIZE, SIZE, CHANNELS))
    y = epl.label("y", (BATCH, CLASSES))
    with epl.replicate(device_count=1):
        h = epl.layers.MaxPool2D(2, strides=1)(
            epl.layers.Conv2D(4, 3, padding=1, name="pre")(x))
        logits = epl.layers.resnet(h, CLASSES, widths=(4, 8), blocks_per_stage=1,
                                   training=training)
    return epl.to_mlir(epl.layers.softmax_cross_entropy(logits, y),
                       outputs=[] if training else [logits])


class TorchResNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        c = torch.nn.Conv2d
        self.pre = c(3, 4, 3, padding=1)
        self.pool = torch.nn.MaxPool2d(2, stride=1)
        self.stem, self.stem_bn = c(4, 4, 3, padding=1, bias=False), torch.nn.BatchNorm2d(4)
        self.s0c1, self.s0b1 = c(4, 4, 3, padding=1, bias=False), torch.nn.BatchNorm2d(4)
        self.s0c2, self.s0b2 = c(4, 4, 3, padding=1, bias=False), torch.nn.BatchNorm2d(4)
        self.s1c1 = c(4, 8, 3, stride=2, padding=1, bias=False)
        self.s1b1 = torch.nn.BatchNorm2d(8)
        self.s1c2, self.s1b2 = c(8, 8, 3, padding=1, bias=False), torch.nn.BatchNorm2d(8)
        self.s1sc, self.s1sb = c(4, 8, 1, stride=2, bias=False), torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8, CLASSES)

    def forward(self, x, y):
        relu = torch.relu
        h = self.pool(self.pre(x))
        h = relu(self.stem_bn(self.stem(h)))
        h = relu(h + self.s0b2(self.s0c2(relu(self.s0b1(self.s0c1(h))))))
        y1 = self.s1b2(self.s1c2(relu(self.s1b1(self.s1c1(h)))))
        h = relu(self.s1sb(self.s1sc(h)) + y1)
        logits = self.fc(torch.nn.functional.adaptive_avg_pool2d(h, 1).flatten(1))
        return torch.nn.functional.cross_entropy(logits, y.argmax(1))

    BN = {"stem_bn": "resnet/stem_bn", "s0b1": "resnet/stage0/block0/bn1",
          "s0b2": "resnet/stage0/block0/bn2", "s1b1": "resnet/stage1/block0/bn1",
          "s1b2": "resnet/stage1/block0/bn2", "s1sb": "resnet/stage1/block0/shortcut_bn"}

    def load(self, p):
        conv = {"pre": "pre", "stem": "resnet/stem", "s0c1": "resnet/stage0/block0/conv1",
                "s0c2": "resnet/stage0/block0/conv2", "s1c1": "resnet/stage1/block0/conv1",
                "s1c2": "resnet/stage1/block0/conv2", "s1sc": "resnet/stage1/block0/shortcut"}
        with torch.no_grad():
            for ours, name in conv.items():
                layer = getattr(self, ours)
                layer.weight.copy_(torch.from_numpy(p[f"{name}/kernel"]).permute(3, 2, 0, 1))
                if layer.bias is not None:
                    layer.bias.copy_(torch.from_numpy(p[f"{name}/bias"]))
            for ours, name in self.BN.items():
                getattr(self, ours).weight.copy_(torch.from_numpy(p[f"{name}/gamma"]))
                getattr(self, ours).bias.copy_(torch.from_numpy(p[f"{name}/beta"]))
            self.fc.weight.copy_(torch.from_numpy(p["resnet/classifier/kernel"]).T)
            self.fc.bias.copy_(torch.from_numpy(p["resnet/classifier/bias"]))


def torch_training(params, data, optimizer):
    """The torch model after STEPS steps, and its losses."""
    torch.manual_seed(0)
    net = TorchResNet()
    net.load(params)
    net.train()
    cfg = OPTIMIZERS[optimizer]
    if optimizer == "momentum":
        opt = torch.optim.SGD(net.parameters(), lr=cfg["optimizer.lr"],
                              momentum=cfg["optimizer.momentum"],
                              weight_decay=cfg["optimizer.weight_decay"])
    else:
        opt = torch.optim.AdamW(net.parameters(), lr=cfg["optimizer.lr"],
                                betas=(cfg["optimizer.beta1"], cfg["optimizer.beta2"]),
                                eps=cfg["optimizer.eps"],
                                weight_decay=cfg["optimizer.weight_decay"])
    x = torch.from_numpy(data["x"]).permute(0, 3, 1, 2).contiguous()
    y = torch.from_numpy(data["y"])
    out = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = net(x, y)
        loss.backward()
        opt.step()
        out.append(loss.item())
    return net, out


def problem(tmp_path, optimizer):
    path = tmp_path / f"resnet-{optimizer}.mlir"
    path.write_text(model(optimizer))
    rng = np.random.default_rng(3)
    data = {"x": rng.standard_normal((BATCH, SIZE, SIZE, CHANNELS)).astype(np.float32),
            "y": np.eye(CLASSES, dtype=np.float32)[rng.integers(0, CLASSES, BATCH)]}
    safetensors.save(tmp_path / "d.safetensors", data)
    # The seeded parameters, as epl-run draws them.
    epl_run(path, "--steps", 0, "--save", tmp_path / "p.safetensors")
    params = {k: v for k, v in safetensors.load(tmp_path / "p.safetensors").items()
              if "." not in k}   # not optimizer state
    return path, params, data


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_resnet_trains_like_torch(tmp_path, optimizer):
    path, params, data = problem(tmp_path, optimizer)
    got = losses(epl_run(path, "--params", tmp_path / "p.safetensors", "--data",
                         tmp_path / "d.safetensors", "--steps", STEPS).stdout)
    _, expected = torch_training(params, data, optimizer)
    assert got[-1] < got[0]
    np.testing.assert_allclose(got, expected, rtol=RTOL)


def test_resnet_running_statistics_and_inference_like_torch(tmp_path):
    """Batch norm's running statistics (model state: momentum 0.1, the
    unbiased variance) after 20 steps are torch's buffers, and the
    inference-mode model (training=False) scores the batch like torch's
    eval() with them."""
    path, params, data = problem(tmp_path, "momentum")
    trained = tmp_path / "trained.safetensors"
    epl_run(path, "--params", tmp_path / "p.safetensors", "--data",
            tmp_path / "d.safetensors", "--steps", STEPS, "--save", trained)
    net, _ = torch_training(params, data, "momentum")
    state = safetensors.load(trained)
    for ours, name in TorchResNet.BN.items():
        bn = getattr(net, ours)
        for stat in ("running_mean", "running_var"):
            np.testing.assert_allclose(state[f"{name}/{stat}"],
                                       getattr(bn, stat).numpy(), rtol=1e-4, atol=1e-6,
                                       err_msg=f"{name}/{stat}")
    # Statistics that moved: not the initial zeros and ones.
    assert np.abs(state["resnet/stem_bn/running_mean"]).max() > 1e-2
    evaluation = tmp_path / "eval.mlir"
    evaluation.write_text(model("momentum", training=False))
    text = evaluation.read_text()
    assert 'epl.arg = "state", epl.name = "resnet/stem_bn/running_var"' in text
    assert 'epl.result = "state"' not in text
    got = losses(epl_run(evaluation, "--params", trained, "--data",
                         tmp_path / "d.safetensors", "--no-train").stdout)
    # The training model's forward reports its loss too (its state results
    # follow it).
    assert len(losses(epl_run(path, "--params", trained, "--data",
                              tmp_path / "d.safetensors", "--no-train").stdout)) == 1
    net.eval()
    x = torch.from_numpy(data["x"]).permute(0, 3, 1, 2).contiguous()
    with torch.no_grad():
        expected = net(x, torch.from_numpy(data["y"])).item()
    # Inference differs from the training forward on the same batch.
    with torch.no_grad():
        assert abs(net.train()(x, torch.from_numpy(data["y"])).item() - expected) > 1e-3
    np.testing.assert_allclose(got, [expected], rtol=1e-4)


def test_state_resumes_from_a_checkpoint(tmp_path):
    """Running statistics are saved with the parameters and loaded back:
    10 steps, saved, then 10 more, equal 20 steps in one run."""
    path, _, _ = problem(tmp_path, "momentum")
    common = (path, "--data", tmp_path / "d.safetensors")
    whole = tmp_path / "whole.safetensors"
    half = tmp_path / "half.safetensors"
    resumed = tmp_path / "resumed.safetensors"
    epl_run(*common, "--params", tmp_path / "p.safetensors", "--steps", 20, "--save", whole)
    epl_run(*common, "--params", tmp_path / "p.safetensors", "--steps", 10, "--save", half)
    epl_run(*common, "--params", half, "--steps", 10, "--save", resumed)
    a, b = safetensors.load(whole), safetensors.load(resumed)
    assert "resnet/stage1/block0/bn2/running_var" in a
    for name in a:
        np.testing.assert_allclose(b[name], a[name], rtol=1e-5, atol=1e-7, err_msg=name)


@pytest.mark.parametrize("ranks,mpi", [(2, False), (4, False), (2, True)])
def test_resnet_data_parallel_equals_one_rank(tmp_path, ranks, mpi):
    """The batch split over ranks, batch-norm statistics reduced across
    them: N ranks train like one."""
    path, _, _ = problem(tmp_path, "momentum")
    args = (path, "--params", tmp_path / "p.safetensors", "--data",
            tmp_path / "d.safetensors", "--steps", 10)
    one = losses(epl_run(*args, "--save", tmp_path / "one.safetensors").stdout)
    many = losses(epl_run(*args, "--save", tmp_path / "many.safetensors", ranks=ranks,
                          mpi=mpi).stdout)
    np.testing.assert_allclose(many, one, rtol=RTOL)
    # Parameters and running statistics (of the global batch) too.
    a, b = (safetensors.load(tmp_path / f"{n}.safetensors") for n in ("one", "many"))
    assert "resnet/stem_bn/running_mean" in a
    for name in a:
        np.testing.assert_allclose(b[name], a[name], rtol=1e-4, atol=1e-6, err_msg=name)


def colocated_resnet(ranks_dim=8):
    """EPL's split example (examples/split.py), smaller: the ResNet
    replicated, the classifier split over the same devices."""
    epl.init(epl.Config({"cluster.colocate_split_and_replicate": True,
                         "optimizer.type": "momentum", "optimizer.lr": 0.02,
                         "optimizer.momentum": 0.9}))
    x = epl.input("x", (BATCH, SIZE, SIZE, CHANNELS))
    y = epl.label("y", (BATCH, 32))
    with epl.replicate(device_count=ranks_dim):
        features = epl.layers.resnet(x, None, widths=(4, 8), blocks_per_stage=1,
                                     classifier=lambda pooled: pooled)
    with epl.split(device_count=ranks_dim):
        logits = epl.layers.Dense(32, name="classifier")(features)
        loss = epl.layers.softmax_cross_entropy(logits, y)
    return epl.to_mlir(loss)


@pytest.mark.parametrize("mpi", [False, True], ids=["threads", "mpi"])
def test_colocated_resnet_and_split_classifier_equal_one_rank(tmp_path, mpi):
    """8 ranks: the convolutions and batch norm on 8 shards of the batch
    (statistics reduced across them), the classifier's classes split 8 ways;
    losses and final parameters equal the 1-rank run. The logits are never
    gathered: the only all-gathers are of the batch (dim 0, the pooled
    features), and the cross-entropy reduces its max over the devices."""
    model = tmp_path / "colocated.mlir"
    model.write_text(colocated_resnet())
    rng = np.random.default_rng(9)
    safetensors.save(tmp_path / "d.safetensors", {
        "x": rng.standard_normal((BATCH, SIZE, SIZE, CHANNELS)).astype(np.float32),
        "y": np.eye(32, dtype=np.float32)[rng.integers(0, 32, BATCH)]})
    runs = {}
    for ranks in (1, 8):
        save = tmp_path / f"p{ranks}.safetensors"
        out = epl_run(model, "--data", tmp_path / "d.safetensors", "--steps", 6,
                      "--seed", 4, "--save", save, ranks=ranks, mpi=mpi and ranks > 1)
        runs[ranks] = losses(out.stdout), safetensors.load(save)
    np.testing.assert_allclose(runs[8][0], runs[1][0], rtol=RTOL)
    for name, value in runs[1][1].items():
        np.testing.assert_allclose(runs[8][1][name], value, rtol=1e-4, atol=1e-6,
                                   err_msg=name)
    program = subprocess.run([str(BUILD / "bin" / "epl-opt"), str(model),
                              "--epl-parallelize=devices=8"], capture_output=True,
                             text=True, check=True).stdout
    gathers = [l for l in program.splitlines() if "epl.all_gather" in l]
    assert all(" dim 0 " in l for l in gathers), gathers
    assert "over [\"tensor\"] max" in program


def split_convolutions():
    """Two 3x3 convolutions (batch norm between) in split(2): the first's
    output channels split (column parallel), the second's input channels
    (row parallel), as Megatron pairs products."""
    epl.init(epl.Config({"optimizer.type": "momentum", "optimizer.lr": 0.05,
                         "optimizer.momentum": 0.9}))
    x = epl.input("x", (BATCH, SIZE, SIZE, CHANNELS))
    y = epl.label("y", (BATCH, CLASSES))
    h = epl.layers.Conv2D(8, 3, padding=1, activation="relu", name="c0")(x)
    with epl.split(device_count=2):
        h = epl.layers.Conv2D(8, 3, padding=1, use_bias=False, name="c1")(h)
        h = epl.layers.relu(epl.layers.BatchNorm(name="bn1")(h))
        h = epl.layers.Conv2D(8, 3, strides=2, padding=1, name="c2")(h)
    logits = epl.layers.Dense(CLASSES, name="fc")(epl.layers.GlobalAvgPool()(h))
    return epl.to_mlir(epl.layers.softmax_cross_entropy(logits, y))


@pytest.mark.parametrize("ranks", [2, 4])
def test_split_convolutions_shard_channels_and_equal_one_rank(tmp_path, ranks):
    """split(2) of convolutions shards their filters' channels (each rank
    holds part of c1's and c2's filters), all-reduces the row-parallel
    output once forward and the column-parallel input's gradient once
    backward, and trains like one rank (4 ranks: data parallel too)."""
    model = tmp_path / "split.mlir"
    model.write_text(split_convolutions())
    rng = np.random.default_rng(12)
    safetensors.save(tmp_path / "d.safetensors", {
        "x": rng.standard_normal((BATCH, SIZE, SIZE, CHANNELS)).astype(np.float32),
        "y": np.eye(CLASSES, dtype=np.float32)[rng.integers(0, CLASSES, BATCH)]})
    args = (model, "--data", tmp_path / "d.safetensors", "--steps", 8, "--seed", 2)
    one = losses(epl_run(*args, "--save", tmp_path / "p1.safetensors").stdout)
    report = tmp_path / "report.json"
    many = losses(epl_run(*args, "--report", report, ranks=ranks).stdout)
    np.testing.assert_allclose(many, one, rtol=RTOL)
    program = subprocess.run([str(BUILD / "bin" / "epl-opt"), str(model),
                              f"--epl-parallelize=devices={ranks}"],
                             capture_output=True, text=True, check=True).stdout
    # Each rank's filters: c1's output channels and c2's input channels, halved.
    assert re.search(r'tensor<3x3x8x4xf32> \{[^}]*epl.name = "c1/kernel"', program)
    assert re.search(r'tensor<3x3x4x8xf32> \{[^}]*epl.name = "c2/kernel"', program)
    reduces = [l for l in program.splitlines()
               if "epl.all_reduce" in l and 'over ["tensor"] sum' in l]
    assert len(reduces) == 2, reduces
    assert "phase<forward>" in reduces[0] and "phase<backward_input>" in reduces[1]
    # Each rank holds the unsplit layers whole, and half of what the split
    # channels own: c1's and c2's filters, bn1's scale and shift and its
    # running statistics (c2's bias is whole): exactly that many bytes of
    # parameters and model state.
    params = {k: v for k, v in safetensors.load(tmp_path / "p1.safetensors").items()
              if not k.endswith(".momentum_buffer")}
    halved = sum(params[k].nbytes // 2
                 for k in ("c1/kernel", "c2/kernel", "bn1/gamma", "bn1/beta",
                           "bn1/running_mean", "bn1/running_var"))
    rank0 = json.loads(report.read_text())["per_rank"][0]
    assert rank0["param_bytes"] == sum(v.nbytes for v in params.values()) - halved


def test_max_pool_ties_give_the_gradient_once(tmp_path):
    """A blank background makes a convolution's output constant there, so
    every max-pool window over it is a tie: the window's gradient is shared
    by its tied elements (as torch.amax), not given to each of them; here,
    as in most ties, that is PyTorch's max pooling's result too."""
    epl.init(epl.Config({"optimizer.type": "sgd", "optimizer.lr": 0.5}))
    x = epl.input("x", (4, 6, 6, 1))
    y = epl.label("y", (4, 3))
    with epl.replicate(device_count=1):
        h = epl.layers.Conv2D(2, 3, padding=1, activation="relu", name="c")(x)
        h = epl.layers.MaxPool2D(2)(h)
        logits = epl.layers.Dense(3, name="fc")(epl.layers.GlobalAvgPool()(h))
    model = tmp_path / "ties.mlir"
    model.write_text(epl.to_mlir(epl.layers.softmax_cross_entropy(logits, y)))
    rng = np.random.default_rng(0)
    xd = rng.standard_normal((4, 6, 6, 1)).astype(np.float32)
    xd[:, 2:, :, :] = 0
    yd = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 4)]
    p = {"c/kernel": (rng.standard_normal((3, 3, 1, 2)) * 0.5).astype(np.float32),
         "c/bias": np.array([0.3, 0.2], np.float32),
         "fc/kernel": (rng.standard_normal((2, 3)) * 0.5).astype(np.float32),
         "fc/bias": np.zeros(3, np.float32)}
    safetensors.save(tmp_path / "d.safetensors", {"x": xd, "y": yd})
    safetensors.save(tmp_path / "p.safetensors", p)
    got = losses(epl_run(model, "--params", tmp_path / "p.safetensors", "--data",
                         tmp_path / "d.safetensors", "--steps", 4).stdout)
    conv, fc = torch.nn.Conv2d(1, 2, 3, padding=1), torch.nn.Linear(2, 3)
    with torch.no_grad():
        conv.weight.copy_(torch.from_numpy(p["c/kernel"]).permute(3, 2, 0, 1))
        conv.bias.copy_(torch.from_numpy(p["c/bias"]))
        fc.weight.copy_(torch.from_numpy(p["fc/kernel"]).T)
        fc.bias.copy_(torch.from_numpy(p["fc/bias"]))
    opt = torch.optim.SGD(list(conv.parameters()) + list(fc.parameters()), lr=0.5)
    xt, yt = torch.from_numpy(xd).permute(0, 3, 1, 2), torch.from_numpy(yd).argmax(1)
    expected = []
    for _ in range(4):
        opt.zero_grad()
        h = torch.nn.functional.max_pool2d(torch.relu(conv(xt)), 2)
        loss = torch.nn.functional.cross_entropy(fc(h.mean((2, 3))), yt)
        loss.backward()
        opt.step()
        expected.append(loss.item())
    np.testing.assert_allclose(got, expected, rtol=RTOL)

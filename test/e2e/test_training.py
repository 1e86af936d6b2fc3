"""Training parity: epl-run trains L0 models (epl-autodiff builds the step)
and its per-step losses equal PyTorch's, model written with torch.nn here,
on the same initial parameters and data, with momentum SGD and AdamW.

Also: resuming from a checkpoint is bit-identical to training straight.
"""

import re

import numpy as np
import pytest
import torch

from conftest import ROOT, epl_run, losses
from epl import safetensors

RTOL = 1e-5
STEPS = 20

OPTIMIZERS = {
    "momentum": {"optimizer.type": '"momentum"', "optimizer.lr": "2.0e-03 : f64",
                 "optimizer.momentum": "9.0e-01 : f64",
                 "optimizer.weight_decay": "1.0e-03 : f64"},
    "adamw": {"optimizer.type": '"adamw"', "optimizer.lr": "1.0e-04 : f64",
              "optimizer.beta1": "9.0e-01 : f64", "optimizer.beta2": "9.99e-01 : f64",
              "optimizer.eps": "1.0e-08 : f64", "optimizer.weight_decay": "1.0e-02 : f64"},
}


def torch_optimizer(name, params):
    cfg = {k: float(v.split()[0]) for k, v in OPTIMIZERS[name].items()
           if k != "optimizer.type"}
    if name == "momentum":
        return torch.optim.SGD(params, lr=cfg["optimizer.lr"],
                               momentum=cfg["optimizer.momentum"],
                               weight_decay=cfg["optimizer.weight_decay"])
    return torch.optim.AdamW(params, lr=cfg["optimizer.lr"],
                             betas=(cfg["optimizer.beta1"], cfg["optimizer.beta2"]),
                             eps=cfg["optimizer.eps"],
                             weight_decay=cfg["optimizer.weight_decay"])


def with_config(module_text, optimizer):
    config = ", ".join(f'"{k}" = {v}' for k, v in OPTIMIZERS[optimizer].items())
    return re.sub(r"epl\.config = \{.*?\}\}", "epl.config = {" + config + "}}",
                  module_text, count=1, flags=re.S)


def torch_losses(model, optimizer, inputs, scheduler=None):
    losses_ = []
    for _ in range(STEPS):
        optimizer.zero_grad()
        loss = model(*inputs)
        loss.backward()
        optimizer.step()
        if scheduler:
            scheduler.step()
        losses_.append(loss.item())
    return losses_


# --- the MLP of examples/mlp.mlir --------------------------------------------

class MLP(torch.nn.Module):
    def __init__(self, p):
        super().__init__()
        self.hidden = torch.nn.Linear(784, 512)
        self.classifier = torch.nn.Linear(512, 10, bias=False)
        with torch.no_grad():
            self.hidden.weight.copy_(torch.from_numpy(p["w1"]).T)
            self.hidden.bias.copy_(torch.from_numpy(p["b1"]))
            self.classifier.weight.copy_(torch.from_numpy(p["w2"]).T)

    def forward(self, x, y):
        return torch.nn.functional.cross_entropy(
            self.classifier(torch.relu(self.hidden(x))), y)


def mlp_problem():
    rng = np.random.default_rng(11)
    params = {"w1": (rng.standard_normal((784, 512)) / 28).astype(np.float32),
              "b1": (rng.standard_normal(512) * 0.1).astype(np.float32),
              "w2": (rng.standard_normal((512, 10)) / 22.6).astype(np.float32)}
    data = {"x": rng.standard_normal((32, 784)).astype(np.float32),
            "y": np.eye(10, dtype=np.float32)[rng.integers(0, 10, 32)]}
    return params, data


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_mlp_trains_like_pytorch(tmp_path, optimizer):
    params, data = mlp_problem()
    model_path = tmp_path / "mlp.mlir"
    model_path.write_text(with_config((ROOT / "examples" / "mlp.mlir").read_text(),
                                      optimizer))
    safetensors.save(tmp_path / "p.safetensors", params)
    safetensors.save(tmp_path / "d.safetensors", data)
    result = epl_run(model_path, "--params", tmp_path / "p.safetensors",
                     "--data", tmp_path / "d.safetensors", "--steps", STEPS)
    ours = losses(result.stdout)

    model = MLP(params)
    theirs = torch_losses(model, torch_optimizer(optimizer, model.parameters()),
                          (torch.from_numpy(data["x"]), torch.from_numpy(data["y"])))
    assert len(ours) == STEPS
    np.testing.assert_allclose(ours, theirs, rtol=RTOL)
    # It learned, and the loss stayed where relative errors are meaningful.
    assert 0.05 < theirs[-1] < theirs[0]


@pytest.mark.parametrize("optimizer", ["sgd", *sorted(OPTIMIZERS)])
def test_cosine_schedule_like_pytorch(tmp_path, optimizer):
    """optimizer.lr_schedule = "cosine" over decay_steps = STEPS steps equals
    torch.optim.lr_scheduler.CosineAnnealingLR(T_max=STEPS), stepped after
    each optimizer step; the losses leave the constant rate's."""
    params, data = mlp_problem()
    safetensors.save(tmp_path / "p.safetensors", params)
    safetensors.save(tmp_path / "d.safetensors", data)
    sgd = optimizer == "sgd"
    text = with_config((ROOT / "examples" / "mlp.mlir").read_text(),
                       "momentum" if sgd else optimizer)
    if sgd:
        # Momentum's own key beside sgd would be an error.
        text = re.sub(r',\s*"optimizer.momentum" = [^,}]*', "",
                      text.replace('"optimizer.type" = "momentum"', '"optimizer.type" = "sgd"'))
    runs = {}
    for schedule in ("constant", "cosine"):
        model_path = tmp_path / f"{schedule}.mlir"
        steps = f'"optimizer.decay_steps" = {STEPS} : i64, ' if schedule == "cosine" else ""
        model_path.write_text(text.replace(
            "epl.config = {", f'epl.config = {{"optimizer.lr_schedule" = "{schedule}", '
            + steps, 1))
        runs[schedule] = losses(epl_run(model_path, "--params", tmp_path / "p.safetensors",
                                        "--data", tmp_path / "d.safetensors",
                                        "--steps", STEPS).stdout)
    model = MLP(params)
    opt = torch_optimizer("momentum" if sgd else optimizer, model.parameters())
    if sgd:
        opt.param_groups[0]["momentum"] = 0.0
    theirs = torch_losses(model, opt, (torch.from_numpy(data["x"]),
                                       torch.from_numpy(data["y"])),
                          torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=STEPS))
    np.testing.assert_allclose(runs["cosine"], theirs, rtol=RTOL)
    assert abs(runs["cosine"][-1] - runs["constant"][-1]) > 1e-3 * runs["constant"][-1]


@pytest.mark.parametrize("optimizer", ["momentum-cosine", "adam", "adamw", "adamw-cosine"])
def test_f64_model_trains_like_pytorch_in_float64(tmp_path, optimizer):
    """The MLP in f64 with Adam's bias corrections and the cosine rate,
    which the step computes in double: kept as they are (they were
    truncated to f64 from f64: invalid IR), equal to torch in float64."""
    name, _, schedule = optimizer.partition("-")
    params, data = mlp_problem()
    params = {k: v.astype(np.float64) for k, v in params.items()}
    data = {k: v.astype(np.float64) for k, v in data.items()}
    safetensors.save(tmp_path / "p.safetensors", params)
    safetensors.save(tmp_path / "d.safetensors", data)
    text = with_config((ROOT / "examples" / "mlp.mlir").read_text(),
                       "adamw" if name.startswith("adam") else name).replace("f32", "f64")
    if name == "adam":
        text = text.replace('"optimizer.type" = "adamw"', '"optimizer.type" = "adam"')
    if schedule:
        text = text.replace("epl.config = {", 'epl.config = {"optimizer.lr_schedule" = '
                            f'"cosine", "optimizer.decay_steps" = {STEPS} : i64, ', 1)
    (tmp_path / "m.mlir").write_text(text)
    ours = losses(epl_run(tmp_path / "m.mlir", "--params", tmp_path / "p.safetensors",
                          "--data", tmp_path / "d.safetensors", "--steps", STEPS,
                          "--save", tmp_path / "trained.safetensors").stdout)
    model = MLP({k: v.astype(np.float32) for k, v in params.items()}).double()
    with torch.no_grad():
        model.hidden.weight.copy_(torch.from_numpy(params["w1"]).T)
        model.hidden.bias.copy_(torch.from_numpy(params["b1"]))
        model.classifier.weight.copy_(torch.from_numpy(params["w2"]).T)
    opt = torch_optimizer("adamw" if name.startswith("adam") else name, model.parameters())
    if name == "adam":
        cfg = opt.param_groups[0]
        opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"], betas=cfg["betas"],
                               eps=cfg["eps"], weight_decay=cfg["weight_decay"])
    scheduler = (torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=STEPS)
                 if schedule else None)
    theirs = torch_losses(model, opt, (torch.from_numpy(data["x"]),
                                       torch.from_numpy(data["y"])), scheduler)
    assert len(ours) == STEPS
    # The losses as printed (9 digits); the parameters to f64's precision.
    np.testing.assert_allclose(ours, theirs, rtol=2e-8)
    trained = safetensors.load(tmp_path / "trained.safetensors")
    assert trained["w1"].dtype == np.float64
    np.testing.assert_allclose(trained["w1"], model.hidden.weight.detach().numpy().T,
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(trained["b1"], model.hidden.bias.detach().numpy(),
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(trained["w2"], model.classifier.weight.detach().numpy().T,
                               rtol=1e-9, atol=1e-12)


def test_cosine_schedule_needs_its_steps(tmp_path):
    model_path = tmp_path / "m.mlir"
    model_path.write_text((ROOT / "examples" / "mlp.mlir").read_text().replace(
        "epl.config = {", 'epl.config = {"optimizer.lr_schedule" = "cosine", ', 1))
    result = epl_run(model_path, expect_ok=False)
    assert result.returncode == 1
    assert '"optimizer.lr_schedule" = "cosine" needs "optimizer.decay_steps"' in result.stderr


def test_resume_is_bit_identical(tmp_path):
    params, data = mlp_problem()
    model_path = tmp_path / "mlp.mlir"
    model_path.write_text(with_config((ROOT / "examples" / "mlp.mlir").read_text(),
                                      "adamw"))
    safetensors.save(tmp_path / "p.safetensors", params)
    safetensors.save(tmp_path / "d.safetensors", data)
    common = [model_path, "--data", tmp_path / "d.safetensors"]
    straight = epl_run(*common, "--params", tmp_path / "p.safetensors",
                       "--steps", 20, "--save", tmp_path / "straight.safetensors")
    first = epl_run(*common, "--params", tmp_path / "p.safetensors",
                    "--steps", 10, "--save", tmp_path / "half.safetensors")
    second = epl_run(*common, "--params", tmp_path / "half.safetensors",
                     "--steps", 10, "--save", tmp_path / "resumed.safetensors")
    assert losses(first.stdout) + losses(second.stdout) == losses(straight.stdout)
    a = safetensors.load(tmp_path / "straight.safetensors")
    b = safetensors.load(tmp_path / "resumed.safetensors")
    assert sorted(a) == sorted(b) == sorted(
        ["w1", "b1", "w2", "optimizer.step"] +
        [f"{p}.{s}" for p in ("w1", "b1", "w2") for s in ("exp_avg", "exp_avg_sq")])
    for name in a:
        assert a[name].tobytes() == b[name].tobytes(), name
    assert int(a["optimizer.step"]) == 20


# --- a softmax cross-entropy classifier, through linalg.softmax ---------------

def classifier_module(optimizer):
    from epl import nn
    from epl.graph import Graph
    g = Graph("classifier")
    x = g.input("x", (16, 12))
    y = g.label("y", (16, 6))
    w = g.param("w", (12, 6))
    b = g.param("b", (6,))
    probabilities = nn.softmax(nn.dense(x, w, b), -1)
    g.set_loss(-nn.mean(nn.sum(y * nn.log(probabilities), -1)))
    return with_config(g.to_mlir(), optimizer).replace(
        "module {", "module attributes {epl.config = {"
        + ", ".join(f'"{k}" = {v}' for k, v in OPTIMIZERS[optimizer].items()) + "}} {")


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_softmax_classifier_trains_like_pytorch(tmp_path, optimizer):
    rng = np.random.default_rng(5)
    params = {"w": (rng.standard_normal((12, 6)) * 0.3).astype(np.float32),
              "b": (rng.standard_normal(6) * 0.1).astype(np.float32)}
    data = {"x": rng.standard_normal((16, 12)).astype(np.float32),
            "y": np.eye(6, dtype=np.float32)[rng.integers(0, 6, 16)]}
    (tmp_path / "m.mlir").write_text(classifier_module(optimizer))
    safetensors.save(tmp_path / "p.safetensors", params)
    safetensors.save(tmp_path / "d.safetensors", data)
    ours = losses(epl_run(tmp_path / "m.mlir", "--params", tmp_path / "p.safetensors",
                          "--data", tmp_path / "d.safetensors", "--steps", STEPS).stdout)

    layer = torch.nn.Linear(12, 6)
    with torch.no_grad():
        layer.weight.copy_(torch.from_numpy(params["w"]).T)
        layer.bias.copy_(torch.from_numpy(params["b"]))
    theirs = torch_losses(
        lambda x, y: torch.nn.functional.cross_entropy(layer(x), y),
        torch_optimizer(optimizer, layer.parameters()),
        (torch.from_numpy(data["x"]), torch.from_numpy(data["y"])))
    np.testing.assert_allclose(ours, theirs, rtol=RTOL)


# --- a 2-block pre-LN transformer: embedding, attention, GELU MLP -------------

B, S, D, HEADS, FF, VOCAB, CLASSES, BLOCKS = 2, 8, 16, 2, 32, 11, 5, 2


def transformer_params(seed=3, blocks=BLOCKS):
    rng = np.random.default_rng(seed)

    def n(*shape, scale=0.2):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    p = {"embedding": n(VOCAB, D, scale=0.5), "position": n(S, D, scale=0.1)}
    for l in range(blocks):
        p.update({f"b{l}.ln1.g": 1 + n(D, scale=0.05), f"b{l}.ln1.b": n(D, scale=0.05),
                  f"b{l}.ln2.g": 1 + n(D, scale=0.05), f"b{l}.ln2.b": n(D, scale=0.05)})
        for proj in "qkvo":
            p[f"b{l}.w{proj}"] = n(D, D, scale=D ** -0.5)
            p[f"b{l}.b{proj}"] = n(D, scale=0.02)
        p.update({f"b{l}.fc1.w": n(D, FF, scale=D ** -0.5), f"b{l}.fc1.b": n(FF, scale=0.02),
                  f"b{l}.fc2.w": n(FF, D, scale=FF ** -0.5), f"b{l}.fc2.b": n(D, scale=0.02)})
    p.update({"lnf.g": 1 + n(D, scale=0.05), "lnf.b": n(D, scale=0.05),
              "head.w": n(D, CLASSES, scale=D ** -0.5), "head.b": n(CLASSES, scale=0.02)})
    data = {"ids": rng.integers(0, VOCAB, (B, S)).astype(np.int64),
            "y": np.eye(CLASSES, dtype=np.float32)[rng.integers(0, CLASSES, B * S)]}
    return p, data


def transformer_module(params, optimizer, blocks=BLOCKS):
    from epl import nn
    from epl.graph import Graph
    g = Graph("transformer")
    ids = g.input("ids", (B, S), dtype="i64")
    y = g.label("y", (B * S, CLASSES))
    w = {name: g.param(name, value.shape) for name, value in params.items()}
    x = nn.embedding(ids, w["embedding"]) + w["position"]
    for l in range(blocks):
        p = lambda name: w[f"b{l}.{name}"]  # noqa: E731
        h = nn.layer_norm(x, p("ln1.g"), p("ln1.b"))
        x = x + nn.attention(h, p("wq"), p("wk"), p("wv"), p("wo"), HEADS,
                             p("bq"), p("bk"), p("bv"), p("bo"))
        h = nn.layer_norm(x, p("ln2.g"), p("ln2.b"))
        x = x + nn.dense(nn.gelu(nn.dense(h, p("fc1.w"), p("fc1.b"))),
                         p("fc2.w"), p("fc2.b"))
    x = nn.layer_norm(x, w["lnf.g"], w["lnf.b"])
    logits = nn.dense(g.reshape(x, (B * S, D)), w["head.w"], w["head.b"])
    g.set_loss(nn.cross_entropy(logits, y))
    g.config = {k: v for k, v in OPTIMIZERS[optimizer].items()}
    text = g.to_mlir()
    # Config values are MLIR literals already.
    return with_config(text.replace("module {", "module attributes {epl.config = {}} {"),
                       optimizer)


class TorchBlock(torch.nn.Module):
    def __init__(self, p, l):
        super().__init__()
        self.ln1, self.ln2 = torch.nn.LayerNorm(D), torch.nn.LayerNorm(D)
        self.attn = torch.nn.MultiheadAttention(D, HEADS, batch_first=True)
        self.fc1, self.fc2 = torch.nn.Linear(D, FF), torch.nn.Linear(FF, D)
        t = lambda name: torch.from_numpy(p[f"b{l}.{name}"])  # noqa: E731
        with torch.no_grad():
            for ln, name in ((self.ln1, "ln1"), (self.ln2, "ln2")):
                ln.weight.copy_(t(f"{name}.g"))
                ln.bias.copy_(t(f"{name}.b"))
            self.attn.in_proj_weight.copy_(torch.cat([t("wq").T, t("wk").T, t("wv").T]))
            self.attn.in_proj_bias.copy_(torch.cat([t("bq"), t("bk"), t("bv")]))
            self.attn.out_proj.weight.copy_(t("wo").T)
            self.attn.out_proj.bias.copy_(t("bo"))
            for fc, name in ((self.fc1, "fc1"), (self.fc2, "fc2")):
                fc.weight.copy_(t(f"{name}.w").T)
                fc.bias.copy_(t(f"{name}.b"))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))


class TorchTransformer(torch.nn.Module):
    def __init__(self, p, blocks=BLOCKS):
        super().__init__()
        self.embedding = torch.nn.Embedding(VOCAB, D)
        self.position = torch.nn.Parameter(torch.from_numpy(p["position"]).clone())
        self.blocks = torch.nn.ModuleList(TorchBlock(p, l) for l in range(blocks))
        self.lnf, self.head = torch.nn.LayerNorm(D), torch.nn.Linear(D, CLASSES)
        with torch.no_grad():
            self.embedding.weight.copy_(torch.from_numpy(p["embedding"]))
            self.lnf.weight.copy_(torch.from_numpy(p["lnf.g"]))
            self.lnf.bias.copy_(torch.from_numpy(p["lnf.b"]))
            self.head.weight.copy_(torch.from_numpy(p["head.w"]).T)
            self.head.bias.copy_(torch.from_numpy(p["head.b"]))

    def forward(self, ids, y):
        x = self.embedding(ids) + self.position
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.lnf(x)).reshape(B * S, CLASSES)
        return torch.nn.functional.cross_entropy(logits, y)


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_transformer_trains_like_pytorch(tmp_path, optimizer):
    params, data = transformer_params()
    (tmp_path / "t.mlir").write_text(transformer_module(params, optimizer))
    safetensors.save(tmp_path / "p.safetensors", params)
    safetensors.save(tmp_path / "d.safetensors", data)
    ours = losses(epl_run(tmp_path / "t.mlir", "--params", tmp_path / "p.safetensors",
                          "--data", tmp_path / "d.safetensors", "--steps", STEPS).stdout)
    model = TorchTransformer(params)
    theirs = torch_losses(model, torch_optimizer(optimizer, model.parameters()),
                          (torch.from_numpy(data["ids"]), torch.from_numpy(data["y"])))
    np.testing.assert_allclose(ours, theirs, rtol=RTOL)
    assert theirs[-1] < theirs[0]


def test_deep_transformer_trains_like_pytorch(tmp_path):
    """6 identical blocks: the lowering compiles their host code once
    (epl-outline-repeats: a function for a block's backward, called per
    block; at this size a block's forward is too short to pay for its 27
    results), and the step still equals PyTorch's."""
    blocks = 6
    params, data = transformer_params(blocks=blocks)
    (tmp_path / "t.mlir").write_text(transformer_module(params, "adamw", blocks))
    safetensors.save(tmp_path / "p.safetensors", params)
    safetensors.save(tmp_path / "d.safetensors", data)
    out = epl_run(tmp_path / "t.mlir", "--params", tmp_path / "p.safetensors",
                  "--data", tmp_path / "d.safetensors", "--steps", STEPS,
                  "--mlir-print-ir-after=epl-outline-repeats")
    calls = re.findall(r"call @(__epl_repeat_\d+)\(", out.stderr)
    assert calls and len(calls) >= blocks - 1, calls
    model = TorchTransformer(params, blocks)
    theirs = torch_losses(model, torch_optimizer("adamw", model.parameters()),
                          (torch.from_numpy(data["ids"]), torch.from_numpy(data["y"])))
    np.testing.assert_allclose(losses(out.stdout), theirs, rtol=RTOL)
    assert theirs[-1] < theirs[0]


# --- gradient accumulation over micro-batches ---------------------------------

@pytest.mark.parametrize("method", ["mean", "sum"])
def test_gradient_accumulation_like_pytorch(tmp_path, method):
    """pipeline.num_micro_batch = 4 with one stage: four micro-batches, one
    update; PyTorch's accumulation loop, with the loss of each micro-batch
    scaled by 1/4 for "mean" and not for "sum"."""
    params, data = mlp_problem()
    micro = 4
    config = dict(OPTIMIZERS["momentum"])
    config["pipeline.num_micro_batch"] = f"{micro} : i64"
    config["communication.gradients_reduce_method"] = f'"{method}"'
    text = (ROOT / "examples" / "mlp.mlir").read_text()
    text = re.sub(r"epl\.config = \{.*?\}\}", "epl.config = {" + ", ".join(
        f'"{k}" = {v}' for k, v in config.items()) + "}}", text, count=1, flags=re.S)
    (tmp_path / "mlp.mlir").write_text(text)
    safetensors.save(tmp_path / "p.safetensors", params)
    safetensors.save(tmp_path / "d.safetensors", data)
    ours = losses(epl_run(tmp_path / "mlp.mlir", "--params", tmp_path / "p.safetensors",
                          "--data", tmp_path / "d.safetensors", "--steps", STEPS).stdout)

    model = MLP(params)
    opt = torch_optimizer("momentum", model.parameters())
    xs = torch.from_numpy(data["x"]).chunk(micro)
    ys = torch.from_numpy(data["y"]).chunk(micro)
    theirs = []
    for _ in range(STEPS):
        opt.zero_grad()
        total = 0.0
        for x, y in zip(xs, ys):
            loss = model(x, y)
            (loss / micro if method == "mean" else loss).backward()
            total += loss.item() / micro
        opt.step()
        theirs.append(total)
    np.testing.assert_allclose(ours, theirs, rtol=RTOL)


# --- long sums ------------------------------------------------------------------

@pytest.mark.parametrize("blas", [True, False])
def test_sums_over_a_large_batch_are_as_accurate_as_pytorchs(tmp_path, blas):
    """A batch of 65536: the loss's mean and the biases' gradients are sums
    of 65536 terms. Added one after another in f32 they drift ~4e-6 from
    the exact (float64) sums; PyTorch's CPU sums in a cascade stay near
    1e-7, and so must ours (epl-split-reductions sums in parts). So must
    the head's weight gradient, x^T dy over the batch, as loops
    (--blas=false; BLAS sums a GEMM in blocks of its own)."""
    import epl

    batch = 65536
    epl.init(epl.Config({"optimizer.type": "sgd", "optimizer.lr": 1.0}))
    x, y = epl.input("x", (batch, 32)), epl.label("y", (batch, 10))
    h = epl.layers.Dense(64, activation="relu", name="fc0")(x)
    logits = epl.layers.Dense(10, name="head")(h)
    model = tmp_path / "model.mlir"
    model.write_text(epl.to_mlir(epl.layers.softmax_cross_entropy(logits, y)))

    rng = np.random.default_rng(0)
    # Zero biases (and head weights as loops), and lr 1: the step writes
    # minus their gradients exactly. (Zero head weights leave the first
    # layer without a gradient.)
    params = {"fc0/kernel": rng.normal(0, 0.2, (32, 64)), "fc0/bias": np.zeros(64),
              "head/kernel": rng.normal(0, 0.2, (64, 10)), "head/bias": np.zeros(10)}
    if not blas:
        params["head/kernel"][:] = 0
    params = {k: v.astype(np.float32) for k, v in params.items()}
    data = {"x": rng.standard_normal((batch, 32)).astype(np.float32),
            "y": np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)]}
    p, d = tmp_path / "p.safetensors", tmp_path / "d.safetensors"
    safetensors.save(p, params)
    safetensors.save(d, data)
    out = epl_run(model, "--params", p, "--data", d, "--steps", 1,
                  "--save", tmp_path / "after.safetensors", *([] if blas else ["--blas=false"]))
    ours_loss = losses(out.stdout)[0]
    ours = safetensors.load(tmp_path / "after.safetensors")

    def step(dtype):
        w = {k: torch.tensor(v, dtype=dtype, requires_grad=True) for k, v in params.items()}
        h = torch.relu(torch.tensor(data["x"], dtype=dtype) @ w["fc0/kernel"] + w["fc0/bias"])
        logits = h @ w["head/kernel"] + w["head/bias"]
        loss = -(torch.tensor(data["y"], dtype=dtype)
                 * torch.log_softmax(logits, -1)).sum(-1).mean()
        loss.backward()
        return loss.item(), {k: w[k].grad.numpy().astype(np.float64) for k in w}

    exact_loss, exact = step(torch.float64)
    torch_loss, torch32 = step(torch.float32)

    def error(grads, name):
        return np.abs(grads[name] - exact[name]).max() / np.abs(exact[name]).max()

    # As accurate as PyTorch's f32: within a few times its error (summed
    # one after another, ours was 10 to 60 times it), or 2e-7 (3 ulp of
    # the result).
    def bound(torch_error):
        return max(4 * torch_error, 2e-7)

    # (With zero head weights every example's loss is log(10), and the
    # head's bias gradient, the batch's mean of p - y, nearly cancels:
    # neither measures a sum's accuracy.)
    loss_error = abs(ours_loss - exact_loss) / exact_loss
    torch_error = abs(torch_loss - exact_loss) / exact_loss
    assert not blas or loss_error < bound(torch_error), (
        f"loss {loss_error:.2e} off (PyTorch f32: {torch_error:.2e})")
    for name in ("fc0/bias", "head/bias") if blas else ("head/kernel",):
        grads = {name: -ours[name].astype(np.float64)}
        assert error(grads, name) < bound(error(torch32, name)), (
            f"{name} gradient {error(grads, name):.2e} off "
            f"(PyTorch f32: {error(torch32, name):.2e})")


def test_a_diverged_loss_is_null_in_the_report(tmp_path):
    """A run that diverges (a sum-of-squares loss with too large a rate)
    goes on as PyTorch would, printing nan or inf; the report stays JSON."""
    import json
    model = tmp_path / "diverge.mlir"
    model.write_text("""
module attributes {epl.config = {"optimizer.type" = "sgd", "optimizer.lr" = 1.0e+03 : f64}} {
  func.func @model(%x: tensor<4x8xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<8xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                                          affine_map<(i, j) -> ()>],
                         iterator_types = ["reduction", "reduction"]}
        ins(%x, %w : tensor<4x8xf32>, tensor<8xf32>) outs(%acc : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %p = arith.mulf %a, %b : f32
      %q = arith.mulf %p, %p : f32
      %r = arith.addf %o, %q : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    return %s : tensor<f32>
  }
}
""")
    params = tmp_path / "w.safetensors"
    safetensors.save(params, {"w": np.ones(8, np.float32)})
    report = tmp_path / "report.json"
    out = epl_run(model, "--steps", 8, "--params", params, "--report", report)
    printed = re.findall(r"step \d+ loss (\S+)", out.stdout)
    assert len(printed) == 8 and not np.isfinite(float(printed[-1])), out.stdout
    steps = json.loads(report.read_text())["steps"]
    for line, step in zip(printed, steps):
        finite = np.isfinite(float(line))
        assert (step["loss"] == pytest.approx(float(line), rel=1e-6)) if finite \
            else step["loss"] is None, (line, step)

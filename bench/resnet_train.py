#!/usr/bin/env python3
"""Training-step time of a small ResNet, epl-run against PyTorch and XLA,
side by side (issue 13's target: at most 1.5x PyTorch).

Model: Fashion-MNIST-shaped images (batch 32, 28x28x1), epl.layers.resnet
with widths (16, 32), one basic block per stage (3x3 convolutions, batch
norm in training mode, ReLU, a 1x1 projection where the shape changes),
global average pooling, a Dense classifier, softmax cross-entropy, momentum
SGD. Ours is NHWC, traced by the Python frontend and trained by epl-run;
PyTorch's the same network in torch.nn (NCHW; its batch norm also updates
running statistics, which ours does not keep); XLA's, where a Python with
jax is found (bench/machine.py; $EPL_JAX_PYTHON), the same network in
jax.numpy, NHWC as ours (lax.conv_general_dilated, batch statistics with
the biased variance, eps 1e-5, one-hot labels as ours), one jitted step
with the parameters and momentum donated, compiled ahead of the timed
steps. Same threads (OpenBLAS, torch, XLA's pool) on the same cores
(bench/machine.py pins each process to the first N CPUs), interleaved
rounds, medians; the machine's idle state checked before timing and during
each round (bench/machine.py).

usage: bench/resnet_train.py [--threads N] [--steps K] [--rounds R] [--wait-idle S]
Prints the median step times, compile times (epl-run's `--timing` phases,
XLA's lower + compile) and the ratios epl-run / PyTorch and epl-run / XLA.
"""

import argparse
import pathlib
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "python"))
import epl  # noqa: E402
import machine  # noqa: E402
from cpu_train import epl_run, xla_line  # noqa: E402

TARGET = 1.5
BATCH, SIZE, CLASSES, WIDTHS = 32, 28, 10, (16, 32)
LR, MOMENTUM = 0.05, 0.9

TORCH_STEPS = r"""
import sys, time, torch
threads, steps, batch, size, classes = map(int, sys.argv[1:6])
widths = [int(w) for w in sys.argv[6].split(",")]
torch.set_num_threads(threads)
conv = lambda i, o, k, s=1: torch.nn.Conv2d(i, o, k, s, k // 2, bias=False)
class Block(torch.nn.Module):
    def __init__(self, cin, c, stride):
        super().__init__()
        self.c1, self.b1 = conv(cin, c, 3, stride), torch.nn.BatchNorm2d(c)
        self.c2, self.b2 = conv(c, c, 3), torch.nn.BatchNorm2d(c)
        self.sc = None if stride == 1 and cin == c else torch.nn.Sequential(
            conv(cin, c, 1, stride), torch.nn.BatchNorm2d(c))
    def forward(self, x):
        y = self.b2(self.c2(torch.relu(self.b1(self.c1(x)))))
        return torch.relu((x if self.sc is None else self.sc(x)) + y)
layers = [conv(1, widths[0], 3), torch.nn.BatchNorm2d(widths[0]), torch.nn.ReLU()]
cin = widths[0]
for i, w in enumerate(widths):
    layers.append(Block(cin, w, 2 if i > 0 else 1))
    cin = w
layers += [torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(cin, classes)]
model = torch.nn.Sequential(*layers)
opt = torch.optim.SGD(model.parameters(), lr=%(lr)r, momentum=%(momentum)r)
x = torch.randn(batch, 1, size, size)
y = torch.randint(0, classes, (batch,))
times = []
for _ in range(steps):
    start = time.perf_counter()
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    times.append((time.perf_counter() - start) * 1000)
print(" ".join(map(str, times[1:])))
""" % {"lr": LR, "momentum": MOMENTUM}

JAX_STEPS = r"""
import sys, time
import jax, jax.numpy as jnp
threads, steps, batch, size, classes = map(int, sys.argv[1:6])
widths = [int(w) for w in sys.argv[6].split(",")]
lr, momentum = %(lr)r, %(momentum)r
keys = iter(jax.random.split(jax.random.PRNGKey(0), 64))
def conv(cin, cout, k):
    return jax.random.normal(next(keys), (k, k, cin, cout), jnp.float32) / (k * k * cin) ** 0.5
def bn(c):
    return {"g": jnp.ones((c,), jnp.float32), "b": jnp.zeros((c,), jnp.float32)}
params = {"stem": conv(1, widths[0], 3), "stem_bn": bn(widths[0]), "blocks": []}
cin = widths[0]
for i, w in enumerate(widths):
    block = {"c1": conv(cin, w, 3), "b1": bn(w), "c2": conv(w, w, 3), "b2": bn(w)}
    if i > 0 or cin != w:
        block["sc"], block["sc_bn"] = conv(cin, w, 1), bn(w)
    params["blocks"].append(block)
    cin = w
params["fc"] = {"w": jax.random.normal(next(keys), (cin, classes), jnp.float32) / cin ** 0.5,
                "b": jnp.zeros((classes,), jnp.float32)}
x = jax.random.normal(next(keys), (batch, size, size, 1), jnp.float32)
y = jax.nn.one_hot(jax.random.randint(next(keys), (batch,), 0, classes), classes)
def conv2d(h, w, stride=1):
    p = w.shape[0] // 2
    return jax.lax.conv_general_dilated(h, w, (stride, stride), ((p, p), (p, p)),
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))
def batch_norm(p, h):
    mu = jnp.mean(h, (0, 1, 2))
    var = jnp.mean(jnp.square(h - mu), (0, 1, 2))
    return (h - mu) * jax.lax.rsqrt(var + 1e-5) * p["g"] + p["b"]
def loss_fn(params, x, y):
    h = jax.nn.relu(batch_norm(params["stem_bn"], conv2d(x, params["stem"])))
    for i, p in enumerate(params["blocks"]):
        stride = 2 if i > 0 else 1
        o = jax.nn.relu(batch_norm(p["b1"], conv2d(h, p["c1"], stride)))
        o = batch_norm(p["b2"], conv2d(o, p["c2"]))
        if "sc" in p:
            h = batch_norm(p["sc_bn"], conv2d(h, p["sc"], stride))
        h = jax.nn.relu(h + o)
    logits = jnp.mean(h, (1, 2)) @ params["fc"]["w"] + params["fc"]["b"]
    return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(logits, axis=-1), axis=-1))
""" % {"lr": LR, "momentum": MOMENTUM} + machine.JAX_MOMENTUM_STEPS


def resnet_module():
    epl.init(epl.Config({"optimizer.type": "momentum", "optimizer.lr": LR,
                         "optimizer.momentum": MOMENTUM}))
    x = epl.input("x", (BATCH, SIZE, SIZE, 1))
    y = epl.label("y", (BATCH, CLASSES))
    logits = epl.layers.resnet(x, CLASSES, widths=WIDTHS, blocks_per_stage=1)
    return epl.to_mlir(epl.layers.softmax_cross_entropy(logits, y))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    machine.add_arguments(parser)
    args = parser.parse_args()
    shape = [str(args.threads), str(args.steps), str(BATCH), str(SIZE), str(CLASSES),
             ",".join(map(str, WIDTHS))]
    print(f"resnet_train: batch {BATCH}, {SIZE}x{SIZE}x1, widths {WIDTHS}, momentum SGD, "
          f"{args.threads} thread(s) on cpus {','.join(map(str, machine.cores(args.threads)))}, "
          f"{args.rounds}x{args.steps - 1} steps each", flush=True)
    idle = machine.check_idle(args.threads, args.wait_idle)
    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        model = pathlib.Path(tmp) / "resnet.mlir"
        model.write_text(resnet_module())
        for _ in idle.rounds(args.rounds):
            r = epl_run(model, args.steps, args.threads)
            out = subprocess.run(["/usr/bin/python3", "-c", TORCH_STEPS, *shape],
                                 check=True, capture_output=True, text=True,
                                 preexec_fn=machine.pin(args.threads)).stdout.split()
            r["torch"] = [float(v) for v in out]
            out = machine.run_jax(JAX_STEPS, shape, args.threads)
            r["xla"], r["xla_compile"] = machine.xla_times(out)
            rounds.append(r)
    kept = idle.keep(rounds)
    e, p = machine.median(kept, "times"), machine.median(kept, "torch")
    print(f"  epl-run  median step {e:8.2f} ms   compile "
          f"{statistics.median(r['compile_s'] for r in kept):.2f} s")
    print(f"  PyTorch  median step {p:8.2f} ms")
    print(f"  ratio epl-run / PyTorch = {e / p:.2f}  (target <= {TARGET}: "
          f"{'met' if e / p <= TARGET else 'NOT met'}){idle.flag()}")
    xla = None if kept[0]["xla"] is None else machine.pooled(kept, "xla")
    print("\n".join(xla_line(xla, [r["xla_compile"] for r in kept], e, idle, unit=".2f")))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Training-step time of a small ResNet, epl-run against PyTorch, side by
side (issue 13's target: at most 1.5x PyTorch).

Model: Fashion-MNIST-shaped images (batch 32, 28x28x1), epl.layers.resnet
with widths (16, 32), one basic block per stage (3x3 convolutions, batch
norm in training mode, ReLU, a 1x1 projection where the shape changes),
global average pooling, a Dense classifier, softmax cross-entropy, momentum
SGD. Ours is NHWC, traced by the Python frontend and trained by epl-run;
PyTorch's the same network in torch.nn (NCHW). Same threads (OpenBLAS and
torch), interleaved rounds, medians.

usage: bench/resnet_train.py [--threads N] [--steps K] [--rounds R]
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
BUILD = pathlib.Path(os.environ.get("EPL_BUILD_DIR", ROOT / "build"))
sys.path.insert(0, str(ROOT / "python"))
import epl  # noqa: E402

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


def resnet_module():
    epl.init(epl.Config({"optimizer.type": "momentum", "optimizer.lr": LR,
                         "optimizer.momentum": MOMENTUM}))
    x = epl.input("x", (BATCH, SIZE, SIZE, 1))
    y = epl.label("y", (BATCH, CLASSES))
    logits = epl.layers.resnet(x, CLASSES, widths=WIDTHS, blocks_per_stage=1)
    return epl.to_mlir(epl.layers.softmax_cross_entropy(logits, y))


def epl_step_times(model, steps, threads):
    with tempfile.TemporaryDirectory() as tmp:
        report = pathlib.Path(tmp) / "report.json"
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads))
        subprocess.run([str(BUILD / "bin" / "epl-run"), str(model), "--steps",
                        str(steps), "--report", str(report)], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        data = json.loads(report.read_text())
    return [s["time_ms"] for s in data["steps"]][1:]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model = pathlib.Path(tmp) / "resnet.mlir"
        model.write_text(resnet_module())
        ours, theirs = [], []
        for _ in range(args.rounds):
            ours += epl_step_times(model, args.steps, args.threads)
            out = subprocess.run(["/usr/bin/python3", "-c", TORCH_STEPS, str(args.threads),
                                  str(args.steps), str(BATCH), str(SIZE), str(CLASSES),
                                  ",".join(map(str, WIDTHS))],
                                 check=True, capture_output=True, text=True).stdout.split()
            theirs += [float(v) for v in out]
    e, p = statistics.median(ours), statistics.median(theirs)
    print(f"resnet_train: batch {BATCH}, {SIZE}x{SIZE}x1, widths {WIDTHS}, momentum SGD, "
          f"{args.threads} thread(s), {args.rounds}x{args.steps - 1} steps each")
    print(f"  epl-run  median step {e:8.2f} ms")
    print(f"  PyTorch  median step {p:8.2f} ms")
    print(f"  ratio epl-run / PyTorch = {e / p:.2f}  (target <= {TARGET}: "
          f"{'met' if e / p <= TARGET else 'NOT met'})")


if __name__ == "__main__":
    main()

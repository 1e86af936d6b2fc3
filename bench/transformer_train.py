#!/usr/bin/env python3
"""Training-step time of a small transformer, epl-run against PyTorch.

Model: 2 pre-LN blocks (multi-head self-attention, GELU MLP) and a
classifier head over every position, softmax cross-entropy, AdamW; built
with the Python frontend (python/epl) and trained by epl-run, and the same
architecture in torch.nn (nn.MultiheadAttention) with torch.optim.AdamW.
Same threads for both, interleaved rounds. What it watches: dense layers on
[batch, seq, dim], their weight gradients and attention's 4-D products must
run as GEMMs (epl-matmul-to-runtime), not loop nests.

usage: bench/transformer_train.py [--threads N] [--steps K] [--rounds R]
Prints the median step times and their ratio (no target yet; the MLP's is
1.2 in bench/cpu_train.py).
"""

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "python"))
from cpu_train import epl_step_times  # noqa: E402

BATCH, SEQ, DIM, HEADS, FF, CLASSES, BLOCKS = 8, 64, 128, 4, 512, 16, 2
LR = 1e-4

TORCH_STEPS = r"""
import sys, time, torch
threads, steps = int(sys.argv[1]), int(sys.argv[2])
B, S, D, H, F, C, L = (int(v) for v in sys.argv[3].split(","))
torch.set_num_threads(threads)
class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = torch.nn.LayerNorm(D), torch.nn.LayerNorm(D)
        self.attn = torch.nn.MultiheadAttention(D, H, batch_first=True)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(D, F), torch.nn.GELU(),
                                       torch.nn.Linear(F, D))
    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))
model = torch.nn.Sequential(*[Block() for _ in range(L)], torch.nn.LayerNorm(D),
                            torch.nn.Linear(D, C))
opt = torch.optim.AdamW(model.parameters(), lr=%(lr)r)
x = torch.randn(B, S, D)
y = torch.nn.functional.one_hot(torch.randint(0, C, (B * S,)), C).float()
times = []
for _ in range(steps):
    start = time.perf_counter()
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x).reshape(B * S, C), y)
    loss.backward()
    opt.step()
    times.append((time.perf_counter() - start) * 1000)
print(" ".join(map(str, times[1:])))
""" % {"lr": LR}


def transformer_module():
    import epl
    epl.init(epl.Config({"optimizer.type": "adamw", "optimizer.lr": LR}))
    x = epl.input("x", (BATCH, SEQ, DIM))
    y = epl.label("y", (BATCH * SEQ, CLASSES))
    h = x
    for i in range(BLOCKS):
        a = epl.layers.MultiHeadAttention(HEADS, name=f"b{i}.attn")(
            epl.layers.LayerNorm(name=f"b{i}.ln1")(h))
        h = epl.layers.add(h, a)
        f = epl.layers.Dense(FF, activation="gelu", name=f"b{i}.fc1")(
            epl.layers.LayerNorm(name=f"b{i}.ln2")(h))
        h = epl.layers.add(h, epl.layers.Dense(DIM, name=f"b{i}.fc2")(f))
    logits = epl.layers.Dense(CLASSES, name="head")(epl.layers.LayerNorm(name="lnf")(h))
    logits = epl.layers.reshape(logits, (BATCH * SEQ, CLASSES))
    return epl.to_mlir(epl.layers.softmax_cross_entropy(logits, y))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    shape = ",".join(map(str, (BATCH, SEQ, DIM, HEADS, FF, CLASSES, BLOCKS)))
    with tempfile.TemporaryDirectory() as tmp:
        model = pathlib.Path(tmp) / "transformer.mlir"
        model.write_text(transformer_module())
        epl, pt = [], []
        for _ in range(args.rounds):
            epl += epl_step_times(model, args.steps, args.threads)[0]
            out = subprocess.run([sys.executable, "-c", TORCH_STEPS, str(args.threads),
                                  str(args.steps), shape],
                                 check=True, capture_output=True, text=True).stdout.split()
            pt += [float(v) for v in out]
    e, p = statistics.median(epl), statistics.median(pt)
    print(f"transformer_train: {BLOCKS} pre-LN blocks, batch {BATCH} x seq {SEQ}, dim {DIM}, "
          f"{HEADS} heads, MLP {FF}, {CLASSES} classes, fp32, AdamW, {args.threads} thread(s), "
          f"{args.rounds}x{args.steps - 1} steps each")
    print(f"  epl-run  median step {e:8.3f} ms")
    print(f"  PyTorch  median step {p:8.3f} ms")
    print(f"  ratio epl-run / PyTorch = {e / p:.3f}")


if __name__ == "__main__":
    main()

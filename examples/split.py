#!/usr/bin/env python3
"""EPL's split example: a ResNet-like feature extractor (residual MLP
blocks, no convolutions yet) replicated on 8 devices, and the classifier
split across the same 8 devices (cluster.colocate_split_and_replicate).

    python3 examples/split.py
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))
import epl  # noqa: E402

config = epl.Config({"cluster.colocate_split_and_replicate": True,
                     "optimizer.type": "momentum", "optimizer.lr": 0.02})
epl.init(config)
x = epl.input("x", (64, 256))
y = epl.label("y", (64, 1024))
with epl.replicate(device_count=8):
    h = epl.layers.Dense(256, activation="relu", name="stem")(x)
    for block in range(3):
        r = epl.layers.Dense(256, activation="relu", name=f"block{block}_a")(h)
        r = epl.layers.Dense(256, name=f"block{block}_b")(r)
        h = epl.layers.relu(epl.layers.add(h, r))
    h = epl.layers.LayerNorm(name="features_norm")(h)
with epl.split(device_count=8):
    logits = epl.layers.Dense(1024, name="classifier")(h)
    loss = epl.layers.softmax_cross_entropy(logits, y)

result = epl.train(loss, steps=5)
for step, value in enumerate(result.losses, 1):
    print(f"step {step} loss {value:.6f}")
print(result.plan)

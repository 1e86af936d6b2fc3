#!/usr/bin/env python3
"""EPL's data-parallel example: an MLP under epl.replicate(device_count=1),
trained on 4 devices (4 replicas, the batch split over them).

    python3 examples/data_parallel.py
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))
import epl  # noqa: E402

epl.init(epl.Config({"optimizer.type": "momentum", "optimizer.lr": 0.05}))
x = epl.input("x", (64, 784))
y = epl.label("y", (64, 10))
with epl.replicate(device_count=1):
    h = epl.layers.Dense(256, activation="relu", name="fc1")(x)
    h = epl.layers.Dense(256, activation="relu", name="fc2")(h)
    logits = epl.layers.Dense(10, name="classifier")(h)
    loss = epl.layers.softmax_cross_entropy(logits, y)

result = epl.train(loss, steps=5, devices=4)  # 4 replicas of replicate(1)
for step, value in enumerate(result.losses, 1):
    print(f"step {step} loss {value:.6f}")
print(result.plan)

#!/usr/bin/env python3
"""EPL's pipeline example: two named replicate scopes are two stages, fed
4 micro-batches per step. It trains on 2 CPU ranks, one per stage (the
default: stages x the largest scope's devices), with the 1F1B schedule
(pipeline.strategy's default), and prints the plan that ran.

    python3 examples/pipeline.py

See docs/pipeline.md for the schedules, the trace and the simulator.
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))
import epl  # noqa: E402

config = epl.Config({"pipeline.num_micro_batch": 4,
                     "optimizer.type": "adamw", "optimizer.lr": 1e-3})
epl.init(config)
x = epl.input("x", (64, 784))
y = epl.label("y", (64, 10))
with epl.replicate(device_count=1, name="stage_0"):
    h = epl.layers.Dense(256, activation="relu", name="stage0_fc")(x)
with epl.replicate(device_count=1, name="stage_1"):
    h = epl.layers.Dense(256, activation="gelu", name="stage1_fc")(h)
    loss = epl.layers.softmax_cross_entropy(epl.layers.Dense(10, name="head")(h), y)

result = epl.train(loss, steps=5)
for step, value in enumerate(result.losses, 1):
    print(f"step {step} loss {value:.6f}")
print(result.plan)

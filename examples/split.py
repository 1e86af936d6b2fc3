#!/usr/bin/env python3
"""EPL's split example: a ResNet feature extractor replicated on 8 devices,
and the classifier split across the same 8 devices
(cluster.colocate_split_and_replicate), as in EPL's README: the images'
batch is split for the convolutions, the classifier's 1024 classes for the
last layer, and the logits are never gathered (the softmax cross-entropy
reduces over the split classes instead).

    python3 examples/split.py
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))
import epl  # noqa: E402

config = epl.Config({"cluster.colocate_split_and_replicate": True,
                     "optimizer.type": "momentum", "optimizer.lr": 0.02})
epl.init(config)
x = epl.input("x", (32, 16, 16, 3))      # NHWC images
y = epl.label("y", (32, 1024))


with epl.replicate(device_count=8):
    # The ResNet up to its pooled features (its classifier is ours).
    features = epl.layers.resnet(x, None, widths=(8, 16), blocks_per_stage=1,
                                 classifier=lambda pooled: pooled)
with epl.split(device_count=8):
    logits = epl.layers.Dense(1024, name="classifier")(features)
    loss = epl.layers.softmax_cross_entropy(logits, y)

result = epl.train(loss, steps=5)
for step, value in enumerate(result.losses, 1):
    print(f"step {step} loss {value:.6f}")
print(result.plan)

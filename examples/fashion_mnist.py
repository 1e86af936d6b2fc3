#!/usr/bin/env python3
"""Fashion-MNIST: trains a classifier with data parallelism on CPU ranks
(threads of epl-run) from Debian's dataset-fashion-mnist, then prints the
test accuracy.

    python3 examples/fashion_mnist.py                  # 4 ranks, 8 epochs
    python3 examples/fashion_mnist.py --epochs 1 --ranks 1
    python3 examples/fashion_mnist.py --data-dir DIR   # the four idx .gz files

The files are found in --data-dir, else $EPL_FASHION_MNIST, else
/usr/share/datasets/fashion-mnist (`apt-get install dataset-fashion-mnist`,
which scripts/setup.sh does). The training set (60000 images) is cut into
global batches of --batch, shuffled per epoch from --seed; each rank reads
its quarter of each batch (epl-run --dataset); the 10000 test images are
evaluated after every epoch with the trained parameters.

Models: `mlp` (784-512-256-10, ReLU, AdamW) and `resnet` (a small ResNet:
convolutions, batch norm, global average pooling; AdamW). The learning rate
falls to 0 over the run on a cosine (optimizer.lr_schedule; --lr-schedule
constant keeps it).
"""

import argparse
import pathlib
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))
import epl  # noqa: E402
from epl import data  # noqa: E402

CONFIG = {"optimizer.type": "adamw", "optimizer.lr": 1e-3,
          "optimizer.weight_decay": 1e-4}


def mlp(x, training=True):
    """784-512-256-10 with ReLU: the logits."""
    h = epl.layers.Dense(512, activation="relu", name="fc1")(x)
    h = epl.layers.Dense(256, activation="relu", name="fc2")(h)
    return epl.layers.Dense(10, name="classifier")(h)


def resnet(x, training=True):
    """A small ResNet (epl.layers.resnet: a stem, one basic block of two 3x3
    convolutions with batch norm per stage, widths 16 and 32, global average
    pooling, a Dense classifier) on the images as [B, 28, 28, 1]. Batch
    norm trains on the batch's statistics and keeps running statistics,
    which the evaluation model (`training=False`) normalizes with."""
    images = epl.layers.reshape(x, (x.shape[0], 28, 28, 1))
    return epl.layers.resnet(images, 10, widths=(16, 32), blocks_per_stage=1,
                             training=training)


MODELS = {"mlp": mlp, "resnet": resnet}


def build(model, batch, config, training=True):
    """The model traced at `batch` samples: its loss and logits."""
    epl.init(epl.Config(config))
    x = epl.input("x", (batch, 784))
    y = epl.label("y", (batch, 10))
    with epl.replicate(device_count=1):
        logits = MODELS[model](x, training)
        loss = epl.layers.softmax_cross_entropy(logits, y)
    return loss, logits


def show_progress(line):
    """epl-run's epoch and evaluation lines, as they come."""
    if line.startswith(("epoch ", "eval ")):
        print(f"  epl-run: {line}", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", help="directory with Fashion-MNIST's idx .gz files")
    parser.add_argument("--model", choices=sorted(MODELS), default="mlp")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--ranks", type=int, default=4, help="data-parallel CPU ranks")
    parser.add_argument("--batch", type=int, default=128, help="global batch")
    parser.add_argument("--eval-batch", type=int,
                        help="evaluation batch (default 1000, resnet 250)")
    parser.add_argument("--lr-schedule", choices=["cosine", "constant"], default="cosine",
                        help="the learning rate over the run (default: cosine, to 0)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, help="train on the first N images only")
    args = parser.parse_args(argv)

    try:
        directory = data.find_fashion_mnist(args.data_dir)
    except data.DatasetError as e:
        sys.exit(f"examples/fashion_mnist.py: {e}")
    with tempfile.TemporaryDirectory() as tmp:
        train_file = pathlib.Path(tmp) / "train.safetensors"
        test_file = pathlib.Path(tmp) / "test.safetensors"
        n = data.fashion_mnist_safetensors(train_file, "train", directory, limit=args.limit)
        m = data.fashion_mnist_safetensors(test_file, "test", directory)
        print(f"Fashion-MNIST from {directory}: {n} training, {m} test images")

        eval_batch = args.eval_batch or (250 if args.model == "resnet" else 1000)
        eval_loss, eval_logits = build(args.model, eval_batch, CONFIG, training=False)
        eval_model = epl.to_mlir(eval_loss, outputs=[eval_logits])
        # The rate falls over every step the run takes.
        schedule = {"optimizer.lr_schedule": "cosine",
                    "optimizer.decay_steps": args.epochs * (n // args.batch)} \
            if args.lr_schedule == "cosine" else {}
        loss, _ = build(args.model, args.batch, {**CONFIG, **schedule})
        start = time.time()
        result = epl.train(loss, devices=args.ranks, seed=args.seed, dataset=train_file,
                           epochs=args.epochs, shuffle=True, eval_model=eval_model,
                           eval_dataset=test_file, eval_each_epoch=True,
                           progress=show_progress)
        minutes = (time.time() - start) / 60
    for (epoch, mean, speed), ev in zip(result.epochs, result.evaluations):
        print(f"epoch {epoch}: train loss {mean:.4f}, {speed:.0f} samples/s; "
              f"test loss {ev.loss:.4f}, accuracy {ev.accuracy:.4f}")
    print(result.plan)
    final = result.evaluation
    print(f"test accuracy {final.accuracy:.4f} ({final.samples} images) after "
          f"{args.epochs} epochs on {args.ranks} ranks in {minutes:.1f} minutes")
    return final.accuracy


if __name__ == "__main__":
    main()

"""Datasets for `epl-run --dataset`: safetensors files of N samples.

A dataset holds one tensor per input and label of the model, by name, with
the samples along the leading dimension (`[N, ...]` for an input `[B, ...]`,
same dtype). `shuffled_order` reproduces the order in which epl-run's
`--shuffle` visits them (docs/epl-run.md); `fashion_mnist` reads the Debian
package `dataset-fashion-mnist`.
"""

import gzip
import os
import pathlib
import struct

import numpy as np

from . import safetensors
from .errors import EPLError
from .initializers import _fnv1a, _splitmix64, _MASK

#: Where Debian's dataset-fashion-mnist installs its files.
FASHION_MNIST_DIR = "/usr/share/datasets/fashion-mnist"
FASHION_MNIST_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}


class DatasetError(EPLError):
    """A dataset that is missing or not what the model takes."""


def shuffled_order(n, seed, epoch):
    """The order epl-run `--shuffle --seed seed` visits `n` samples in
    during epoch `epoch` (1-based): Fisher-Yates over 0..n-1, for i = n-1
    down to 1 swapping i with next() mod (i + 1), next() the SplitMix64
    stream of seed XOR FNV-1a-64("shuffle/epoch<epoch>")."""
    order = np.arange(n, dtype=np.int64)
    if n < 2:
        return order
    start = (seed ^ _fnv1a(f"shuffle/epoch{epoch}")) & _MASK
    bits = _splitmix64(start, n - 1)
    picks = (bits % np.arange(n, 1, -1, dtype=np.uint64)).astype(np.int64).tolist()
    o = order.tolist()
    for k, i in enumerate(range(n - 1, 0, -1)):
        j = picks[k]
        o[i], o[j] = o[j], o[i]
    return np.array(o, dtype=np.int64)


def batches(arrays, batch, seed=0, epochs=1, shuffle=False):
    """The global batches epl-run feeds from `arrays` (dict name -> [N, ...]),
    in order, epoch after epoch; the last N mod batch samples of an epoch
    are dropped."""
    n = len(next(iter(arrays.values())))
    for epoch in range(1, epochs + 1):
        order = shuffled_order(n, seed, epoch) if shuffle else np.arange(n)
        for b in range(n // batch):
            rows = order[b * batch:(b + 1) * batch]
            yield {k: v[rows] for k, v in arrays.items()}


def save(path, arrays):
    """Writes a dataset: `arrays` maps each input and label name to its
    samples, all with the same leading dimension."""
    sizes = {k: len(v) for k, v in arrays.items()}
    if len(set(sizes.values())) != 1:
        raise DatasetError(f"the tensors of a dataset hold the same number of samples, "
                           f"not {sizes}")
    safetensors.save(str(path), {k: np.ascontiguousarray(v) for k, v in arrays.items()})


def read_idx(path):
    """A numpy array from an IDX file (MNIST's format), gzipped or not."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    zero, kind, dims = struct.unpack(">HBB", raw[:4])
    if zero != 0 or kind != 0x08:
        raise DatasetError(f"{path}: not an IDX file of unsigned bytes")
    shape = struct.unpack(">" + "I" * dims, raw[4:4 + 4 * dims])
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def find_fashion_mnist(directory=None):
    """The directory with Fashion-MNIST's four files: `directory`, else
    $EPL_FASHION_MNIST, else Debian's. Raises DatasetError naming what is
    missing and how to install it."""
    directory = pathlib.Path(directory or os.environ.get("EPL_FASHION_MNIST")
                             or FASHION_MNIST_DIR)
    missing = [name for pair in FASHION_MNIST_FILES.values() for name in pair
               if not (directory / name).is_file()]
    if missing:
        raise DatasetError(f"Fashion-MNIST is not in {directory} (missing {', '.join(missing)}): "
                           "install it with `apt-get install dataset-fashion-mnist` "
                           "(scripts/setup.sh does) or give its directory")
    return directory


def fashion_mnist(split="train", directory=None, one_hot=True, flatten=True,
                  dtype=np.float32):
    """Fashion-MNIST's `split` ("train": 60000, "test": 10000 samples) as
    (images, labels): images scaled to [0, 1] then normalized with the
    training set's mean and standard deviation, [N, 784] (or [N, 28, 28]
    without `flatten`); labels one-hot [N, 10] float (or int64 class ids)."""
    directory = find_fashion_mnist(directory)
    images_file, labels_file = FASHION_MNIST_FILES[split]
    images = read_idx(directory / images_file).astype(np.float64) / 255.0
    labels = read_idx(directory / labels_file).astype(np.int64)
    # Fashion-MNIST training set: mean 0.2860, standard deviation 0.3530.
    images = ((images - 0.2860) / 0.3530).astype(dtype)
    if flatten:
        images = images.reshape(len(images), -1)
    if one_hot:
        labels = np.eye(10, dtype=dtype)[labels]
    return images, labels


def fashion_mnist_safetensors(path, split="train", directory=None, names=("x", "y"),
                              limit=None, **kwargs):
    """Writes Fashion-MNIST's `split` to `path` as a dataset whose tensors
    are called `names` (input, label); `limit` keeps the first samples
    only. Returns the number of samples."""
    images, labels = fashion_mnist(split, directory, **kwargs)
    if limit is not None:
        images, labels = images[:limit], labels[:limit]
    save(path, {names[0]: images, names[1]: labels})
    return len(images)

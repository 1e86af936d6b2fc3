"""Reading and writing safetensors files with numpy alone.

The same format epl-run reads (--params, --data) and writes (--dump-results,
--save): an 8-byte little-endian header length, a JSON header, raw data.
Writes are atomic (temporary file, then rename), as epl-run's are.
"""

import json
import os
import struct
import tempfile

import numpy as np

_DTYPES = {
    "F64": np.float64, "F32": np.float32, "F16": np.float16,
    "I64": np.int64, "I32": np.int32, "I16": np.int16, "I8": np.int8,
    "U8": np.uint8, "BOOL": np.bool_,
}
_NAMES = {np.dtype(v): k for k, v in _DTYPES.items()}


def storable(dtype):
    """Whether a safetensors file holds arrays of `dtype`."""
    return np.dtype(dtype).newbyteorder("=") in _NAMES


def load(path):
    """Returns {name: numpy array} (and drops the metadata)."""
    return load_with_metadata(path)[0]


def load_with_metadata(path):
    with open(path, "rb") as f:
        raw = f.read()
    (size,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + size])
    data = raw[8 + size:]
    metadata = header.pop("__metadata__", {})
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        dtype = np.dtype(_DTYPES[info["dtype"]]).newbyteorder("<")
        array = np.frombuffer(data[begin:end], dtype=dtype)
        tensors[name] = array.reshape(info["shape"]).copy()
    return tensors, metadata


def save(path, tensors, metadata=None):
    """Writes {name: array} to `path` atomically."""
    header = {}
    chunks = []
    offset = 0
    for name, array in tensors.items():
        # np.ascontiguousarray makes a 0-d array 1-d; scalars (a loss, the
        # optimizer's step) must keep their shape [].
        array = np.asarray(array, order="C")
        dtype = array.dtype.newbyteorder("=")
        if not storable(dtype):
            raise TypeError(f"{name}: safetensors has no dtype for {array.dtype}")
        blob = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": _NAMES[dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        chunks.append(blob)
        offset += len(blob)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    directory = os.path.dirname(os.path.abspath(path))
    fd, temp = tempfile.mkstemp(dir=directory, prefix=os.path.basename(path) + ".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(struct.pack("<Q", len(text)))
            f.write(text)
            for blob in chunks:
                f.write(blob)
        os.replace(temp, path)
    except BaseException:
        os.unlink(temp)
        raise

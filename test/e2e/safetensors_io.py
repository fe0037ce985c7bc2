"""Safetensors files by hand, with NumPy alone: what the reference
generators write and the checkers read (float32 tensors in, any of the
dtypes dlc writes out). test/gpu/run.py keeps its own reader, since it
travels to the GPU machine alone."""

import collections
import json
import struct

import numpy as np

DTYPES = {"F32": "<f4", "F64": "<f8", "F16": "<f2", "I64": "<i8", "I32": "<i4"}


def write_safetensors(path, tensors, metadata=None):
    """tensors: ordered mapping name -> array, written as float32, in order.
    The header is padded with spaces so that the data starts 8-byte
    aligned, as the reference implementation does."""
    header = collections.OrderedDict()
    blobs, offset = [], 0
    for name, arr in tensors.items():
        raw = np.ascontiguousarray(arr, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(np.shape(arr)),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in blobs:
            f.write(raw)


def read_safetensors(path, dtypes=DTYPES, exact=False):
    """name -> array (read-only views of the file's bytes), in file order.
    A dtype outside `dtypes` raises ValueError; with `exact`, so do bytes
    that the header does not account for."""
    with open(path, "rb") as f:
        buf = f.read()
    (n,) = struct.unpack("<Q", buf[:8])
    header = json.loads(buf[8:8 + n].decode("utf-8"))
    data = buf[8 + n:]
    out, end = collections.OrderedDict(), 0
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] not in dtypes:
            raise ValueError("%s: %s is %s" % (path, name, info["dtype"]))
        b, e = info["data_offsets"]
        end = max(end, e)
        out[name] = np.frombuffer(data[b:e], dtype=dtypes[info["dtype"]]).reshape(info["shape"])
    if exact and end != len(data):
        raise ValueError("%s: %d bytes of data, the header accounts for %d"
                         % (path, len(data), end))
    return out

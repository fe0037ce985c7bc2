#!/usr/bin/env python3
"""List the tensors of a .safetensors file in file order (numpy only):
`NAME DTYPE [SHAPE]`, with `= VALUE` for a scalar. With --drop NAME -o OUT,
write a copy without the named tensors instead (for error tests)."""
import argparse
import json
import struct
import sys

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--drop", action="append", default=[])
    ap.add_argument("-o", dest="out")
    args = ap.parse_args()
    with open(args.path, "rb") as f:
        buf = f.read()
    (n,) = struct.unpack("<Q", buf[:8])
    header = json.loads(buf[8:8 + n])
    data = buf[8 + n:]
    items = sorted((v["data_offsets"][0], k, v) for k, v in header.items()
                   if k != "__metadata__")
    if args.out:
        new, blobs, off = {}, [], 0
        for _, k, v in items:
            if k in args.drop:
                continue
            b, e = v["data_offsets"]
            new[k] = dict(v, data_offsets=[off, off + e - b])
            blobs.append(data[b:e])
            off += e - b
        h = json.dumps(new).encode()
        h += b" " * (-len(h) % 8)
        with open(args.out, "wb") as f:
            f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
        return 0
    for _, k, v in items:
        line = "%s %s %s" % (k, v["dtype"], v["shape"])
        if v["shape"] == [] and v["dtype"] == "F32":
            b, e = v["data_offsets"]
            line += " = %g" % np.frombuffer(data[b:e], "<f4")[0]
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

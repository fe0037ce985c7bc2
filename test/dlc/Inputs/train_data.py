"""Data sets for dlc train's tests: train_data.py DIR writes DIR/train.npz
(21 rows: batches of 8, 8 and 5), DIR/val.npz (10 rows), the training set
compressed (train_z.npz) and broken ones for the error tests."""
import io
import struct
import sys
import zlib

import numpy as np

d = sys.argv[1]
rng = np.random.default_rng(7)
x = rng.standard_normal((21, 4)).astype(np.float32)
y = (np.abs(x[:, 0] * 2 + x[:, 1]) * 1.3).astype(np.int64) % 3
xv = rng.standard_normal((10, 4)).astype(np.float32)
yv = (np.abs(xv[:, 0] * 2 + xv[:, 1]) * 1.3).astype(np.int64) % 3
np.savez(f"{d}/train.npz", x=x, y=y)
np.savez(f"{d}/val.npz", x=xv, y=yv)
np.savez_compressed(f"{d}/train_z.npz", x=x, y=y)
np.savez(f"{d}/train_i32.npz", x=x, y=y.astype(np.int32))
# Errors: a missing label, too few rows of one array, a wrong trailing
# dimension, a float label, a label out of range, a Fortran-ordered array.
np.savez(f"{d}/nolabel.npz", x=x, labels=y)
np.savez(f"{d}/rows.npz", x=x, y=y[:20])
np.savez(f"{d}/dims.npz", x=x[:, :3], y=y)
np.savez(f"{d}/ftype.npz", x=x, y=y.astype(np.float32))
bad = y.copy()
bad[13] = 3
np.savez(f"{d}/range.npz", x=x, y=bad)
np.savez(f"{d}/fortran.npz", x=np.asfortranarray(x), y=y)
with open(f"{d}/train.npz", "rb") as f:
    blob = f.read()
with open(f"{d}/truncated.npz", "wb") as f:
    f.write(blob[: len(blob) // 2])


def lying_npz(path, member, claimed):
    """A .npz of one deflated member whose central directory claims
    `claimed` uncompressed bytes (through a zip64 extra field when that does
    not fit 32 bits)."""
    z = zlib.compressobj(wbits=-15)
    data = z.compress(member) + z.flush()
    crc = zlib.crc32(member)
    name = b"x.npy"
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, crc,
                        len(data), len(member), len(name), 0) + name + data
    size32 = min(claimed, 0xFFFFFFFF)
    extra = struct.pack("<HHQ", 1, 8, claimed) if size32 == 0xFFFFFFFF else b""
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 8, 0, 0,
                          crc, len(data), size32, len(name), len(extra), 0, 0,
                          0, 0, 0) + name + extra
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central),
                      len(local), 0)
    with open(path, "wb") as f:
        f.write(local + central + end)


# Sizes no deflate stream of that length can inflate to: 1 GiB, and 2^64 - 1
# (zip64), from a member of a few hundred bytes (test/fuzz/fuzz_npz found it).
buf = io.BytesIO()
np.save(buf, x)
lying_npz(f"{d}/inflate_1g.npz", buf.getvalue(), 1 << 30)
lying_npz(f"{d}/inflate_2p64.npz", buf.getvalue(), (1 << 64) - 1)

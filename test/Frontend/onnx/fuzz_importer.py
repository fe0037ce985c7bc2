#!/usr/bin/env python3
"""A bounded, deterministic mutation fuzzer for dlc's ONNX importer.

    fuzz_importer.py --iterations N --dlc PATH [--seed S] [--inputs DIR]
                     [--work DIR] [--jobs J] [--timeout SECONDS]
                     [--memory-mb MB] [--only I] [--keep]

It runs `dlc FILE --emit=dlc` on every .onnx file of DIR (default: the
Inputs/ next to this script), then on N mutants of them, and fails (exit
status 1) when a run
  * dies from a signal (negative return code, or 128 + signal from a shell),
  * exits with a status other than 0 or 1 (the importer's contract: errors
    exit with 1),
  * exits with 1 without an `error:` diagnostic,
  * prints 'Assertion', 'LLVM ERROR', 'Stack dump', 'PLEASE submit a bug
    report', 'UNREACHABLE', 'terminate called', 'AddressSanitizer' or
    'runtime error:' (UBSan), or
  * takes more than --timeout seconds (default 10).
Each child runs under an address-space limit (--memory-mb, default 4096; 0
for none), so an importer that believes a mutated dimension of 2^40 and
allocates for it fails loudly instead of swapping.

Mutant I is derived from seed S and I alone (random.Random("S:I")), so any
one can be rebuilt with --only I; the failing ones are kept in --work (a
temporary directory by default, printed). Three kinds of mutation:

  bytes  bit flips, truncation, insertion, deletion, overwriting with
         special bytes, duplicating a chunk;
  wire   protobuf wire-format edits, no schema needed: decode the fields
         recursively, then change a varint (to 0, -5, 2^40, ...), drop,
         duplicate or reorder a field, or damage a length-delimited
         payload, and re-encode with consistent lengths;
  onnx   schema-aware edits through the `onnx` package: a dimension set to
         0, -5 or 2^40, an input or initializer dropped, an attribute of the
         wrong type or with a bad value, a duplicated node output name, an
         input pointing at a missing name, a changed op type, opset, element
         type or IR version, reordered or removed nodes, a cycle, bad shape
         constants, inconsistent initializer data.
The onnx kind needs `import onnx` (Debian's python3-onnx). Without it the
fuzzer says so and uses bytes and wire only. lit's %python is the Python
CMake found first in /usr/bin (DLC_TEST_PYTHON), which has it.
"""

import argparse
import concurrent.futures
import glob
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

try:
    import onnx
    from onnx import AttributeProto, TensorProto
    HAVE_ONNX = True
except Exception:  # noqa: BLE001 - any import failure means "no onnx"
    HAVE_ONNX = False

HERE = os.path.dirname(os.path.abspath(__file__))

BAD_OUTPUT = ["Assertion", "LLVM ERROR", "Stack dump",
              "PLEASE submit a bug report", "UNREACHABLE",
              "terminate called", "AddressSanitizer", "runtime error:"]

INTERESTING_INTS = [0, 1, -1, -5, 2, 3, 7, 255, 2**31 - 1, 2**31, 2**32,
                    2**40, 2**62, 2**63 - 1, -2**63]


# --------------------------------------------------------------------------
# byte-level mutations


def mutate_bytes(rng, data, log):
    data = bytearray(data)
    kind = rng.choice(["flip", "truncate", "insert", "delete", "overwrite",
                       "duplicate"])
    n = len(data)
    if kind == "flip" and n:
        k = rng.randint(1, 8)
        for _ in range(k):
            i = rng.randrange(n)
            data[i] ^= 1 << rng.randrange(8)
        log.append("bytes:flip %d bits" % k)
    elif kind == "truncate" and n:
        cut = rng.randrange(n)
        data = data[:cut]
        log.append("bytes:truncate at %d" % cut)
    elif kind == "insert":
        i = rng.randint(0, n)
        k = rng.randint(1, 16)
        data[i:i] = bytes(rng.randrange(256) for _ in range(k))
        log.append("bytes:insert %d at %d" % (k, i))
    elif kind == "delete" and n:
        i = rng.randrange(n)
        k = rng.randint(1, min(32, n - i))
        del data[i:i + k]
        log.append("bytes:delete %d at %d" % (k, i))
    elif kind == "overwrite" and n:
        i = rng.randrange(n)
        k = rng.randint(1, 8)
        b = rng.choice([0x00, 0xff, 0x7f, 0x80, 0x01])
        data[i:i + k] = bytes([b]) * len(data[i:i + k])
        log.append("bytes:overwrite %d with %#x at %d" % (k, b, i))
    elif kind == "duplicate" and n:
        i = rng.randrange(n)
        k = rng.randint(1, min(64, n - i))
        j = rng.randint(0, n)
        data[j:j] = data[i:i + k]
        log.append("bytes:duplicate %d from %d to %d" % (k, i, j))
    else:
        data += b"\x08\x01"
        log.append("bytes:append")
    return bytes(data)


# --------------------------------------------------------------------------
# protobuf wire-format mutations (no schema)


def _read_varint(buf, i):
    shift = result = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise ValueError("bad varint")
        b = buf[i]
        i += 1
        result |= (b & 0x7f) << shift
        shift += 7
        if not b & 0x80:
            return result, i


def _varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def wire_decode(buf, depth=0):
    """[field...] with field = [number, wiretype, value]; value is an int
    (varint, fixed32/64 raw bytes kept as bytes), bytes, or a nested list
    for a length-delimited payload that decodes as a message."""
    fields, i = [], 0
    while i < len(buf):
        key, i = _read_varint(buf, i)
        num, wt = key >> 3, key & 7
        if num == 0:
            raise ValueError("field 0")
        if wt == 0:
            v, i = _read_varint(buf, i)
        elif wt == 1:
            if i + 8 > len(buf):
                raise ValueError("short fixed64")
            v, i = bytes(buf[i:i + 8]), i + 8
        elif wt == 5:
            if i + 4 > len(buf):
                raise ValueError("short fixed32")
            v, i = bytes(buf[i:i + 4]), i + 4
        elif wt == 2:
            ln, i = _read_varint(buf, i)
            if i + ln > len(buf):
                raise ValueError("short payload")
            v = bytes(buf[i:i + ln])
            i += ln
            if depth < 12 and v:
                try:
                    v = wire_decode(v, depth + 1)
                except ValueError:
                    pass
        else:
            raise ValueError("wire type %d" % wt)
        fields.append([num, wt, v])
    return fields


def wire_encode(fields):
    out = bytearray()
    for num, wt, v in fields:
        out += _varint((num << 3) | wt)
        if wt == 0:
            out += _varint(v)
        elif wt in (1, 5):
            out += v
        else:
            payload = wire_encode(v) if isinstance(v, list) else v
            out += _varint(len(payload)) + payload
    return bytes(out)


def _all_field_lists(fields, acc):
    acc.append(fields)
    for f in fields:
        if isinstance(f[2], list):
            _all_field_lists(f[2], acc)
    return acc


def mutate_wire(rng, data, log):
    try:
        root = wire_decode(data)
    except ValueError:
        return mutate_bytes(rng, data, log)
    lists = [fl for fl in _all_field_lists(root, []) if fl]
    if not lists:
        return mutate_bytes(rng, data, log)
    fl = rng.choice(lists)
    idx = rng.randrange(len(fl))
    num, wt, v = fl[idx]
    kind = rng.choice(["varint", "varint", "varint", "drop", "dup", "swap",
                       "payload", "wiretype"])
    if kind == "varint":
        varints = [f for f in fl if f[1] == 0]
        if varints:
            f = rng.choice(varints)
            f[2] = rng.choice(INTERESTING_INTS) & ((1 << 64) - 1)
            log.append("wire:varint field %d = %d" % (f[0], f[2]))
        else:
            kind = "drop"
    if kind == "drop":
        del fl[idx]
        log.append("wire:drop field %d" % num)
    elif kind == "dup":
        fl.insert(idx, [num, wt, v])
        log.append("wire:duplicate field %d" % num)
    elif kind == "swap" and len(fl) > 1:
        j = rng.randrange(len(fl))
        fl[idx], fl[j] = fl[j], fl[idx]
        log.append("wire:swap fields %d and %d" % (idx, j))
    elif kind == "payload" and wt == 2:
        raw = wire_encode(v) if isinstance(v, list) else v
        raw = bytearray(raw)
        if raw and rng.random() < 0.5:
            raw = raw[:rng.randrange(len(raw))]
            log.append("wire:truncate payload of field %d" % num)
        else:
            raw += bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
            log.append("wire:extend payload of field %d" % num)
        fl[idx][2] = bytes(raw)
    elif kind == "wiretype":
        # Same payload, other wire type: a varint where a message was, etc.
        if wt == 2:
            fl[idx] = [num, 0, rng.choice(INTERESTING_INTS) & ((1 << 64) - 1)]
        else:
            fl[idx] = [num, 2, b"\x08\x01"]
        log.append("wire:change wire type of field %d" % num)
    elif kind in ("swap", "payload"):
        del fl[idx]
        log.append("wire:drop field %d" % num)
    return wire_encode(root)


# --------------------------------------------------------------------------
# onnx-aware mutations


BAD_DIMS = [0, -5, 2**40, -1, 2**31, 2**63 - 1]
OP_TYPES = ["Gemm", "MatMul", "Add", "Relu", "Softmax", "Flatten", "Reshape",
            "Transpose", "Conv", "MaxPool", "AveragePool", "BatchNormalization",
            "LayerNormalization", "ReduceMean", "Concat", "Gather", "Slice",
            "Shape", "Unsqueeze", "Squeeze", "Cast", "Constant", "Identity",
            "Dropout", "Pow", "Erf", "GlobalAveragePool", "Einsum", "Loop",
            "If", "Scan", "NonZero", "", "relu", "X" * 300]


def _tensor_types(g):
    vals = list(g.input) + list(g.output) + list(g.value_info)
    return [v.type.tensor_type for v in vals if v.type.HasField("tensor_type")]


def _m_dim(rng, m, log):
    tts = [t for t in _tensor_types(m.graph) if t.HasField("shape")]
    if not tts:
        return False
    t = rng.choice(tts)
    if not t.shape.dim or rng.random() < 0.15:
        t.shape.dim.add().dim_value = rng.choice(BAD_DIMS)
        log.append("onnx:add dim")
        return True
    d = rng.choice(t.shape.dim)
    r = rng.random()
    if r < 0.7:
        d.dim_value = rng.choice(BAD_DIMS)
        log.append("onnx:dim = %d" % d.dim_value)
    elif r < 0.85:
        d.dim_param = rng.choice(["N", "", "batch"])
        log.append("onnx:dim_param %r" % d.dim_param)
    else:
        t.shape.dim.remove(d)
        log.append("onnx:remove dim")
    return True


def _m_init_dims(rng, m, log):
    if not m.graph.initializer:
        return False
    t = rng.choice(m.graph.initializer)
    r = rng.random()
    if r < 0.5 and t.dims:
        i = rng.randrange(len(t.dims))
        t.dims[i] = rng.choice(BAD_DIMS + [t.dims[i] + 1, t.dims[i] * 2])
        log.append("onnx:initializer %s dim %d = %d" % (t.name, i, t.dims[i]))
    elif r < 0.7:
        t.dims.append(rng.choice([1, 2, 0, 2**40]))
        log.append("onnx:initializer %s extra dim" % t.name)
    elif r < 0.85 and t.raw_data:
        t.raw_data = t.raw_data[:rng.randrange(len(t.raw_data))]
        log.append("onnx:initializer %s short raw_data" % t.name)
    else:
        t.data_type = rng.choice([0, 2, 6, 7, 8, 9, 10, 11, 16, 99])
        log.append("onnx:initializer %s data_type %d" % (t.name, t.data_type))
    return True


def _m_drop_input(rng, m, log):
    g = m.graph
    pools = [p for p in (g.input, g.initializer, g.output) if len(p)]
    if not pools:
        return False
    pool = rng.choice(pools)
    i = rng.randrange(len(pool))
    log.append("onnx:drop %s" % pool[i].name)
    del pool[i]
    return True


def _m_attr_type(rng, m, log):
    nodes = [n for n in m.graph.node if n.attribute]
    if not nodes:
        return False
    n = rng.choice(nodes)
    a = rng.choice(n.attribute)
    kind = rng.choice(["string", "floats", "int", "float", "tensor", "ints",
                       "graph", "undefined"])
    name = a.name
    a.Clear()
    a.name = name
    if kind == "string":
        a.type, a.s = AttributeProto.STRING, b"SAME_UPPER"
    elif kind == "floats":
        a.type = AttributeProto.FLOATS
        a.floats.extend([1.5, -2.0])
    elif kind == "int":
        a.type, a.i = AttributeProto.INT, rng.choice(INTERESTING_INTS)
    elif kind == "float":
        a.type, a.f = AttributeProto.FLOAT, rng.choice([0.0, -1.0, 1e30,
                                                          float("nan")])
    elif kind == "tensor":
        a.type = AttributeProto.TENSOR
        a.t.data_type = TensorProto.FLOAT
        a.t.dims.extend([2, 2])
        a.t.float_data.extend([1.0])          # too few values
    elif kind == "ints":
        a.type = AttributeProto.INTS
        a.ints.extend(rng.choice([[], [0], [-1, -1, -1], [2**40, 3]]))
    elif kind == "graph":
        a.type = AttributeProto.GRAPH
        a.g.name = "sub"
    else:
        a.type = AttributeProto.UNDEFINED
    log.append("onnx:%s.%s as %s" % (n.op_type, name, kind))
    return True


def _m_attr_value(rng, m, log):
    nodes = [n for n in m.graph.node if n.attribute]
    if not nodes:
        return False
    n = rng.choice(nodes)
    a = rng.choice(n.attribute)
    vals = [0, -1, -100, 100, 2**40, -2**40, 1, 2]
    if a.type == AttributeProto.INTS:
        if a.ints and rng.random() < 0.7:
            a.ints[rng.randrange(len(a.ints))] = rng.choice(vals)
        elif rng.random() < 0.5:
            a.ints.append(rng.choice(vals))
        else:
            del a.ints[:]
        log.append("onnx:%s.%s = %s" % (n.op_type, a.name, list(a.ints)))
    elif a.type == AttributeProto.INT:
        a.i = rng.choice(vals)
        log.append("onnx:%s.%s = %d" % (n.op_type, a.name, a.i))
    elif a.type == AttributeProto.FLOAT:
        a.f = rng.choice([0.0, -1.0, float("inf"), float("nan"), 1e-45])
        log.append("onnx:%s.%s = %r" % (n.op_type, a.name, a.f))
    elif a.type == AttributeProto.STRING:
        a.s = rng.choice([b"", b"SAME_UPPER", b"SAME_LOWER", b"VALID",
                          b"reflect", b"\xff\xfe"])
        log.append("onnx:%s.%s = %r" % (n.op_type, a.name, a.s))
    elif a.type == AttributeProto.TENSOR:
        t = a.t
        if t.dims and rng.random() < 0.5:
            t.dims[0] = rng.choice(BAD_DIMS)
        else:
            t.data_type = rng.choice([0, 2, 7, 8, 11, 99])
        log.append("onnx:%s.%s tensor damaged" % (n.op_type, a.name))
    else:
        dup = n.attribute.add()
        dup.CopyFrom(a)
        log.append("onnx:%s.%s duplicated" % (n.op_type, a.name))
    return True


def _m_dup_output(rng, m, log):
    g = m.graph
    if len(g.node) < 1:
        return False
    n = rng.choice(g.node)
    names = [o for x in g.node for o in x.output] + [i.name for i in g.input]
    names += [i.name for i in g.initializer]
    if not n.output or not names:
        return False
    n.output[rng.randrange(len(n.output))] = rng.choice(names)
    log.append("onnx:%s output renamed to an existing name" % n.op_type)
    return True


def _m_missing_input(rng, m, log):
    nodes = [n for n in m.graph.node if n.input]
    if not nodes:
        if m.graph.output:
            m.graph.output[0].name = "missing_output"
            log.append("onnx:graph output renamed to a missing name")
            return True
        return False
    n = rng.choice(nodes)
    i = rng.randrange(len(n.input))
    n.input[i] = rng.choice(["missing_name", "", n.output[0] if n.output
                             else "self"])
    log.append("onnx:%s input %d = %r" % (n.op_type, i, n.input[i]))
    return True


def _m_arity(rng, m, log):
    if not m.graph.node:
        return False
    n = rng.choice(m.graph.node)
    if n.input and rng.random() < 0.5:
        del n.input[-1]
        log.append("onnx:%s drops its last input" % n.op_type)
    elif rng.random() < 0.5:
        n.input.append(n.input[0] if n.input else "x")
        log.append("onnx:%s gets an extra input" % n.op_type)
    else:
        n.output.append("extra_out")
        log.append("onnx:%s gets an extra output" % n.op_type)
    return True


def _m_op_type(rng, m, log):
    if not m.graph.node:
        return False
    n = rng.choice(m.graph.node)
    old, n.op_type = n.op_type, rng.choice(OP_TYPES)
    if rng.random() < 0.2:
        n.domain = rng.choice(["com.microsoft", "ai.onnx.ml", "bogus"])
    log.append("onnx:%s -> %s (domain %r)" % (old, n.op_type[:20], n.domain))
    return True


def _m_opset(rng, m, log):
    r = rng.random()
    if r < 0.6 and m.opset_import:
        m.opset_import[0].version = rng.choice([0, -1, 1, 9, 12, 13, 14, 17,
                                                18, 19, 2**31, 2**62])
        log.append("onnx:opset %d" % m.opset_import[0].version)
    elif r < 0.8:
        o = m.opset_import.add()
        o.domain, o.version = rng.choice([("", 17), ("", 9), ("x.y", 1)])
        log.append("onnx:extra opset_import %r %d" % (o.domain, o.version))
    else:
        del m.opset_import[:]
        log.append("onnx:no opset_import")
    return True


def _m_elem_type(rng, m, log):
    vals = list(m.graph.input) + list(m.graph.output)
    if not vals:
        return False
    v = rng.choice(vals)
    if rng.random() < 0.15:
        v.type.Clear()
        log.append("onnx:%s has no type" % v.name)
    else:
        v.type.tensor_type.elem_type = rng.choice([0, 2, 3, 6, 7, 9, 10, 11,
                                                   16, 99])
        log.append("onnx:%s elem_type %d" % (v.name,
                                             v.type.tensor_type.elem_type))
    return True


def _m_ir_version(rng, m, log):
    m.ir_version = rng.choice([0, 1, 3, 7, 9, 100, 2**40])
    log.append("onnx:ir_version %d" % m.ir_version)
    return True


def _m_nodes(rng, m, log):
    g = m.graph
    if len(g.node) < 1:
        return False
    r = rng.random()
    nodes = list(g.node)
    if r < 0.35 and len(nodes) > 1:
        nodes.reverse()
        log.append("onnx:nodes reversed")
    elif r < 0.7:
        i = rng.randrange(len(nodes))
        log.append("onnx:remove node %s" % nodes[i].op_type)
        del nodes[i]
    else:
        i = rng.randrange(len(nodes))
        dup = onnx.NodeProto()
        dup.CopyFrom(nodes[i])
        nodes.insert(i, dup)
        log.append("onnx:duplicate node %s" % nodes[i].op_type)
    del g.node[:]
    g.node.extend(nodes)
    return True


def _m_cycle(rng, m, log):
    g = m.graph
    if not g.node or not g.node[0].input or not g.node[-1].output:
        return False
    g.node[0].input[0] = g.node[-1].output[0]
    log.append("onnx:cycle from the last node to the first")
    return True


def _m_shape_values(rng, m, log):
    """Bad int64 values in Constant nodes and int64 initializers (Reshape
    shapes, Gather indices, Slice bounds, Unsqueeze axes)."""
    cands = [a.t for n in m.graph.node if n.op_type == "Constant"
             for a in n.attribute if a.name == "value"]
    cands += list(m.graph.initializer)
    cands = [t for t in cands if t.data_type == TensorProto.INT64]
    if not cands:
        return False
    t = rng.choice(cands)
    vals = rng.choice([[-1, -1], [0, 0, 0, 0, 0], [2**40], [-7], [0], [],
                       [3, -1, 5], [2**62, 2**62]])
    del t.int64_data[:]
    t.raw_data = b"".join(int(v).to_bytes(8, "little", signed=True)
                          for v in vals)
    del t.dims[:]
    if rng.random() < 0.8:
        t.dims.append(len(vals))
    log.append("onnx:int64 tensor %r = %s" % (t.name, vals))
    return True


ONNX_MUTATORS = [_m_dim, _m_dim, _m_init_dims, _m_drop_input, _m_attr_type,
                 _m_attr_value, _m_attr_value, _m_dup_output,
                 _m_missing_input, _m_arity, _m_op_type, _m_opset,
                 _m_elem_type, _m_ir_version, _m_nodes, _m_cycle,
                 _m_shape_values, _m_shape_values]


def mutate_onnx(rng, data, log):
    try:
        m = onnx.load_from_string(data)
    except Exception:  # noqa: BLE001
        return mutate_wire(rng, data, log)
    done = 0
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        for _attempt in range(8):
            if rng.choice(ONNX_MUTATORS)(rng, m, log):
                done += 1
                break
    if not done:
        return mutate_wire(rng, data, log)
    return m.SerializeToString()


# --------------------------------------------------------------------------
# running dlc


def make_mutant(seed, i, seeds, have_onnx):
    rng = random.Random("%s:%d" % (seed, i))
    name, data = seeds[rng.randrange(len(seeds))]
    log = []
    r = rng.random()
    if have_onnx and r < 0.55:
        data = mutate_onnx(rng, data, log)
    elif r < (0.8 if have_onnx else 0.5):
        data = mutate_wire(rng, data, log)
    else:
        data = mutate_bytes(rng, data, log)
    if rng.random() < 0.1:                     # sometimes a second round
        data = mutate_bytes(rng, data, log)
    return name, data, log


def _limit(memory_mb):
    def fn():
        if memory_mb:
            import resource
            lim = memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    return fn


def run_dlc(dlc, path, timeout, memory_mb):
    """Returns (verdict or None, returncode, seconds, first stderr line)."""
    t = time.monotonic()
    try:
        p = subprocess.run([dlc, path, "--emit=dlc"], stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout, preexec_fn=_limit(memory_mb))
    except subprocess.TimeoutExpired:
        return "timeout after %gs" % timeout, None, timeout, ""
    secs = time.monotonic() - t
    err = p.stderr.decode("utf-8", "replace")
    out = p.stdout.decode("utf-8", "replace")
    first = err.strip().splitlines()[0][:200] if err.strip() else ""
    rc = p.returncode
    if rc < 0:
        return "killed by signal %d" % -rc, rc, secs, first
    if rc >= 128:
        return "exit status %d (128 + signal %d)" % (rc, rc - 128), rc, secs, first
    for pat in BAD_OUTPUT:
        if pat in err or pat in out:
            return "printed %r" % pat, rc, secs, first
    if rc not in (0, 1):
        return "exit status %d (expected 0 or 1)" % rc, rc, secs, first
    if rc == 1 and "error:" not in err:
        return "exit status 1 without an error: diagnostic", rc, secs, first
    return None, rc, secs, first


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--dlc", default="dlc")
    ap.add_argument("--seed", default="1")
    ap.add_argument("--inputs", default=os.path.join(HERE, "Inputs"))
    ap.add_argument("--work", default=None,
                    help="directory for the mutants (default: a temporary one)")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--memory-mb", type=int, default=4096)
    ap.add_argument("--only", type=int, default=None,
                    help="build and run mutant I only (and keep it)")
    ap.add_argument("--keep", action="store_true", help="keep every mutant")
    ap.add_argument("--no-onnx", action="store_true",
                    help="bytes and wire mutations only, as without onnx")
    args = ap.parse_args(argv)

    dlc = shutil.which(args.dlc) or args.dlc
    if not os.path.exists(dlc):
        print("fuzz: error: no dlc at %r" % args.dlc)
        return 2
    paths = sorted(glob.glob(os.path.join(args.inputs, "*.onnx")))
    if not paths:
        print("fuzz: error: no .onnx files in %s" % args.inputs)
        return 2
    seeds = []
    for p in paths:
        with open(p, "rb") as f:
            seeds.append((os.path.basename(p), f.read()))
    have_onnx = HAVE_ONNX and not args.no_onnx
    if not HAVE_ONNX:
        print("fuzz: note: `import onnx` failed in %s; bytes and wire "
              "mutations only" % sys.executable)

    work = args.work or tempfile.mkdtemp(prefix="dlc-onnx-fuzz-")
    os.makedirs(work, exist_ok=True)

    # The jobs: the inputs as they are, then the mutants.
    jobs = []
    if args.only is None:
        for p in paths:
            jobs.append(("input", os.path.basename(p), p, []))
        indices = range(args.iterations)
    else:
        indices = [args.only]
    for i in indices:
        name, data, log = make_mutant(args.seed, i, seeds, have_onnx)
        path = os.path.join(work, "mutant_%05d.onnx" % i)
        with open(path, "wb") as f:
            f.write(data)
        jobs.append(("mutant %d" % i, name, path, log))

    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as ex:
        results = list(ex.map(
            lambda j: run_dlc(dlc, j[2], args.timeout, args.memory_mb), jobs))
    wall = time.monotonic() - t0

    failures = 0
    codes = {0: 0, 1: 0}
    slowest = (0.0, "")
    for (what, seedname, path, log), (bad, rc, secs, first) in zip(jobs, results):
        if rc in codes:
            codes[rc] += 1
        slowest = max(slowest, (secs, what))
        if bad:
            failures += 1
            print("FAIL %s (%s from %s; %s): %s; stderr: %s"
                  % (what, os.path.basename(path), seedname,
                     ", ".join(log) or "unmodified", bad, first))
        elif what.startswith("mutant") and not args.keep and args.only is None:
            os.remove(path)
    if args.work is None and not failures and not args.keep and args.only is None:
        shutil.rmtree(work, ignore_errors=True)
    elif failures:
        print("fuzz: failing inputs kept in %s" % work)
    print("fuzz: %d inputs and %d mutants (%s mutations, seed %s): "
          "%d exit 0, %d exit 1, slowest %.2fs (%s), %.1fs in all; "
          "%d failure%s"
          % (len(paths) if args.only is None else 0, len(indices),
             "onnx+wire+bytes" if have_onnx else "wire+bytes", args.seed,
             codes[0], codes[1], slowest[0], slowest[1], wall, failures,
             "" if failures == 1 else "s"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

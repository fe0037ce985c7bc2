"""dlc.compile, dlc.Model and dlc.stats."""

import collections
import json
import os
import re
import shutil
import sys
import tempfile
import time
import weakref

import numpy as np

from . import _compiler, _errors
from . import _runtime as rt
from ._core import Core, address, copy_params
from ._train import Train

# ---------------------------------------------------------------------------
# Inputs


def _describe(a):
    return f"{a.dtype}[{', '.join(str(d) for d in a.shape)}]"


def as_array(value, what="input"):
    """NumPy view of an array-like: an ndarray as is, a DLPack tensor (a
    PyTorch tensor on the CPU, ...) without a copy, anything else through
    np.asarray."""
    if type(value) is np.ndarray:
        return value
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "__dlpack__"):
        v = value
        if getattr(v, "requires_grad", False) and hasattr(v, "detach"):
            v = v.detach()
        try:
            return np.from_dlpack(v)
        except (BufferError, RuntimeError, TypeError, ValueError) as e:
            if hasattr(v, "cpu"):
                # A tensor on a GPU: the model's inputs are host memory.
                return np.from_dlpack(v.cpu())
            raise ValueError(f"{what}: cannot read this DLPack tensor on "
                             f"the host: {e}") from e
    return np.asarray(value)


def _ready(a, spec, what, rows=None):
    """`a` as an input for `spec` (dtype exact, C-contiguous, aligned);
    `rows` allows another size of dimension 0. Copies only what is not
    contiguous or aligned."""
    if not isinstance(a, np.ndarray):
        a = np.asarray(a, dtype=spec.dtype) \
            if isinstance(a, (list, tuple, int, float)) else as_array(a, what)
    want = spec.shape if rows is None else (rows,) + spec.shape[1:]
    if a.dtype != spec.dtype or a.shape != want:
        hint = ""
        if a.dtype != spec.dtype:
            hint = f" (convert it: .astype(np.{spec.dtype.name}))"
        raise ValueError(f"input '{spec.name}': expected "
                         f"{spec.describe(want)} ({spec.dtype.name}), got "
                         f"{_describe(a)}{hint}")
    if not (a.flags.c_contiguous and a.flags.aligned):
        a = np.ascontiguousarray(a)
        if not a.flags.aligned:
            a = a.copy()
    return a


def _bind(entry, args, kwargs, what):
    """Positional and named arguments in the entry's order."""
    n = len(entry.inputs)
    if not kwargs:
        if len(args) != n:
            raise TypeError(f"{what} takes {n} input(s) "
                            f"({', '.join(s.name for s in entry.inputs)}), "
                            f"{len(args)} given")
        return list(args)
    out = list(args) + [None] * (n - len(args))
    if len(args) > n:
        raise TypeError(f"{what} takes {n} input(s), {len(args)} given")
    for k, v in kwargs.items():
        i = entry.input_index.get(k)
        if i is None:
            raise TypeError(f"{what} has no input '{k}'; its inputs are "
                            f"{', '.join(s.name for s in entry.inputs)}")
        if out[i] is not None:
            raise TypeError(f"{what} got input '{k}' twice")
        out[i] = v
    missing = [entry.inputs[i].name for i in range(n) if out[i] is None]
    if missing:
        raise TypeError(f"{what} is missing input(s) {', '.join(missing)}")
    return out


# ---------------------------------------------------------------------------
# Losses and accuracy in NumPy (evaluate)


def _cross_entropy(logits, labels, class_dim):
    z = logits.astype(np.float64)
    if z.ndim > 2 and class_dim == 1:
        z = np.moveaxis(z, 1, -1)
    c = z.shape[-1]
    z = z.reshape(-1, c)
    lab = labels.reshape(-1).astype(np.int64)
    keep = lab != -100
    zmax = z.max(axis=1, keepdims=True)
    lse = np.log(np.exp(z - zmax).sum(axis=1)) + zmax[:, 0]
    picked = z[np.arange(len(lab)), np.where(keep, lab, 0)]
    nll = (lse - picked)[keep]
    correct = (z.argmax(axis=1) == lab)[keep]
    return float(nll.sum()), int(keep.sum()), int(correct.sum())


def _mse(pred, target):
    d = pred.astype(np.float64) - target.astype(np.float64)
    return float((d * d).sum()), d.size


_LOSS_LINE = re.compile(r"^\s*loss\s+(mse_loss|cross_entropy)\s*\(",
                        re.MULTILINE)


def _loss_of_source(path):
    """The loss of a .dlc model's `loss` line (None when not one of the
    two)."""
    if not str(path).endswith(".dlc"):
        return None
    try:
        with open(path) as f:
            m = _LOSS_LINE.search(f.read())
    except OSError:
        return None
    if not m:
        return None
    return "mse" if m.group(1) == "mse_loss" else "cross_entropy"


# ---------------------------------------------------------------------------
# Compile options


def _parse_device(device):
    d = str(device).lower()
    if d == "auto":
        return rt.DEVICE_AUTO, -1
    if d == "cpu":
        return rt.DEVICE_CPU, -1
    if d == "cuda":
        return rt.DEVICE_CUDA, -1
    m = re.fullmatch(r"cuda:(\d+)", d)
    if m:
        return rt.DEVICE_CUDA, int(m.group(1))
    raise ValueError(f"unknown device {device!r}: use 'auto', 'cpu', 'cuda' "
                     "or 'cuda:N'")


class _Options:
    """Everything that decides the compiler's flags."""

    def __init__(self, input_shapes, batch, precision, device, train,
                 compiler_args):
        if precision not in ("fp32", "bf16", "fp16"):
            raise ValueError(f"unknown precision {precision!r}: use 'fp32', "
                             "'bf16' or 'fp16'")
        if train is not None and not isinstance(train, Train):
            raise TypeError("train must be a dlc.Train, not "
                            f"{type(train).__name__}")
        if batch is not None and (int(batch) != batch or batch < 1):
            raise ValueError(f"batch must be a positive integer, not "
                             f"{batch!r}")
        self.input_shapes = {}
        for name, shape in (input_shapes or {}).items():
            dims = [int(d) for d in shape]
            if not dims or any(d < 1 for d in dims):
                raise ValueError(f"input_shapes['{name}']: positive sizes, "
                                 f"like [64, 784], not {shape!r}")
            self.input_shapes[name] = dims
        self.batch = None if batch is None else int(batch)
        self.precision = precision
        self.device = device
        self.kind, self.ordinal = _parse_device(device)
        self.train = train
        self.compiler_args = [str(a) for a in compiler_args]

    def flags(self, target=True):
        f = []
        for name, dims in self.input_shapes.items():
            f += ["--input-shape", f"{name}={','.join(map(str, dims))}"]
        if self.batch is not None:
            f += ["--batch", str(self.batch)]
        if self.precision != "fp32":
            f += ["--precision", self.precision]
        if self.train is not None:
            f += self.train.flags()
        if target:
            # CUDA code only where it can run: the compile is faster and the
            # object smaller without it (as `dlc run` does).
            if self.kind == rt.DEVICE_CPU or (
                    self.kind == rt.DEVICE_AUTO and
                    os.environ.get("DLC_DEVICE", "").lower() in ("", "auto")
                    and not rt.cuda_available()[0]):
                f += ["--target", "x86"]
        return f + self.compiler_args

    def at_batch(self, n, old):
        """The same options at batch size n (a short last batch)."""
        o = _Options.__new__(_Options)
        o.__dict__.update(self.__dict__)
        o.input_shapes = {k: ([n] + v[1:] if v[0] == old else v)
                          for k, v in self.input_shapes.items()}
        o.batch = n
        return o


# ---------------------------------------------------------------------------
# Sources


def _export_torch(module, example_inputs, directory, export_kwargs):
    try:
        import torch
    except ImportError as e:  # pragma: no cover - only without torch
        raise TypeError("a torch.nn.Module needs PyTorch") from e
    if example_inputs is None:
        raise ValueError("dlc.compile(module) needs example_inputs=(x,): "
                         "the shapes the model is exported and compiled for")
    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    example_inputs = tuple(torch.as_tensor(x) if isinstance(x, np.ndarray)
                           else x for x in example_inputs)
    name = re.sub(r"\W", "_", type(module).__name__).lower() or "model"
    if not re.match(r"[a-z_]", name):
        name = "m_" + name
    path = os.path.join(directory, f"{name}.onnx")
    import inspect
    kwargs = dict(export_kwargs or {})
    try:
        has_dynamo = "dynamo" in inspect.signature(
            torch.onnx.export).parameters
    except (TypeError, ValueError):
        has_dynamo = False
    if has_dynamo and "dynamo" not in kwargs:
        import importlib.util
        # The dynamo exporter needs onnxscript; without it, TorchScript's.
        if importlib.util.find_spec("onnxscript") is None:
            kwargs["dynamo"] = False
    if not kwargs.get("dynamo", has_dynamo) and "input_names" not in kwargs:
        try:
            params = list(inspect.signature(module.forward).parameters)
        except (TypeError, ValueError):
            params = []
        if len(params) >= len(example_inputs):
            kwargs["input_names"] = params[:len(example_inputs)]
    was_training = module.training
    module.eval()
    try:
        torch.onnx.export(module, example_inputs, path, **kwargs)
    finally:
        module.train(was_training)
    return path


def _source(model, example_inputs, export_kwargs):
    """(path, directory to delete afterwards or None)."""
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no model file '{path}'")
        return os.path.abspath(path), None
    mod = type(model).__module__ or ""
    if mod.startswith("torch") or hasattr(model, "state_dict") and \
            hasattr(model, "forward"):
        d = tempfile.mkdtemp(prefix="dlc-export-")
        try:
            return _export_torch(model, example_inputs, d, export_kwargs), d
        except BaseException:
            shutil.rmtree(d, ignore_errors=True)
            raise
    raise TypeError("dlc.compile takes a path to a .dlc, .onnx or .mlir "
                    "model or a torch.nn.Module, not "
                    f"{type(model).__name__}")


# ---------------------------------------------------------------------------
# The model


class Model:
    """A compiled model, loaded on its device. Made by dlc.compile."""

    def __init__(self, source, options, seed=0, cache_dir=None,
                 source_dir=None):
        self._source = source
        self._options = options
        self._cache_dir = cache_dir
        self._source_finalizer = weakref.finalize(
            self, shutil.rmtree, source_dir, True) if source_dir else None
        self._core = self._load(options, seed)
        self._variants = {}
        self._memory_report = None
        self._skipped = None
        c = self._core
        self._fwd = c.entries.get("forward") or next(iter(c.entries.values()))
        self._train = c.entries.get("train_step")
        fwd_in = self._fwd.inputs
        dims0 = {s.shape[0] if s.shape else None for s in fwd_in}
        self._batch = dims0.pop() if len(dims0) == 1 else None
        tr = options.train
        self._loss_kind = (tr.loss if tr and tr.loss else
                           _loss_of_source(source))
        self._class_dim = (tr.class_dim if tr and tr.class_dim is not None
                           else 1)
        if self._train is not None:
            names = {s.name for s in fwd_in}
            self._label_idx = [i for i, s in enumerate(self._train.inputs)
                               if s.name not in names]
            self._data_idx = [i for i, s in enumerate(self._train.inputs)
                              if s.name in names]
            self._loss_idx = next(
                (i for i, s in enumerate(self._train.outputs)
                 if s.name == "loss"), 0)
            self._skipped_idx = next(
                (i for i, s in enumerate(self._train.outputs)
                 if s.name == "skipped"), None)
            # The step's outputs (the loss) are read at once: one set of
            # buffers serves every step.
            self._train_outs = [np.empty(s.shape, s.dtype)
                                for s in self._train.outputs]
        self._n_classes = self._classes()

    def _load(self, options, seed):
        directory, symbol, temporary = _compiler.build(
            self._source, options.flags(), self._cache_dir)
        return Core(directory, symbol, options.kind, options.ordinal, seed,
                    temporary)

    # -- description -------------------------------------------------------

    @property
    def device(self):
        """"cpu" or "cuda:N": where the model runs."""
        return self._core.device_name.split(" ", 1)[0]

    @property
    def device_name(self):
        """The runtime's description: "cpu" or "cuda:0 (NVIDIA H200)"."""
        return self._core.device_name

    @property
    def cpu_name(self):
        """The compilation of the CPU code the model runs: the variant the
        runtime picked for this CPU ("x86-64-v4", "x86-64-v3") or the CPU
        the object was compiled for; "" on CUDA."""
        return self._core.cpu_name

    @property
    def fallback_reason(self):
        """Why a model with CUDA code runs on the CPU under "auto" ("" when
        it does not)."""
        return self._core.fallback_reason

    @property
    def name(self):
        return self._core.name

    @property
    def batch_size(self):
        """The compiled batch: dimension 0 of the inputs (None when the
        inputs do not share one)."""
        return self._batch

    @property
    def inputs(self):
        """The forward entry's inputs: [(name, dtype, shape)]."""
        return [(s.name, s.dtype, s.shape) for s in self._fwd.inputs]

    @property
    def outputs(self):
        """The forward entry's outputs: [(name, dtype, shape)]."""
        return [(s.name, s.dtype, s.shape) for s in self._fwd.outputs]

    @property
    def entries(self):
        return list(self._core.entries)

    @property
    def trainable(self):
        return self._train is not None

    @property
    def last_step_skipped(self):
        """fp16 training: whether the last step's update was skipped
        (gradient overflow: the loss scale halved); None otherwise."""
        return self._skipped

    def __repr__(self):
        ins = ", ".join(repr(s) for s in self._fwd.inputs)
        outs = ", ".join(repr(s) for s in self._fwd.outputs)
        extra = ", train_step" if self._train else ""
        return (f"<dlc.Model {self.name} on {self.device}: forward({ins}) "
                f"-> {outs}{extra}>")

    def close(self):
        """Frees the model (also done when it is garbage-collected)."""
        for v in self._variants.values():
            v.close()
        self._variants.clear()
        self._core.close()
        if self._source_finalizer:
            self._source_finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def init(self, seed=0):
        """Re-initialises the weights from dlc's seeded stream (PyTorch's
        default initialisation; ONNX initializers keep their values) and
        resets the optimizer state."""
        self._core.init(seed)

    # -- forward -----------------------------------------------------------

    def __call__(self, *args, **kwargs):
        """The forward entry: NumPy arrays (or DLPack tensors) in, NumPy out;
        one output as an array, several as a tuple. Dimension 0 may differ
        from the compiled batch: fewer rows are padded, more run in chunks
        (docs/python.md)."""
        e = self._fwd
        specs = e.inputs
        if not kwargs and len(args) == len(specs):
            # The fast path: inputs that are ready are passed as they are.
            c = self._core
            ptrs = e.in_ptrs
            with c.lock:
                for i, a in enumerate(args):
                    s = specs[i]
                    if not (type(a) is np.ndarray and a.dtype is s.dtype and
                            a.shape == s.shape and a.flags.c_contiguous and
                            a.flags.aligned):
                        break
                    ptrs[i] = address(a)
                else:
                    outs = [np.empty(s.shape, s.dtype) for s in e.outputs]
                    optrs = e.out_ptrs
                    for i, o in enumerate(outs):
                        optrs[i] = address(o)
                    st = c.L.dlc_model_run(c.handle, e.index, e.in_addr,
                                           e.out_addr)
                    if st:
                        rt.check(st, "forward failed")
                    return outs[0] if len(outs) == 1 else tuple(outs)
        outs = self._forward_any(_bind(e, args, kwargs, "forward"))
        return outs[0] if len(outs) == 1 else tuple(outs)

    def run(self, entry, *args, **kwargs):
        """Runs any entry by name with exact shapes; returns its outputs as
        a tuple."""
        e = self._core.entries.get(entry)
        if e is None:
            raise KeyError(f"the model has no entry '{entry}'; it has "
                           f"{', '.join(self._core.entries)}")
        arrays = _bind(e, args, kwargs, entry)
        arrays = [_ready(a, s, entry) for a, s in zip(arrays, e.inputs)]
        return tuple(self._core.run(e, arrays))

    def _rows(self, arrays, specs, what):
        """Arrays of the right dtype and trailing shape, and their common
        number of rows."""
        if self._batch is None:
            return [_ready(a, s, what) for a, s in zip(arrays, specs)], None
        out, rows = [], None
        for a, s in zip(arrays, specs):
            if isinstance(a, (list, tuple)):
                a = np.asarray(a, dtype=s.dtype)
            elif not isinstance(a, np.ndarray):
                a = as_array(a, what)
            if a.ndim != len(s.shape) or a.dtype != s.dtype or \
                    a.shape[1:] != s.shape[1:] or a.shape[0] < 1:
                shown = ("N, " + ", ".join(str(d) for d in s.shape[1:])) \
                    if len(s.shape) > 1 else "N"
                hint = (f" (convert it: .astype(np.{s.dtype.name}))"
                        if a.dtype != s.dtype else "")
                raise ValueError(
                    f"input '{s.name}': expected {s.dtype_name}[{shown}] "
                    f"(compiled for {s.describe()}, {s.dtype.name}), got "
                    f"{_describe(a)}{hint}")
            if rows is not None and a.shape[0] != rows:
                raise ValueError(f"input '{s.name}' has {a.shape[0]} rows, "
                                 f"the other inputs {rows}")
            rows = a.shape[0]
            out.append(a)
        return out, rows

    def _forward_any(self, arrays):
        e = self._fwd
        if len(arrays) != len(e.inputs):
            raise TypeError(f"forward takes {len(e.inputs)} input(s) "
                            f"({', '.join(s.name for s in e.inputs)}), "
                            f"{len(arrays)} given")
        arrays, n = self._rows(arrays, e.inputs, "forward")
        B = self._batch
        if n is None or n == B:
            arrays = [_ready(a, s, "forward") for a, s in zip(arrays,
                                                             e.inputs)]
            return self._core.run(e, arrays)
        for s in e.outputs:
            if not s.shape or s.shape[0] != B:
                raise ValueError(
                    f"forward was given {n} rows but the model is compiled "
                    f"for {B}, and its output '{s.name}' ({s.describe()}) "
                    "has no batch dimension to trim: call it with exactly "
                    f"{B} rows")
        pieces = [[] for _ in e.outputs]
        for start in range(0, n, B):
            stop = min(n, start + B)
            chunk = []
            for a, s in zip(arrays, e.inputs):
                part = a[start:stop]
                if stop - start < B:
                    padded = np.zeros(s.shape, s.dtype)
                    padded[:stop - start] = part
                    part = padded
                chunk.append(_ready(part, s, "forward"))
            for k, o in enumerate(self._core.run(e, chunk)):
                pieces[k].append(o[:stop - start])
        return [p[0] if len(p) == 1 else np.concatenate(p) for p in pieces]

    # -- training ----------------------------------------------------------

    def _need_train(self):
        if self._train is None:
            raise TypeError("the model was compiled without a training step: "
                            "dlc.compile(..., train=dlc.Train(loss=..., "
                            "optimizer=...))")

    def _classes(self):
        """The number of classes of a cross-entropy model, else None."""
        if self._loss_kind != "cross_entropy":
            return None
        out = self._fwd.outputs[0].shape
        if len(out) < 2:
            return None
        return out[-1] if (len(out) > 2 and self._class_dim == -1) else out[1]

    def _check_labels(self, arrays):
        classes = self._classes()
        if classes is None:
            return
        for i in self._label_idx:
            lab = arrays[i]
            if lab.dtype.kind not in "iu" or lab.size == 0:
                continue
            bad = ((lab < 0) & (lab != -100)) | (lab >= classes)
            if bad.any():
                k = int(np.flatnonzero(bad.reshape(-1))[0])
                name = self._train.inputs[i].name
                raise ValueError(
                    f"label {lab.reshape(-1)[k]} at position {k} of '{name}' "
                    f"is not a class of the {classes} the output has "
                    f"(labels are in [0, {classes}), or -100 to ignore a "
                    "position)")

    def train_step(self, *args, **kwargs):
        """One compiled training step (forward, loss, backward, optimizer
        update) on one batch; returns the loss. The label is the last
        argument. A batch of fewer rows than the compiled one runs on a
        second model compiled for that size (docs/python.md)."""
        e = self._train
        if e is not None and not kwargs and len(args) == len(e.inputs):
            # The fast path: a full batch of ready arrays.
            for a, s in zip(args, e.inputs):
                if not (type(a) is np.ndarray and a.dtype is s.dtype and
                        a.shape == s.shape and a.flags.c_contiguous and
                        a.flags.aligned):
                    break
            else:
                if self._n_classes is not None:
                    for i in self._label_idx:
                        lab = args[i]
                        if lab.min() < 0 or lab.max() >= self._n_classes:
                            self._check_labels(args)
                return self._core.run(e, args, self._train_outs,
                                      self._read_loss)
        self._need_train()
        arrays = _bind(e, args, kwargs, "train_step")
        arrays, n = self._rows(arrays, e.inputs, "train_step")
        if n is not None and n > self._batch:
            raise ValueError(
                f"train_step takes one batch of at most {self._batch} rows "
                f"(the compiled batch), got {n}: use fit() for a data set")
        arrays = [a if a.flags.c_contiguous and a.flags.aligned
                  else np.ascontiguousarray(a) for a in arrays]
        self._check_labels(arrays)
        return self._step(arrays, n)

    def _read_loss(self, outs):
        if self._skipped_idx is not None:
            self._skipped = bool(outs[self._skipped_idx])
        return float(outs[self._loss_idx])

    def _step(self, arrays, n):
        """A step on ready arrays of n rows (validated)."""
        if n is None or n == self._batch:
            return self._core.run(self._train, arrays, self._train_outs,
                                  self._read_loss)
        v = self._variant(n)
        copy_params(self._core, v)
        loss = v.run(v.entries["train_step"], arrays, read=self._read_loss)
        copy_params(v, self._core)
        return loss

    def _variant(self, n):
        v = self._variants.get(n)
        if v is None:
            opts = self._options.at_batch(n, self._batch)
            try:
                v = self._load(opts, 0)
            except _errors.CompileError as e:
                e.message = (
                    f"a step on {n} rows (a short last batch) needs the "
                    f"model compiled for batch {n}, which failed; fit(..., "
                    f"drop_last=True) skips such a batch:\n{e.message}")
                e.args = (e.message,)
                raise
            self._variants[n] = v
        return v

    def _split(self, x, y, what):
        """fit/evaluate's data as the training entry's arrays, in order."""
        e = self._train
        xs = x if isinstance(x, (tuple, list)) else [x]
        ys = y if isinstance(y, (tuple, list)) else [y]
        if isinstance(x, dict) or isinstance(y, dict):
            named = {}
            for part, idx in ((x, self._data_idx), (y, self._label_idx)):
                if isinstance(part, dict):
                    named.update(part)
                else:
                    seq = part if isinstance(part, (tuple, list)) else [part]
                    named.update({e.inputs[i].name: a
                                  for i, a in zip(idx, seq)})
            return _bind(e, (), named, what)
        if len(xs) != len(self._data_idx) or len(ys) != len(self._label_idx):
            raise TypeError(
                f"{what} takes the model's inputs "
                f"({', '.join(e.inputs[i].name for i in self._data_idx)}) "
                "and labels "
                f"({', '.join(e.inputs[i].name for i in self._label_idx)})")
        arrays = [None] * len(e.inputs)
        for i, a in zip(self._data_idx, xs):
            arrays[i] = a
        for i, a in zip(self._label_idx, ys):
            arrays[i] = a
        return arrays

    def fit(self, x, y, epochs=1, batch_size=None, shuffle=True, seed=0,
            validation=None, progress=True, drop_last=False, initial_epoch=0,
            on_epoch_end=None):
        """Trains for `epochs` passes over (x, y) in batches of the compiled
        size. With `shuffle`, epoch k visits the rows in the order of the
        k-th `permutation(n)` of `np.random.default_rng(seed)`; the last
        batch may be short (or dropped with `drop_last`). `initial_epoch`
        resumes a run: the orders of the earlier epochs are drawn and
        skipped, so fit(epochs=2) then fit(epochs=4, initial_epoch=2) takes
        the steps of fit(epochs=4). Returns the history: "loss" (the mean of
        the epoch's step losses, weighted by batch rows), "samples_per_s",
        and with `validation=(x_val, y_val)` "val_loss" and, for
        classification, "val_accuracy"."""
        self._need_train()
        B = self._batch
        if B is None:
            raise TypeError("fit needs inputs that share a batch dimension")
        if batch_size is not None and batch_size != B:
            raise ValueError(
                f"batch_size={batch_size}, but the model is compiled for "
                f"batches of {B}: compile it with batch={batch_size} (or "
                "input_shapes) to train with that size")
        e = self._train
        arrays, n = self._rows(self._split(x, y, "fit"), e.inputs, "fit")
        self._check_labels(arrays)
        rng = np.random.default_rng(seed)
        for _ in range(initial_epoch):
            if shuffle:
                rng.permutation(n)
        history = collections.OrderedDict(loss=[], samples_per_s=[])
        if validation is not None:
            history["val_loss"] = []
            if self._eval_loss_kind(validation[1]) == "cross_entropy":
                history["val_accuracy"] = []
        steps = n // B if drop_last else -(-n // B)
        if not drop_last and n % B and epochs > initial_epoch:
            # The short last batch's model, compiled before the first epoch
            # (and its time).
            self._variant(n % B)
        bar = _Progress(progress, n if not drop_last else steps * B)
        for epoch in range(initial_epoch, epochs):
            order = rng.permutation(n) if shuffle else None
            bar.start(epoch + 1, epochs)
            t0 = time.perf_counter()
            total, seen = 0.0, 0
            for k in range(steps):
                lo, hi = k * B, min(n, (k + 1) * B)
                if order is None:
                    batch = [a[lo:hi] for a in arrays]
                    batch = [b if b.flags.c_contiguous
                             else np.ascontiguousarray(b) for b in batch]
                else:
                    idx = order[lo:hi]
                    batch = [a[idx] for a in arrays]
                loss = self._step(batch, hi - lo)
                total += loss * (hi - lo)
                seen += hi - lo
                bar.update(hi - lo, total / seen)
            dt = time.perf_counter() - t0
            logs = {"loss": total / max(seen, 1),
                    "samples_per_s": seen / dt if dt > 0 else float("inf")}
            if validation is not None:
                r = self.evaluate(*validation)
                logs["val_loss"] = r["loss"]
                if "accuracy" in r:
                    logs["val_accuracy"] = r["accuracy"]
            for k, v in logs.items():
                history.setdefault(k, []).append(v)
            bar.end(logs)
            if on_epoch_end is not None:
                on_epoch_end(epoch, logs)
        return dict(history)

    def _eval_loss_kind(self, y):
        if self._loss_kind:
            return self._loss_kind
        y = as_array(y) if not isinstance(y, (tuple, list, dict)) else None
        if y is not None and y.dtype.kind in "iu":
            return "cross_entropy"
        return "mse"

    def evaluate(self, x, y, loss=None):
        """The loss (and, for classification, the accuracy) of the forward
        entry on a data set, in batches of the compiled size (the last one
        padded), computed in NumPy in float64: {"loss": ..., "accuracy":
        ...}. `loss` is "mse" or "cross_entropy"; by default the training
        loss, else cross-entropy for integer labels and MSE for float ones."""
        kind = loss or self._eval_loss_kind(y)
        if kind not in ("mse", "cross_entropy"):
            raise ValueError(f"unknown loss {kind!r}: use 'mse' or "
                             "'cross_entropy'")
        xs = list(x) if isinstance(x, (tuple, list)) else [x]
        if isinstance(x, dict):
            xs = _bind(self._fwd, (), x, "evaluate")
        pred = self._forward_any(xs)[0]
        target = as_array(y, "labels")
        if kind == "cross_entropy":
            if target.dtype.kind not in "iu":
                raise ValueError("cross-entropy labels must be integers, got "
                                 f"{target.dtype}")
            s, count, correct = _cross_entropy(pred, target, self._class_dim)
            return {"loss": s / max(count, 1),
                    "accuracy": correct / max(count, 1)}
        if target.shape != pred.shape:
            raise ValueError(f"labels: expected the output's shape "
                             f"{list(pred.shape)}, got {list(target.shape)}")
        s, count = _mse(pred, target)
        return {"loss": s / max(count, 1)}

    # -- weights -----------------------------------------------------------

    def _tensors(self, role):
        c = self._core
        out = collections.OrderedDict()
        for r, info in zip(c.roles, c.param_infos()):
            if r == role:
                out[info.name.decode()] = Core.view(info).copy()
        return out

    def state_dict(self):
        """The weights, by their PyTorch names, as NumPy arrays (copies)."""
        return self._tensors("param")

    def optimizer_state_dict(self):
        """The optimizer state (optimizer.step, optimizer.<param>.exp_avg,
        ...) as NumPy arrays (copies)."""
        return self._tensors("state")

    def load_state_dict(self, state_dict, strict=True):
        """Sets the weights from a mapping of names to arrays (NumPy arrays,
        PyTorch tensors, anything np.asarray takes): a PyTorch module's
        state_dict() fits. Values are cast to the weights' dtypes; a shape
        that differs raises ValueError. With `strict`, a weight missing from
        the mapping raises KeyError. Tensors the model does not have (a
        BatchNorm's num_batches_tracked) are ignored; optimizer.* tensors are
        loaded when present, the optimizer state is otherwise kept. Returns
        (missing_keys, unexpected_keys)."""
        c = self._core
        infos = c.param_infos()
        names = [i.name.decode() for i in infos]
        missing = [nm for nm, r in zip(names, c.roles)
                   if r == "param" and nm not in state_dict]
        if strict and missing:
            raise KeyError(f"missing weight(s): {', '.join(missing)}")
        known = set(names)
        unexpected = [k for k in state_dict if k not in known]
        updates = []
        for nm, info in zip(names, infos):
            if nm not in state_dict:
                continue
            v = state_dict[nm]
            if hasattr(v, "detach"):
                v = v.detach()
            if hasattr(v, "cpu"):
                v = v.cpu()
            if hasattr(v, "numpy") and not isinstance(v, np.ndarray):
                v = v.numpy()
            dst = Core.view(info)
            a = np.asarray(v)
            if a.shape != dst.shape:
                raise ValueError(f"weight '{nm}': expected shape "
                                 f"{list(dst.shape)}, got {list(a.shape)}")
            updates.append((dst, a))
        with c.lock:
            for dst, a in updates:
                dst[...] = a.astype(dst.dtype, copy=False)
        return collections.namedtuple(
            "IncompatibleKeys", "missing_keys unexpected_keys")(missing,
                                                                unexpected)

    def save(self, path):
        """Writes the weights and the optimizer state to a .safetensors
        checkpoint, atomically (dlc_model_save)."""
        c = self._core
        with c.lock:
            rt.check(c.L.dlc_model_save(c.handle, os.fsencode(path)),
                     f"cannot save '{os.fspath(path)}'")

    def load(self, path):
        """Reads weights (and the optimizer state, when the file has it;
        else the state is reset) from a .safetensors file
        (dlc_model_load): a checkpoint of save() resumes bit for bit."""
        c = self._core
        with c.lock:
            rt.check(c.L.dlc_model_load(c.handle, os.fsencode(path)),
                     f"cannot load '{os.fspath(path)}'")

    # -- reports and measurements -----------------------------------------

    def memory_report(self):
        """The compile-time memory plan (`dlc MODEL --memory-report=json`):
        {"model", "batch", "model_bytes", "persistent_bytes",
        "workspace_bytes", "entries": {entry: {"weights", "gradients",
        "optimizer_state", "step_count", "saved_activations", "workspace",
        "inputs_outputs", "peak", ...}}}, in bytes."""
        if self._memory_report is None:
            out = _compiler.run_compiler(
                [self._source] + self._options.flags() +
                ["--memory-report=json"])
            self._memory_report = json.loads(out)
        return self._memory_report

    @property
    def memory_bytes(self):
        """What the model allocated at creation (dlc_model_memory_bytes)."""
        return self._core.L.dlc_model_memory_bytes(self._core.handle)

    def measure_entries(self, on=True):
        """Times the entry of every later call by itself
        (dlc_model_measure_entries); see last_entry_us."""
        c = self._core
        rt.check(c.L.dlc_model_measure_entries(c.handle, 1 if on else 0),
                 "measure_entries")

    @property
    def last_entry_us(self):
        """The last call's entry time in microseconds, without the copies
        of its inputs and outputs; -1 when not measured."""
        return self._core.L.dlc_model_last_entry_us(self._core.handle)


class _Progress:
    """A tqdm bar per epoch (loss, samples/s), or plain lines without tqdm
    or a terminal."""

    def __init__(self, enabled, total):
        self.enabled, self.total, self.bar = enabled, total, None
        self.tqdm = None
        if enabled:
            try:
                from tqdm.auto import tqdm
                self.tqdm = tqdm
            except ImportError:
                pass

    def start(self, epoch, epochs):
        self.desc = f"epoch {epoch}/{epochs}"
        self.t0 = self.last = time.perf_counter()
        self.done = 0
        if self.enabled and self.tqdm:
            self.bar = self.tqdm(total=self.total, desc=self.desc,
                                 unit="samples", unit_scale=True, leave=True)

    def update(self, rows, loss):
        if not self.enabled:
            return
        self.done += rows
        now = time.perf_counter()
        if self.bar is not None:
            self.bar.update(rows)
            if now - self.last > 0.1:
                self.bar.set_postfix(loss=f"{loss:.4f}", refresh=False)
                self.last = now
        elif sys.stderr.isatty() and now - self.last > 0.1:
            rate = self.done / (now - self.t0)
            sys.stderr.write(f"\r{self.desc}: {self.done}/{self.total} "
                             f"loss {loss:.4f}, {rate:,.0f} samples/s")
            sys.stderr.flush()
            self.last = now

    def end(self, logs):
        if not self.enabled:
            return
        text = ", ".join(f"{k} {v:.4f}" for k, v in logs.items()
                         if k != "samples_per_s")
        if self.bar is not None:
            self.bar.set_postfix_str(text, refresh=False)
            self.bar.close()
            return
        if sys.stderr.isatty():
            sys.stderr.write("\r")
        sys.stderr.write(f"{self.desc}: {text}, "
                         f"{logs['samples_per_s']:,.0f} samples/s\n")
        sys.stderr.flush()


# ---------------------------------------------------------------------------
# Entry points


def compile(model, example_inputs=None, *, input_shapes=None, batch=None,
            precision="fp32", device="auto", train=None, seed=0,
            cache_dir=None, compiler_args=(), export_kwargs=None):
    """Compiles a model ahead of time and loads it.

    model: a path to a .dlc, .onnx or .mlir model, or a torch.nn.Module
      (exported through torch.onnx with `example_inputs`).
    input_shapes: {"x": [64, 784]}: an ONNX input's shape (`--input-shape`).
    batch: dimension 0 of every input and label (`--batch`).
    precision: "fp32", "bf16" or "fp16" (`--precision`, autocast).
    device: "auto" (CUDA when usable, else the CPU; DLC_DEVICE overrides),
      "cpu", "cuda" or "cuda:N".
    train: a dlc.Train: also compile the training step (`--train ...`).
    seed: dlc's initialisation of the weights that are not in the model
      file (`dlc_model_init`; ONNX initializers keep their values).
    cache_dir: keep builds in this directory, by content hash (default:
      DLC_CACHE_DIR, else a temporary directory per call).
    compiler_args: more `dlc` flags, e.g. ["--cpu=x86-64-v3"].
    """
    options = _Options(input_shapes, batch, precision, device, train,
                       compiler_args)
    if options.kind == rt.DEVICE_CUDA:
        usable, why = rt.cuda_available()
        if not usable:
            # Before compiling: the runtime would refuse the model anyway.
            raise _errors.RuntimeError(
                f"device {device!r}: CUDA is not usable here: {why}",
                status="DLC_ERR_DEVICE_UNAVAILABLE")
    source, source_dir = _source(model, example_inputs, export_kwargs)
    try:
        return Model(source, options, seed=seed, cache_dir=cache_dir,
                     source_dir=source_dir)
    except BaseException:
        if source_dir:
            shutil.rmtree(source_dir, ignore_errors=True)
        raise


_INT = re.compile(r"([\d,]+)")


def stats(model, example_inputs=None, *, input_shapes=None, batch=None,
          precision="fp32", train=None, export_kwargs=None):
    """`dlc MODEL --stats` as a dict: "model", "batch", "parameters",
    "multiply_adds" (per forward pass of one batch), "memory" (the
    estimates by section, as printed) and "text" (the whole report)."""
    options = _Options(input_shapes, batch, precision, "cpu", train, ())
    source, source_dir = _source(model, example_inputs, export_kwargs)
    try:
        text = _compiler.run_compiler([source] + options.flags(target=False)
                                      + ["--stats"])
    finally:
        if source_dir:
            shutil.rmtree(source_dir, ignore_errors=True)
    out = {"model": None, "batch": None, "parameters": None,
           "multiply_adds": None, "memory": {}, "text": text}
    section = None
    for line in text.splitlines():
        m = re.match(r"model (\S+) \(batch (\d+)\)", line)
        if m:
            out["model"], out["batch"] = m.group(1), int(m.group(2))
            continue
        if not line.startswith(" "):
            if line.startswith("memory estimate"):
                section = line[len("memory estimate"):].strip(" ()")
                out["memory"][section] = {}
            else:
                section = None
            continue
        key, _, value = line.strip().partition(":")
        value = value.strip()
        if key == "parameters":
            out["parameters"] = int(_INT.search(value).group(1).replace(
                ",", ""))
        elif key == "multiply-adds":
            out["multiply_adds"] = int(_INT.search(value).group(1).replace(
                ",", ""))
        elif section is not None:
            out["memory"][section][key] = value
        else:
            out[key.replace(" ", "_").replace("-", "_")] = value
    return out

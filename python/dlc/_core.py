"""One loaded model: its shared library, its libdlcrt handle, its entries
and parameters."""

import ctypes
import os
import shutil
import threading
import weakref

import numpy as np

from . import _runtime as rt


_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof


def address(a):
    """The data pointer of a C-contiguous array: through the buffer
    protocol (about 0.1 us), or `a.ctypes.data` (0.5 us) for a read-only or
    empty one."""
    try:
        return _addressof(_from_buffer(a))
    except (TypeError, ValueError):
        return a.ctypes.data


class Spec:
    """An entry's input or output: name, NumPy dtype, shape."""
    __slots__ = ("name", "dtype", "dtype_name", "shape", "nbytes")

    def __init__(self, info):
        self.name = info.name.decode()
        self.dtype = rt.DTYPES[info.dtype]
        self.dtype_name = rt.DTYPE_NAMES[info.dtype]
        self.shape = tuple(info.shape[i] for i in range(info.rank))
        self.nbytes = info.nbytes

    def describe(self, shape=None):
        shape = self.shape if shape is None else shape
        return f"{self.dtype_name}[{', '.join(str(d) for d in shape)}]"

    def __repr__(self):
        return f"{self.name}: {self.describe()}"


class Entry:
    """An entry point, with its pointer arrays allocated once."""

    def __init__(self, L, handle, index):
        self.index = index
        self.name = L.dlc_model_entry_name(handle, index).decode()
        info = rt.TensorInfo()
        self.inputs, self.outputs = [], []
        for i in range(L.dlc_model_entry_num_inputs(handle, index)):
            rt.check(L.dlc_model_entry_input_info(handle, index, i,
                                                  ctypes.byref(info)),
                     "entry input")
            self.inputs.append(Spec(info))
        for i in range(L.dlc_model_entry_num_outputs(handle, index)):
            rt.check(L.dlc_model_entry_output_info(handle, index, i,
                                                   ctypes.byref(info)),
                     "entry output")
            self.outputs.append(Spec(info))
        self.in_ptrs = (ctypes.c_void_p * max(1, len(self.inputs)))()
        self.out_ptrs = (ctypes.c_void_p * max(1, len(self.outputs)))()
        self.in_addr = ctypes.addressof(self.in_ptrs)
        self.out_addr = ctypes.addressof(self.out_ptrs)
        self.input_index = {s.name: i for i, s in enumerate(self.inputs)}


def _release(L, handle, directory):
    L.dlc_model_destroy(handle)
    if directory:
        shutil.rmtree(directory, ignore_errors=True)


class Core:
    """A compiled model loaded through libdlcrt."""

    def __init__(self, directory, symbol, device_kind, ordinal, seed,
                 temporary):
        L = rt.lib()
        self.L = L
        try:
            self.so = ctypes.CDLL(os.path.join(directory, "model.so"))
        finally:
            # The library is mapped: the files are not needed any more.
            if temporary:
                shutil.rmtree(directory, ignore_errors=True)
        self.desc = ctypes.addressof(ctypes.c_char.in_dll(self.so, symbol))
        self.text = rt.ModelDesc.from_address(self.desc).text.decode()
        h = ctypes.c_void_p()
        rt.check(L.dlc_model_create_on(self.desc, device_kind, ordinal,
                                       ctypes.byref(h)),
                 "cannot create the model")
        self.handle = h.value
        self._finalizer = weakref.finalize(self, _release, L, self.handle,
                                           None)
        self.lock = threading.Lock()
        self.device_name = L.dlc_model_device_name(self.handle).decode()
        self.fallback_reason = \
            L.dlc_model_fallback_reason(self.handle).decode()
        self.cpu_name = L.dlc_model_cpu_name(self.handle).decode()
        self.name = L.dlc_model_name(self.handle).decode()
        self.entries = {}
        for e in range(L.dlc_model_num_entries(self.handle)):
            entry = Entry(L, self.handle, e)
            self.entries[entry.name] = entry
        # Roles from the descriptor: `param` lines are weights, `state`
        # lines optimizer state (docs/runtime-abi.md).
        self.roles = [line.split(" ", 1)[0] for line in self.text.split("\n")
                      if line.startswith(("param ", "state "))]
        self.num_params = L.dlc_model_num_params(self.handle)
        if len(self.roles) != self.num_params:
            raise rt.DlcRuntimeError(
                f"the descriptor lists {len(self.roles)} params and states, "
                f"the runtime {self.num_params}")
        self.init(seed)

    def close(self):
        self._finalizer()

    @property
    def closed(self):
        return not self._finalizer.alive

    def init(self, seed):
        with self.lock:
            rt.check(self.L.dlc_model_init(self.handle, int(seed)),
                     "cannot initialise the model")

    def param_infos(self):
        """Every param and state tensor, with a data pointer (on CUDA into
        the host mirror, refreshed by this call; written back at the next
        run)."""
        out = []
        for i in range(self.num_params):
            info = rt.TensorInfo()
            rt.check(self.L.dlc_model_param_info(self.handle, i,
                                                 ctypes.byref(info)),
                     "param info")
            out.append(info)
        return out

    @staticmethod
    def view(info):
        """A NumPy array over a param's memory (no copy)."""
        dtype = rt.DTYPES[info.dtype]
        shape = tuple(info.shape[i] for i in range(info.rank))
        if info.nbytes == 0:
            return np.zeros(shape, dtype)
        buf = (ctypes.c_char * info.nbytes).from_address(info.data)
        return np.frombuffer(buf, dtype=dtype).reshape(shape)

    def run(self, entry, arrays, outs=None, read=None):
        """Runs `entry` on ready inputs (right dtype and shape, C-contiguous,
        aligned) into `outs` (fresh arrays by default); returns the outputs,
        or read(outputs), called while the model is still locked."""
        if outs is None:
            outs = [np.empty(s.shape, s.dtype) for s in entry.outputs]
        with self.lock:
            ptrs = entry.in_ptrs
            for i, a in enumerate(arrays):
                ptrs[i] = address(a)
            optrs = entry.out_ptrs
            for i, o in enumerate(outs):
                optrs[i] = address(o)
            st = self.L.dlc_model_run(self.handle, entry.index, entry.in_addr,
                                      entry.out_addr)
            if st:
                rt.check(st, f"{entry.name} failed")
            if read is not None:
                return read(outs)
        return outs


def copy_params(src, dst):
    """Copies every param and optimizer state tensor of `src` into `dst`
    (models of the same parameters, e.g. two batch sizes)."""
    a, b = src.param_infos(), dst.param_infos()
    for x, y in zip(a, b):
        if x.name != y.name or x.nbytes != y.nbytes or x.dtype != y.dtype:
            raise rt.DlcRuntimeError(
                f"the models' params differ: '{x.name.decode()}' "
                f"against '{y.name.decode()}'")
        ctypes.memmove(y.data, x.data, x.nbytes)

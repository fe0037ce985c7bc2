"""ctypes bindings to libdlcrt, and where the tools are.

The compiler is `DLC_COMPILER`, else `dlc` on PATH; the runtime is
`DLC_RUNTIME_LIB`, else `libdlcrt.so` in `<directory of dlc>/../lib`, else
the system's (`ctypes.util.find_library("dlcrt")`); the C compiler that links
a model object into a shared library is `CC`, else `cc`.
"""

import ctypes
import ctypes.util
import os
import shutil
import threading

import numpy as np

from ._errors import RuntimeError as DlcRuntimeError
from ._errors import ToolNotFoundError

MAX_RANK = 8

# dlc_dtype -> NumPy. bf16 has no NumPy dtype: its raw bits are uint16.
DTYPES = {0: np.dtype(np.float32), 1: np.dtype(np.float16),
          2: np.dtype(np.uint16), 3: np.dtype(np.float64),
          4: np.dtype(np.int64), 5: np.dtype(np.int32),
          6: np.dtype(np.int8), 7: np.dtype(np.uint8)}
DTYPE_NAMES = {0: "f32", 1: "f16", 2: "bf16", 3: "f64", 4: "i64", 5: "i32",
               6: "i8", 7: "u8"}

DEVICE_AUTO, DEVICE_CPU, DEVICE_CUDA = 0, 1, 2


class TensorInfo(ctypes.Structure):
    """dlc_tensor_info."""
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int),
                ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * MAX_RANK),
                ("numel", ctypes.c_int64), ("nbytes", ctypes.c_int64),
                ("data", ctypes.c_void_p)]


class ModelDesc(ctypes.Structure):
    """The leading fields of dlc_model_desc (all that is read here)."""
    _fields_ = [("abi_version", ctypes.c_uint32), ("text", ctypes.c_char_p)]


def compiler_path():
    """The dlc compiler: DLC_COMPILER, else `dlc` on PATH."""
    env = os.environ.get("DLC_COMPILER")
    if env:
        if not (os.path.isfile(env) and os.access(env, os.X_OK)):
            raise ToolNotFoundError(
                f"DLC_COMPILER={env} is not an executable file: point it at "
                "the dlc compiler (build/bin/dlc of a dlc build)")
        return os.path.abspath(env)
    found = shutil.which("dlc")
    if not found:
        raise ToolNotFoundError(
            "cannot find the dlc compiler: put it on PATH or set "
            "DLC_COMPILER=/path/to/dlc (build/bin/dlc of a dlc build)")
    return os.path.abspath(found)


def runtime_path():
    """libdlcrt: DLC_RUNTIME_LIB, else <dir of dlc>/../lib/libdlcrt.so,
    else the system's."""
    env = os.environ.get("DLC_RUNTIME_LIB")
    if env:
        if not os.path.isfile(env):
            raise ToolNotFoundError(
                f"DLC_RUNTIME_LIB={env} is not a file: point it at "
                "libdlcrt.so (build/lib/libdlcrt.so of a dlc build)")
        return os.path.abspath(env)
    tried = []
    try:
        dlc = os.path.realpath(compiler_path())
        cand = os.path.join(os.path.dirname(os.path.dirname(dlc)), "lib",
                            "libdlcrt.so")
        tried.append(cand)
        if os.path.isfile(cand):
            return cand
    except ToolNotFoundError:
        pass
    found = ctypes.util.find_library("dlcrt")
    if found:
        return found
    raise ToolNotFoundError(
        "cannot find libdlcrt.so (looked in " + (", ".join(tried) or
                                                 "the system's libraries") +
        "): set DLC_RUNTIME_LIB=/path/to/libdlcrt.so (build/lib of a dlc "
        "build)")


def c_compiler():
    """The C compiler driver that links a model into a shared library."""
    cc = os.environ.get("CC") or "cc"
    found = shutil.which(cc.split()[0])
    if not found:
        raise ToolNotFoundError(
            f"cannot find the C compiler '{cc}' that links a compiled model "
            "into a shared library: install one (Debian: gcc) or set CC")
    return [found] + cc.split()[1:]


_lib = None
_lib_lock = threading.Lock()


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def _loaded_path(L):
    """The file the loader mapped for L (find_library gives a bare name,
    which the linker of a model cannot take)."""
    try:
        dladdr = ctypes.CDLL(None).dladdr
    except (OSError, AttributeError):
        return None
    dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    dladdr.restype = ctypes.c_int
    info = _DlInfo()
    addr = ctypes.cast(L.dlc_last_error, ctypes.c_void_p).value
    if dladdr(addr, ctypes.byref(info)) and info.dli_fname:
        return os.path.realpath(os.fsdecode(info.dli_fname))
    return None


def _sig(lib, name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


def lib():
    """libdlcrt, loaded once per process, with its signatures declared."""
    global _lib
    with _lib_lock:
        if _lib is not None:
            return _lib
        path = runtime_path()
        try:
            L = ctypes.CDLL(path)
        except OSError as e:
            raise ToolNotFoundError(
                f"cannot load libdlcrt from {path}: {e}; set "
                "DLC_RUNTIME_LIB to a working libdlcrt.so") from e
        L.path = _loaded_path(L) or path
        vp, cp, i32, i64 = (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32,
                            ctypes.c_int64)
        st = ctypes.c_int
        info = ctypes.POINTER(TensorInfo)
        _sig(L, "dlc_last_error", cp)
        _sig(L, "dlc_status_name", cp, st)
        _sig(L, "dlc_cuda_available", ctypes.c_int, ctypes.c_char_p,
             ctypes.c_size_t)
        _sig(L, "dlc_num_threads", ctypes.c_int)
        _sig(L, "dlc_model_create_on", st, vp, st, i32, ctypes.POINTER(vp))
        _sig(L, "dlc_model_destroy", None, vp)
        _sig(L, "dlc_model_device", st, vp)
        _sig(L, "dlc_model_device_name", cp, vp)
        _sig(L, "dlc_model_fallback_reason", cp, vp)
        _sig(L, "dlc_model_cpu_name", cp, vp)
        _sig(L, "dlc_model_name", cp, vp)
        _sig(L, "dlc_model_init", st, vp, ctypes.c_uint64)
        _sig(L, "dlc_model_load", st, vp, cp)
        _sig(L, "dlc_model_save", st, vp, cp)
        _sig(L, "dlc_model_memory_bytes", i64, vp)
        _sig(L, "dlc_model_num_params", i32, vp)
        _sig(L, "dlc_model_param_info", st, vp, i32, info)
        _sig(L, "dlc_model_param_bytes", i64, vp)
        _sig(L, "dlc_model_num_entries", i32, vp)
        _sig(L, "dlc_model_find_entry", i32, vp, cp)
        _sig(L, "dlc_model_entry_name", cp, vp, i32)
        _sig(L, "dlc_model_entry_num_inputs", i32, vp, i32)
        _sig(L, "dlc_model_entry_num_outputs", i32, vp, i32)
        _sig(L, "dlc_model_entry_input_info", st, vp, i32, i32, info)
        _sig(L, "dlc_model_entry_output_info", st, vp, i32, i32, info)
        _sig(L, "dlc_model_run", st, vp, i32, vp, vp)
        _sig(L, "dlc_model_measure_entries", st, vp, ctypes.c_int)
        _sig(L, "dlc_model_last_entry_us", ctypes.c_double, vp)
        _lib = L
        return L


def check(status, what):
    """Raises dlc.RuntimeError for a failed runtime call."""
    if status != 0:
        L = lib()
        raise DlcRuntimeError(
            f"{what}: {L.dlc_status_name(status).decode()}: "
            f"{L.dlc_last_error().decode(errors='replace')}",
            status=L.dlc_status_name(status).decode())


def cuda_available():
    """Whether CUDA is usable on this machine (libdlcrt's probe), and why
    not."""
    buf = ctypes.create_string_buffer(512)
    ok = lib().dlc_cuda_available(buf, len(buf))
    return bool(ok), buf.value.decode(errors="replace")

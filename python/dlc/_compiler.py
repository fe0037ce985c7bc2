"""Running the dlc compiler and linking its object into a shared library.

`dlc MODEL FLAGS -o DIR/model.o` writes the object and its header; the
object is position-independent, so `cc -shared model.o libdlcrt.so
-Wl,-rpath,LIBDIR` makes a library that ctypes loads. Each build goes to a
fresh temporary directory (deleted once the library is loaded), or, with a
cache directory (`cache_dir=` or DLC_CACHE_DIR), to `CACHE/<sha256>/`, made
atomically: built in a temporary directory beside it and renamed into place.
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile

from . import _runtime
from ._errors import CompileError

_DESC_RE = re.compile(r"extern const dlc_model_desc (dlc_model_\w+);")


def run_compiler(args, what="compile"):
    """Runs `dlc ARGS`; returns its stdout, raises CompileError with its
    diagnostics."""
    cmd = [_runtime.compiler_path()] + [str(a) for a in args]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if p.returncode != 0:
        msg = p.stderr.strip() or p.stdout.strip() or \
            f"dlc exited with status {p.returncode}"
        raise CompileError(msg, command=cmd, returncode=p.returncode)
    return p.stdout


def _file_key(path):
    st = os.stat(path)
    return [os.path.realpath(path), st.st_size, st.st_mtime_ns]


def _cache_key(model_path, flags, runtime):
    h = hashlib.sha256()
    with open(model_path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    extra = []
    if model_path.endswith(".onnx"):
        # External data files live beside the model; their contents are not
        # hashed, their names, sizes and times are.
        d = os.path.dirname(os.path.abspath(model_path))
        for name in sorted(os.listdir(d)):
            p = os.path.join(d, name)
            if os.path.isfile(p) and p != os.path.abspath(model_path):
                extra.append([name] + _file_key(p)[1:])
    # The file name too: it gives the language (by extension) and an ONNX
    # model's name.
    h.update(json.dumps([os.path.basename(model_path), flags,
                         _file_key(_runtime.compiler_path()),
                         _file_key(runtime), extra]).encode())
    return h.hexdigest()


def _build(model_path, flags, out_dir):
    obj = os.path.join(out_dir, "model.o")
    run_compiler([model_path] + flags + ["-o", obj])
    with open(os.path.join(out_dir, "model.h")) as f:
        m = _DESC_RE.search(f.read())
    if not m:
        raise CompileError(f"{out_dir}/model.h declares no model descriptor")
    runtime = _runtime.lib().path
    libdir = os.path.dirname(os.path.realpath(runtime))
    so = os.path.join(out_dir, "model.so")
    cmd = _runtime.c_compiler() + ["-shared", "-o", so, obj,
                                   os.path.realpath(runtime),
                                   f"-Wl,-rpath,{libdir}"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if p.returncode != 0:
        raise CompileError("linking the model into a shared library "
                           f"failed:\n{p.stdout.strip()}", command=cmd,
                           returncode=p.returncode)
    with open(os.path.join(out_dir, "symbol"), "w") as f:
        f.write(m.group(1))


def build(model_path, flags, cache_dir=None):
    """Compiles and links MODEL with FLAGS. Returns (directory, symbol,
    temporary): the directory holds model.so; `temporary` says the caller
    removes it once the library is loaded."""
    model_path = os.fspath(model_path)
    if not os.path.isfile(model_path):
        raise FileNotFoundError(f"no model file '{model_path}'")
    cache_dir = cache_dir or os.environ.get("DLC_CACHE_DIR") or None
    if cache_dir is None:
        d = tempfile.mkdtemp(prefix="dlc-")
        try:
            _build(model_path, flags, d)
        except BaseException:
            shutil.rmtree(d, ignore_errors=True)
            raise
        with open(os.path.join(d, "symbol")) as f:
            return d, f.read(), True
    cache_dir = os.path.abspath(os.fspath(cache_dir))
    os.makedirs(cache_dir, exist_ok=True)
    final = os.path.join(cache_dir,
                         _cache_key(model_path, flags, _runtime.lib().path))
    if not os.path.isfile(os.path.join(final, "symbol")):
        tmp = tempfile.mkdtemp(prefix=".tmp-", dir=cache_dir)
        try:
            _build(model_path, flags, tmp)
            try:
                os.rename(tmp, final)
            except OSError:
                # Another process put the same build in place first.
                if not os.path.isfile(os.path.join(final, "symbol")):
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    with open(os.path.join(final, "symbol")) as f:
        return final, f.read(), False

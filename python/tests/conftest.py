"""Shared fixtures of the dlc package's tests.

The tools come from DLC_COMPILER and DLC_RUNTIME_LIB (test/python/pytest.test
sets them to the build's); without them, from the repository's build/ when
it exists, else from PATH. Every test runs on the CPU, so that results can be
compared bit for bit with `dlc run`.
"""
import os
import subprocess

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLES = os.path.join(ROOT, "examples")
ONNX_DATA = os.path.join(ROOT, "test", "e2e", "onnx", "data")

_build_dlc = os.path.join(ROOT, "build", "bin", "dlc")
if "DLC_COMPILER" not in os.environ and os.path.exists(_build_dlc):
    os.environ["DLC_COMPILER"] = _build_dlc
os.environ.pop("DLC_DEVICE", None)


@pytest.fixture(scope="session", autouse=True)
def _cache(tmp_path_factory):
    """One build cache for the session: the same model and flags compile
    once (and the cache itself is exercised)."""
    old = os.environ.get("DLC_CACHE_DIR")
    os.environ["DLC_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if old is None:
        os.environ.pop("DLC_CACHE_DIR", None)
    else:
        os.environ["DLC_CACHE_DIR"] = old


def example(name):
    return os.path.join(EXAMPLES, name)


def dlc_cli(*args):
    """Runs the dlc compiler's command line; returns stdout."""
    import dlc
    p = subprocess.run([dlc.compiler_path()] + [str(a) for a in args],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    assert p.returncode == 0, p.stderr
    return p.stdout


def toy_data(rows=16, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, 10)).astype(np.float32)
    y = rng.standard_normal((rows, 1)).astype(np.float32)
    return x, y


def classes_data(rows, features=20, classes=4, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, features)).astype(np.float32)
    y = rng.integers(0, classes, rows).astype(np.int64)
    return x, y


@pytest.fixture
def mlp_dlc(tmp_path):
    """A small classifier in the .dlc language: batch 8, 20 -> 16 -> 4."""
    path = tmp_path / "mlp.dlc"
    path.write_text(
        "model mlp\n"
        "input  x: f32[8, 20]\n"
        "label  y: i64[8]\n"
        "h      = relu(linear(x, 16, name=fc1))\n"
        "logits = linear(h, 4, name=fc2)\n"
        "output logits\n"
        "loss   cross_entropy(logits, y)\n"
        "optim  adam(lr=1e-2)\n")
    return str(path)

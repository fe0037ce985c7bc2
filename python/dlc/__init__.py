"""dlc: compile deep-learning models ahead of time and run them from Python.

A thin binding: `dlc.compile` runs the `dlc` compiler as a subprocess, links
the object it writes into a shared library and loads it with ctypes through
libdlcrt, the runtime that C programs use (docs/python.md).

    import dlc
    m = dlc.compile("model.onnx", train=dlc.Train(loss="cross_entropy",
                                                  optimizer=dlc.Adam(lr=1e-3)))
    y = m(x)
    history = m.fit(x_train, y_train, epochs=5, validation=(x_val, y_val))
"""

from ._errors import CompileError, RuntimeError, ToolNotFoundError
from ._model import Model, compile, stats
from ._runtime import compiler_path, runtime_path
from ._train import SGD, Adam, AdamW, Optimizer, Train

__version__ = "0.1.0"

__all__ = ["Adam", "AdamW", "CompileError", "Model", "Optimizer",
           "RuntimeError", "SGD", "ToolNotFoundError", "Train", "compile",
           "compiler_path", "runtime_path", "stats"]


def cuda_available():
    """(usable, reason): whether libdlcrt can use CUDA on this machine."""
    from ._runtime import cuda_available as probe
    return probe()

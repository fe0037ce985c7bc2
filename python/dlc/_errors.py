"""The exceptions of the dlc package."""

import builtins


class CompileError(Exception):
    """The dlc compiler refused the model.

    ``message`` is the compiler's diagnostic as it printed it, located
    (``model.dlc:3:5: error: ...`` or ``model.onnx: error: ... (at node
    'Gemm_0')``); ``command`` is the command line that was run and
    ``returncode`` its exit status.
    """

    def __init__(self, message, command=None, returncode=None):
        super().__init__(message)
        self.message = message
        self.command = command
        self.returncode = returncode


class RuntimeError(builtins.RuntimeError):  # noqa: A001 (dlc.RuntimeError)
    """A call into libdlcrt failed.

    ``status`` is the runtime's status name (``"DLC_ERR_FORMAT"``, ...) and
    the message ends with ``dlc_last_error()``, which names the file, tensor
    or value at fault. A subclass of the built-in ``RuntimeError``.
    """

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


class ToolNotFoundError(FileNotFoundError):
    """The dlc compiler, libdlcrt or the C compiler could not be found; the
    message says which environment variable to set."""

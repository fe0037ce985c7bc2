"""Training settings: the loss, the optimizer, and their compiler flags.

Optimizers take PyTorch's names and defaults (torch.optim, foreach=False);
the learning rate and every other setting are compiled into the step.
"""


def _num(v):
    # repr gives the shortest text that reads back as the same double.
    return repr(float(v))


def _check_non_negative(name, v):
    if not (float(v) >= 0.0) or float(v) == float("inf"):
        raise ValueError(f"{name} must be a finite non-negative number, "
                         f"not {v!r}")


class Optimizer:
    """Base class of SGD, Adam and AdamW."""
    kind = None

    def flags(self):
        raise NotImplementedError

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"dlc.{type(self).__name__}({args})"

    def __eq__(self, other):
        return type(self) is type(other) and vars(self) == vars(other)


class SGD(Optimizer):
    """torch.optim.SGD: `dlc --optimizer sgd --lr --momentum --dampening
    --nesterov --weight-decay`."""
    kind = "sgd"

    def __init__(self, lr=1e-3, momentum=0, dampening=0, nesterov=False,
                 weight_decay=0, maximize=False):
        for n, v in [("lr", lr), ("momentum", momentum),
                     ("dampening", dampening),
                     ("weight_decay", weight_decay)]:
            _check_non_negative(n, v)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero "
                             "dampening (as torch.optim.SGD)")
        if maximize:
            raise NotImplementedError("dlc's SGD has no maximize")
        self.lr, self.momentum, self.dampening = lr, momentum, dampening
        self.nesterov, self.weight_decay = bool(nesterov), weight_decay

    def flags(self):
        return ["--optimizer", "sgd", "--lr", _num(self.lr),
                "--momentum", _num(self.momentum),
                "--dampening", _num(self.dampening),
                "--nesterov", "true" if self.nesterov else "false",
                "--weight-decay", _num(self.weight_decay)]


class Adam(Optimizer):
    """torch.optim.Adam: `dlc --optimizer adam --lr --betas --eps
    --weight-decay`."""
    kind = "adam"
    _default_weight_decay = 0

    def __init__(self, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=None, amsgrad=False, maximize=False):
        if weight_decay is None:
            weight_decay = self._default_weight_decay
        for n, v in [("lr", lr), ("eps", eps), ("weight_decay", weight_decay)]:
            _check_non_negative(n, v)
        b1, b2 = betas
        for n, v in [("betas[0]", b1), ("betas[1]", b2)]:
            if not 0.0 <= float(v) < 1.0:
                raise ValueError(f"{n} must be in [0, 1), not {v!r}")
        if amsgrad:
            raise NotImplementedError(
                "amsgrad is not supported by dlc's fused optimizer update "
                "(docs/training.md)")
        if maximize:
            raise NotImplementedError(f"dlc's {type(self).__name__} has no "
                                      "maximize")
        self.lr, self.betas, self.eps = lr, (b1, b2), eps
        self.weight_decay = weight_decay

    def flags(self):
        return ["--optimizer", self.kind, "--lr", _num(self.lr),
                "--betas", f"{_num(self.betas[0])},{_num(self.betas[1])}",
                "--eps", _num(self.eps),
                "--weight-decay", _num(self.weight_decay)]


class AdamW(Adam):
    """torch.optim.AdamW (decoupled weight decay, default 0.01)."""
    kind = "adamw"
    _default_weight_decay = 0.01


LOSSES = ("mse", "cross_entropy")
LABEL_DTYPES = {"int64": "i64", "int32": "i32", "i64": "i64", "i32": "i32"}


class Train:
    """What `dlc.compile(..., train=dlc.Train(...))` compiles: the training
    step (`dlc --train`).

    loss: "mse" or "cross_entropy" on the forward entry's single output
      against a new label input, the last argument of `train_step` (`--loss`);
      None keeps the loss of a .dlc model's `loss` line.
    optimizer: dlc.SGD, dlc.Adam or dlc.AdamW (`--optimizer` and its
      settings); None keeps a .dlc model's `optim` line.
    label: the name of the label input that `loss` adds (`--label`, "y").
    label_dtype: "int64" (default) or "int32": the class labels of
      cross-entropy (`--label-type`).
    class_dim: cross-entropy on an output of rank 3 or more: the classes'
      dimension, 1 (PyTorch's, default) or -1 (`--class-dim`).
    """

    def __init__(self, loss=None, optimizer=None, label=None,
                 label_dtype=None, class_dim=None):
        if loss is not None and loss not in LOSSES:
            raise ValueError(f"unknown loss {loss!r}: use one of "
                             f"{', '.join(LOSSES)}")
        if optimizer is not None and not isinstance(optimizer, Optimizer):
            raise TypeError("optimizer must be dlc.SGD, dlc.Adam or "
                            f"dlc.AdamW, not {type(optimizer).__name__}")
        if label_dtype is not None:
            key = getattr(label_dtype, "__name__", str(label_dtype))
            if key not in LABEL_DTYPES:
                raise ValueError("label_dtype must be int64 or int32, not "
                                 f"{label_dtype!r}")
            label_dtype = key
        if class_dim not in (None, 1, -1):
            raise ValueError(f"class_dim must be 1 or -1, not {class_dim!r}")
        if (class_dim is not None or label_dtype is not None) and \
                loss != "cross_entropy":
            raise ValueError("class_dim and label_dtype apply to "
                             "loss='cross_entropy'")
        self.loss, self.optimizer, self.label = loss, optimizer, label
        self.label_dtype, self.class_dim = label_dtype, class_dim

    def flags(self):
        f = ["--train"]
        if self.loss:
            f += ["--loss", self.loss]
        if self.label:
            f += ["--label", self.label]
        if self.label_dtype:
            f += ["--label-type", LABEL_DTYPES[self.label_dtype]]
        if self.class_dim is not None:
            f += ["--class-dim", str(self.class_dim)]
        if self.optimizer is not None:
            f += self.optimizer.flags()
        return f

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items()
                         if v is not None)
        return f"dlc.Train({args})"

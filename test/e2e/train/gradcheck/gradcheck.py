"""Finite-difference gradient check of a float64 training step.

gradcheck.py MODEL.dlc SEED: MODEL is a float64 .dlc model trained by
`sgd(lr=1.0)` on `mse_loss` or `cross_entropy`, so that one compiled
training step moves every parameter by exactly minus its gradient. The
script takes that gradient (weights before minus weights after one step,
through the Python package) and compares it with central differences of
the loss, computed here in NumPy from the compiled forward pass:

- along one random direction per parameter tensor, <grad, d> against the
  fourth-order central difference
  (L(w - 2h d) - 8 L(w - h d) + 8 L(w + h d) - L(w + 2h d)) / 12h;
- for three random elements of every tensor, grad[i] against the same
  difference along that element alone.

Prints one line per tensor and exits 1 if any error exceeds the tolerance
(1e-6 relative; with h = 1e-4 the difference's truncation error is of
order h^4 and its rounding error of order 1e-16 / h, both far below it).
"""
import re
import sys

import numpy as np

import dlc

TOLERANCE = 1e-6
STEP = 1e-4


def loss_fn(source):
    """The model's loss in NumPy: mean squared error or cross-entropy
    (mean over the batch, classes in dimension 1)."""
    if re.search(r"^\s*loss\s+mse_loss\(", source, re.M):
        return "mse", lambda p, y: np.mean((p - y) ** 2)
    if re.search(r"^\s*loss\s+cross_entropy\(", source, re.M):
        def cross_entropy(p, y):
            z = p - p.max(axis=1, keepdims=True)
            logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
            return -np.mean(np.take_along_axis(logp, y[:, None], 1))
        return "cross_entropy", cross_entropy
    sys.exit("gradcheck.py: the model's loss must be mse_loss or "
             "cross_entropy")


def main():
    path, seed = sys.argv[1], int(sys.argv[2])
    source = open(path).read()
    if not re.search(r"^\s*optim\s+sgd\(lr=1(\.0)?\)\s*$", source, re.M):
        sys.exit("gradcheck.py: the model must train with sgd(lr=1.0)")
    kind, loss = loss_fn(source)
    rng = np.random.default_rng(seed)
    m = dlc.compile(path, device="cpu", train=dlc.Train(), seed=seed)
    (_, xtype, xshape), = m.inputs
    (_, ptype, pshape), = m.outputs
    assert xtype == np.float64 and ptype == np.float64, "a float64 model"
    x = rng.standard_normal(xshape)
    if kind == "mse":
        y = rng.standard_normal(pshape)
    else:
        y = rng.integers(0, pshape[1], pshape[0]).astype(np.int64)

    def loss_at(weights):
        m.load_state_dict(weights)
        return loss(m(x), y)

    w0 = {k: v.copy() for k, v in m.state_dict().items()}
    step_loss = float(m.train_step(x, y))
    grads = {k: w0[k] - v for k, v in m.state_dict().items()}
    worst = abs(step_loss - loss_at(w0)) / abs(step_loss)
    print(f"loss {step_loss:.12g} (NumPy's from the forward pass: "
          f"relative error {worst:.1e})")

    def difference(name, direction):
        def at(k):
            w = dict(w0)
            w[name] = w0[name] + k * STEP * direction
            return loss_at(w)
        return (at(-2) - 8 * at(-1) + 8 * at(1) - at(2)) / (12 * STEP)

    for name, g in grads.items():
        d = rng.standard_normal(g.shape)
        want = difference(name, d)
        got = float(np.sum(g * d))
        err = abs(got - want) / max(abs(want), 1e-12)
        scale = float(np.abs(g).max())
        for flat in rng.choice(g.size, size=min(3, g.size), replace=False):
            e = np.zeros(g.size)
            e[flat] = 1
            fd = difference(name, e.reshape(g.shape))
            # Relative to the element, or to the tensor's largest gradient
            # where the element's own is tiny.
            err = max(err, abs(g.flat[flat] - fd) / max(abs(fd), 1e-3 * scale))
        worst = max(worst, err)
        print(f"{name} {list(g.shape)}: |grad|max {scale:.3e}, "
              f"relative error {err:.1e}")
    verdict = "passed" if worst <= TOLERANCE else "FAILED"
    print(f"gradcheck {verdict}: {len(grads)} tensors, worst relative error "
          f"{worst:.1e} (tolerance {TOLERANCE:g})")
    return 0 if worst <= TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())

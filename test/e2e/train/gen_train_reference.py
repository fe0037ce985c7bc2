#!/usr/bin/python3
"""Generate the reference data of dlc's training tests from PyTorch.

Run with Debian's python3 (python3-torch, python3-numpy):

    /usr/bin/python3 test/e2e/train/gen_train_reference.py [CASE ...]

For every case below it builds the torch.nn module equivalent to a .dlc
model from a fixed seed, draws a batch, and trains it for a number of steps
with the torch.optim optimizer the dlc model (plus command-line flags) asks
for, in float32, as a PyTorch user would:

    opt.zero_grad(); loss = loss_fn(model(x), y); loss.backward(); opt.step()

It writes into test/e2e/train/data/<case>/:

  weights.safetensors  the initial state_dict (dlc parameter names)
  x.npy, y.npy         the batch (trained on at every step)
  losses.npy           loss.item() of every step, float64
  final.safetensors    the state_dict after the last step

and the lit test test/e2e/train/<case>.test, which trains the same model
with `dlc run --train` from the same weights and data and compares the
per-step losses and the final weights (check_training.py).
"""

import collections
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from safetensors_io import write_safetensors  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


class Layers(nn.Module):
    def __init__(self, **layers):
        super().__init__()
        for k, v in layers.items():
            setattr(self, k, v)


def ln_random(n):
    ln = nn.LayerNorm(n)
    with torch.no_grad():
        ln.weight.uniform_(0.5, 1.5)
        ln.bias.uniform_(-0.5, 0.5)
    return ln


# Each case: model file (relative to the repository), extra dlc flags,
# builder(gen) -> (module, forward(m, x), loss(out, y), x, y), optimizer
# factory, steps.
CASES = collections.OrderedDict()


def case(name, model, flags, steps, make_opt):
    def deco(fn):
        CASES[name] = dict(model=model, flags=flags, steps=steps,
                           build=fn, make_opt=make_opt)
        return fn
    return deco


def mlp_toy(g):
    m = Layers(fc1=nn.Linear(10, 32), fc2=nn.Linear(32, 1))
    fwd = lambda m, x: m.fc2(F.relu(m.fc1(x)))
    x = torch.randn(16, 10, generator=g)
    y = torch.randn(16, 1, generator=g)
    return m, fwd, F.mse_loss, x, y


def mlp_classifier(g, inputs, hidden, classes, batch):
    """fc1, ReLU, fc2 and cross-entropy, on a batch of random inputs and
    labels."""
    m = Layers(fc1=nn.Linear(inputs, hidden), fc2=nn.Linear(hidden, classes))
    fwd = lambda m, x: m.fc2(F.relu(m.fc1(x)))
    x = torch.randn(batch, inputs, generator=g)
    y = torch.randint(0, classes, (batch,), generator=g)
    return m, fwd, F.cross_entropy, x, y


@case("toy_adam", "examples/toy.dlc", "", 20,
      lambda p: torch.optim.Adam(p, lr=1e-3))
def _toy_adam(g):
    return mlp_toy(g)


@case("toy_sgd_momentum", "examples/toy.dlc",
      "--optimizer sgd --lr 0.05 --momentum 0.9", 20,
      lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9))
def _toy_sgd(g):
    return mlp_toy(g)


@case("digits_adam", "examples/digits.dlc", "", 20,
      lambda p: torch.optim.Adam(p, lr=1e-3))
def _digits(g):
    return mlp_classifier(g, 784, 256, 10, 64)


@case("acts_adamw", "test/e2e/train/models/acts.dlc", "", 20,
      lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=0.1))
def _acts(g):
    m = Layers(fc1=nn.Linear(20, 24), fc2=nn.Linear(24, 24),
               fc3=nn.Linear(24, 24), fc4=nn.Linear(24, 24),
               fc5=nn.Linear(24, 5))

    def fwd(m, x):
        a = F.gelu(m.fc1(x))
        b = torch.tanh(m.fc2(a))
        c = torch.sigmoid(m.fc3(b))
        d = F.gelu(m.fc4(c), approximate="tanh")
        return m.fc5(d)
    x = torch.randn(16, 20, generator=g)
    y = torch.randint(0, 5, (16,), generator=g)
    return m, fwd, lambda o, y: F.cross_entropy(o, y, reduction="sum"), x, y


@case("residual_ln_sgd_nesterov", "test/e2e/models/residual_ln.dlc",
      "--loss mse --label t --optimizer sgd --lr 0.1 --momentum 0.9 "
      "--nesterov true --weight-decay 0.01", 20,
      lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True,
                                weight_decay=0.01))
def _residual(g):
    m = Layers(fc1=nn.Linear(32, 32), ln=ln_random(32))
    fwd = lambda m, x: m.ln(x + F.relu(m.fc1(x)))
    x = torch.randn(6, 32, generator=g)
    y = torch.randn(6, 32, generator=g)
    return m, fwd, F.mse_loss, x, y


@case("ops_sgd", "test/e2e/train/models/ops.dlc", "", 20,
      lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, dampening=0.1))
def _ops(g):
    m = Layers(fc1=nn.Linear(12, 16), ln=ln_random(16), fc2=nn.Linear(16, 10))

    def fwd(m, x):
        h = m.fc1(x)
        a = torch.tanh(h)
        b = a * torch.sigmoid(h)
        c = b / (torch.exp(-a) + 1.0)
        d = c - c.mean(1, keepdim=True)
        e = torch.sqrt(d * d + 1.0)
        f = torch.log(e + 1.0)
        gg = m.ln(f + h)
        u = gg.reshape(8, 4, 4).transpose(1, 2).reshape(8, 16)
        s = torch.softmax(u, 1)
        k = u @ s.transpose(0, 1)
        r = u + k.sum(1, keepdim=True)
        return m.fc2(F.gelu(r))
    x = torch.randn(8, 12, generator=g)
    y = torch.randint(0, 10, (8,), generator=g)
    return m, fwd, F.cross_entropy, x, y


@case("ops2_adam", "test/e2e/train/models/ops2.dlc", "", 20,
      lambda p: torch.optim.Adam(p, lr=1e-2, betas=(0.8, 0.99), eps=1e-6,
                                 weight_decay=0.01))
def _ops2(g):
    m = Layers(fc1=nn.Linear(12, 12), fc2=nn.Linear(12, 12),
               fc3=nn.Linear(12, 4))

    def fwd(m, x):
        h = m.fc1(x)
        p = torch.log_softmax(h, 1)
        q = F.relu(m.fc2(p))
        z = F.gelu(q, approximate="tanh")
        r3 = z.reshape(6, 3, 4)
        w = torch.matmul(r3, r3.transpose(1, 2)).mean(dim=(1, 2))
        mm = z * (w.reshape(6, 1) + z.mean())
        return m.fc3(mm - z.sum(0))
    x = torch.randn(6, 12, generator=g)
    y = torch.randn(6, 4, generator=g)
    return m, fwd, lambda o, y: F.mse_loss(o, y, reduction="sum"), x, y


@case("erf_sgd", "test/e2e/train/models/erf.dlc", "", 20,
      lambda p: torch.optim.SGD(p, lr=0.1))
def _erf(g):
    m = Layers(fc1=nn.Linear(12, 12), fc2=nn.Linear(12, 4))

    def fwd(m, x):
        h = m.fc1(x)
        return m.fc2(torch.erf(h) * h)
    x = torch.randn(8, 12, generator=g)
    y = torch.randn(8, 4, generator=g)
    return m, fwd, F.mse_loss, x, y


@case("wide_adam", "test/e2e/train/models/wide.dlc", "", 20,
      lambda p: torch.optim.Adam(p, lr=1e-3))
def _wide(g):
    return mlp_classifier(g, 8, 300, 3, 8)


@case("deep_adam", "test/e2e/train/models/deep.dlc", "", 20,
      lambda p: torch.optim.Adam(p, lr=1e-2))
def _deep(g):
    layers = {"fc1": nn.Linear(12, 32)}
    layers.update(("fc%d" % i, nn.Linear(32, 32)) for i in range(2, 9))
    layers["out"] = nn.Linear(32, 5)
    m = Layers(**layers)

    def fwd(m, x):
        for i in range(1, 9):
            x = F.relu(getattr(m, "fc%d" % i)(x))
        return m.out(x)
    x = torch.randn(16, 12, generator=g)
    y = torch.randint(0, 5, (16,), generator=g)
    return m, fwd, F.cross_entropy, x, y


def bn_random(n):
    """A BatchNorm2d with random affine parameters and running statistics."""
    bn = nn.BatchNorm2d(n)
    with torch.no_grad():
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-0.5, 0.5)
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 1.5)
    return bn


@case("cnn_sgd_momentum", "test/e2e/models/cnn.dlc",
      "--loss cross_entropy --optimizer sgd --lr 0.01 --momentum 0.9", 20,
      lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9))
def _cnn(g):
    # Batch norm in eval() semantics (running statistics, which must not
    # change), while the convolutions, the BN affine and the classifier
    # train.
    m = Layers(conv1=nn.Conv2d(3, 8, 3, padding=1), bn1=bn_random(8),
               conv2=nn.Conv2d(8, 16, 3, stride=2), fc=nn.Linear(64, 10))
    m.eval()

    def fwd(m, x):
        h1 = F.max_pool2d(F.relu(m.bn1(m.conv1(x))), 2)
        h2 = F.relu(m.conv2(h1))
        p = F.avg_pool2d(h2, 3, stride=2, padding=1, count_include_pad=False)
        return m.fc(torch.flatten(p, 1))
    x = torch.randn(4, 3, 16, 16, generator=g)
    y = torch.randint(0, 10, (4,), generator=g)
    return m, fwd, F.cross_entropy, x, y


@case("convs_adam", "test/e2e/train/models/convs.dlc", "", 20,
      lambda p: torch.optim.Adam(p, lr=1e-2))
def _convs(g):
    m = Layers(gconv=nn.Conv2d(4, 6, (3, 2), stride=(2, 1), dilation=(1, 2),
                               groups=2),
               conv2=nn.Conv2d(6, 4, 3, stride=2, padding=1),
               fc=nn.Linear(48, 5))

    def fwd(m, x):
        # dlc padding [top, left, bottom, right] = [1, 0, 2, 1]
        a = torch.tanh(m.gconv(F.pad(x, (0, 1, 1, 2))))
        b = F.max_pool2d(a, 3, stride=(1, 2), padding=1)
        c = F.avg_pool2d(b, 2, stride=1, padding=1, count_include_pad=False)
        d = F.relu(m.conv2(c))
        return m.fc(torch.flatten(d, 1))
    x = torch.randn(2, 4, 11, 10, generator=g)
    y = torch.randn(2, 5, generator=g)
    return m, fwd, F.mse_loss, x, y


@case("wide_convs_adam", "test/e2e/train/models/wide_convs.dlc", "", 5,
      lambda p: torch.optim.Adam(p, lr=1e-3))
def _wide_convs(g):
    # conv2's input gradient runs on the thread pool (its flipped weight
    # is 73,728 points); its tiles once failed to verify.
    m = Layers(conv1=nn.Conv2d(4, 32, 3, padding=1),
               conv2=nn.Conv2d(32, 256, 3, padding=1), fc=nn.Linear(256, 10))

    def fwd(m, x):
        a = F.relu(m.conv1(x))
        b = F.relu(m.conv2(a))
        return m.fc(torch.flatten(F.avg_pool2d(b, 6), 1))
    x = torch.randn(2, 4, 6, 6, generator=g)
    y = torch.randint(0, 10, (2,), generator=g)
    return m, fwd, F.cross_entropy, x, y


def lstm_classifier(g, batch):
    """lstm.dlc (and lstm_rows.dlc): a 2-layer bidirectional LSTM and a
    linear layer on the last layer's final states, on `batch` rows."""
    m = Layers(rnn=nn.LSTM(8, 16, num_layers=2, bidirectional=True,
                           batch_first=True),
               fc=nn.Linear(32, 3))

    def fwd(m, x):
        _, (h, _) = m.rnn(x)
        return m.fc(torch.cat([h[-2], h[-1]], 1))
    x = torch.randn(batch, 6, 8, generator=g)
    y = torch.randint(0, 3, (batch,), generator=g)
    return m, fwd, F.cross_entropy, x, y


@case("lstm_adam", "test/e2e/train/models/lstm.dlc", "", 20,
      lambda p: torch.optim.Adam(p, lr=3e-3))
def _lstm(g):
    return lstm_classifier(g, 4)


@case("lstm_seq_sgd", "test/e2e/train/models/lstm_seq.dlc", "", 20,
      lambda p: torch.optim.SGD(p, lr=0.5, momentum=0.9))
def _lstm_seq(g):
    m = Layers(rnn=nn.LSTM(5, 12, bias=False))
    fwd = lambda m, x: m.rnn(x)[0]
    x = torch.randn(7, 3, 5, generator=g)
    y = torch.randn(7, 3, 12, generator=g) * 0.5
    return m, fwd, F.mse_loss, x, y


@case("gru_adam", "test/e2e/train/models/gru.dlc", "", 20,
      lambda p: torch.optim.Adam(p, lr=3e-3))
def _gru(g):
    m = Layers(rnn=nn.GRU(8, 16, num_layers=2, bidirectional=True,
                          batch_first=True),
               fc=nn.Linear(32, 3))

    def fwd(m, x):
        _, h = m.rnn(x)
        return m.fc(torch.cat([h[-2], h[-1]], 1))
    x = torch.randn(4, 6, 8, generator=g)
    y = torch.randint(0, 3, (4,), generator=g)
    return m, fwd, F.cross_entropy, x, y


@case("gru_seq_sgd", "test/e2e/train/models/gru_seq.dlc", "", 20,
      lambda p: torch.optim.SGD(p, lr=0.5, momentum=0.9))
def _gru_seq(g):
    m = Layers(rnn=nn.GRU(5, 12, bias=False))
    fwd = lambda m, x: m.rnn(x)[0]
    x = torch.randn(7, 3, 5, generator=g)
    y = torch.randn(7, 3, 12, generator=g) * 0.5
    return m, fwd, F.mse_loss, x, y


# Batches of 24 and 32 rows: dlc-lower-to-linalg runs the steps of each
# block of 8 rows as an independent loop (3 and 4 blocks).
@case("lstm_rows_adam", "test/e2e/train/models/lstm_rows.dlc", "", 10,
      lambda p: torch.optim.Adam(p, lr=3e-3))
def _lstm_rows(g):
    return lstm_classifier(g, 24)


@case("gru_rows_sgd", "test/e2e/train/models/gru_rows.dlc", "", 10,
      lambda p: torch.optim.SGD(p, lr=0.5, momentum=0.9))
def _gru_rows(g):
    m = Layers(rnn=nn.GRU(5, 12, num_layers=2, bidirectional=True))
    fwd = lambda m, x: m.rnn(x)[0]
    x = torch.randn(7, 32, 5, generator=g)
    y = torch.randn(7, 32, 24, generator=g) * 0.5
    return m, fwd, F.mse_loss, x, y


TEST = """\
# Training {name}: {steps} steps of `dlc run --train` from PyTorch's initial
# weights and batch, compared with PyTorch's per-step losses and final
# weights (generated by gen_train_reference.py).
# RUN: dlc run %dlc_src/{model} --train {flags}--weights %S/data/{name}/weights.safetensors --input x=%S/data/{name}/x.npy --input {label}=%S/data/{name}/y.npy --steps {steps} --print-loss --save %t.ckpt.safetensors > %t.losses
# RUN: %python %S/check_training.py %t.losses %S/data/{name}/losses.npy --weights %t.ckpt.safetensors %S/data/{name}/final.safetensors
"""


def generate(name, c):
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1234)
    m, fwd, loss_fn, x, y = c["build"](g)
    out = os.path.join(HERE, "data", name)
    os.makedirs(out, exist_ok=True)
    # BatchNorm's num_batches_tracked is no dlc parameter.
    sd = lambda: collections.OrderedDict(
        (k, v.detach().numpy().copy()) for k, v in m.state_dict().items()
        if not k.endswith(".num_batches_tracked"))
    initial = sd()
    write_safetensors(os.path.join(out, "weights.safetensors"), sd())
    np.save(os.path.join(out, "x.npy"), x.numpy())
    np.save(os.path.join(out, "y.npy"), y.numpy())
    opt = c["make_opt"](m.parameters())
    losses = []
    for _ in range(c["steps"]):
        opt.zero_grad()
        loss = loss_fn(fwd(m, x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    np.save(os.path.join(out, "losses.npy"), np.array(losses, np.float64))
    for k, v in sd().items():
        # Running statistics are not trained (eval-mode batch norm).
        if k.endswith((".running_mean", ".running_var")):
            assert np.array_equal(v, initial[k]), k
    write_safetensors(os.path.join(out, "final.safetensors"), sd())
    flags = c["flags"] + " " if c["flags"] else ""
    label = "t" if "--label t" in c["flags"] else "y"
    with open(os.path.join(HERE, name + ".test"), "w") as f:
        f.write(TEST.format(name=name, model=c["model"], flags=flags,
                            steps=c["steps"], label=label))
    print("%-26s loss %.6f -> %.6f" % (name, losses[0], losses[-1]))


def main(argv):
    names = argv or list(CASES)
    for n in names:
        if n not in CASES:
            sys.exit("unknown case %r; cases: %s" % (n, ", ".join(CASES)))
        generate(n, CASES[n])


if __name__ == "__main__":
    main(sys.argv[1:])

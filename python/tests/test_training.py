"""Training from Python: fit is the same steps as train_step one by one,
a checkpoint resumes bit for bit, a short last batch is a real step."""
import numpy as np
import pytest

import dlc
from conftest import classes_data, example, toy_data


def weights_equal(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    oa, ob = a.optimizer_state_dict(), b.optimizer_state_dict()
    return (list(sa) == list(sb) and list(oa) == list(ob) and
            all(np.array_equal(sa[k], sb[k]) for k in sa) and
            all(np.array_equal(oa[k], ob[k]) for k in oa))


def compile_mlp(path, **kw):
    return dlc.compile(path, device="cpu", train=dlc.Train(), **kw)


def test_fit_equals_train_step_one_by_one(mlp_dlc):
    x, y = classes_data(37)  # 4 full batches of 8 and one of 5
    a = compile_mlp(mlp_dlc)
    b = compile_mlp(mlp_dlc)
    hist = a.fit(x, y, epochs=3, shuffle=True, seed=7, progress=False)
    assert len(hist["loss"]) == 3
    rng = np.random.default_rng(7)
    for epoch in range(3):
        order = rng.permutation(37)
        total = 0.0
        for lo in range(0, 37, 8):
            idx = order[lo:lo + 8]
            total += b.train_step(x[idx], y[idx]) * len(idx)
        assert hist["loss"][epoch] == total / 37
    assert weights_equal(a, b)


def test_fit_without_shuffle_and_drop_last(mlp_dlc):
    x, y = classes_data(20)
    a = compile_mlp(mlp_dlc)
    b = compile_mlp(mlp_dlc)
    a.fit(x, y, epochs=2, shuffle=False, drop_last=True, progress=False)
    for _ in range(2):
        for lo in (0, 8):
            b.train_step(x[lo:lo + 8], y[lo:lo + 8])
    assert weights_equal(a, b)


def test_short_batch_is_the_step_of_a_model_of_that_batch(mlp_dlc, tmp_path):
    x, y = classes_data(13)
    a = compile_mlp(mlp_dlc)
    a.train_step(x[:8], y[:8])
    a.save(tmp_path / "c.safetensors")
    loss = a.train_step(x[8:], y[8:])  # 5 rows: the second model
    five = compile_mlp(mlp_dlc, batch=5)
    assert five.batch_size == 5
    five.load(tmp_path / "c.safetensors")
    assert five.train_step(x[8:], y[8:]) == loss
    # The step moved the weights and the Adam state (step count 2) of the
    # model itself.
    assert weights_equal(a, five)
    assert a.optimizer_state_dict()["optimizer.step"] == 2


def test_resume_equals_uninterrupted(mlp_dlc, tmp_path):
    x, y = classes_data(29)
    whole = compile_mlp(mlp_dlc)
    h_whole = whole.fit(x, y, epochs=4, seed=1, progress=False)
    first = compile_mlp(mlp_dlc)
    h_first = first.fit(x, y, epochs=2, seed=1, progress=False)
    first.save(tmp_path / "ckpt.safetensors")
    second = compile_mlp(mlp_dlc, seed=99)  # other initial weights
    second.load(tmp_path / "ckpt.safetensors")
    h_second = second.fit(x, y, epochs=4, seed=1, initial_epoch=2,
                          progress=False)
    assert h_first["loss"] + h_second["loss"] == h_whole["loss"]
    assert weights_equal(second, whole)


def test_validation_history_and_evaluate(mlp_dlc):
    x, y = classes_data(40)
    xv, yv = classes_data(11, seed=3)
    m = compile_mlp(mlp_dlc)
    h = m.fit(x, y, epochs=2, validation=(xv, yv), progress=True)
    assert set(h) == {"loss", "samples_per_s", "val_loss", "val_accuracy"}
    r = m.evaluate(xv, yv)
    assert r == {"loss": h["val_loss"][-1], "accuracy": h["val_accuracy"][-1]}
    # The loss and accuracy of the logits, in NumPy.
    z = m(xv).astype(np.float64)
    lse = np.log(np.exp(z - z.max(1, keepdims=True)).sum(1)) + z.max(1)
    nll = lse - z[np.arange(11), yv]
    assert r["loss"] == pytest.approx(nll.mean(), rel=1e-12)
    assert r["accuracy"] == np.mean(z.argmax(1) == yv)


def test_mse_model_and_own_loss():
    m = dlc.compile(example("toy.dlc"), device="cpu", train=dlc.Train())
    x, y = toy_data(40)
    h = m.fit(x, y, epochs=3, progress=False, validation=(x, y))
    assert "val_accuracy" not in h
    assert h["loss"][-1] < h["loss"][0]
    r = m.evaluate(x, y)
    d = m(x).astype(np.float64) - y
    assert r["loss"] == pytest.approx(np.mean(d * d), rel=1e-12)


@pytest.mark.parametrize("opt", [dlc.SGD(lr=0.1, momentum=0.9, nesterov=True),
                                 dlc.Adam(lr=1e-2, betas=(0.8, 0.99)),
                                 dlc.AdamW(lr=1e-2)])
def test_optimizers_and_loss_override(mlp_dlc, opt):
    x, y = classes_data(8)
    m = dlc.compile(mlp_dlc, device="cpu",
                    train=dlc.Train(loss="cross_entropy", optimizer=opt))
    losses = [m.train_step(x, y) for _ in range(5)]
    assert losses[-1] < losses[0]
    names = list(m.optimizer_state_dict())
    if isinstance(opt, dlc.SGD):
        assert "optimizer.fc1.weight.momentum_buffer" in names
    else:
        assert "optimizer.fc1.weight.exp_avg_sq" in names


def test_load_state_dict(mlp_dlc):
    a = compile_mlp(mlp_dlc, seed=1)
    b = compile_mlp(mlp_dlc, seed=2)
    x, _ = classes_data(8)
    assert not np.array_equal(a(x), b(x))
    keys = b.load_state_dict({k: v.astype(np.float64)
                              for k, v in a.state_dict().items()})
    assert keys.missing_keys == [] and keys.unexpected_keys == []
    assert np.array_equal(a(x), b(x))
    with pytest.raises(KeyError, match="fc2.bias"):
        b.load_state_dict({"fc1.weight": a.state_dict()["fc1.weight"]})
    with pytest.raises(ValueError, match="fc1.bias"):
        b.load_state_dict({**a.state_dict(), "fc1.bias": np.zeros(3)})


def test_forward_reads_the_weights_it_was_given(mlp_dlc):
    # An inference model reads its weights re-laid out once
    # (dlc-pack-weights): they are laid out again after every load or write.
    m = dlc.compile(mlp_dlc, device="cpu", seed=3)
    x, _ = classes_data(8)

    def numpy_forward():
        s = m.state_dict()
        h = np.maximum(x @ s["fc1.weight"].T + s["fc1.bias"], 0)
        return h @ s["fc2.weight"].T + s["fc2.bias"]

    before = m(x)
    np.testing.assert_allclose(before, numpy_forward(), rtol=1e-5, atol=1e-6)
    m.load_state_dict({k: v * 0.5 for k, v in m.state_dict().items()})
    after = m(x)
    np.testing.assert_allclose(after, numpy_forward(), rtol=1e-5, atol=1e-6)
    assert not np.allclose(after, before)
    m.init(5)
    np.testing.assert_allclose(m(x), numpy_forward(), rtol=1e-5, atol=1e-6)


def test_torch_module_and_state_dict():
    torch = pytest.importorskip("torch", reason="needs PyTorch")
    pytest.importorskip("onnx", reason="torch.onnx needs the onnx package")
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(20, 16), torch.nn.ReLU(),
                              torch.nn.Linear(16, 4))
    x, y = classes_data(8)
    m = dlc.compile(net, example_inputs=(torch.from_numpy(x),), device="cpu",
                    train=dlc.Train(loss="cross_entropy",
                                    optimizer=dlc.SGD(lr=0.1)))
    with torch.no_grad():
        assert np.allclose(m(x), net(torch.from_numpy(x)).numpy(),
                           rtol=1e-5, atol=1e-6)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(torch.from_numpy(x)),
                                                 torch.from_numpy(y))
        loss.backward()
        opt.step()
        assert m.train_step(x, y) == pytest.approx(loss.item(), rel=1e-5)
    m.load_state_dict(net.state_dict())
    with torch.no_grad():
        assert np.allclose(m(x), net(torch.from_numpy(x)).numpy(),
                           rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_mixed_precision(mlp_dlc, precision):
    x, y = classes_data(8)
    m = dlc.compile(mlp_dlc, device="cpu", precision=precision,
                    train=dlc.Train())
    ref = dlc.compile(mlp_dlc, device="cpu")
    assert np.allclose(m(x), ref(x), rtol=0.05, atol=0.05)
    losses = [m.train_step(x, y) for _ in range(5)]
    assert losses[-1] < losses[0]
    assert m.last_step_skipped is (False if precision == "fp16" else None)

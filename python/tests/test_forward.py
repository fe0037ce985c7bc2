"""The forward entry from Python equals the C path (`dlc run`) bit for bit,
and batches of another size are padded or split."""
import numpy as np
import pytest

import dlc
from conftest import ONNX_DATA, classes_data, dlc_cli, example, toy_data


def test_dlc_model_equals_dlc_run(tmp_path):
    m = dlc.compile(example("toy.dlc"), device="cpu", seed=3)
    assert m.device == "cpu"
    # The object is portable: the runtime picked a variant for this CPU.
    assert m.cpu_name in ("x86-64-v3", "x86-64-v4", "x86-64-v4+avx512bf16")
    x, _ = toy_data()
    np.save(tmp_path / "x.npy", x)
    m.save(tmp_path / "w.safetensors")
    dlc_cli("run", example("toy.dlc"), "--device", "cpu", "--weights",
            tmp_path / "w.safetensors", "--input", f"x={tmp_path}/x.npy",
            "--output", tmp_path / "y.npy")
    ref = np.load(tmp_path / "y.npy")
    got = m(x)
    assert got.dtype == np.float32 and got.shape == (16, 1)
    assert np.array_equal(got, ref)
    # By name, and the same again.
    assert np.array_equal(m(x=x), ref)


def test_onnx_model_equals_dlc_run(tmp_path):
    model = f"{ONNX_DATA}/dynamic_batch/model.onnx"
    x = np.load(f"{ONNX_DATA}/dynamic_batch/x.npy")
    m = dlc.compile(model, input_shapes={"x": list(x.shape)}, device="cpu")
    dlc_cli("run", model, "--device", "cpu", "--input-shape",
            "x=" + ",".join(map(str, x.shape)), "--input",
            f"x={ONNX_DATA}/dynamic_batch/x.npy", "--output",
            tmp_path / "y.npy")
    assert np.array_equal(m(x), np.load(tmp_path / "y.npy"))


def test_train_step_equals_dlc_run(tmp_path):
    m = dlc.compile(example("toy.dlc"), device="cpu", train=dlc.Train())
    x, y = toy_data()
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    m.save(tmp_path / "w.safetensors")
    out = dlc_cli("run", example("toy.dlc"), "--device", "cpu", "--train",
                  "--weights", tmp_path / "w.safetensors", "--input",
                  f"x={tmp_path}/x.npy", "--input", f"y={tmp_path}/y.npy",
                  "--steps", "3", "--print-loss", "--save",
                  tmp_path / "c.safetensors")
    ref = [np.float32(line.split()[-1]) for line in out.splitlines()]
    got = [np.float32(m.train_step(x, y)) for _ in range(3)]
    assert got == ref
    c = dlc.compile(example("toy.dlc"), device="cpu", train=dlc.Train())
    c.load(tmp_path / "c.safetensors")
    for k, v in c.state_dict().items():
        assert np.array_equal(v, m.state_dict()[k]), k
    for k, v in c.optimizer_state_dict().items():
        assert np.array_equal(v, m.optimizer_state_dict()[k]), k


def test_short_and_long_batches(mlp_dlc):
    m = dlc.compile(mlp_dlc, device="cpu")
    x, _ = classes_data(8)
    full = m(x)
    # Fewer rows: padded; the rows are those of a full batch, bit for bit.
    assert np.array_equal(m(x[:3]), full[:3])
    # More rows: in chunks of the compiled batch, the last one padded.
    big, _ = classes_data(21, seed=5)
    got = m(big)
    assert got.shape == (21, 4)
    assert np.array_equal(got[:8], m(big[:8]))
    assert np.array_equal(got[16:], m(big[16:]))


def test_inputs_without_copies_and_with(mlp_dlc):
    m = dlc.compile(mlp_dlc, device="cpu")
    x, _ = classes_data(8)
    ref = m(x)
    # Not contiguous, a list, a read-only array: copied or converted.
    wide = np.zeros((8, 40), np.float32)
    wide[:, ::2] = x
    assert np.array_equal(m(wide[:, ::2]), ref)
    assert np.array_equal(m(x.tolist()), ref)
    ro = x.copy()
    ro.flags.writeable = False
    assert np.array_equal(m(ro), ref)


def test_several_outputs(tmp_path):
    path = tmp_path / "two.dlc"
    path.write_text("model two\ninput x: f32[4, 3]\n"
                    "a = relu(x)\nb = neg(x)\noutput a, b\n")
    m = dlc.compile(str(path), device="cpu")
    x = np.arange(12, dtype=np.float32).reshape(4, 3) - 6
    a, b = m(x)
    assert np.array_equal(a, np.maximum(x, 0)) and np.array_equal(b, -x)
    a2, b2 = m(x[:2])
    assert np.array_equal(a2, a[:2]) and np.array_equal(b2, b[:2])


def test_dlpack_from_torch(mlp_dlc):
    torch = pytest.importorskip("torch", reason="DLPack input needs PyTorch")
    m = dlc.compile(mlp_dlc, device="cpu")
    x, _ = classes_data(8)
    t = torch.from_numpy(x.copy()).requires_grad_(True)
    assert np.array_equal(m(t), m(x))
    # A contiguous CPU tensor is read in place, without a copy.
    from dlc._model import as_array
    plain = torch.from_numpy(x.copy())
    assert as_array(plain).ctypes.data == plain.data_ptr()


def test_memory_report_and_stats(mlp_dlc):
    m = dlc.compile(mlp_dlc, device="cpu", train=dlc.Train())
    r = m.memory_report()
    assert r["model"] == "mlp" and r["batch"] == 8
    step = r["entries"]["train_step"]
    assert step["weights"] == (20 * 16 + 16 + 16 * 4 + 4) * 4
    assert step["optimizer_state"] == 2 * step["weights"]
    assert r["model_bytes"] == m.memory_bytes
    s = dlc.stats(mlp_dlc)
    assert s["model"] == "mlp" and s["batch"] == 8
    assert s["parameters"] == 20 * 16 + 16 + 16 * 4 + 4
    assert s["multiply_adds"] == 8 * (20 * 16 + 16 * 4)

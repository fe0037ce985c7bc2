"""Every documented error raises the documented exception."""
import os

import numpy as np
import pytest

import dlc
from conftest import classes_data, example, toy_data


@pytest.fixture
def toy():
    return dlc.compile(example("toy.dlc"), device="cpu", train=dlc.Train())


def test_wrong_shape_names_input_expected_and_given(toy):
    x, y = toy_data()
    with pytest.raises(ValueError) as e:
        toy(x[:, :7])
    msg = str(e.value)
    assert "'x'" in msg and "f32[16, 10]" in msg and "[16, 7]" in msg
    with pytest.raises(ValueError, match=r"'y'.*f32\[16, 1\].*\[16, 2\]"):
        toy.train_step(x, np.zeros((16, 2), np.float32))


def test_wrong_dtype(toy):
    x, y = toy_data()
    with pytest.raises(ValueError, match=r"'x'.*float32.*float64.*astype"):
        toy(x.astype(np.float64))
    with pytest.raises(ValueError, match="'y'"):
        toy.train_step(x, y.astype(np.float16))


def test_too_many_rows_for_one_step(toy):
    x, y = toy_data(20)
    with pytest.raises(ValueError, match="at most 16 rows"):
        toy.train_step(x, y)


def test_rows_differ_between_inputs(toy):
    x, y = toy_data()
    with pytest.raises(ValueError, match="rows"):
        toy.train_step(x[:4], y[:5])


def test_wrong_arguments(toy):
    x, y = toy_data()
    with pytest.raises(TypeError, match="no input 'z'"):
        toy(z=x)
    with pytest.raises(TypeError, match="takes 1 input"):
        toy(x, x)
    with pytest.raises(ValueError, match="batch_size"):
        toy.fit(x, y, batch_size=4)
    fwd = dlc.compile(example("toy.dlc"), device="cpu")
    with pytest.raises(TypeError, match="without a training step"):
        fwd.train_step(x, y)


def test_labels_out_of_range(mlp_dlc):
    m = dlc.compile(mlp_dlc, device="cpu", train=dlc.Train())
    x, y = classes_data(8)
    y[3] = 4
    with pytest.raises(ValueError, match="label 4 at position 3"):
        m.train_step(x, y)
    y[3] = -100  # PyTorch's ignore_index is a label
    m.train_step(x, y)
    with pytest.raises(ValueError, match="label 4"):
        m.fit(x, np.full(8, 4), progress=False)


def test_compile_error_is_located(tmp_path):
    bad = tmp_path / "bad.dlc"
    bad.write_text("model bad\ninput x: f32[4, 3]\ny = relu(q)\noutput y\n")
    with pytest.raises(dlc.CompileError) as e:
        dlc.compile(str(bad))
    assert f"{bad}:3:" in e.value.message
    assert "error" in str(e.value)
    assert e.value.returncode == 1
    assert isinstance(e.value, Exception)


def test_compiler_option_error(mlp_dlc):
    # ONNX and .dlc alike: a setting the compiler refuses is a CompileError.
    with pytest.raises(dlc.CompileError, match="dynamic|input|shape"):
        dlc.compile(os.path.join(os.path.dirname(__file__), "..", "..",
                                 "test", "e2e", "onnx", "data",
                                 "dynamic_batch", "model.onnx"))


def test_runtime_errors(toy, tmp_path):
    with pytest.raises(dlc.RuntimeError) as e:
        toy.load(tmp_path / "missing.safetensors")
    assert e.value.status == "DLC_ERR_IO"
    assert "missing.safetensors" in str(e.value)
    assert isinstance(e.value, RuntimeError)
    other = dlc.compile(example("digits.dlc"), device="cpu")
    other.save(tmp_path / "digits.safetensors")
    with pytest.raises(dlc.RuntimeError, match="fc1.weight") as e:
        toy.load(tmp_path / "digits.safetensors")
    assert e.value.status == "DLC_ERR_FORMAT"


def test_missing_files_and_tools(monkeypatch, tmp_path):
    with pytest.raises(FileNotFoundError):
        dlc.compile(str(tmp_path / "nothing.dlc"))
    monkeypatch.setenv("DLC_COMPILER", str(tmp_path / "no-dlc"))
    with pytest.raises(dlc.ToolNotFoundError, match="DLC_COMPILER"):
        dlc.compile(example("toy.dlc"))


def test_bad_options():
    with pytest.raises(ValueError, match="precision"):
        dlc.compile(example("toy.dlc"), precision="fp8")
    with pytest.raises(ValueError, match="device"):
        dlc.compile(example("toy.dlc"), device="tpu")
    with pytest.raises(ValueError, match="loss"):
        dlc.Train(loss="hinge")
    with pytest.raises(ValueError, match="Nesterov"):
        dlc.SGD(lr=0.1, nesterov=True)
    with pytest.raises(NotImplementedError, match="amsgrad"):
        dlc.Adam(amsgrad=True)
    with pytest.raises(TypeError):
        dlc.compile(42)


def test_cuda_where_there_is_none():
    if dlc.cuda_available()[0]:
        pytest.skip("CUDA is usable here")
    with pytest.raises(dlc.RuntimeError, match="CUDA") as e:
        dlc.compile(example("toy.dlc"), device="cuda")
    assert e.value.status == "DLC_ERR_DEVICE_UNAVAILABLE"

"""The prepared GPU device check (tools/gpu) and dlcrt's device arrays, on a
machine without a GPU: prepare.py builds a bundle of every section, and
run_on_device.sh runs it end to end against the stand-in driver
(fake_cuda.c), which loads modules and launches kernels without running
them; DLPack capsules are checked on their own."""

import ctypes
import gc
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = os.path.join(ROOT, "tools", "gpu")
sys.path.insert(0, TOOLS)

import device_check  # noqa: E402
from dlcrt import dlpack  # noqa: E402


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """prepare.py --sample: one entry of every section."""
    out = tmp_path_factory.mktemp("bundle") / "gpu-check"
    run = subprocess.run([sys.executable, os.path.join(TOOLS, "prepare.py"), "--sample",
                          "--out", str(out)], capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    return out


def test_prepare_builds_every_section(bundle):
    manifest = json.loads((bundle / "manifest.json").read_text())
    entries = manifest["entries"]
    assert {e["section"] for e in entries} == {"ops", "matmul", "conv", "models"}
    assert not [e for e in entries if "export_error" in e]
    for entry in entries:
        library = bundle / entry["library"]
        assert library.exists() and not library.with_suffix(".h").exists()
        # A fatbin (machine code for the chip, PTX beside it) where ptxas is here.
        blob = library.read_bytes()
        metadata = json.loads(blob[blob.index(b'{"format": '):].split(b"\0", 1)[0])
        assert metadata["kind"] == "cuda" and metadata["chip"] == "sm_90"
        assert metadata["kernels"] == ("fatbin" if shutil.which("ptxas") else "ptx")
    assert manifest["bytes"] < 60 << 20 and manifest["chip"] == "sm_90"
    model = next(e for e in entries if e.get("key") == "bert_layer")
    names = [p["name"] for p in model["parameters"]]
    assert "query.weight" in names and "output_norm.bias" in names
    with np.load(bundle / "ops.npz") as data:
        assert "op0_in0" in data and "op0_out0" in data


@pytest.mark.parametrize("key", ["resnet18", "bert_layer"])
def test_model_parameters_match_pytorch(key):
    """The device check hands PyTorch's state dict to the library in the
    order prepare.py exported the parameters: same names, same shapes."""
    device_check.torch = pytest.importorskip("torch")  # main() sets it on the device
    import prepare
    from dlc import models
    model = models.resnet18(rng=0) if key == "resnet18" else models.BertLayer(rng=0)
    _, names = prepare._parameters_as_inputs(model.eval())
    state = device_check._network(key, device="cpu").state_dict()
    ours = model.state_dict()
    assert names and set(names) <= set(state)
    assert all(tuple(state[n].shape) == ours[n].shape for n in names)


def test_seeded_weights():
    """Both sides of the check draw the constant models' weights alike: the
    same values for the same name on every machine (PCG64's raw bits), a
    name's own stream, WEIGHT_LEVELS values within each kind's range."""
    conv = device_check.seeded_weight("layer1.0.conv1.weight", (64, 64, 3, 3))
    assert conv.dtype == np.float32 and conv.shape == (64, 64, 3, 3)
    assert np.array_equal(conv, device_check.seeded_weight("layer1.0.conv1.weight",
                                                           (64, 64, 3, 3)))
    assert not np.array_equal(conv, device_check.seeded_weight("layer1.0.conv2.weight",
                                                               (64, 64, 3, 3)))
    assert len(np.unique(conv)) == device_check.WEIGHT_LEVELS
    assert np.abs(conv).max() < 1 / np.sqrt(64 * 9)
    variance = device_check.seeded_weight("bn1.running_var", (64,))
    assert 0.5 <= variance.min() and variance.max() <= 2.0
    # The first values, pinned: a change of the generator breaks every
    # bundle prepared before it.
    np.testing.assert_array_equal(device_check.seeded_weight("w", (4,)),
                                  np.float32([-0.06875, -0.00625, 0.09375, -0.08125]))


def test_compressed_libraries_are_unpacked(bundle, fake_cuda, tmp_path, monkeypatch):
    """A library stored as .xz (a model with its weights as constants) is
    unpacked before dlcrt loads it."""
    import lzma
    monkeypatch.setenv("DLC_LIBCUDA", fake_cuda)
    entry = next(e for e in json.loads((bundle / "manifest.json").read_text())["entries"]
                 if e["section"] == "matmul")
    packed = tmp_path / "models" / "matmul.so.xz"
    packed.parent.mkdir()
    packed.write_bytes(lzma.compress((bundle / entry["library"]).read_bytes()))
    library = device_check._load(str(tmp_path), {"library": "models/matmul.so.xz"})
    assert library.metadata["kind"] == "cuda" and "f" in library.functions


def test_run_on_device_dry_run(bundle, fake_cuda, tmp_path):
    """The device script, on the stand-in driver: every library loads and is
    called (kernels are not run: nothing is checked), and the report is
    written."""
    out = tmp_path / "results"
    env = dict(os.environ, DLC_LIBCUDA=fake_cuda)
    run = subprocess.run([os.path.join(TOOLS, "run_on_device.sh"), str(bundle), str(out),
                          "--dry-run"], capture_output=True, text=True, timeout=600, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads((out / "results.json").read_text())
    assert report["dry_run"] and len(report["rows"]) == 5
    assert not [r for r in report["rows"] if "error" in r or "skipped" in r], report["rows"]
    text = (out / "results.md").read_text()
    assert "## Op cases: 1 of 1 called (dry run" in text and "## Models" in text


def test_run_on_device_usage(tmp_path):
    run = subprocess.run([os.path.join(TOOLS, "run_on_device.sh")], capture_output=True,
                         text=True)
    assert run.returncode == 2 and "usage:" in run.stderr
    run = subprocess.run([os.path.join(TOOLS, "run_on_device.sh"), str(tmp_path), "out"],
                         capture_output=True, text=True)
    assert run.returncode == 2 and "no manifest.json: run tools/gpu/prepare.py" in run.stderr


def test_device_check_without_a_gpu_says_so(bundle, tmp_path):
    run = subprocess.run([sys.executable, os.path.join(TOOLS, "device_check.py"),
                          "--bundle", str(bundle), "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode != 0 and "no CUDA device through PyTorch" in run.stderr


@pytest.mark.parametrize("actual,expected,spec,verdict", [
    (np.float32([1, 2]), np.float64([1, 2 + 1e-6]), {"exact": False, "rtol": 1e-5, "atol": 0},
     None),
    (np.float32([1, 2]), np.float64([1, 2.1]), {"exact": False, "rtol": 1e-5, "atol": 0},
     "1 of 2 elements outside"),
    (np.float32([np.nan]), np.float64([np.nan]), {"exact": False, "rtol": 0, "atol": 0}, None),
    (np.int32([1, 2]), np.int64([1, 3]), {"exact": True}, "1 of 2 elements differ"),
    (np.zeros((2, 3)), np.zeros((3, 2)), {"exact": True}, "shape (2, 3), expected (3, 2)"),
])
def test_device_check_comparison(actual, expected, spec, verdict):
    """The device check's comparison: the CPU tests' rule (assert_allclose,
    NaNs equal; exact for integers)."""
    got = device_check.compare(actual, expected, spec)
    assert (got is None) if verdict is None else verdict in got


class _FakeDeviceTensor:
    """A stand-in GPU tensor: host memory labelled as CUDA (for the capsule
    plumbing only; nothing reads it)."""

    def __init__(self, array, strides=None):
        self.array = array
        self.__cuda_array_interface__ = {
            "shape": array.shape, "typestr": array.dtype.str, "version": 3,
            "data": (array.ctypes.data, False), "strides": strides}


def test_dlpack_round_trip():
    """A DeviceArray's DLPack capsule read back by dlcrt's own consumer: same
    address, shape and dtype; the array is kept alive until the capsule is
    gone (a consumer that never took it), then released."""
    freed = []
    array = dlpack.DeviceArray(0x1000, (2, 3), "float32", 0, owner=None,
                               to_host=lambda *a: None)
    array._owner = type("Owner", (), {"__del__": lambda self: freed.append(True)})()
    view = dlpack.device_view(array, "x")
    assert (view.pointer, view.shape, view.dtype) == (0x1000, (2, 3), "float32")
    capsule = array.__dlpack__()
    assert dlpack._capsule_is_valid(capsule, b"dltensor")
    managed = dlpack.DLManagedTensor.from_address(
        dlpack._capsule_get_pointer(capsule, b"dltensor"))
    tensor = managed.dl_tensor
    assert (tensor.data, tensor.ndim, tensor.device.device_type) == (0x1000, 2, dlpack.KDL_CUDA)
    assert [tensor.shape[d] for d in range(2)] == [2, 3] and not tensor.strides
    assert (tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes) == (2, 32, 1)
    assert array.__dlpack_device__() == (dlpack.KDL_CUDA, 0)
    del array, view
    gc.collect()
    assert not freed  # the capsule keeps it
    del capsule, managed, tensor
    gc.collect()
    assert freed and not dlpack._live


def test_dlpack_consumer_called_deleter():
    """A consumer that takes the capsule calls its deleter when done: that is
    when the DeviceArray is released."""
    freed = []
    array = dlpack.DeviceArray(0x2000, (4,), "bfloat16", 0, owner=None, to_host=None)
    array._owner = type("Owner", (), {"__del__": lambda self: freed.append(True)})()
    capsule = array.__dlpack__()
    address = dlpack._capsule_get_pointer(capsule, b"dltensor")
    managed = dlpack.DLManagedTensor.from_address(address)
    assert (managed.dl_tensor.dtype.code, managed.dl_tensor.dtype.bits) == (4, 16)
    # What a consumer does: rename the capsule, call the deleter later.
    rename = ctypes.pythonapi.PyCapsule_SetName
    rename.argtypes = [ctypes.py_object, ctypes.c_char_p]
    rename(capsule, b"used_dltensor")
    del capsule, array
    gc.collect()
    assert not freed
    managed.deleter(ctypes.pointer(managed))
    gc.collect()
    assert freed


def test_device_views_refuse_what_they_cannot_pass():
    torch = pytest.importorskip("torch")
    # A CPU tensor's capsule is not GPU memory.
    with pytest.raises(ValueError, match="device type 1, not a CUDA GPU"):
        dlpack.device_view(torch.ones(3), "argument 'x'")
    assert not dlpack.is_device_array(torch.ones(3))
    assert not dlpack.is_device_array(np.ones(3))
    assert dlpack.is_device_array(_FakeDeviceTensor(np.ones(3, np.float32)))
    strided = _FakeDeviceTensor(np.ones((4, 4), np.float32), strides=(4, 32))
    with pytest.raises(ValueError, match="is not C-contiguous; make it contiguous"):
        dlpack.device_view(strided, "argument 'x'")
    with pytest.raises(TypeError, match="typestr '<c8' has no dlc dtype"):
        dlpack.device_view(_FakeDeviceTensor(np.ones(2, np.complex64)), "argument 'x'")
    view = dlpack.device_view(_FakeDeviceTensor(np.ones((2, 5), np.int64)), "x")
    assert (view.shape, view.dtype) == ((2, 5), "int64")

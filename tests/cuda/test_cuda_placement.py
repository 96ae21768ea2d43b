"""fkeras.device("cuda") placement errors and the CudaDevice table (no GPU needed)."""

import subprocess
import sys
import types

import numpy as np
import pytest

import fkeras
from fkeras import _native
from fkeras.backend import cuda as cuda_backend
from fkeras.backend import devices


@pytest.fixture
def fresh_devices(monkeypatch):
    monkeypatch.setattr(devices, "_devices", {})


def _has_gpu():
    return _native._C_cuda is not None and _native._C_cuda.device_count() > 0


@pytest.mark.parametrize("name", ["cuda", "cuda:0", "gpu", "GPU:0"])
def test_built_without_cuda(monkeypatch, fresh_devices, name):
    monkeypatch.setattr(_native, "_C_cuda", None)
    with pytest.raises(RuntimeError, match="fkeras was built without CUDA"):
        with fkeras.device(name):
            pass
    assert "cuda" not in fkeras.backend.available_devices()
    assert cuda_backend.describe_gpus()[0].startswith("gpus: none (fkeras was built without CUDA")


@pytest.mark.parametrize("name", ["cuda", "cuda:0", "gpu"])
def test_no_gpu_names_the_status(fresh_devices, name):
    cuda = _native._C_cuda
    if cuda is None or _has_gpu():
        pytest.skip("needs fkeras._C_cuda built, on a machine without a GPU")
    with pytest.raises(RuntimeError, match="cannot use the cuda device: no CUDA device"):
        fkeras.backend.get_device(name)
    assert cuda.status() in cuda_backend.describe_gpus()[0]


@pytest.mark.parametrize("name", ["cuda:x", "cuda:-1", "cuda:"])
def test_malformed_index(fresh_devices, name):
    with pytest.raises(ValueError, match="Invalid device name"):
        fkeras.backend.get_device(name)


def _fake_cuda(count=1):
    """A stand-in module with two kernels bound (the table logic under test is pure Python)."""
    return types.SimpleNamespace(
        device_count=lambda: count, status=lambda: f"{count} CUDA device(s)",
        gemm=lambda *a: None, adam_update=lambda *a: None, DeviceArray=type("DA", (), {}),
    )


def test_cuda_device_table_holds_only_bound_kernels(monkeypatch, fresh_devices):
    monkeypatch.setattr(_native, "_C_cuda", _fake_cuda())
    dev = fkeras.backend.get_device("gpu")
    assert isinstance(dev, cuda_backend.CudaDevice) and dev.name == "cuda"
    assert set(dev.kernels) == {"gemm", "adam_update"}
    ref = set(fkeras.backend.get_kernels("reference"))
    assert dev.missing_kernel_names == ref - {"gemm", "adam_update"}
    assert dev.dtype == np.float32
    assert "cuda" in fkeras.backend.available_devices()
    with fkeras.device("cuda:0") as d:
        assert d is dev and fkeras.backend.current_device_name() == "cuda"


def test_device_index_beyond_the_count(monkeypatch, fresh_devices):
    monkeypatch.setattr(_native, "_C_cuda", _fake_cuda(count=2))
    with pytest.raises(ValueError, match="has 2 CUDA device"):
        fkeras.backend.get_device("cuda:2")
    with pytest.raises(ValueError, match="device 0 only"):
        fkeras.backend.get_device("cuda:1")


def test_python_m_fkeras_reports_gpus():
    out = subprocess.run([sys.executable, "-m", "fkeras"], capture_output=True, text=True,
                         check=True).stdout
    if _has_gpu():
        assert "gpu 0: " in out and "compute capability" in out
    else:
        assert "gpus: none (" in out

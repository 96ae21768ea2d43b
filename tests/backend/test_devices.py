"""Device tables, build facts and the command-line report (issue 2, items 1-2)."""

import subprocess
import sys

import numpy as np
import pytest

import fkeras
from fkeras import _native
from fkeras.backend import get_device, get_kernels


def test_every_device_exposes_the_same_kernel_names():
    ref = set(get_kernels("reference"))
    assert ref, "the reference table is empty"
    assert set(get_kernels("cpu")) == ref
    cuda = _native._C_cuda
    if cuda is not None and cuda.device_count() > 0:
        # the cuda table holds the families bound so far (tests/cuda/test_kernel_names.py
        # tracks the missing ones)
        cuda_dev = get_device("cuda")
        assert set(get_kernels("cuda")) | cuda_dev.missing_kernel_names == ref


def test_kernel_names_match_the_contract_header():
    """Every function declared in kernels.h is in the tables and nothing else is."""
    import pathlib
    import re

    header = pathlib.Path(__file__).resolve().parents[2] / "cpp/include/fkeras/kernels.h"
    if not header.exists():
        pytest.skip("source tree not available")
    declared = set(re.findall(r"^void (\w+)\(", header.read_text(), flags=re.M))
    assert declared == set(get_kernels("reference"))


def test_reference_is_float64_and_cpu_is_float32():
    assert get_device("reference").dtype == np.float64
    assert get_device("cpu").dtype == np.float32
    with pytest.raises(ValueError, match="Unknown device 'tpu'"):
        get_device("tpu")


def test_device_context_switches_the_current_device():
    assert fkeras.backend.current_device_name() == "cpu"
    with fkeras.device("reference") as dev:
        assert dev.name == "reference"
        assert fkeras.backend.current_device_name() == "reference"
    assert fkeras.backend.current_device_name() == "cpu"


def test_cuda_without_a_gpu_is_a_clear_error():
    cuda = _native._C_cuda
    if cuda is not None and cuda.device_count() > 0:
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match="(built without CUDA|cannot use the cuda device)"):
        get_device("cuda")
    if cuda is not None:
        assert cuda.status().startswith("no CUDA device")
        assert cuda.__version__ == fkeras.__version__
    assert "cuda" not in fkeras.backend.available_devices()


def test_build_facts_and_version():
    info = _native._C.build_info
    assert info["version"] == fkeras.__version__
    assert set(info["isa_kernels"]) == {"avx512", "avx2", "scalar"}
    assert _native._C.cpu_isa() in ("avx512", "avx2", "scalar")


def test_stale_build_is_a_clear_import_error():
    import types

    stale = types.SimpleNamespace(__name__="fkeras._C", __version__="0.0.0-old")
    with pytest.raises(ImportError, match=r"stale build: fkeras._C was built for version 0.0.0-old but the Python package is"):
        _native.check_build(stale)
    _native.check_build(_native._C)  # the real module matches


def test_python_m_fkeras_reports():
    out = subprocess.run([sys.executable, "-m", "fkeras"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    for needle in ("fkeras " + fkeras.__version__, "cpu features:", "cpu kernels in use:",
                   "threads:", "devices:", "cuda:"):
        assert needle in text


def test_set_num_threads_through_config():
    before = fkeras.config.num_threads()
    try:
        fkeras.config.set_num_threads(1)
        assert fkeras.config.num_threads() == 1
    finally:
        fkeras.config.set_num_threads(before)
    with pytest.raises(ValueError):
        fkeras.config.set_num_threads(0)


def test_image_data_format_default_from_keras_json(tmp_path):
    (tmp_path / "keras.json").write_text('{"image_data_format": "channels_first"}')
    code = "import fkeras; print(fkeras.config.image_data_format())"
    import os

    env = {**os.environ, "KERAS_HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.stdout.strip() == "channels_first"
    fkeras.config.set_image_data_format("channels_last")
    with pytest.raises(ValueError, match="data_format"):
        fkeras.config.set_image_data_format("nchw")

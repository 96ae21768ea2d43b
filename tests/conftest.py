"""Suite-wide fixtures: fresh automatic names for every test.

Keras 3 (the parity tests' reference, optional) needs a backend: with KERAS_BACKEND unset, pick
torch when it is installed, before any test module imports keras.
"""

import importlib.util
import os

import pytest

if "KERAS_BACKEND" not in os.environ and importlib.util.find_spec("torch") is not None:
    os.environ["KERAS_BACKEND"] = "torch"

import fkeras


# FKERAS_TEST_DEVICE=emulated-cuda runs the collected tests with the host emulation of the
# cuda device as the default device (tests/cuda/test_suites_on_device.py uses it).
_ON_DEVICE = os.environ.get("FKERAS_TEST_DEVICE") == "emulated-cuda"


@pytest.fixture(autouse=True)
def _fresh_names(request):
    fkeras.utils.clear_session()
    if not _ON_DEVICE:
        yield
        return
    import sys

    cuda_dir = os.path.join(os.path.dirname(__file__), "cuda")
    if cuda_dir not in sys.path:  # once: one entry per test overflowed a child's PYTHONPATH
        sys.path.insert(0, cuda_dir)
    import emulated_cuda

    mp = pytest.MonkeyPatch()
    emulated_cuda.install(mp)
    fkeras.config.set_device("cuda")
    try:
        yield
    finally:
        fkeras.config.set_device("cpu")
        mp.undo()


# ---- CUDA: `@pytest.mark.cuda` tests and the `gpu` fixture skip cleanly without a GPU ----
def _cuda_skip_reason():
    """None when fkeras._C_cuda is built and sees a GPU, else why the cuda tests skip."""
    from fkeras import _native

    cuda = _native._C_cuda
    if cuda is None:
        return "fkeras._C_cuda is not built (no nvcc at build time)"
    if cuda.device_count() == 0:
        return f"no GPU: {cuda.status()}"
    return None


def pytest_configure(config):
    config.addinivalue_line("markers", "cuda: needs a CUDA device (skipped without one)")


def pytest_collection_modifyitems(config, items):
    reason = None
    for item in items:
        if item.get_closest_marker("cuda") is not None:
            reason = reason or _cuda_skip_reason()
            if reason is None:
                return
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture
def gpu():
    """The `fkeras._C_cuda` module with a usable GPU; skips the test otherwise."""
    reason = _cuda_skip_reason()
    if reason is not None:
        pytest.skip(reason)
    from fkeras import _native

    return _native._C_cuda

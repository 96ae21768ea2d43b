"""fkeras._C_cuda on a machine without a GPU: it imports and says so, every entry point that
needs a device raises RuntimeError naming the reason (never a crash)."""

import numpy as np
import pytest

import fkeras
from fkeras import _native

cuda = _native._C_cuda
pytestmark = [
    pytest.mark.skipif(cuda is None, reason="fkeras._C_cuda is not built"),
    pytest.mark.skipif(cuda is not None and cuda.device_count() > 0, reason="a GPU is present"),
]


def test_module_reports_no_device():
    assert cuda.device_count() == 0
    assert cuda.status().startswith("no CUDA device")
    assert cuda.__version__ == fkeras.__version__
    info = cuda.build_info
    assert info["cudart"] == "static" and info["cuda_archs"] and info["nvcc"]


@pytest.mark.parametrize(
    "call",
    [
        lambda: cuda.DeviceArray((2, 3)),
        lambda: cuda.DeviceArray.zeros((2,), "int32"),
        lambda: cuda.DeviceArray.from_host(np.ones(3, np.float32)),
        lambda: cuda.upload_pinned([np.ones(3, np.float32)]),
        lambda: cuda.memory_stats(),
        lambda: cuda.empty_cache(),
        lambda: cuda.synchronize(),
        lambda: cuda.stream_handle(),
        lambda: cuda.copy_bandwidth_gbs(),
    ],
    ids=["DeviceArray", "zeros", "from_host", "upload_pinned", "memory_stats", "empty_cache",
         "synchronize", "stream_handle", "copy_bandwidth_gbs"],
)
def test_device_entry_points_raise_no_device(call):
    with pytest.raises(RuntimeError, match="no CUDA device"):
        call()


def test_failed_cuda_call_names_the_call_and_cuda_error():
    # FK_CUDA_CHECK: the message names the call, the source line and CUDA's error string.
    with pytest.raises(RuntimeError, match=r"cudaGetDeviceProperties\(.*\) failed at .*: .+\("):
        cuda.device_info(0)

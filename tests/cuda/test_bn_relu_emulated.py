"""BatchNormalization + ReLU fusion on a non-host device (the host emulation of `_C_cuda`):
the fused ops run on the device's buffers, with the fused kernels or, where the device does
not bind them (the real `_C_cuda` today), with the unfused pair's kernels; either way no op
runs on the host and the results equal the cpu run."""

import numpy as np
import pytest

import emulated_cuda
import placement_models as pm
from fkeras.backend import devices
from fkeras.ops import device_dispatch

FUSED = ("batchnorm_relu_forward_train", "batchnorm_relu_forward_infer",
         "batchnorm_relu_backward")


@pytest.mark.parametrize("bound", [True, False], ids=["fused_kernels", "pair_kernels"])
def test_cnn_bn_fit_on_the_device_equals_the_cpu(monkeypatch, bound):
    mod = emulated_cuda.install(monkeypatch)
    if not bound:
        for name in FUSED:
            delattr(mod, name)
    device_dispatch.reset_host_op_calls()
    ref = pm.fit_on("cpu", "cnn_bn")
    got = pm.fit_on("cuda", "cnn_bn")
    assert device_dispatch.host_op_calls() == {}
    dev = devices.get_device("cuda")
    assert (set(FUSED) & dev.missing_kernel_names) == (set() if bound else set(FUSED))
    assert got[0].__dict__["_fk_step_state"]._train_plan.fused_bn_relu == 2
    for a, b in zip(ref[0].get_weights(), got[0].get_weights()):
        np.testing.assert_array_equal(a, b)
    pm.assert_same_predictions(ref[0], ref[3], got[3])

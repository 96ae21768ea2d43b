"""fkeras._C_cuda binds every kernel of the CPU table under the same name.

The families land one by one: each family's check is a strict xfail until its kernels are
bound, so the mark must be removed (the test flips to a failure) the day they land.
"""

import pytest

from fkeras import _native
from fkeras.backend import reference

FAMILIES = {
    "gemm_conv_pool": [
        "gemm", "dense_forward", "dense_backward", "bias_add_forward", "bias_add_backward",
        "conv2d_forward", "conv2d_backward_input", "conv2d_backward_weight",
        "maxpool2d_forward", "maxpool2d_backward", "avgpool2d_forward", "avgpool2d_backward",
    ],
    "pointwise": ["activation_forward", "activation_backward"],
    "softmax": ["softmax_forward", "softmax_backward", "log_softmax_forward",
                "log_softmax_backward"],
    "losses": [
        "softmax_crossentropy_forward", "softmax_crossentropy_backward",
        "sparse_softmax_crossentropy_forward", "sparse_softmax_crossentropy_backward",
        "sigmoid_crossentropy_forward", "sigmoid_crossentropy_backward",
    ],
    "dropout": ["dropout_forward", "dropout_backward"],
    "embedding": ["embedding_forward", "embedding_backward"],
    "optimizers": [
        "sgd_update", "adam_update", "adamax_update", "nadam_update", "adagrad_update",
        "adadelta_update", "rmsprop_update",
    ],
    "batchnorm": ["batchnorm_forward_train", "batchnorm_forward_infer", "batchnorm_backward"],
    # session 7: BN + ReLU fused (ops fall back to the unfused pair where it is not bound)
    "batchnorm_relu": ["batchnorm_relu_forward_train", "batchnorm_relu_forward_infer",
                       "batchnorm_relu_backward"],
    "rnn": [
        f"{cell}_{kind}_{d}" for cell in ("simple_rnn", "lstm", "gru")
        for kind in ("cell", "sequence") for d in ("forward", "backward")
    ],
    # CPU kernels added after the CUDA families were written (session 4): no mirror yet
    "attention": ["attention_forward", "attention_backward"],
    "layer_norm": ["layer_norm_forward", "layer_norm_backward"],
    "optimizers_more": [
        "lion_update", "ftrl_update", "lamb_update", "adafactor_update",
        "muon_momentum_update", "muon_update", "schedule_free_adamw_update",
    ],
    # Inference fusions of the CPU table (session 7): no CUDA mirror yet
    "conv_pool_fused": ["conv2d_forward_maxpool2d"],
    # session 8: its training backward (ops/conv_pool.py runs the unfused pair without both)
    "conv_pool_train": ["conv2d_maxpool2d_backward"],
    # session 9: BN + ReLU + max pool fused (ops/bn_relu_pool.py runs the pair's ops without it)
    "batchnorm_relu_maxpool": ["batchnorm_relu_maxpool_forward_train",
                               "batchnorm_relu_maxpool_backward"],
    # the dy pass of a fused backward (session 7; the conv2d op falls back to
    # activation_backward + bias_add_backward on a device without it)
    "fused_backward": ["bias_activation_backward"],
    # int8 quantization (h/int8): host-only ops (ops/quantized.py), no CUDA mirror yet
    "quantize_int8": ["quantize_int8_rows", "matmul_int8", "dense_int8_forward"],
}

# Families not bound in _C_cuda yet (remove a name when its helper's branch lands).
MISSING: set[str] = {"batchnorm_relu", "batchnorm_relu_maxpool", "conv_pool_fused",
                      "conv_pool_train", "fused_backward", "quantize_int8"}

# Functions of fkeras._C that are its runtime, not kernels.
CPU_RUNTIME = {"KernelError", "build_info", "cpu_features", "cpu_isa", "isa_supported",
               "num_threads", "set_cpu_isa", "set_num_threads",
               "set_gemm_bf16", "gemm_bf16", "gemm_bf16_native",
               "InferencePlan"}  # the compiled inference plan's runner (models/compiled_plan.py)


def test_families_cover_exactly_the_cpu_kernel_table():
    cpu = {n for n in dir(_native._C) if not n.startswith("_")} - CPU_RUNTIME
    listed = [n for names in FAMILIES.values() for n in names]
    assert len(listed) == len(set(listed))
    assert set(listed) == cpu == set(reference.KERNELS)


@pytest.mark.parametrize(
    "family",
    [pytest.param(f, marks=pytest.mark.xfail(f in MISSING, strict=True,
                                             reason=f"CUDA family '{f}' not bound yet"))
     for f in FAMILIES],
)
def test_family_is_bound_in_C_cuda(family):
    cuda = _native._C_cuda
    if cuda is None:
        pytest.skip("fkeras._C_cuda is not built")
    missing = [n for n in FAMILIES[family] if not callable(getattr(cuda, n, None))]
    assert not missing, f"not bound in fkeras._C_cuda: {missing}"

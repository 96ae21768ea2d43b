"""The CUDA batch-norm and recurrent kernels are called exactly like the CPU ones.

Needs only a built fkeras._C_cuda (no GPU): the bound names and their argument names, in
order, equal fkeras._C's, so the device table can call either with the same arguments.
"""

import re

import pytest

NAMES = [
    "batchnorm_forward_train", "batchnorm_forward_infer", "batchnorm_backward",
    "lstm_sequence_forward", "lstm_sequence_backward", "lstm_cell_forward", "lstm_cell_backward",
    "gru_sequence_forward", "gru_sequence_backward", "gru_cell_forward", "gru_cell_backward",
    "simple_rnn_sequence_forward", "simple_rnn_sequence_backward", "simple_rnn_cell_forward",
    "simple_rnn_cell_backward",
]


def _arg_names(fn):
    signature = fn.__doc__.split("\n", 1)[0]
    return re.findall(r"(\w+):", signature.split("(", 1)[1])


@pytest.mark.parametrize("name", NAMES)
def test_cuda_kernel_signature_equals_cpu(name):
    from fkeras import _native

    cuda = _native._C_cuda
    if cuda is None:
        pytest.skip("fkeras._C_cuda is not built")
    from fkeras import _C

    assert hasattr(cuda, name), f"_C_cuda lacks {name}"
    assert _arg_names(getattr(cuda, name)) == _arg_names(getattr(_C, name))

"""The `reference` device: a NumPy float64 spec of every kernel in cpp/include/fkeras/kernels.h.

Each family module exports `KERNELS`, a dict from kernel name to a function with exactly the
C++ signature (outputs, saved state, inputs, sizes, attributes), writing its outputs in place.
The functions compute in float64 whatever the buffers' dtype, so they also serve as the cpu
device's fallback for a kernel not (yet) compiled.
"""

from fkeras.backend.reference import (
    attention,
    batchnorm,
    conv,
    elementwise,
    gemm,
    layernorm,
    optimizers,
    optimizers_more,
    quantize,
    rnn,
)

KERNELS = {}
for _family in (gemm, elementwise, conv, batchnorm, rnn, optimizers, optimizers_more,
                attention, layernorm, quantize):
    _clash = KERNELS.keys() & _family.KERNELS.keys()
    assert not _clash, f"kernel names defined twice: {sorted(_clash)}"
    KERNELS.update(_family.KERNELS)

__all__ = ["KERNELS"]

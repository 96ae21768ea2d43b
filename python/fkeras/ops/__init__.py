"""fkeras.ops: differentiable operations with keras.ops names and signatures.

Every op works eagerly on arrays (NumPy on the cpu device) and symbolically on KerasTensors
(shape inference; inside a functional graph a raw op call becomes a node).
"""

from fkeras.ops.comparison import (  # noqa: F401
    bitwise_and,
    bitwise_invert,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    equal,
    floor_divide,
    greater,
    greater_equal,
    isfinite,
    isinf,
    isnan,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    mod,
    not_equal,
)
from fkeras.ops.conv import conv, conv2d  # noqa: F401
from fkeras.ops.core import (  # noqa: F401
    convert_to_numpy,
    convert_to_tensor,
    dtype,
    is_tensor,
    ndim,
    shape,
    size,
)
from fkeras.ops.dtypes import cast, result_type  # noqa: F401
from fkeras.ops.conv_nd import conv3d, conv_transpose  # noqa: F401
from fkeras.ops.depthwise import depthwise_conv, separable_conv  # noqa: F401
from fkeras.ops.padding import pad  # noqa: F401
from fkeras.ops.pooling_nd import average_pool3d, max_pool3d  # noqa: F401
from fkeras.ops.lookup import embedding  # noqa: F401
from fkeras.ops.math import (  # noqa: F401
    abs,
    absolute,
    add,
    clip,
    divide,
    exp,
    log,
    matmul,
    max,
    maximum,
    mean,
    min,
    minimum,
    multiply,
    negative,
    power,
    sqrt,
    square,
    subtract,
    sum,
    true_divide,
    where,
)
from fkeras.ops.nn import (  # noqa: F401
    dense,
    elu,
    exponential,
    gelu,
    hard_sigmoid,
    leaky_relu,
    linear,
    log_softmax,
    relu,
    selu,
    sigmoid,
    silu,
    softmax,
    softplus,
    softsign,
    swish,
    tanh,
)
from fkeras.ops.normalization import (  # noqa: F401
    batch_norm_train,
    batch_normalization,
    layer_normalization,
    moments,
    normalize,
    stop_gradient,
)
from fkeras.ops.pooling import average_pool, max_pool  # noqa: F401
from fkeras.ops.registry import REGISTRY, Op, apply  # noqa: F401
from fkeras.ops.rnn import gru, lstm, simple_rnn  # noqa: F401
from fkeras.ops.reshape_ops import (  # noqa: F401
    concatenate,
    expand_dims,
    getitem,
    repeat,
    reshape,
    squeeze,
    transpose,
)

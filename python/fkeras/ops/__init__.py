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
from fkeras.ops.ctc import ctc_decode, ctc_loss  # noqa: F401
from fkeras.ops.forward_mode import jvp  # noqa: F401
from fkeras.ops.rearrange import rearrange  # noqa: F401
from fkeras.ops.views import polar, view, view_as_complex, view_as_real  # noqa: F401
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
from fkeras.ops.activation_ops import (  # noqa: F401
    celu,
    glu,
    hard_shrink,
    hard_silu,
    hard_swish,
    hard_tanh,
    log_sigmoid,
    relu6,
    soft_shrink,
    sparse_plus,
    sparse_sigmoid,
    sparsemax,
    squareplus,
    tanh_shrink,
    threshold,
)
from fkeras.ops.arrangement import (  # noqa: F401
    array_split,
    broadcast_to,
    diagonal,
    flip,
    hstack,
    moveaxis,
    ravel,
    roll,
    split,
    stack,
    swapaxes,
    take,
    take_along_axis,
    tile,
    tril,
    triu,
    unstack,
    vstack,
)
from fkeras.ops.contraction import (  # noqa: F401
    dot,
    einsum,
    inner,
    norm,
    outer,
    tensordot,
    trace,
    vdot,
)
from fkeras.ops.control_flow import (  # noqa: F401
    associative_scan,
    cond,
    custom_gradient,
    fori_loop,
    map,
    scan,
    switch,
    vectorized_map,
    while_loop,
)
from fkeras.ops.creation import (  # noqa: F401
    arange,
    empty,
    empty_like,
    eye,
    full,
    full_like,
    identity,
    linspace,
    logspace,
    ones,
    ones_like,
    tri,
    zeros,
    zeros_like,
)
from fkeras.ops.crossentropy import (  # noqa: F401
    binary_crossentropy,
    categorical_crossentropy,
    sparse_categorical_crossentropy,
)
from fkeras.ops.elementwise import (  # noqa: F401
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    cbrt,
    ceil,
    cos,
    cosh,
    deg2rad,
    divide_no_nan,
    exp2,
    expm1,
    floor,
    fmod,
    hypot,
    log1p,
    log2,
    log10,
    logaddexp,
    rad2deg,
    reciprocal,
    round,
    rsqrt,
    sign,
    sin,
    sinh,
    tan,
    trunc,
)
from fkeras.ops.indexing import (  # noqa: F401
    argsort,
    in_top_k,
    multi_hot,
    nonzero,
    one_hot,
    scatter,
    scatter_update,
    segment_max,
    segment_sum,
    slice,
    slice_update,
    sort,
    top_k,
    unique,
)
from fkeras.ops.reductions import (  # noqa: F401
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    count_nonzero,
    cumprod,
    cumsum,
    logsumexp,
    prod,
    std,
    var,
)
from fkeras.ops import linalg  # noqa: F401,E402  (keras.ops.linalg)
from fkeras.ops.arrangement import (  # noqa: F401,E402
    append,
    copy,
    dsplit,
    dstack,
    diag,
    diagflat,
    fliplr,
    flipud,
    get_item,
    hsplit,
    rot90,
    vsplit,
)
from fkeras.ops.contraction import cross, kron, trapezoid  # noqa: F401,E402
from fkeras.ops.creation import array, geomspace, meshgrid  # noqa: F401,E402
from fkeras.ops.elementwise import (  # noqa: F401,E402
    erf,
    erfc,
    fabs,
    fmax,
    fmin,
    heaviside,
    logaddexp2,
    nan_to_num,
    sinc,
)
from fkeras.ops.indexing import (  # noqa: F401,E402
    digitize,
    searchsorted,
    segment_min,
    select,
    unravel_index,
)
from fkeras.ops.linalg import (  # noqa: F401,E402
    cholesky,
    cholesky_inverse,
    det,
    eig,
    eigh,
    inv,
    logdet,
    lstsq,
    lu_factor,
    matrix_rank,
    pinv,
    qr,
    slogdet,
    solve,
    solve_triangular,
    svd,
)
from fkeras.ops.predicates import (  # noqa: F401,E402
    allclose,
    conj,
    conjugate,
    imag,
    isclose,
    isin,
    isneginf,
    isposinf,
    isreal,
    real,
    signbit,
)
from fkeras.ops.statistics import (  # noqa: F401,E402
    average,
    bincount,
    corrcoef,
    histogram,
    median,
    nanargmax,
    nanargmin,
    nanmax,
    nanmean,
    nanmin,
    nanprod,
    nanstd,
    nansum,
    nanvar,
    percentile,
    ptp,
    quantile,
)
from fkeras.ops.composed_nn import (  # noqa: F401,E402
    adaptive_average_pool,
    adaptive_max_pool,
    cdist,
    depth_to_space,
    dot_product_attention,
    psnr,
    rms_normalization,
    space_to_depth,
)
from fkeras.ops.creation import (  # noqa: F401,E402
    bartlett,
    blackman,
    hamming,
    hanning,
    kaiser,
    vander,
)
from fkeras.ops.integer_ops import (  # noqa: F401,E402
    bitwise_left_shift,
    bitwise_right_shift,
    gcd,
    lcm,
    ldexp,
    left_shift,
    nextafter,
    right_shift,
    saturate_cast,
)
from fkeras.ops.reductions import diff, nancumprod, nancumsum  # noqa: F401,E402
from fkeras.ops.arrangement import extract_sequences  # noqa: F401,E402
from fkeras.ops.control_flow import vectorize  # noqa: F401,E402
from fkeras.ops.elementwise import angle, erfinv, i0  # noqa: F401,E402
from fkeras.ops.indexing import argpartition, segment_prod  # noqa: F401,E402
from fkeras.ops.statistics import nanmedian, nanpercentile, nanquantile  # noqa: F401,E402
from fkeras.ops.patches import correlate, fold, unfold  # noqa: F401,E402
from fkeras.ops.fft import fft, fft2, ifft2, irfft, istft, rfft, stft  # noqa: F401,E402

from fkeras.ops import linalg, nn, numpy  # noqa: E402,F401  (keras.ops groupings)


def __getattr__(name):
    # keras.ops.image loads on first use (~15 ms of modules `import fkeras` does not need).
    if name == "image":
        import importlib

        return importlib.import_module("fkeras.ops.image")
    raise AttributeError(f"module 'fkeras.ops' has no attribute '{name}'")

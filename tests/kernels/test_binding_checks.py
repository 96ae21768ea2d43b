"""The bindings' guards (cpp/bindings/check.h) that no single kernel family owns: sizes and
window geometry that would overflow int64, outputs overlapping inputs or each other, and huge
sizes whose buffers are all empty (nothing to write, so the kernel must return at once)."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from fkeras import _C
from fkeras.backend.reference import KERNELS as REF


def z(*shape, dtype=np.float32):
    return np.zeros(shape, dtype)


def conv_args(**over):
    """conv2d_forward arguments for a 1x5x5x2 input, 3x3 filters, 'valid', then `over`."""
    a = dict(y=z(1, 3, 3, 4), x=z(1, 5, 5, 2), w=z(3, 3, 2, 4), bias=None, N=1, H=5, W=5, C=2,
             K=4, R=3, S=3, P=3, Q=3, stride_h=1, stride_w=1, dil_h=1, dil_w=1, pad_top=0,
             pad_left=0, groups=1, activation=0, alpha=0.0)
    a.update(over)
    return a


def pool_args(**over):
    a = dict(y=z(1, 2, 2, 3), x=z(1, 4, 4, 3), N=1, H=4, W=4, C=3, P=2, Q=2, R=2, S=2,
             stride_h=2, stride_w=2, pad_top=0, pad_left=0)
    a.update(over)
    return a


# --- geometry that overflows int64 ---------------------------------------------------------

NEAR = 2**62 - 1


@pytest.mark.parametrize("over,arg", [
    (dict(dil_h=NEAR), "dil_h"),
    (dict(dil_w=2**61), "dil_w"),
    (dict(stride_h=NEAR), "stride_h"),
    (dict(stride_w=2**62), "stride_w"),
    (dict(dil_h=2**59, R=9, w=z(9, 3, 2, 4)), "dil_h"),        # (R - 1) * dil_h = 2**62
    (dict(stride_w=2**58, Q=17, y=z(1, 3, 17, 4)), "stride_w"),  # (Q - 1) * stride_w = 2**62
    (dict(pad_top=2**60 - 1, dil_h=2**60 - 1, R=4, w=z(4, 3, 2, 4)), "dil_h"),  # the sum
    (dict(pad_left=2**60), "pad_left"),
    (dict(H=2**60, N=0, x=z(0, 5, 5, 2), y=z(0, 3, 3, 4)), "H"),
])
@pytest.mark.parametrize("kernel", ["conv2d_forward", "conv2d_backward_input",
                                    "conv2d_backward_weight"])
def test_conv_geometry_overflow_is_refused(kernel, over, arg):
    a = conv_args(**over)
    if kernel == "conv2d_forward":
        args = a
    else:
        dy = np.zeros((a["N"], a["P"], a["Q"], a["K"]), np.float32)
        first = {"conv2d_backward_input": dict(dx=a["x"], dy=dy, w=a["w"]),
                 "conv2d_backward_weight": dict(dw=a["w"], dy=dy, x=a["x"])}[kernel]
        sizes = {k: a[k] for k in ("N H W C K R S P Q stride_h stride_w dil_h dil_w pad_top "
                                   "pad_left groups").split()}
        args = {**first, **sizes}
    with pytest.raises(ValueError, match=rf"^{kernel}: .*'{arg}'.*too large"):
        getattr(_C, kernel)(**args)


@pytest.mark.parametrize("kernel", ["maxpool2d_forward", "avgpool2d_forward",
                                    "avgpool2d_backward"])
@pytest.mark.parametrize("over,arg", [(dict(stride_h=NEAR), "stride_h"),
                                      (dict(stride_w=2**59, Q=9, y=z(1, 2, 9, 3)), "stride_w"),
                                      (dict(R=2**61, pad_top=1), "R")])
def test_pool_geometry_overflow_is_refused(kernel, over, arg):
    a = pool_args(**over)
    if kernel == "maxpool2d_forward":
        a["indices"] = np.zeros(a["y"].shape, np.int64)
    if kernel == "avgpool2d_backward":
        a["dx"], a["dy"] = a.pop("x"), a.pop("y")
    with pytest.raises(ValueError, match=rf"^{kernel}: .*'{arg}'.*too large"):
        getattr(_C, kernel)(**a)


@pytest.mark.parametrize("call,arg", [
    (lambda: _C.gemm(z(0, 0), z(0, 0), z(0, 0), 2**62, 0, 0, False, False, 1.0, 0.0), "M"),
    (lambda: _C.activation_forward(z(0), z(0), -(2**63), 0, 0.0), "n"),
    # gates (N, 4U) with N = 0: rows of 4U = 2**61 elements are too large (the sizes are
    # checked before the array itself, which NumPy could not even create)
    (lambda: _C.lstm_cell_forward(z(0, 2**59), z(0, 2**59), 0, z(0, 0), z(0, 2**59),
                                  z(0, 2**59), z(0, 0), z(0, 0), None, 0, 0, 2**59, 3, 2),
     "gates"),
])
def test_huge_sizes_are_refused(call, arg):
    # An empty buffer cannot hide sizes whose product the kernels would form.
    with pytest.raises(ValueError, match=rf"'{arg}'"):
        call()


def test_large_but_valid_geometry_still_computes():
    # A huge stride with a single output position is legal and only reads the first window.
    rng = np.random.default_rng(0)
    a = conv_args(x=rng.standard_normal((1, 5, 5, 2)).astype(np.float32),
                  w=rng.standard_normal((3, 3, 2, 4)).astype(np.float32),
                  stride_h=2**50, P=1, y=np.full((1, 1, 3, 4), np.nan, np.float32))
    _C.conv2d_forward(**a)
    ref = {k: (v.astype(np.float64) if isinstance(v, np.ndarray) else v) for k, v in a.items()}
    ref["y"] = np.zeros((1, 1, 3, 4))
    REF["conv2d_forward"](**ref)
    np.testing.assert_allclose(a["y"], ref["y"], rtol=1e-5, atol=1e-5)


# --- outputs overlapping inputs ------------------------------------------------------------


def test_gemm_output_overlapping_an_input_is_refused():
    buf = np.ones(64, np.float32)
    A = buf[:16].reshape(4, 4)
    C = buf[8:24].reshape(4, 4)  # partly A's memory, not the same object
    with pytest.raises(ValueError, match=r"^gemm: output 'C' overlaps input 'A'"):
        _C.gemm(C, A, np.ones((4, 4), np.float32), 4, 4, 4, False, False, 1.0, 0.0)
    with pytest.raises(ValueError, match=r"output 'C' overlaps input 'B'"):
        B = np.ones((4, 4), np.float32)
        _C.gemm(B, np.ones((4, 4), np.float32), B, 4, 4, 4, False, False, 1.0, 1.0)
    assert (buf == 1).all()  # refused before anything was written


@pytest.mark.parametrize("kernel,args", [
    ("conv2d_forward", lambda x: conv_args(x=x[:50].reshape(1, 5, 5, 2),
                                           y=x[40:76].reshape(1, 3, 3, 4))),
    ("maxpool2d_forward", lambda x: dict(pool_args(x=x[:48].reshape(1, 4, 4, 3),
                                                   y=x[:12].reshape(1, 2, 2, 3)),
                                         indices=np.zeros((1, 2, 2, 3), np.int64))),
    ("dense_forward", lambda x: dict(y=x[:12].reshape(3, 4), x=x[:6].reshape(3, 2),
                                     kernel=z(2, 4), bias=None, M=3, N=4, K=2, activation=0,
                                     alpha=0.0)),
    ("bias_add_forward", lambda x: dict(y=x[:12].reshape(3, 4), x=x[:12].reshape(3, 4),
                                        b=z(4), rows=3, cols=4)),
    ("sgd_update", lambda x: dict(param=x[:10], velocity=None, grad=x[5:15], n=10, lr=0.1,
                                  momentum=0.0, nesterov=False, weight_decay=0.0)),
    ("adam_update", lambda x: dict(param=x[:10], m=x[10:20], v=x[15:25], vhat=None,
                                   grad=z(10), n=10, lr=0.1, beta1=0.9, beta2=0.99,
                                   epsilon=1e-7, step=1, weight_decay=0.0)),
    ("softmax_forward", lambda x: dict(y=x[1:13].reshape(3, 4), x=x[:12].reshape(3, 4), rows=3,
                                       cols=4)),
])
def test_overlapping_outputs_are_refused(kernel, args):
    buf = np.zeros(128, np.float32)
    with pytest.raises(ValueError, match=rf"^{kernel}: output '\w+' overlaps"):
        getattr(_C, kernel)(**args(buf))


@pytest.mark.parametrize("kernel,make", [
    ("activation_forward", lambda x: dict(y=x, x=x, n=x.size, activation=3, alpha=0.0)),
    ("activation_backward", lambda x: dict(dx=x, dy=x, x=x.copy(), y=x.copy(), n=x.size,
                                           activation=1, alpha=0.0)),
    ("softmax_forward", lambda x: dict(y=x, x=x, rows=4, cols=x.size // 4)),
    ("log_softmax_forward", lambda x: dict(y=x, x=x, rows=4, cols=x.size // 4)),
])
def test_documented_in_place_kernels_match_out_of_place(kernel, make):
    rng = np.random.default_rng(1)
    data = rng.standard_normal(40).astype(np.float32)
    inplace = make(data.copy())
    getattr(_C, kernel)(**inplace)
    separate = make(data.copy())
    out_name = next(iter(separate))
    separate[out_name] = np.full_like(data, np.nan)
    getattr(_C, kernel)(**separate)
    np.testing.assert_array_equal(inplace[out_name], separate[out_name])


def test_in_place_must_be_exact():
    buf = np.zeros(41, np.float32)
    with pytest.raises(ValueError, match="only exactly in place"):
        _C.activation_forward(buf[1:], buf[:40], 40, 1, 0.0)


# --- huge sizes whose buffers are all empty ------------------------------------------------

HUGE_EMPTY = textwrap.dedent(
    """
    import numpy as np
    from fkeras import _C
    e = lambda *s: np.empty(s, np.float32)
    z = lambda *s: np.zeros(s, np.float32)
    B = 2**50
    _C.gemm(e(0, 0), e(0, 0), e(0, 0), 0, 0, 0, False, False, 1.0, 0.0)
    _C.softmax_forward(e(2**40, 0), e(2**40, 0), 2**40, 0)
    _C.bias_add_backward(e(0), e(2**40, 0), 2**40, 0)
    _C.lstm_sequence_forward(e(0, B, 3), e(0, 3), e(0, 3), e(0, B, 12), e(0, B, 3), e(0, B, 2),
                             z(0, 3), z(0, 3), z(2, 12), z(3, 12), None, 0, B, 2, 3, False, 3, 2)
    dk = np.full((2, 12), np.nan, np.float32)
    _C.lstm_sequence_backward(None, None, None, dk, e(3, 12), None, None, None, None,
                              e(0, B, 12), e(0, B, 3), e(0, B, 3), e(0, B, 2), z(0, 3), z(0, 3),
                              z(2, 12), z(3, 12), 0, B, 2, 3, False, 3, 2)
    assert (dk == 0).all()
    _C.gru_sequence_forward(e(1, B, 0), e(1, 0), e(1, B, 0), e(1, B, 0), e(1, B, 0), z(1, 0),
                            z(0, 0), z(0, 0), None, 1, B, 0, 0, False, True, 3, 2)
    mean = np.full(2, np.nan, np.float32)
    _C.batchnorm_forward_train(e(2**40, 2, 0), z(2), mean, z(2), e(2**40, 2, 0), None, None,
                               2**40, 2, 0, 1e-3)
    assert (mean == 0).all()
    _C.maxpool2d_forward(e(B, 1, 1, 0), np.empty((B, 1, 1, 0), np.int64), e(B, 1, 1, 0), B, 1,
                         1, 0, 1, 1, 1, 1, 1, 1, 0, 0)
    _C.avgpool2d_backward(e(B, 1, 1, 0), e(B, 1, 1, 0), B, 1, 1, 0, 1, 1, 1, 1, 1, 1, 0, 0)
    dx = np.full((1, 1, 1, 1), np.nan, np.float32)  # K = 0 and a filter 2**40 rows tall
    _C.conv2d_backward_input(dx, e(1, 1, 1, 0), e(2**40, 1, 1, 0), 1, 1, 1, 1, 0, 2**40, 1, 1,
                             1, 1, 1, 1, 1, 2**40 - 1, 0, 1)
    assert (dx == 0).all()
    _C.embedding_backward(e(B, 0), e(0, 0), np.empty(0, np.int64), 0, B, 0)
    print("DONE")
    """
)


def test_huge_sizes_with_empty_buffers_return_at_once():
    try:
        proc = subprocess.run([sys.executable, "-c", HUGE_EMPTY], capture_output=True, text=True,
                              timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("a kernel looped over a huge size whose buffers are all empty")
    assert proc.returncode == 0 and "DONE" in proc.stdout, proc.stderr[-2000:]

"""Random argument sets for every compiled kernel, for the fuzzer (tests/fuzz/harness.py).

Each generator takes a NumPy Generator and returns a `Case`: the kernel name, its keyword
arguments (float32/int64 arrays for buffers, Python scalars for the rest) and which buffers
it writes. Sizes come from `dim`: 0, 1, odd sizes and the SIMD/tile edges (7-9, 15-17, 31-33,
47-49, 63-65) are drawn often. Saved state a backward reads (softmax outputs, pooling indices,
batch-norm statistics, recurrent gates) is made by the float64 reference forward, so both
devices get the same, consistent inputs.
"""

import dataclasses

import numpy as np

from fkeras.backend.reference import KERNELS as REF

EDGES = (1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48, 49, 63, 64, 65)
ALL_CODES = tuple(range(14))
FUSED_CODES = (0, 1, 2, 3, 4, 5, 8, 9, 11, 12, 13)  # all but gelu, gelu_tanh, swish
RECURRENT_CODES = (0, 1, 2, 3, 11)


@dataclasses.dataclass
class Case:
    kernel: str
    args: dict
    outputs: tuple       # buffers the kernel writes (NaN-filled unless also in `inout`)
    inout: tuple = ()    # outputs whose initial contents the kernel reads
    tol: float = 1e-4    # relative to the output's largest magnitude
    infinite_ok: tuple = ()  # outputs where -inf/+inf are legitimate values, not an overflow
    unchecked: tuple = ()  # buffers the kernel writes (canary-guarded) but not compared


def dim(rng, hi, zero=0.1):
    """A size in [0, hi]: 0 with probability `zero`, else mostly 1, odd sizes and tile edges."""
    if rng.random() < zero:
        return 0
    if rng.random() < 0.7:
        edges = [d for d in EDGES if d <= hi]
        return int(rng.choice(edges))
    return int(rng.integers(1, hi + 1))


def rand(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def nans(*shape):
    return np.full(shape, np.nan, np.float32)


def ref_outputs(kernel, args, names):
    """Runs the float64 reference on `args` and returns the named outputs as float32."""
    a = {k: (np.array(v, np.float64) if isinstance(v, np.ndarray) and v.dtype == np.float32
             else v) for k, v in args.items()}
    REF[kernel](**a)
    return {k: a[k].astype(np.float32) for k in names}


def maybe(rng, value, p=0.25):
    """None with probability p (an optional argument left out)."""
    return None if rng.random() < p else value


def alpha_for(rng, code):
    return float(rng.choice([0.0, 0.1, 0.3, 1.0])) if code in (4, 13) else 0.0


# --- GEMM and Dense ------------------------------------------------------------------------


def gemm(rng):
    big = rng.random() < 0.2
    M, N, K = (dim(rng, 150 if big else 65) for _ in range(3))
    ta, tb = bool(rng.integers(2)), bool(rng.integers(2))
    alpha = float(rng.choice([1.0, -0.5, 2.0, 0.0]))
    beta = float(rng.choice([0.0, 1.0, 0.5]))
    C = rand(rng, M, N) if beta != 0.0 else nans(M, N)
    args = dict(C=C, A=rand(rng, *((K, M) if ta else (M, K))),
                B=rand(rng, *((N, K) if tb else (K, N))), M=M, N=N, K=K, trans_a=ta,
                trans_b=tb, alpha=alpha, beta=beta)
    return Case("gemm", args, ("C",), ("C",) if beta != 0.0 else ())


def _dense_sizes(rng):
    return dim(rng, 65), dim(rng, 65), dim(rng, 65)


def dense_forward(rng):
    M, N, K = _dense_sizes(rng)
    code = int(rng.choice(FUSED_CODES))
    args = dict(y=nans(M, N), x=rand(rng, M, K), kernel=rand(rng, K, N, scale=0.3),
                bias=maybe(rng, rand(rng, N)), M=M, N=N, K=K, activation=code,
                alpha=alpha_for(rng, code))
    return Case("dense_forward", args, ("y",), tol=3e-4)


def dense_backward(rng):
    M, N, K = _dense_sizes(rng)
    code = int(rng.choice(FUSED_CODES))
    alpha = alpha_for(rng, code)
    x, w = rand(rng, M, K), rand(rng, K, N, scale=0.3)
    fwd = dict(y=nans(M, N), x=x, kernel=w, bias=None, M=M, N=N, K=K, activation=code,
               alpha=alpha)
    y = ref_outputs("dense_forward", fwd, ("y",))["y"]
    args = dict(dx=maybe(rng, nans(M, K)), dkernel=maybe(rng, nans(K, N)),
                dbias=maybe(rng, nans(N)), dy=rand(rng, M, N), x=x, y=y, kernel=w, M=M, N=N,
                K=K, activation=code, alpha=alpha)
    outs = tuple(k for k in ("dx", "dkernel", "dbias") if args[k] is not None)
    return Case("dense_backward", args, outs, tol=3e-4)


def bias_activation_backward(rng):
    M, N, _ = _dense_sizes(rng)
    code = int(rng.choice(FUSED_CODES))
    alpha = alpha_for(rng, code)
    fwd = dict(y=nans(M, N), x=rand(rng, M, N), kernel=np.eye(N, dtype=np.float32), bias=None,
               M=M, N=N, K=N, activation=code, alpha=alpha)
    y = ref_outputs("dense_forward", fwd, ("y",))["y"]
    args = dict(dz=maybe(rng, nans(M, N)), dbias=maybe(rng, nans(N)), dy=rand(rng, M, N), y=y,
                M=M, N=N, activation=code, alpha=alpha)
    outs = tuple(k for k in ("dz", "dbias") if args[k] is not None)
    return Case("bias_activation_backward", args, outs, tol=3e-4)


# --- Elementwise and losses ----------------------------------------------------------------


def _n(rng):
    return dim(rng, 70000 if rng.random() < 0.05 else 200)


def activation_forward(rng):
    n, code = _n(rng), int(rng.choice(ALL_CODES))
    args = dict(y=nans(n), x=rand(rng, n, scale=2.0), n=n, activation=code,
                alpha=alpha_for(rng, code))
    return Case("activation_forward", args, ("y",))


def activation_backward(rng):
    n, code = _n(rng), int(rng.choice(ALL_CODES))
    alpha, x = alpha_for(rng, code), rand(rng, n, scale=2.0)
    y = ref_outputs("activation_forward", dict(y=nans(n), x=x, n=n, activation=code,
                                               alpha=alpha), ("y",))["y"]
    args = dict(dx=nans(n), dy=rand(rng, n), x=x, y=y, n=n, activation=code, alpha=alpha)
    return Case("activation_backward", args, ("dx",))


def _rows_cols(rng):
    return dim(rng, 40), dim(rng, 70)


def _row_forward(name):
    def make(rng):
        rows, cols = _rows_cols(rng)
        args = dict(y=nans(rows, cols), x=rand(rng, rows, cols, scale=3.0), rows=rows, cols=cols)
        return Case(name, args, ("y",))
    return make


def _row_backward(name, forward):
    def make(rng):
        rows, cols = _rows_cols(rng)
        x = rand(rng, rows, cols, scale=3.0)
        y = ref_outputs(forward, dict(y=nans(rows, cols), x=x, rows=rows, cols=cols), ("y",))["y"]
        args = dict(dx=nans(rows, cols), dy=rand(rng, rows, cols), y=y, rows=rows, cols=cols)
        return Case(name, args, ("dx",))
    return make


def bias_add_forward(rng):
    rows, cols = _rows_cols(rng)
    args = dict(y=nans(rows, cols), x=rand(rng, rows, cols), b=rand(rng, cols), rows=rows,
                cols=cols)
    return Case("bias_add_forward", args, ("y",))


def bias_add_backward(rng):
    rows, cols = _rows_cols(rng)
    args = dict(db=nans(cols), dy=rand(rng, rows, cols), rows=rows, cols=cols)
    return Case("bias_add_backward", args, ("db",))


def dropout_forward(rng):
    n = _n(rng)
    args = dict(y=nans(n), mask=nans(n), x=rand(rng, n), n=n,
                rate=float(rng.choice([0.0, 0.1, 0.5, 0.9])),
                seed=int(rng.integers(-2**62, 2**62)))
    return Case("dropout_forward", args, ("y", "mask"))


def dropout_backward(rng):
    n = _n(rng)
    mask = (rng.random(n) < 0.5).astype(np.float32) * 2.0
    args = dict(dx=nans(n), dy=rand(rng, n), mask=mask.astype(np.float32), n=n)
    return Case("dropout_backward", args, ("dx",))


def _embedding_sizes(rng):
    n, D = dim(rng, 40), dim(rng, 40)
    V = dim(rng, 20, zero=0.0 if n else 0.5)
    idx = rng.integers(0, max(V, 1), n).astype(np.int64)
    return n, V, D, idx


def embedding_forward(rng):
    n, V, D, idx = _embedding_sizes(rng)
    args = dict(y=nans(n, D), indices=idx, table=rand(rng, V, D), n=n, V=V, D=D)
    return Case("embedding_forward", args, ("y",))


def embedding_backward(rng):
    n, V, D, idx = _embedding_sizes(rng)
    args = dict(dtable=nans(V, D), dy=rand(rng, n, D), indices=idx, n=n, V=V, D=D)
    return Case("embedding_backward", args, ("dtable",))


def _ce_sizes(rng):
    rows = dim(rng, 40)
    return rows, dim(rng, 70, zero=0.0)


def softmax_crossentropy_forward(rng):
    rows, cols = _ce_sizes(rng)
    args = dict(loss=nans(rows), probs=nans(rows, cols), logits=rand(rng, rows, cols, scale=3.0),
                labels=rng.random((rows, cols)).astype(np.float32), rows=rows, cols=cols)
    return Case("softmax_crossentropy_forward", args, ("loss", "probs"))


def softmax_crossentropy_backward(rng):
    rows, cols = _ce_sizes(rng)
    probs = ref_outputs("softmax_forward", dict(y=nans(rows, cols), x=rand(rng, rows, cols),
                                                rows=rows, cols=cols), ("y",))["y"]
    args = dict(dlogits=nans(rows, cols), dloss=rand(rng, rows), probs=probs,
                labels=rng.random((rows, cols)).astype(np.float32), rows=rows, cols=cols)
    return Case("softmax_crossentropy_backward", args, ("dlogits",))


def sparse_softmax_crossentropy_forward(rng):
    rows, cols = _ce_sizes(rng)
    args = dict(loss=nans(rows), probs=nans(rows, cols), logits=rand(rng, rows, cols, scale=3.0),
                labels=rng.integers(0, cols, rows).astype(np.int64), rows=rows, cols=cols)
    return Case("sparse_softmax_crossentropy_forward", args, ("loss", "probs"))


def sparse_softmax_crossentropy_backward(rng):
    rows, cols = _ce_sizes(rng)
    probs = ref_outputs("softmax_forward", dict(y=nans(rows, cols), x=rand(rng, rows, cols),
                                                rows=rows, cols=cols), ("y",))["y"]
    args = dict(dlogits=nans(rows, cols), dloss=rand(rng, rows), probs=probs,
                labels=rng.integers(0, cols, rows).astype(np.int64), rows=rows, cols=cols)
    return Case("sparse_softmax_crossentropy_backward", args, ("dlogits",))


def sigmoid_crossentropy_forward(rng):
    n = _n(rng)
    args = dict(loss=nans(n), logits=rand(rng, n, scale=3.0),
                labels=rng.random(n).astype(np.float32), n=n)
    return Case("sigmoid_crossentropy_forward", args, ("loss",))


def sigmoid_crossentropy_backward(rng):
    n = _n(rng)
    args = dict(dlogits=nans(n), dloss=rand(rng, n), logits=rand(rng, n, scale=3.0),
                labels=rng.random(n).astype(np.float32), n=n)
    return Case("sigmoid_crossentropy_backward", args, ("dlogits",))


# --- Convolution and pooling ---------------------------------------------------------------


def _axis(rng, size, k, stride, dil):
    """(pad_before, out) for one axis: total padding below the dilated window's extent."""
    extent = (k - 1) * dil + 1
    pad_total = int(rng.integers(0, extent))
    pad_before = int(rng.integers(0, pad_total + 1))
    return pad_before, max(0, (size + pad_total - extent) // stride + 1)


def _conv_geometry(rng):
    groups = int(rng.choice([1, 1, 1, 2, 3]))
    cg, kg = dim(rng, 17), dim(rng, 17)
    depthwise = rng.random() < 0.15
    if depthwise:  # groups == C, one (or a few) filters per channel
        groups, cg, kg = max(1, dim(rng, 17, zero=0.0)), 1, int(rng.choice([1, 2]))
    g = dict(N=dim(rng, 3), H=dim(rng, 12), W=dim(rng, 12), C=groups * cg, K=groups * kg,
             R=int(rng.integers(1, 4)), S=int(rng.integers(1, 4)), groups=groups,
             stride_h=int(rng.choice([1, 1, 2, 3])), stride_w=int(rng.choice([1, 1, 2, 3])),
             dil_h=int(rng.choice([1, 1, 2])), dil_w=int(rng.choice([1, 1, 2])))
    g["pad_top"], g["P"] = _axis(rng, g["H"], g["R"], g["stride_h"], g["dil_h"])
    g["pad_left"], g["Q"] = _axis(rng, g["W"], g["S"], g["stride_w"], g["dil_w"])
    return g


def conv2d_forward(rng):
    g = _conv_geometry(rng)
    N, H, W, C, K, R, S, P, Q = (g[k] for k in "N H W C K R S P Q".split())
    code = int(rng.choice([0, 0, 1, 13]))
    args = dict(y=nans(N, P, Q, K), x=rand(rng, N, H, W, C),
                w=rand(rng, R, S, C // g["groups"], K, scale=0.3),
                bias=maybe(rng, rand(rng, K)), **g, activation=code, alpha=alpha_for(rng, code))
    return Case("conv2d_forward", args, ("y",), tol=3e-4)


def conv2d_forward_maxpool2d(rng):
    g = _conv_geometry(rng)
    N, H, W, C, K, R, S, P, Q = (g[k] for k in "N H W C K R S P Q".split())
    code = int(rng.choice([0, 1, 1, 13]))
    ph = int(rng.integers(1, max(1, P) + 1)) if P > 0 else 1
    pw = int(rng.integers(1, max(1, Q) + 1)) if Q > 0 else 1
    ph, pw = min(ph, 3), min(pw, 3)
    if (P > 0 and ph > P) or (Q > 0 and pw > Q):
        ph, pw = 1, 1
    args = dict(y=nans(N, P // ph, Q // pw, K), x=rand(rng, N, H, W, C),
                w=rand(rng, R, S, C // g["groups"], K, scale=0.3),
                bias=maybe(rng, rand(rng, K)), **g, activation=code, alpha=alpha_for(rng, code),
                pool_h=ph, pool_w=pw)
    return Case("conv2d_forward_maxpool2d", args, ("y",), tol=3e-4)


def conv2d_maxpool2d_backward(rng):
    # The saved pooled output and indices come from the reference pooling of a random
    # convolution output z (N, P, Q, K); the backward scatters into z's shape.
    N, P, Q, K = dim(rng, 3), dim(rng, 12), dim(rng, 12), dim(rng, 40)
    ph, pw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    code = int(rng.choice([0, 1, 1, 13]))
    Pp, Qp = P // ph, Q // pw
    z = rand(rng, N, P, Q, K)
    if code != 0:
        z = np.maximum(z, 0) if code == 1 else np.where(z > 0, z, np.float32(0.2) * z)
    y, idx = np.zeros((N, Pp, Qp, K), np.float32), np.zeros((N, Pp, Qp, K), np.int64)
    REF["maxpool2d_forward"](y, idx, z, N, P, Q, K, Pp, Qp, ph, pw, ph, pw, 0, 0)
    args = dict(dz=nans(N, P, Q, K), dbias=maybe(rng, nans(K)), dy=rand(rng, N, Pp, Qp, K),
                y=y.astype(np.float32), indices=idx, N=N, P=P, Q=Q, K=K, pool_h=ph, pool_w=pw,
                activation=code, alpha=0.2 if code == 13 else 0.0)
    outs = ("dz",) if args["dbias"] is None else ("dz", "dbias")
    return Case("conv2d_maxpool2d_backward", args, outs)


def conv2d_backward_input(rng):
    g = _conv_geometry(rng)
    N, H, W, C, K, R, S, P, Q = (g[k] for k in "N H W C K R S P Q".split())
    args = dict(dx=nans(N, H, W, C), dy=rand(rng, N, P, Q, K),
                w=rand(rng, R, S, C // g["groups"], K, scale=0.3), **g)
    return Case("conv2d_backward_input", args, ("dx",), tol=3e-4)


def conv2d_backward_weight(rng):
    g = _conv_geometry(rng)
    N, H, W, C, K, R, S, P, Q = (g[k] for k in "N H W C K R S P Q".split())
    args = dict(dw=nans(R, S, C // g["groups"], K), dy=rand(rng, N, P, Q, K),
                x=rand(rng, N, H, W, C), **g)
    return Case("conv2d_backward_weight", args, ("dw",), tol=3e-4)


def _pool_geometry(rng):
    g = dict(N=dim(rng, 3), H=dim(rng, 12), W=dim(rng, 12), C=dim(rng, 40),
             R=int(rng.integers(1, 4)), S=int(rng.integers(1, 4)),
             stride_h=int(rng.choice([1, 2, 3])), stride_w=int(rng.choice([1, 2, 3])))
    g["pad_top"], g["P"] = _axis(rng, g["H"], g["R"], g["stride_h"], 1)
    g["pad_left"], g["Q"] = _axis(rng, g["W"], g["S"], g["stride_w"], 1)
    return g


def maxpool2d_forward(rng):
    g = _pool_geometry(rng)
    N, H, W, C, P, Q = (g[k] for k in "N H W C P Q".split())
    args = dict(y=nans(N, P, Q, C), indices=np.full((N, P, Q, C), -7, np.int64),
                x=rand(rng, N, H, W, C), **g)
    return Case("maxpool2d_forward", args, ("y", "indices"))


def maxpool2d_backward(rng):
    g = _pool_geometry(rng)
    N, H, W, C, P, Q = (g[k] for k in "N H W C P Q".split())
    fwd = dict(y=nans(N, P, Q, C), indices=np.zeros((N, P, Q, C), np.int64),
               x=rand(rng, N, H, W, C), **g)
    REF["maxpool2d_forward"](**fwd)
    args = dict(dx=nans(N, H, W, C), dy=rand(rng, N, P, Q, C), indices=fwd["indices"], N=N, H=H,
                W=W, C=C, P=P, Q=Q)
    return Case("maxpool2d_backward", args, ("dx",))


def avgpool2d_forward(rng):
    g = _pool_geometry(rng)
    N, H, W, C, P, Q = (g[k] for k in "N H W C P Q".split())
    return Case("avgpool2d_forward", dict(y=nans(N, P, Q, C), x=rand(rng, N, H, W, C), **g),
                ("y",))


def avgpool2d_backward(rng):
    g = _pool_geometry(rng)
    N, H, W, C, P, Q = (g[k] for k in "N H W C P Q".split())
    return Case("avgpool2d_backward", dict(dx=nans(N, H, W, C), dy=rand(rng, N, P, Q, C), **g),
                ("dx",))


# --- Batch normalization -------------------------------------------------------------------


def _bn_sizes(rng):
    return dim(rng, 33), dim(rng, 40), dim(rng, 17)


def batchnorm_forward_train(rng):
    outer, C, inner = _bn_sizes(rng)
    args = dict(y=nans(outer, C, inner), var=nans(C), mean=nans(C), inv_std=nans(C),
                x=rand(rng, outer, C, inner, scale=2.0) + 1.0, gamma=maybe(rng, rand(rng, C)),
                beta=maybe(rng, rand(rng, C)), outer=outer, C=C, inner=inner,
                epsilon=float(rng.choice([1e-3, 1e-5])))
    return Case("batchnorm_forward_train", args, ("y", "var", "mean", "inv_std"), tol=1e-3)


def batchnorm_forward_infer(rng):
    outer, C, inner = _bn_sizes(rng)
    args = dict(y=nans(outer, C, inner), x=rand(rng, outer, C, inner), mean=rand(rng, C),
                var=np.abs(rand(rng, C)) + 0.1, gamma=maybe(rng, rand(rng, C)),
                beta=maybe(rng, rand(rng, C)), outer=outer, C=C, inner=inner, epsilon=1e-3)
    return Case("batchnorm_forward_infer", args, ("y",))


def batchnorm_backward(rng):
    outer, C, inner = _bn_sizes(rng)
    x, gamma = rand(rng, outer, C, inner) + 0.5, maybe(rng, rand(rng, C))
    fwd = dict(y=nans(outer, C, inner), var=nans(C), mean=nans(C), inv_std=nans(C), x=x,
               gamma=None, beta=None, outer=outer, C=C, inner=inner, epsilon=1e-3)
    saved = ref_outputs("batchnorm_forward_train", fwd, ("mean", "inv_std"))
    args = dict(dx=maybe(rng, nans(outer, C, inner)), dgamma=maybe(rng, nans(C)),
                dbeta=maybe(rng, nans(C)), dy=rand(rng, outer, C, inner), x=x, **saved,
                gamma=gamma, outer=outer, C=C, inner=inner)
    outs = tuple(k for k in ("dx", "dgamma", "dbeta") if args[k] is not None)
    return Case("batchnorm_backward", args, outs, tol=1e-3)


def batchnorm_relu_forward_train(rng):
    outer, C, inner = _bn_sizes(rng)
    args = dict(y=nans(outer, C, inner), var=nans(C), mean=nans(C), inv_std=nans(C),
                scale=nans(C), shift=nans(C), x=rand(rng, outer, C, inner, scale=2.0) + 1.0,
                gamma=maybe(rng, rand(rng, C)), beta=maybe(rng, rand(rng, C)), outer=outer, C=C,
                inner=inner, epsilon=float(rng.choice([1e-3, 1e-5])))
    return Case("batchnorm_relu_forward_train", args,
                ("y", "var", "mean", "inv_std", "scale", "shift"), tol=1e-3)


def batchnorm_relu_forward_infer(rng):
    case = batchnorm_forward_infer(rng)
    return Case("batchnorm_relu_forward_infer", case.args, case.outputs, tol=case.tol)


def batchnorm_relu_backward(rng):
    outer, C, inner = _bn_sizes(rng)
    x, gamma = rand(rng, outer, C, inner) + 0.5, maybe(rng, rand(rng, C))
    fwd = dict(y=nans(outer, C, inner), var=nans(C), mean=nans(C), inv_std=nans(C),
               scale=nans(C), shift=nans(C), x=x, gamma=gamma, beta=maybe(rng, rand(rng, C)),
               outer=outer, C=C, inner=inner, epsilon=1e-3)
    saved = ref_outputs("batchnorm_relu_forward_train", fwd,
                        ("mean", "inv_std", "scale", "shift"))
    args = dict(dx=maybe(rng, nans(outer, C, inner)), dgamma=maybe(rng, nans(C)),
                dbeta=maybe(rng, nans(C)), dy=rand(rng, outer, C, inner), x=x, **saved,
                gamma=gamma, outer=outer, C=C, inner=inner)
    outs = tuple(k for k in ("dx", "dgamma", "dbeta") if args[k] is not None)
    return Case("batchnorm_relu_backward", args, outs, tol=1e-3)



def _bn_pool_sizes(rng):
    N, H, W, C = dim(rng, 3), dim(rng, 12), dim(rng, 12), dim(rng, 40)
    return N, H, W, C, int(rng.integers(1, 4)), int(rng.integers(1, 4))


def batchnorm_relu_maxpool_forward_train(rng):
    N, H, W, C, ph, pw = _bn_pool_sizes(rng)
    # The positions are not compared: a tie in float32 need not be one in float64.
    args = dict(y=nans(N, H // ph, W // pw, C), positions=np.zeros((N, H // ph, W // pw, C),
                                                                   np.int8),
                var=nans(C), mean=nans(C), inv_std=nans(C), scale=nans(C), shift=nans(C),
                x=rand(rng, N, H, W, C, scale=2.0) + 1.0, gamma=maybe(rng, rand(rng, C)),
                beta=maybe(rng, rand(rng, C)), N=N, H=H, W=W, C=C, pool_h=ph, pool_w=pw,
                epsilon=float(rng.choice([1e-3, 1e-5])))
    return Case("batchnorm_relu_maxpool_forward_train", args,
                ("y", "var", "mean", "inv_std", "scale", "shift"), tol=1e-3,
                unchecked=("positions",))


def batchnorm_relu_maxpool_backward(rng):
    # The saved state and window positions come from the reference forward.
    N, H, W, C, ph, pw = _bn_pool_sizes(rng)
    x, gamma = rand(rng, N, H, W, C) + 0.5, maybe(rng, rand(rng, C))
    pos = np.zeros((N, H // ph, W // pw, C), np.int8)
    fwd = dict(y=nans(N, H // ph, W // pw, C), positions=pos, var=nans(C), mean=nans(C),
               inv_std=nans(C), scale=nans(C), shift=nans(C), x=x, gamma=gamma,
               beta=maybe(rng, rand(rng, C)), N=N, H=H, W=W, C=C, pool_h=ph, pool_w=pw,
               epsilon=1e-3)
    saved = ref_outputs("batchnorm_relu_maxpool_forward_train", fwd,
                        ("mean", "inv_std", "scale", "shift"))
    args = dict(dx=maybe(rng, nans(N, H, W, C)), dgamma=maybe(rng, nans(C)),
                dbeta=maybe(rng, nans(C)), dy=rand(rng, N, H // ph, W // pw, C), positions=pos,
                x=x, **saved, gamma=gamma, N=N, H=H, W=W, C=C, pool_h=ph, pool_w=pw)
    outs = tuple(k for k in ("dx", "dgamma", "dbeta") if args[k] is not None)
    return Case("batchnorm_relu_maxpool_backward", args, outs, tol=1e-3)

# --- Layer normalization (last axis, rows of D) ---------------------------------------------


def layer_norm_forward(rng):
    rows, D = dim(rng, 40), dim(rng, 70)
    args = dict(y=nans(rows, D), mean=nans(rows), rstd=nans(rows),
                x=rand(rng, rows, D, scale=2.0) + 1.0, gamma=maybe(rng, rand(rng, D)),
                beta=maybe(rng, rand(rng, D)), rows=rows, D=D,
                epsilon=float(rng.choice([1e-3, 1e-5])), rms_scaling=bool(rng.random() < 0.3))
    return Case("layer_norm_forward", args, ("y", "mean", "rstd"), tol=1e-3)


def layer_norm_backward(rng):
    rows, D = dim(rng, 40), dim(rng, 70)
    x, rms = rand(rng, rows, D) + 0.5, bool(rng.random() < 0.3)
    fwd = dict(y=nans(rows, D), mean=nans(rows), rstd=nans(rows), x=x, gamma=None, beta=None,
               rows=rows, D=D, epsilon=1e-3, rms_scaling=rms)
    saved = ref_outputs("layer_norm_forward", fwd, ("mean", "rstd"))
    args = dict(dx=maybe(rng, nans(rows, D)), dgamma=maybe(rng, nans(D)),
                dbeta=maybe(rng, nans(D)), dy=rand(rng, rows, D), x=x, **saved,
                gamma=maybe(rng, rand(rng, D)), rows=rows, D=D, rms_scaling=rms)
    outs = tuple(k for k in ("dx", "dgamma", "dbeta") if args[k] is not None)
    return Case("layer_norm_backward", args, outs, tol=1e-3)


# --- Recurrent -----------------------------------------------------------------------------

GATES = {"lstm": 4, "gru": 3, "simple_rnn": 1}
OPTIONAL_RNN = {"bias", "dbias", "dc", "dc0", "dc_final", "dc_prev", "dh0", "dh_final",
                "dh_prev", "dhs", "dx"}
COTANGENTS = {"dhs", "dh_final", "dc_final", "dh", "dc"}


def _rnn_shapes(kind, N, T, F, U, reset_after, cell):
    G = GATES[kind]
    seq = () if cell else (T,)
    state = (N, U)
    shapes = {"x": (N, *seq, F), "hs": (N, T, U), "cs": (N, T, U), "gates": (N, *seq, G * U),
              "hproj": (N, *seq, U), "kernel": (F, G * U), "recurrent_kernel": (U, G * U),
              "bias": (2, 3 * U) if kind == "gru" and reset_after else (G * U,)}
    for name in ("h0", "c0", "h_final", "c_final", "h", "c", "h_prev", "c_prev"):
        shapes[name] = state
    for name in list(shapes):
        shapes["d" + name] = shapes[name]
    return shapes


def _rnn_case(kind, cell, backward):
    suffix = ("cell_" if cell else "sequence_") + ("backward" if backward else "forward")
    name, fwd_name = f"{kind}_{suffix}", f"{kind}_{'cell' if cell else 'sequence'}_forward"

    def make(rng):
        N, T, F, U = dim(rng, 9), dim(rng, 7), dim(rng, 17), dim(rng, 17)
        reset_after = bool(rng.integers(2))
        shapes = _rnn_shapes(kind, N, T, F, U, reset_after, cell)
        scalars = dict(N=N, T=T, F=F, U=U, go_backwards=bool(rng.integers(2)),
                       reset_after=reset_after, activation=int(rng.choice(RECURRENT_CODES)),
                       recurrent_activation=int(rng.choice(RECURRENT_CODES)))
        # Gates outside [0, 1] (linear, relu, tanh) or an unbounded candidate (linear, relu) let
        # the recurrence grow and make it ill-conditioned (measured: a relative change of 1e-7
        # in the inputs moved an output of 1e3 by 20 to 70 after 7 steps): smaller weights and
        # a looser tolerance there, so that the fuzzer flags bugs, not rounding.
        unbounded = (scalars["recurrent_activation"] not in (2, 11)
                     or scalars["activation"] in (0, 1))
        tol = 1e-2 if unbounded else 2e-3
        values = {k: rand(rng, *shapes[k], scale=0.25 if unbounded else 0.5)
                  for k in ("x", "h0", "c0", "h_prev", "c_prev", "kernel", "recurrent_kernel",
                            "bias")}
        fwd_params = list(REF[fwd_name].__code__.co_varnames[:REF[fwd_name].__code__.co_argcount])
        fwd = {}
        for p in fwd_params:
            if p in scalars:
                fwd[p] = scalars[p]
            elif p in values:
                fwd[p] = values[p] if p != "bias" else maybe(rng, values[p])
            else:
                fwd[p] = nans(*shapes[p])
        if not backward:
            outs = tuple(p for p in fwd_params if p not in scalars and p not in values)
            return Case(name, fwd, outs, tol=tol)
        written = [p for p in fwd_params if p not in scalars and p not in values]
        saved = ref_outputs(fwd_name, fwd, written)
        params = REF[name].__code__.co_varnames[:REF[name].__code__.co_argcount]
        args, outs = {}, []
        for p in params:
            if p in scalars:
                args[p] = scalars[p]
            elif p in COTANGENTS:
                args[p] = maybe(rng, rand(rng, *shapes[p])) if p in OPTIONAL_RNN else \
                    rand(rng, *shapes[p])
            elif p in saved or p in values:
                args[p] = saved[p] if p in saved else fwd.get(p, values[p])
            else:  # a gradient output
                args[p] = maybe(rng, nans(*shapes[p])) if p in OPTIONAL_RNN else nans(*shapes[p])
                if args[p] is not None:
                    outs.append(p)
        return Case(name, args, tuple(outs), tol=tol)

    make.__name__ = name
    return make


# --- Optimizers ----------------------------------------------------------------------------


def _opt(rng):
    n = _n(rng)
    return n, rand(rng, n), rand(rng, n), float(rng.choice([0.0, 0.0, 0.01]))


def sgd_update(rng):
    n, p, g, wd = _opt(rng)
    momentum = float(rng.choice([0.0, 0.9]))
    args = dict(param=p, velocity=rand(rng, n) if momentum else maybe(rng, rand(rng, n), 0.5),
                grad=g, n=n, lr=0.1, momentum=momentum, nesterov=bool(rng.integers(2)),
                weight_decay=wd)
    outs = ("param", "velocity") if args["velocity"] is not None else ("param",)
    return Case("sgd_update", args, outs, outs)


def adam_update(rng):
    n, p, g, wd = _opt(rng)
    args = dict(param=p, m=rand(rng, n), v=np.abs(rand(rng, n)),
                vhat=maybe(rng, np.abs(rand(rng, n)), 0.5), grad=g, n=n, lr=0.01, beta1=0.9,
                beta2=0.999, epsilon=1e-7, step=int(rng.integers(1, 50)), weight_decay=wd)
    outs = tuple(k for k in ("param", "m", "v", "vhat") if args[k] is not None)
    return Case("adam_update", args, outs, outs)


def adamax_update(rng):
    n, p, g, wd = _opt(rng)
    args = dict(param=p, m=rand(rng, n), u=np.abs(rand(rng, n)), grad=g, n=n, lr=0.01,
                beta1=0.9, beta2=0.999, epsilon=1e-7, step=int(rng.integers(1, 50)),
                weight_decay=wd)
    return Case("adamax_update", args, ("param", "m", "u"), ("param", "m", "u"))


def nadam_update(rng):
    n, p, g, wd = _opt(rng)
    step = int(rng.integers(1, 50))
    u_t, u_t1 = 0.9 * (1 - 0.5 * 0.96**step), 0.9 * (1 - 0.5 * 0.96**(step + 1))
    args = dict(param=p, m=rand(rng, n), v=np.abs(rand(rng, n)), grad=g, n=n, lr=0.01,
                beta1=0.9, beta2=0.999, epsilon=1e-7, step=step, u_t=u_t, u_t1=u_t1,
                u_product_t=0.5 * u_t, weight_decay=wd)
    return Case("nadam_update", args, ("param", "m", "v"), ("param", "m", "v"))


def rmsprop_update(rng):
    n, p, g, wd = _opt(rng)
    momentum, centered = float(rng.choice([0.0, 0.9])), bool(rng.integers(2))
    args = dict(param=p, velocity=np.abs(rand(rng, n)) + 1.0,
                momentum_buf=rand(rng, n) if momentum else None,
                average_grad=rand(rng, n, scale=0.1) if centered else None, grad=g, n=n,
                lr=0.01, rho=0.9, momentum=momentum, epsilon=1e-7, centered=centered,
                weight_decay=wd)
    outs = tuple(k for k in ("param", "velocity", "momentum_buf", "average_grad")
                 if args[k] is not None)
    return Case("rmsprop_update", args, outs, outs)


def adagrad_update(rng):
    n, p, g, wd = _opt(rng)
    args = dict(param=p, accumulator=np.abs(rand(rng, n)) + 0.1, grad=g, n=n, lr=0.01,
                epsilon=1e-7, weight_decay=wd)
    return Case("adagrad_update", args, ("param", "accumulator"), ("param", "accumulator"))


def adadelta_update(rng):
    n, p, g, wd = _opt(rng)
    args = dict(param=p, accumulated_grad=np.abs(rand(rng, n)),
                accumulated_delta=np.abs(rand(rng, n)), grad=g, n=n, lr=1.0, rho=0.95,
                epsilon=1e-7, weight_decay=wd)
    outs = ("param", "accumulated_grad", "accumulated_delta")
    return Case("adadelta_update", args, outs, outs)



# --- fused attention -----------------------------------------------------------------------


def _attention_args(rng):
    N, Tq, Tk = dim(rng, 3), dim(rng, 70), dim(rng, 70)
    kv_heads, D, Dv = dim(rng, 3), dim(rng, 40), dim(rng, 40)
    heads = kv_heads * int(rng.integers(1, 3))
    mask, mb, mh = None, 1, 1
    if rng.random() < 0.6:
        mb, mh = int(rng.choice([1, N])), int(rng.choice([1, heads]))
        mask = rng.random((mb, mh, Tq, Tk)) < float(rng.choice([0.3, 0.8, 1.0]))
    sizes = dict(N=N, Tq=Tq, Tk=Tk, heads=heads, kv_heads=kv_heads, D=D, Dv=Dv, mask_batch=mb,
                 mask_heads=mh, causal=bool(rng.integers(2)),
                 scale=float(rng.choice([1.0, 0.125, 0.5 / max(D, 1) ** 0.5])),
                 dropout_rate=float(rng.choice([0.0, 0.0, 0.1, 0.5])),
                 seed=int(rng.integers(-2**62, 2**62)))
    tensors = dict(q=rand(rng, N, Tq, heads, D), k=rand(rng, N, Tk, kv_heads, D),
                   v=rand(rng, N, Tk, kv_heads, Dv), mask=mask)
    return tensors, sizes


def attention_forward(rng):
    t, sizes = _attention_args(rng)
    args = dict(out=nans(sizes["N"], sizes["Tq"], sizes["heads"], sizes["Dv"]),
                lse=nans(sizes["N"], sizes["heads"], sizes["Tq"]), **t, **sizes)
    return Case("attention_forward", args, ("out", "lse"), infinite_ok=("lse",))


def attention_backward(rng):
    t, sizes = _attention_args(rng)
    N, Tq, heads, Dv = sizes["N"], sizes["Tq"], sizes["heads"], sizes["Dv"]
    fwd = dict(out=nans(N, Tq, heads, Dv), lse=nans(N, heads, Tq), **t, **sizes)
    saved = ref_outputs("attention_forward", fwd, ("out", "lse")) if sizes["kv_heads"] else \
        dict(out=fwd["out"], lse=fwd["lse"])
    args = dict(dq=nans(*t["q"].shape), dk=nans(*t["k"].shape), dv=nans(*t["v"].shape),
                dout=rand(rng, N, Tq, heads, Dv), q=t["q"], k=t["k"], v=t["v"],
                out=saved["out"], lse=saved["lse"], mask=t["mask"], **sizes)
    return Case("attention_backward", args, ("dq", "dk", "dv"))


def lion_update(rng):
    n, p, g, wd = _opt(rng)
    args = dict(param=p, m=rand(rng, n), grad=g, n=n, lr=0.01, beta1=0.9, beta2=0.99,
                weight_decay=wd)
    return Case("lion_update", args, ("param", "m"), ("param", "m"))


def ftrl_update(rng):
    n, p, g, wd = _opt(rng)
    args = dict(param=p, accumulator=np.abs(rand(rng, n)) + 0.1, linear=rand(rng, n), grad=g,
                n=n, lr=0.1, learning_rate_power=float(rng.choice([-0.5, -0.7])), l1=0.01,
                l2=0.02, l2_shrinkage=0.01, beta=0.1, weight_decay=wd)
    outs = ("param", "accumulator", "linear")
    return Case("ftrl_update", args, outs, outs)


def lamb_update(rng):
    n, p, g, wd = _opt(rng)
    args = dict(param=p, m=rand(rng, n), v=np.abs(rand(rng, n)), grad=g, n=n, lr=0.01,
                beta1=0.9, beta2=0.999, epsilon=1e-7, step=int(rng.integers(1, 50)),
                weight_decay=wd)
    return Case("lamb_update", args, ("param", "m", "v"), ("param", "m", "v"))


def adafactor_update(rng):
    n, p, g, wd = _opt(rng)
    args = dict(param=p, v=np.abs(rand(rng, n)) + 0.1, grad=g, n=n, lr=0.01, beta_2_decay=-0.8,
                epsilon_1=1e-30, epsilon_2=1e-3, clip_threshold=1.0,
                step=int(rng.integers(1, 50)), factored=bool(rng.integers(2)), weight_decay=wd)
    return Case("adafactor_update", args, ("param", "v"), ("param", "v"))


def muon_momentum_update(rng):
    n, _, g, _ = _opt(rng)
    args = dict(m=rand(rng, n), out=rand(rng, n), grad=g, n=n, momentum=0.95,
                nesterov=bool(rng.integers(2)))
    return Case("muon_momentum_update", args, ("m", "out"), ("m",))


def muon_update(rng):
    n, p, g, wd = _opt(rng)
    args = dict(param=p, ortho=g, n=n, lr=0.01, scale=1.3, weight_decay=wd)
    return Case("muon_update", args, ("param",), ("param",))


def schedule_free_adamw_update(rng):
    n, p, g, wd = _opt(rng)
    args = dict(param=p, z=rand(rng, n), v=np.abs(rand(rng, n)), grad=g, n=n, lr=0.01,
                beta1=0.9, beta2=0.999, epsilon=1e-8, step=int(rng.integers(1, 50)),
                warmup_steps=int(rng.integers(0, 5)), weight_decay=wd)
    outs = ("param", "z", "v")
    return Case("schedule_free_adamw_update", args, outs, outs)


# --- int8 quantization ---------------------------------------------------------------------


def _int8(rng, *shape, low=-128):
    return rng.integers(low, 128, shape).astype(np.int8)


def quantize_int8_rows(rng):
    M, K = dim(rng, 65), dim(rng, 200)
    x = rand(rng, M, K, scale=float(rng.choice([1e-3, 1.0, 1e3])))
    args = dict(q=np.zeros((M, K), np.int8), scale=nans(M), x=x, M=M, K=K)
    return Case("quantize_int8_rows", args, ("q", "scale"), tol=0.0)


def matmul_int8(rng):
    M, N, K = dim(rng, 65), dim(rng, 300), dim(rng, 300)
    args = dict(C=np.zeros((M, N), np.int32), A=_int8(rng, M, K), B=_int8(rng, K, N), M=M,
                N=N, K=K)
    return Case("matmul_int8", args, ("C",), tol=0.0)


def dense_int8_forward(rng):
    M, N, K = _dense_sizes(rng)
    args = dict(y=nans(M, N), x=rand(rng, M, K), kernel=_int8(rng, K, N, low=-127),
                kernel_scale=rng.uniform(0.5, 200.0, N).astype(np.float32), M=M, N=N, K=K)
    return Case("dense_int8_forward", args, ("y",), tol=0.0)


GENERATORS = {
    f.__name__: f
    for f in (gemm, dense_forward, dense_backward, bias_activation_backward, activation_forward,
              activation_backward, bias_add_forward, bias_add_backward, dropout_forward,
              dropout_backward, embedding_forward, embedding_backward, softmax_crossentropy_forward,
              softmax_crossentropy_backward, sparse_softmax_crossentropy_forward,
              sparse_softmax_crossentropy_backward, sigmoid_crossentropy_forward,
              sigmoid_crossentropy_backward, conv2d_forward, conv2d_forward_maxpool2d,
              conv2d_maxpool2d_backward, conv2d_backward_input,
              conv2d_backward_weight, maxpool2d_forward, maxpool2d_backward, avgpool2d_forward,
              avgpool2d_backward, batchnorm_forward_train, batchnorm_forward_infer,
              batchnorm_backward, batchnorm_relu_forward_train, batchnorm_relu_forward_infer,
              batchnorm_relu_backward, batchnorm_relu_maxpool_forward_train,
              batchnorm_relu_maxpool_backward, layer_norm_forward, layer_norm_backward, sgd_update,
              adam_update, adamax_update, nadam_update,
              rmsprop_update, adagrad_update, adadelta_update, attention_forward,
              attention_backward, lion_update, ftrl_update, lamb_update, adafactor_update,
              muon_momentum_update, muon_update, schedule_free_adamw_update,
              quantize_int8_rows, matmul_int8, dense_int8_forward)
}
for _name, _fwd in (("softmax", "softmax_forward"), ("log_softmax", "log_softmax_forward")):
    GENERATORS[f"{_name}_forward"] = _row_forward(f"{_name}_forward")
    GENERATORS[f"{_name}_backward"] = _row_backward(f"{_name}_backward", _fwd)
for _kind in GATES:
    for _cell in (False, True):
        for _bwd in (False, True):
            _g = _rnn_case(_kind, _cell, _bwd)
            GENERATORS[_g.__name__] = _g
assert set(GENERATORS) == set(REF), sorted(set(REF) ^ set(GENERATORS))

"""NaN and Inf propagation: every compiled kernel, on every ISA, against the float64 reference.

The rule (kernels.h): an output element is NaN (or +/-Inf) exactly where the NumPy float64
reference computation gives NaN (or the same infinity). So max/min/clamp written with a NaN
operand winning (np.maximum), a window of a max pool holding a NaN pools to NaN, an incoming
NaN gradient stays NaN through a derivative of 0 (IEEE: NaN * 0 = NaN), and so on.

Each case draws finite float64 inputs, writes NaN, +Inf or -Inf at random positions of one
input ("poisoned"), runs the reference device and the compiled kernel (float32) on the same
values and compares np.isnan and np.isposinf / np.isneginf of every output. Finite values are
the other tests' concern; inputs are small enough that float32 never overflows.
"""

import zlib

import numpy as np
import pytest
from fkeras import _C
from fkeras.backend import codes
from fkeras.backend.reference import KERNELS as REF

ALL_CODES = sorted(set(codes.ACTIVATION_CODES.values()))
FUSED_CODES = [c for c in ALL_CODES if c not in (codes.GELU, codes.GELU_TANH, codes.SWISH)]
POISONS = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf}


class Run:
    """One device's view of a case: its kernel table and output allocation in its dtype."""

    def __init__(self, device):
        self.device = device
        self.dtype = np.float64 if device == "reference" else np.float32

    def k(self, name):
        return REF[name] if self.device == "reference" else getattr(_C, name)

    def out(self, *shape):
        return np.zeros(shape, dtype=self.dtype)

    def arr(self, a):
        return np.ascontiguousarray(a, dtype=self.dtype)


def _poison(rng, a, value, fraction=0.15):
    """A copy of a with `value` at a random ~fraction of the positions (at least one)."""
    a = a.copy()
    flat = a.reshape(-1)
    count = max(1, int(fraction * flat.size))
    flat[rng.choice(flat.size, size=count, replace=False)] = value
    return a


# (case, poisoned input, output) -> why the kernel may give NaN where the reference gives
# +/-Inf (never the other way round, never a finite value for a non-finite one): the kernel
# folds an algebraically equal form whose intermediate meets inf - inf.
INF_MAY_BE_NAN = {
    ("softmax_crossentropy", "labels", "loss"):
        "loss = log(s) sum z - sum z (l - max): a label of -inf at the row max gives -inf * 0",
}


def _assert_same_pattern(name, got, want, inf_may_be_nan=False):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape, f"{name}: shape {got.shape} != {want.shape}"
    if inf_may_be_nan:
        assert np.array_equal(np.isfinite(got), np.isfinite(want)), f"{name}: finiteness differs"
        inf = np.isinf(want) & np.isnan(got)
        got = np.where(inf, want, got)
    for what, test in (("NaN", np.isnan), ("+Inf", np.isposinf), ("-Inf", np.isneginf)):
        g, w = test(got), test(want)
        if not np.array_equal(g, w):
            i = tuple(int(j) for j in np.argwhere(g != w)[0])
            raise AssertionError(
                f"{name}: {what} pattern differs from the float64 reference at "
                f"{int((g != w).sum())} of {g.size} elements; first at {i}: got {got[i]!r}, "
                f"reference {want[i]!r}"
            )


# ---- cases: name -> (make(rng) -> float64 inputs, run(Run, inputs) -> outputs, poisoned) -------

def _act_case(code, alpha):
    def make(rng):
        x = rng.standard_normal(211) * 2
        return {"x": x, "dy": rng.standard_normal(211)}

    def run(d, a):
        n = a["x"].size
        y, dx = d.out(n), d.out(n)
        x = d.arr(a["x"])
        d.k("activation_forward")(y, x, n, code, alpha)
        # The backward reads the forward's output computed on the same device.
        d.k("activation_backward")(dx, d.arr(a["dy"]), x, y, n, code, alpha)
        return {"y": y, "dx": dx}

    return make, run, ("x", "dy")


def _softmax_case(kind):
    def make(rng):
        return {"x": rng.standard_normal((5, 37)), "dy": rng.standard_normal((5, 37))}

    def run(d, a):
        rows, cols = a["x"].shape
        y, dx = d.out(rows, cols), d.out(rows, cols)
        d.k(f"{kind}_forward")(y, d.arr(a["x"]), rows, cols)
        d.k(f"{kind}_backward")(dx, d.arr(a["dy"]), y, rows, cols)
        return {"y": y, "dx": dx}

    return make, run, ("x", "dy")


def _softmax_xent_case(rng_unused=None):
    def make(rng):
        labels = rng.random((6, 19))
        return {"logits": rng.standard_normal((6, 19)) * 3,
                "labels": labels / labels.sum(1)[:, None], "dloss": rng.standard_normal(6)}

    def run(d, a):
        rows, cols = a["logits"].shape
        loss, probs, dl = d.out(rows), d.out(rows, cols), d.out(rows, cols)
        labels = d.arr(a["labels"])
        d.k("softmax_crossentropy_forward")(loss, probs, d.arr(a["logits"]), labels, rows, cols)
        d.k("softmax_crossentropy_backward")(dl, d.arr(a["dloss"]), probs, labels, rows, cols)
        return {"loss": loss, "probs": probs, "dlogits": dl}

    return make, run, ("logits", "labels", "dloss")


def _sparse_xent_case():
    def make(rng):
        return {"logits": rng.standard_normal((6, 19)) * 3, "dloss": rng.standard_normal(6)}

    def run(d, a):
        rows, cols = a["logits"].shape
        labels = (np.arange(rows) * 7 % cols).astype(np.int64)
        loss, probs, dl = d.out(rows), d.out(rows, cols), d.out(rows, cols)
        d.k("sparse_softmax_crossentropy_forward")(loss, probs, d.arr(a["logits"]), labels, rows,
                                                   cols)
        d.k("sparse_softmax_crossentropy_backward")(dl, d.arr(a["dloss"]), probs, labels, rows,
                                                    cols)
        return {"loss": loss, "probs": probs, "dlogits": dl}

    return make, run, ("logits", "dloss")


def _sigmoid_xent_case():
    def make(rng):
        return {"logits": rng.standard_normal(101) * 3, "labels": rng.random(101),
                "dloss": rng.standard_normal(101)}

    def run(d, a):
        n = a["logits"].size
        loss, dl = d.out(n), d.out(n)
        logits, labels = d.arr(a["logits"]), d.arr(a["labels"])
        d.k("sigmoid_crossentropy_forward")(loss, logits, labels, n)
        d.k("sigmoid_crossentropy_backward")(dl, d.arr(a["dloss"]), logits, labels, n)
        return {"loss": loss, "dlogits": dl}

    return make, run, ("logits", "labels", "dloss")


def _bias_dropout_case():
    def make(rng):
        return {"x": rng.standard_normal((7, 23)), "b": rng.standard_normal(23),
                "dy": rng.standard_normal((7, 23))}

    def run(d, a):
        rows, cols = a["x"].shape
        n = rows * cols
        y, db, yd, mask, dxd = d.out(rows, cols), d.out(cols), d.out(n), d.out(n), d.out(n)
        d.k("bias_add_forward")(y, d.arr(a["x"]), d.arr(a["b"]), rows, cols)
        d.k("bias_add_backward")(db, d.arr(a["dy"]), rows, cols)
        d.k("dropout_forward")(yd, mask, d.arr(a["x"]).reshape(n), n, 0.3, 5)
        d.k("dropout_backward")(dxd, d.arr(a["dy"]).reshape(n), mask, n)
        return {"y": y, "db": db, "dropout_y": yd, "dropout_dx": dxd}

    return make, run, ("x", "b", "dy")


def _gemm_case(M, N, K, trans_a, trans_b, beta):
    def make(rng):
        return {"A": rng.standard_normal((K, M) if trans_a else (M, K)),
                "B": rng.standard_normal((N, K) if trans_b else (K, N)),
                "C": rng.standard_normal((M, N))}

    def run(d, a):
        c = d.arr(a["C"]).copy()
        d.k("gemm")(c, d.arr(a["A"]), d.arr(a["B"]), M, N, K, trans_a, trans_b, 0.7, beta)
        return {"C": c}

    return make, run, ("A", "B", "C")


def _dense_case(code, M=9, N=37, K=21):
    def make(rng):
        return {"x": rng.standard_normal((M, K)), "kernel": rng.standard_normal((K, N)) * 0.3,
                "bias": rng.standard_normal(N), "dy": rng.standard_normal((M, N))}

    def run(d, a):
        y, dx, dk, db = d.out(M, N), d.out(M, K), d.out(K, N), d.out(N)
        x, w = d.arr(a["x"]), d.arr(a["kernel"])
        d.k("dense_forward")(y, x, w, d.arr(a["bias"]), M, N, K, code, 0.2)
        d.k("dense_backward")(dx, dk, db, d.arr(a["dy"]), x, y, w, M, N, K, code, 0.2)
        return {"y": y, "dx": dx, "dkernel": dk, "dbias": db}

    return make, run, ("x", "kernel", "bias", "dy")


def _conv_case(code, stride, pad, N=2, H=7, W=6, C=5, K=19, R=3, S=3, groups=1):
    P = (H + 2 * pad - R) // stride + 1
    Q = (W + 2 * pad - S) // stride + 1
    geom = (N, H, W, C, K, R, S, P, Q, stride, stride, 1, 1, pad, pad, groups)
    Cg = C // groups

    def make(rng):
        return {"x": rng.standard_normal((N, H, W, C)),
                "w": rng.standard_normal((R, S, Cg, K)) * 0.3,
                "bias": rng.standard_normal(K), "dy": rng.standard_normal((N, P, Q, K))}

    def run(d, a):
        y, dx, dw = d.out(N, P, Q, K), d.out(N, H, W, C), d.out(R, S, Cg, K)
        x, w, dy = d.arr(a["x"]), d.arr(a["w"]), d.arr(a["dy"])
        d.k("conv2d_forward")(y, x, w, d.arr(a["bias"]), *geom, code, 0.2)
        d.k("conv2d_backward_input")(dx, dy, w, *geom)
        d.k("conv2d_backward_weight")(dw, dy, x, *geom)
        return {"y": y, "dx": dx, "dw": dw}

    return make, run, ("x", "w", "bias", "dy")


def _pool_case(kind, N=2, H=7, W=8, C=37, R=3, S=2, stride=2, pad=1):
    P = (H + 2 * pad - R) // stride + 1
    Q = (W + 2 * pad - S) // stride + 1
    sizes = (N, H, W, C, P, Q)
    window = (R, S, stride, stride, pad, pad)

    def make(rng):
        return {"x": rng.standard_normal((N, H, W, C)), "dy": rng.standard_normal((N, P, Q, C))}

    def run(d, a):
        y, dx = d.out(N, P, Q, C), d.out(N, H, W, C)
        if kind == "max":
            idx = np.zeros((N, P, Q, C), np.int64)
            d.k("maxpool2d_forward")(y, idx, d.arr(a["x"]), *sizes, *window)
            d.k("maxpool2d_backward")(dx, d.arr(a["dy"]), idx, *sizes)
            # The argmax is saved state: a NaN in a window must be the index saved (first NaN).
            return {"y": y, "dx": dx, "indices": idx}
        d.k("avgpool2d_forward")(y, d.arr(a["x"]), *sizes, *window)
        d.k("avgpool2d_backward")(dx, d.arr(a["dy"]), *sizes, *window)
        return {"y": y, "dx": dx}

    return make, run, ("x", "dy")


def _batchnorm_case(outer, C, inner):
    def make(rng):
        return {"x": rng.standard_normal((outer, C, inner)) + 1.0,
                "gamma": rng.standard_normal(C), "beta": rng.standard_normal(C),
                "moving_mean": rng.standard_normal(C), "moving_var": rng.random(C) + 0.5,
                "dy": rng.standard_normal((outer, C, inner))}

    def run(d, a):
        y, var, mean, inv = d.out(outer, C, inner), d.out(C), d.out(C), d.out(C)
        yi, dx, dg, db = d.out(outer, C, inner), d.out(outer, C, inner), d.out(C), d.out(C)
        x, gamma, beta = d.arr(a["x"]), d.arr(a["gamma"]), d.arr(a["beta"])
        d.k("batchnorm_forward_train")(y, var, mean, inv, x, gamma, beta, outer, C, inner, 1e-3)
        d.k("batchnorm_forward_infer")(yi, x, d.arr(a["moving_mean"]), d.arr(a["moving_var"]),
                                       gamma, beta, outer, C, inner, 1e-3)
        d.k("batchnorm_backward")(dx, dg, db, d.arr(a["dy"]), x, mean, inv, gamma, outer, C,
                                  inner)
        return {"y": y, "var": var, "mean": mean, "inv_std": inv, "y_infer": yi, "dx": dx,
                "dgamma": dg, "dbeta": db}

    return make, run, ("x", "gamma", "beta", "moving_mean", "moving_var", "dy")


# Recurrent kernels: x (N, T, F), U units; sequence forward + backward, and one cell step.
_RN, _RT, _RF, _RU = 3, 4, 5, 19


def _rnn_make(gates):
    def make(rng):
        N, T, F, U = _RN, _RT, _RF, _RU
        bias_shape = (2, gates * U) if gates == 3 else (gates * U,)
        return {"x": rng.standard_normal((N, T, F)), "h0": rng.standard_normal((N, U)) * 0.5,
                "c0": rng.standard_normal((N, U)) * 0.5,
                "kernel": rng.standard_normal((F, gates * U)) * 0.4,
                "recurrent_kernel": rng.standard_normal((U, gates * U)) * 0.2,
                "bias": rng.standard_normal(bias_shape) * 0.3,
                "dhs": rng.standard_normal((N, T, U)), "dh_final": rng.standard_normal((N, U)),
                "dc_final": rng.standard_normal((N, U))}

    return make


def _lstm_case(act, rec_act):
    N, T, F, U = _RN, _RT, _RF, _RU

    def run(d, a):
        x, h0, c0 = d.arr(a["x"]), d.arr(a["h0"]), d.arr(a["c0"])
        w, rw, b = d.arr(a["kernel"]), d.arr(a["recurrent_kernel"]), d.arr(a["bias"])
        hs, hf, cf, gates, cs = (d.out(N, T, U), d.out(N, U), d.out(N, U), d.out(N, T, 4 * U),
                                 d.out(N, T, U))
        d.k("lstm_sequence_forward")(hs, hf, cf, gates, cs, x, h0, c0, w, rw, b, N, T, F, U,
                                     False, act, rec_act)
        grads = (d.out(N, T, F), d.out(N, U), d.out(N, U), d.out(F, 4 * U), d.out(U, 4 * U),
                 d.out(4 * U))
        d.k("lstm_sequence_backward")(*grads, d.arr(a["dhs"]), d.arr(a["dh_final"]),
                                      d.arr(a["dc_final"]), gates, cs, hs, x, h0, c0, w, rw, N,
                                      T, F, U, False, act, rec_act)
        h, c, g1 = d.out(N, U), d.out(N, U), d.out(N, 4 * U)
        x0 = np.ascontiguousarray(x[:, 0])
        d.k("lstm_cell_forward")(h, c, g1, x0, h0, c0, w, rw, b, N, F, U, act, rec_act)
        cell = (d.out(N, F), d.out(N, U), d.out(N, U), d.out(F, 4 * U), d.out(U, 4 * U),
                d.out(4 * U))
        d.k("lstm_cell_backward")(*cell, d.arr(a["dh_final"]), d.arr(a["dc_final"]), g1, c, x0,
                                  h0, c0, w, rw, N, F, U, act, rec_act)
        names = ("dx", "dh0", "dc0", "dkernel", "drecurrent_kernel", "dbias")
        return {"hs": hs, "h_final": hf, "c_final": cf, "gates": gates, "cs": cs,
                **dict(zip(names, grads)), "cell_h": h, "cell_c": c,
                **{f"cell_{k}": v for k, v in zip(names, cell)}}

    return _rnn_make(4), run, ("x", "h0", "c0", "kernel", "recurrent_kernel", "dhs")


def _gru_case(act, rec_act, reset_after=True):
    N, T, F, U = _RN, _RT, _RF, _RU
    bias_shape = (2, 3 * U) if reset_after else (3 * U,)

    def run(d, a):
        x, h0 = d.arr(a["x"]), d.arr(a["h0"])
        w, rw, b = d.arr(a["kernel"]), d.arr(a["recurrent_kernel"]), d.arr(a["bias"])
        hs, hf, gates, hproj = d.out(N, T, U), d.out(N, U), d.out(N, T, 3 * U), d.out(N, T, U)
        ra = reset_after
        b = b if ra else np.ascontiguousarray(b.reshape(2, 3 * U)[0])
        d.k("gru_sequence_forward")(hs, hf, gates, hproj, x, h0, w, rw, b, N, T, F, U, False,
                                    ra, act, rec_act)
        grads = (d.out(N, T, F), d.out(N, U), d.out(F, 3 * U), d.out(U, 3 * U),
                 d.out(*bias_shape))
        d.k("gru_sequence_backward")(*grads, d.arr(a["dhs"]), d.arr(a["dh_final"]), gates, hproj,
                                     hs, x, h0, w, rw, N, T, F, U, False, ra, act, rec_act)
        h, g1, hp1 = d.out(N, U), d.out(N, 3 * U), d.out(N, U)
        x0 = np.ascontiguousarray(x[:, 0])
        d.k("gru_cell_forward")(h, g1, hp1, x0, h0, w, rw, b, N, F, U, ra, act, rec_act)
        cell = (d.out(N, F), d.out(N, U), d.out(F, 3 * U), d.out(U, 3 * U), d.out(*bias_shape))
        d.k("gru_cell_backward")(*cell, d.arr(a["dh_final"]), g1, hp1, x0, h0, w, rw, N, F, U,
                                 ra, act, rec_act)
        names = ("dx", "dh0", "dkernel", "drecurrent_kernel", "dbias")
        return {"hs": hs, "h_final": hf, "gates": gates, "hproj": hproj,
                **dict(zip(names, grads)), "cell_h": h,
                **{f"cell_{k}": v for k, v in zip(names, cell)}}

    return _rnn_make(3), run, ("x", "h0", "kernel", "recurrent_kernel", "bias", "dhs")


def _simple_rnn_case(act):
    N, T, F, U = _RN, _RT, _RF, _RU

    def run(d, a):
        x, h0 = d.arr(a["x"]), d.arr(a["h0"])
        w, rw, b = d.arr(a["kernel"]), d.arr(a["recurrent_kernel"]), d.arr(a["bias"])
        hs, hf = d.out(N, T, U), d.out(N, U)
        d.k("simple_rnn_sequence_forward")(hs, hf, x, h0, w, rw, b, N, T, F, U, False, act)
        grads = (d.out(N, T, F), d.out(N, U), d.out(F, U), d.out(U, U), d.out(U))
        d.k("simple_rnn_sequence_backward")(*grads, d.arr(a["dhs"]), d.arr(a["dh_final"]), hs, x,
                                            h0, w, rw, N, T, F, U, False, act)
        h = d.out(N, U)
        x0 = np.ascontiguousarray(x[:, 0])
        d.k("simple_rnn_cell_forward")(h, x0, h0, w, rw, b, N, F, U, act)
        cell = (d.out(N, F), d.out(N, U), d.out(F, U), d.out(U, U), d.out(U))
        d.k("simple_rnn_cell_backward")(*cell, d.arr(a["dh_final"]), h, x0, h0, w, rw, N, F, U,
                                        act)
        names = ("dx", "dh0", "dkernel", "drecurrent_kernel", "dbias")
        return {"hs": hs, "h_final": hf, **dict(zip(names, grads)), "cell_h": h,
                **{f"cell_{k}": v for k, v in zip(names, cell)}}

    return _rnn_make(1), run, ("x", "h0", "kernel", "recurrent_kernel", "dhs")


# Optimizers: (kernel, slots, call(k, param, slots, grad, n)). Slots start positive (second
# moments) and the centered RMSprop average below sqrt(velocity), as after real steps.
_OPTIMIZERS = {
    "sgd": ("sgd_update", (), lambda k, p, s, g, n: k(p, None, g, n, 0.1, 0.0, False, 0.0)),
    "sgd_momentum": ("sgd_update", ("velocity",),
                     lambda k, p, s, g, n: k(p, *s, g, n, 0.1, 0.9, False, 0.0)),
    "sgd_nesterov_wd": ("sgd_update", ("velocity",),
                        lambda k, p, s, g, n: k(p, *s, g, n, 0.1, 0.9, True, 0.01)),
    "adam": ("adam_update", ("m", "v"),
             lambda k, p, s, g, n: k(p, *s, None, g, n, 0.01, 0.9, 0.999, 1e-7, 3, 0.0)),
    "adam_amsgrad": ("adam_update", ("m", "v", "vhat"),
                     lambda k, p, s, g, n: k(p, *s, g, n, 0.01, 0.9, 0.999, 1e-7, 3, 0.0)),
    "adamw_amsgrad": ("adam_update", ("m", "v", "vhat"),
                      lambda k, p, s, g, n: k(p, *s, g, n, 0.01, 0.9, 0.999, 1e-7, 3, 0.004)),
    "adamax": ("adamax_update", ("m", "u"),
               lambda k, p, s, g, n: k(p, *s, g, n, 0.01, 0.9, 0.999, 1e-7, 3, 0.0)),
    "nadam": ("nadam_update", ("m", "v"),
              lambda k, p, s, g, n: k(p, *s, g, n, 0.01, 0.9, 0.999, 1e-7, 3, 0.46, 0.47, 0.1,
                                      0.0)),
    "rmsprop": ("rmsprop_update", ("velocity",),
                lambda k, p, s, g, n: k(p, *s, None, None, g, n, 0.01, 0.9, 0.0, 1e-7, False,
                                        0.0)),
    "rmsprop_centered_momentum": (
        "rmsprop_update", ("velocity", "momentum_buf", "average_grad"),
        lambda k, p, s, g, n: k(p, *s, g, n, 0.01, 0.9, 0.5, 1e-7, True, 0.01)),
    "adagrad": ("adagrad_update", ("accumulator",),
                lambda k, p, s, g, n: k(p, *s, g, n, 0.01, 1e-7, 0.0)),
    "adadelta": ("adadelta_update", ("accumulated_grad", "accumulated_delta"),
                 lambda k, p, s, g, n: k(p, *s, g, n, 1.0, 0.95, 1e-7, 0.0)),
}


def _optimizer_case(name):
    kernel, slots, call = _OPTIMIZERS[name]
    n = 203

    def make(rng):
        a = {"param": rng.standard_normal(n), "grad": rng.standard_normal(n)}
        for s in slots:
            a[s] = rng.random(n) * 0.1 + 0.01
        if "average_grad" in a:
            a["average_grad"] = np.sqrt(a["velocity"]) * (rng.random(n) - 0.5)
        return a

    def run(d, a):
        p, g = d.arr(a["param"]).copy(), d.arr(a["grad"])
        s = [d.arr(a[k]).copy() for k in slots]
        call(d.k(kernel), p, s, g, n)
        return {"param": p, **dict(zip(slots, s))}

    return make, run, ("param", "grad", *slots)


# Convolution paths, forced through the kernels' environment switches (see test_conv.py).
CONV_PATHS = {
    "direct": {"FKERAS_CONV_DIRECT": "1"},
    "gather": {"FKERAS_CONV_DIRECT": "0", "FKERAS_CONV_BACKWARD_INPUT": "gather"},
    "col2im": {"FKERAS_CONV_DIRECT": "0", "FKERAS_CONV_BACKWARD_INPUT": "col2im"},
}


def _table():
    cases = {}
    for c in ALL_CODES:
        alpha = 0.2 if c == codes.LEAKY_RELU else 1.0
        cases[f"activation_{c}"] = _act_case(c, alpha)
        if c in FUSED_CODES:
            cases[f"dense_act{c}"] = _dense_case(c)
    cases["elu_alpha0.5"] = _act_case(codes.ELU, 0.5)
    cases["leaky_relu_alpha0"] = _act_case(codes.LEAKY_RELU, 0.0)
    cases["softmax"] = _softmax_case("softmax")
    cases["log_softmax"] = _softmax_case("log_softmax")
    cases["softmax_crossentropy"] = _softmax_xent_case()
    cases["sparse_softmax_crossentropy"] = _sparse_xent_case()
    cases["sigmoid_crossentropy"] = _sigmoid_xent_case()
    cases["bias_add_dropout"] = _bias_dropout_case()
    cases["gemm_small"] = _gemm_case(5, 7, 3, False, False, 0.0)
    cases["gemm_packed_tt"] = _gemm_case(70, 90, 80, True, True, 0.5)
    cases["gemm_packed_beta1"] = _gemm_case(64, 130, 300, False, False, 1.0)
    for path in CONV_PATHS:
        for c in (codes.LINEAR, codes.RELU, codes.LEAKY_RELU):
            cases[f"conv_act{c}_s1@{path}"] = _conv_case(c, 1, 1)
            cases[f"conv_act{c}_s2@{path}"] = _conv_case(c, 2, 1)
        cases[f"conv_valid@{path}"] = _conv_case(codes.LINEAR, 1, 0)
        # Channel counts the direct convolution serves (K and C multiples of its vector width;
        # the cases above, K = 19, never reach it): its padded copies meet the poisoned filter.
        cases[f"conv_wide_s1@{path}"] = _conv_case(codes.RELU, 1, 1, C=16, K=32)
        cases[f"conv_wide_valid@{path}"] = _conv_case(codes.LINEAR, 1, 0, C=16, K=32)
        # Narrow filters (K below the vector width, S*C >= it): the dot-product forward, its
        # scalar tail (run 3 * 7 = 21) and its padded copies.
        cases[f"conv_narrow_s1@{path}"] = _conv_case(codes.RELU, 1, 1, C=7, K=3)
        cases[f"conv_narrow_s2@{path}"] = _conv_case(codes.LINEAR, 2, 1, C=16, K=1)
    cases["conv_grouped"] = _conv_case(codes.RELU, 1, 1, C=6, K=9, groups=3)
    cases["conv_depthwise"] = _conv_case(codes.RELU, 1, 1, C=19, K=38, groups=19)
    cases["conv_depthwise_s2"] = _conv_case(codes.LEAKY_RELU, 2, 1, C=19, K=19, groups=19)
    cases["maxpool"] = _pool_case("max")
    cases["maxpool_3x3_s1"] = _pool_case("max", C=19, R=3, S=3, stride=1, pad=1)
    cases["avgpool"] = _pool_case("avg")
    cases["batchnorm_rows"] = _batchnorm_case(29, 37, 1)
    cases["batchnorm_planes"] = _batchnorm_case(3, 5, 40)
    for c in codes.RECURRENT_ACTIVATIONS:
        cases[f"lstm_act{c}"] = _lstm_case(c, codes.SIGMOID)
        cases[f"lstm_rec{c}"] = _lstm_case(codes.TANH, c)
        cases[f"gru_act{c}"] = _gru_case(c, codes.SIGMOID)
        cases[f"gru_rec{c}"] = _gru_case(codes.TANH, c)
        cases[f"gru_reset_before_act{c}_rec{c}"] = _gru_case(c, c, reset_after=False)
        cases[f"simple_rnn_act{c}"] = _simple_rnn_case(c)
    for name in _OPTIMIZERS:
        cases[f"opt_{name}"] = _optimizer_case(name)
    return cases


CASES = _table()
PARAMS = [
    pytest.param(name, target, id=f"{name}-{target}")
    for name, (_, _, poisoned) in CASES.items()
    for target in poisoned
]



_REFERENCE_CACHE = {}


def _reference(name, target, poison):
    """The poisoned inputs and the reference outputs, computed once for all ISAs."""
    key = (name, target, poison)
    if key not in _REFERENCE_CACHE:
        make, run, _ = CASES[name]
        rng = np.random.default_rng(zlib.crc32(f"{name}/{target}/{poison}".encode()))
        inputs = make(rng)
        inputs[target] = _poison(rng, inputs[target], POISONS[poison])
        with np.errstate(all="ignore"):
            _REFERENCE_CACHE[key] = inputs, run(Run("reference"), inputs)
    return _REFERENCE_CACHE[key]


@pytest.mark.parametrize("poison", list(POISONS))
@pytest.mark.parametrize("name, target", PARAMS)
def test_non_finite_pattern_matches_reference(name, target, poison, isa, monkeypatch):
    run = CASES[name][1]
    if "@" in name:
        for var, value in CONV_PATHS[name.split("@")[1]].items():
            monkeypatch.setenv(var, value)
    inputs, want = _reference(name, target, poison)
    with np.errstate(all="ignore"):
        got = run(Run("cpu"), inputs)
    for key in want:
        if key == "indices":
            assert np.array_equal(got[key], want[key]), "indices: argmax differs"
        else:
            relaxed = poison != "nan" and (name, target, key) in INF_MAY_BE_NAN
            _assert_same_pattern(f"{name} [{target}={poison}] {key}", got[key], want[key],
                                 relaxed)

"""3-D convolution and the transposed convolutions (1-D, 2-D, 3-D), on the conv2d kernels.

Every tensor is brought to (N, D, H, W, C) (channels last; rank-3 and rank-4 inputs get
D = 1 and, for rank 3, H = 1), and the kernel to (T, R, S, ., .). A 3-D convolution is then a
sum over the T depth taps of 2-D convolutions: for tap t, output depth plane d reads input
plane d * stride_d + t * dil_d - pad_front, so the planes read by one tap form a strided slice
of the depth-padded input, batched with N into one conv2d kernel call of batch N * Pd.

The transposed convolution is the adjoint of a convolution: its forward is
conv2d_backward_input (kernel (R, S, filters, in_channels), Keras's layout), its input
gradient is conv2d_forward and its kernel gradient conv2d_backward_weight with the roles of
x and dy swapped. Sizes and padding follow Keras 3 (its JAX backend's formulation, see
`transpose_output_size_and_padding`), which every Keras backend reproduces.

Bias is added in NumPy; activations are separate ops (the layers apply them).
"""

import numpy as np

from fkeras import config
from fkeras.ops import shape_utils as su
from fkeras.ops.conv import normalize_padding, normalize_tuple
from fkeras.ops.conv_utils import conv_output_size_and_padding
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import Op, apply


# ---- layouts ----

def split_shape(shape, data_format):
    """(N, spatial tuple, C) of a shape in `data_format`."""
    if data_format == "channels_first":
        return shape[0], tuple(shape[2:]), shape[1]
    return shape[0], tuple(shape[1:-1]), shape[-1]


def join_shape(n, spatial, c, data_format):
    if data_format == "channels_first":
        return (n, c) + tuple(spatial)
    return (n,) + tuple(spatial) + (c,)


def to_ndhwc(x, data_format):
    """A contiguous (N, D, H, W, C) copy or view of a rank-3, 4 or 5 input."""
    if data_format == "channels_first":
        x = np.moveaxis(x, 1, -1)
    n, c = x.shape[0], x.shape[-1]
    sp = (1,) * (5 - x.ndim) + tuple(x.shape[1:-1])
    return np.ascontiguousarray(x).reshape((n,) + sp + (c,))


def from_ndhwc(y, data_format, rank):
    """The inverse of to_ndhwc for an output of the given rank."""
    y = y.reshape((y.shape[0],) + y.shape[1 + 5 - rank:])
    if data_format == "channels_first":
        y = np.ascontiguousarray(np.moveaxis(y, -1, 1))
    return y


def _pad3(t, fill=1):
    """A per-spatial-axis tuple padded at the front to 3 axes (the missing axes are trivial)."""
    return (fill,) * (3 - len(t)) + tuple(t)


def transpose_output_size_and_padding(size, k, stride=1, dil=1, padding="valid",
                                      output_padding=None):
    """(out, pad_before) of one axis of a transposed convolution, as Keras 3.

    `pad_before` is the padding of the forward convolution the transposed one is the adjoint
    of: input position p of the transposed convolution feeds output o = p * stride +
    r * dil - pad_before through tap r.
    """
    eff = (k - 1) * dil + 1
    if padding == "valid":
        op = max(eff, stride) - eff if output_padding is None else output_padding
        left, right = eff - 1, eff - 1 + op
    else:
        pad_len = stride + eff - 2 if output_padding is None else eff + eff % 2 - 2 + \
            output_padding
        left = min(pad_len // 2 + pad_len % 2, eff - 1)
        right = pad_len - left
    if size is None:
        return None, eff - 1 - left
    return (size - 1) * stride + 1 + left + right - eff + 1, eff - 1 - left


# ---- the depth-tap machinery shared by both ops ----

def _tap_slice(t, g):
    """The depth planes of the padded 'wide' tensor that tap t pairs with the Pd 'narrow' planes."""
    start = t * g["dd"]
    return slice(start, start + (g["Pd"] - 1) * g["sd"] + 1, g["sd"])


def _padded_depth(g):
    return max(g["pad_d"] + g["D"], (g["Pd"] - 1) * g["sd"] + (g["T"] - 1) * g["dd"] + 1)


def _sizes2d(g):
    """The conv2d kernels' size arguments for one depth tap (batch N * Pd)."""
    return (g["N"] * g["Pd"], g["H"], g["W"], g["C"], g["K"], g["R"], g["S"], g["P"], g["Q"],
            g["sh"], g["sw"], g["dh"], g["dw"], g["pt"], g["pl"], g["groups"])


def _pad_depth(dev, wide, g):
    """wide (N, D, H, W, X) zero-padded along depth to cover every tap (itself when no tap
    reaches past it: every 2-D problem)."""
    if g["pad_d"] == 0 and _padded_depth(g) == g["D"]:
        return wide
    out = dev.zeros((g["N"], _padded_depth(g)) + wide.shape[2:])
    out[:, g["pad_d"]:g["pad_d"] + g["D"]] = wide
    return out


def _tap_input(wide_padded, t, g):
    """The (N * Pd, H, W, X) planes of the padded wide tensor read by tap t."""
    planes = wide_padded[:, _tap_slice(t, g)]
    return np.ascontiguousarray(planes).reshape((-1,) + planes.shape[2:])


def _narrow_from_wide(dev, wide, w, g):
    """sum_t conv2d_forward(taps of wide (N, D, H, W, C), w[t]) -> (N, Pd, P, Q, K)."""
    wp = _pad_depth(dev, wide, g)
    shape = (g["N"] * g["Pd"], g["P"], g["Q"], g["K"])
    # One depth tap (every 2-D problem): the kernel writes the result itself.
    single = g["T"] == 1
    out = dev.empty(shape) if single else dev.zeros(shape)
    part = out if single else dev.empty(shape)
    for t in range(g["T"]):
        dev.kernels["conv2d_forward"](part, _tap_input(wp, t, g), np.ascontiguousarray(w[t]),
                                      None, *_sizes2d(g), 0, 0.0)
        if not single:
            out += part
    return out.reshape(g["N"], g["Pd"], g["P"], g["Q"], g["K"])


def _wide_from_narrow(dev, narrow, w, g):
    """The adjoint of _narrow_from_wide in its first argument.

    narrow (N, Pd, P, Q, K) -> (N, D, H, W, C), a view into the depth-padded result.
    """
    flat = np.ascontiguousarray(narrow).reshape(-1, g["P"], g["Q"], g["K"])
    if g["T"] == 1 and g["pad_d"] == 0 and _padded_depth(g) == g["D"]:  # 2-D: written in place
        out = dev.empty((g["N"], g["D"], g["H"], g["W"], g["C"]))
        dev.kernels["conv2d_backward_input"](out.reshape(-1, g["H"], g["W"], g["C"]), flat,
                                             np.ascontiguousarray(w[0]), *_sizes2d(g))
        return out
    wp = dev.zeros((g["N"], _padded_depth(g), g["H"], g["W"], g["C"]))
    part = dev.empty((flat.shape[0], g["H"], g["W"], g["C"]))
    for t in range(g["T"]):
        dev.kernels["conv2d_backward_input"](part, flat, np.ascontiguousarray(w[t]),
                                             *_sizes2d(g))
        wp[:, _tap_slice(t, g)] += part.reshape(g["N"], g["Pd"], g["H"], g["W"], g["C"])
    return wp[:, g["pad_d"]:g["pad_d"] + g["D"]]


def _kernel_grad(dev, narrow, wide, g):
    """d<narrow, sum_t conv(wide, w[t])>/dw: (T, R, S, C / groups, K)."""
    wp = _pad_depth(dev, wide, g)
    flat = np.ascontiguousarray(narrow).reshape(-1, g["P"], g["Q"], g["K"])
    dw = dev.empty((g["T"], g["R"], g["S"], g["C"] // g["groups"], g["K"]))
    for t in range(g["T"]):
        dev.kernels["conv2d_backward_weight"](dw[t], flat, _tap_input(wp, t, g), *_sizes2d(g))
    return dw


def _geometry(wide_spatial, narrow_spatial, pads, kshape, strides, dilation, N, C, K, groups):
    (D, H, W), (Pd, P, Q) = _pad3(wide_spatial), _pad3(narrow_spatial)
    (pad_d, pt, pl), (T, R, S) = _pad3(pads, 0), _pad3(kshape)
    (sd, sh, sw), (dd, dh, dw) = _pad3(strides), _pad3(dilation)
    return dict(N=N, D=D, H=H, W=W, C=C, K=K, Pd=Pd, P=P, Q=Q, T=T, R=R, S=S, sd=sd, sh=sh,
                sw=sw, dd=dd, dh=dh, dw=dw, pad_d=pad_d, pt=pt, pl=pl, groups=groups)


def _kernel5(kernel, rank):
    """The kernel as (T, R, S, X, Y)."""
    return kernel.reshape((1,) * (5 - rank) + kernel.shape)


def _bias_grad(grad_ndhwc, has_bias, needs):
    if not (has_bias and needs):
        return None
    return grad_ndhwc.reshape(-1, grad_ndhwc.shape[-1]).sum(axis=0)


# ---- 3-D convolution ----

class Conv3D(Op):
    """y = conv(x, kernel) + bias; x (N, D, H, W, C) in `data_format`, kernel (T, R, S, C/g, K)."""

    name = "conv3d"

    def _geometry(self, xshape, kshape, strides, padding, dilation_rate, data_format):
        N, sp, C = split_shape(tuple(xshape), data_format)
        if len(kshape) != len(xshape):
            raise ValueError(
                "Kernel shape must have the same length as input, but received kernel of shape "
                f"{tuple(kshape)} and input of shape {tuple(xshape)}.")
        *ks, Cg, K = kshape
        groups = 1
        if C is not None:
            if Cg == 0 or C % Cg or K % (C // Cg):
                raise ValueError(
                    f"The number of input channels ({C}) must be a multiple of the kernel's "
                    f"input channels ({Cg}), and the filters ({K}) of the groups "
                    f"({C // max(Cg, 1)}). Received inputs shape={tuple(xshape)}, kernel "
                    f"shape={tuple(kshape)}.")
            groups = C // Cg
        out, pads = [], []
        for size, k, s, d in zip(sp, ks, strides, dilation_rate):
            o, p = (None, 0) if size is None else conv_output_size_and_padding(size, k, s, d,
                                                                              padding)
            if o is not None and o <= 0:
                raise ValueError(
                    "Computed output size would be zero or negative. Received "
                    f"`inputs shape={tuple(xshape)}`, `kernel shape={tuple(kshape)}`, "
                    f"`dilation_rate={np.array(dilation_rate)}`, `strides={tuple(strides)}`, "
                    f"`padding={padding}`.")
            out.append(o)
            pads.append(p)
        return _geometry(sp, out, pads, ks, strides, dilation_rate, N, C, K, groups)

    def output_spec(self, x, kernel, bias=None, strides=(1, 1, 1), padding="valid",
                    dilation_rate=(1, 1, 1), data_format="channels_last"):
        g = self._geometry(su.shape_of(x), su.shape_of(kernel), strides, padding,
                           dilation_rate, data_format)
        return join_shape(g["N"], (g["Pd"], g["P"], g["Q"]), g["K"], data_format)

    def forward(self, dev, x, kernel, bias=None, strides=(1, 1, 1), padding="valid",
                dilation_rate=(1, 1, 1), data_format="channels_last"):
        g = self._geometry(x.shape, kernel.shape, strides, padding, dilation_rate, data_format)
        xs = to_ndhwc(x, data_format)
        y = _narrow_from_wide(dev, xs, kernel, g)
        if bias is not None:
            y += bias
        return from_ndhwc(y, data_format, 5), (xs, kernel, bias is not None, g)

    def backward(self, dev, saved, grad, needs, strides=(1, 1, 1), padding="valid",
                 dilation_rate=(1, 1, 1), data_format="channels_last"):
        xs, kernel, has_bias, g = saved
        dy = to_ndhwc(grad, data_format)
        dx = from_ndhwc(_wide_from_narrow(dev, dy, kernel, g), data_format, 5) if needs[0] \
            else None
        dw = _kernel_grad(dev, dy, xs, g) if needs[1] else None
        return dx, dw, _bias_grad(dy, has_bias, needs[2])


# ---- transposed convolution (1-D, 2-D, 3-D) ----

class ConvTranspose(Op):
    """y = conv_transpose(x, kernel) + bias; kernel (*kernel_size, filters, in_channels)."""

    name = "conv_transpose"

    def _geometry(self, xshape, kshape, strides, padding, output_padding, dilation_rate,
                  data_format):
        N, sp, C = split_shape(tuple(xshape), data_format)
        if len(kshape) != len(xshape):
            raise ValueError(
                "Kernel shape must have the same length as input, but received kernel of shape "
                f"{tuple(kshape)} and input of shape {tuple(xshape)}.")
        *ks, F, Cin = kshape
        if C is not None and C != Cin:
            raise ValueError(f"`conv_transpose`: the input has {C} channels but the kernel "
                             f"expects {Cin} (kernel shape {tuple(kshape)}).")
        ops_ = output_padding or (None,) * len(ks)
        out, pads = [], []
        for size, k, s, d, o in zip(sp, ks, strides, dilation_rate, ops_):
            length, pad = transpose_output_size_and_padding(size, k, s, d, padding, o)
            if length is not None and length <= 0:
                raise ValueError(
                    "Computed output size would be zero or negative. Received "
                    f"`inputs shape={tuple(xshape)}`, `kernel shape={tuple(kshape)}`, "
                    f"`strides={tuple(strides)}`, `padding={padding}`.")
            out.append(length)
            pads.append(pad)
        # The transposed convolution's output is the 'wide' side, its input the 'narrow' one.
        return _geometry(out, sp, pads, ks, strides, dilation_rate, N, F, Cin, 1)

    def output_spec(self, x, kernel, bias=None, strides=(1, 1), padding="valid",
                    output_padding=None, dilation_rate=(1, 1), data_format="channels_last"):
        xshape = su.shape_of(x)
        g = self._geometry(xshape, su.shape_of(kernel), strides, padding, output_padding,
                           dilation_rate, data_format)
        sp = (g["D"], g["H"], g["W"])[3 - (len(xshape) - 2):]
        return join_shape(g["N"], sp, g["C"], data_format)

    def forward(self, dev, x, kernel, bias=None, strides=(1, 1), padding="valid",
                output_padding=None, dilation_rate=(1, 1), data_format="channels_last"):
        rank = x.ndim
        g = self._geometry(x.shape, kernel.shape, strides, padding, output_padding,
                           dilation_rate, data_format)
        xs = to_ndhwc(x, data_format)
        w = _kernel5(kernel, rank)
        y = np.ascontiguousarray(_wide_from_narrow(dev, xs, w, g))
        if bias is not None:
            y += bias
        return from_ndhwc(y, data_format, rank), (xs, w, bias is not None, g, rank)

    def backward(self, dev, saved, grad, needs, strides=(1, 1), padding="valid",
                 output_padding=None, dilation_rate=(1, 1), data_format="channels_last"):
        xs, w, has_bias, g, rank = saved
        dy = to_ndhwc(grad, data_format)
        dx = dw = None
        if needs[0]:
            dx = from_ndhwc(_narrow_from_wide(dev, dy, w, g), data_format, rank)
        if needs[1]:
            dw = _kernel_grad(dev, xs, dy, g).reshape(w.shape[5 - rank:])
        return dx, dw, _bias_grad(dy, has_bias, needs[2])


# ---- public functions ----

def _spatial_args(inputs, n_min, n_max, strides, dilation_rate, data_format, name):
    rank = len(su.shape_of(inputs))
    if not n_min + 2 <= rank <= n_max + 2:
        raise ValueError(f"`{name}` supports inputs of rank {n_min + 2} to {n_max + 2}, "
                         f"received a tensor of shape {su.shape_of(inputs)}.")
    n = rank - 2
    return (normalize_tuple(strides, n, "strides"),
            normalize_tuple(dilation_rate, n, "dilation_rate"),
            config.data_format_or_default(data_format))


def conv3d(inputs, kernel, bias=None, strides=1, padding="valid", data_format=None,
           dilation_rate=1):
    """conv(inputs, kernel) + bias over 3 spatial dimensions.

    Args:
        inputs: (N, D, H, W, C) or (N, C, D, H, W) by `data_format`.
        kernel: (kd, kh, kw, C / groups, filters).
        bias: (filters,) or None.
    """
    strides, dilation, fmt = _spatial_args(inputs, 3, 3, strides, dilation_rate, data_format,
                                           "conv3d")
    return apply(_R["conv3d"], inputs, kernel, bias, strides=strides,
                 padding=normalize_padding(padding), dilation_rate=dilation, data_format=fmt)


def conv_transpose(inputs, kernel, strides=1, padding="valid", output_padding=None,
                   data_format=None, dilation_rate=1, bias=None):
    """keras.ops.conv_transpose over 1, 2 or 3 spatial dimensions (plus an optional bias).

    Args:
        inputs: (N, *spatial, C) or (N, C, *spatial) by `data_format`.
        kernel: (*kernel_size, filters, C), Keras's layout.
        strides, dilation_rate, output_padding: an int or one int per spatial dimension
            (output_padding None: Keras's default output size).
        padding: "valid" or "same".

    Example:
    ```python
    y = fkeras.ops.conv_transpose(np.ones((1, 4, 4, 3)), np.ones((3, 3, 8, 3)), 2, "same")
    # y.shape == (1, 8, 8, 8)
    ```
    """
    strides, dilation, fmt = _spatial_args(inputs, 1, 3, strides, dilation_rate, data_format,
                                           "conv_transpose")
    n = len(strides)
    if output_padding is not None:
        output_padding = normalize_tuple(output_padding, n, "output_padding")
    return apply(_R["conv_transpose"], inputs, kernel, bias, strides=strides,
                 padding=normalize_padding(padding), output_padding=output_padding,
                 dilation_rate=dilation, data_format=fmt)

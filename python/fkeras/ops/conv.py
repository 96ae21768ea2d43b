"""Convolution ops: keras.ops.conv and the fused conv2d op (bias and activation in one kernel).

The kernels take NHWC activations and (R, S, C / groups, K) filters (Keras's channels_last
kernel layout, used by Keras in both data formats). channels_first inputs are transposed to
NHWC here, in the op, and the output back: there is no second kernel. A 1-D convolution
(rank-3 input) runs as a 2-D one with H = 1.

The fused activation is limited to codes whose derivative the activation_backward kernel gets
right when handed the output in place of the input (linear, relu, leaky_relu with a
non-negative slope); any other activation runs as its own op after the convolution. The
backward takes the derivative and the bias gradient in one pass over dy
(bias_activation_backward, as dense_backward), or in two passes on a device without it.
"""

import numpy as np

from fkeras import config
from fkeras.backend import codes
from fkeras.ops import shape_utils as su
from fkeras.ops.conv_utils import conv_output_size_and_padding
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import Op, apply

# Activations fused into conv2d_forward (see the module docstring).
FUSED = frozenset((codes.LINEAR, codes.RELU, codes.LEAKY_RELU))


# ---- layout helpers shared with pooling ----

def native_layout(attrs):
    """Convolutions and pools run on a non-host device's buffers for channels_last (no
    transposes there)."""
    return attrs.get("data_format", "channels_last") == "channels_last"


def to_nhwc(x, data_format):
    """A contiguous (N, H, W, C) view or copy of a rank-3 or rank-4 input."""
    if type(x) is not np.ndarray:  # a device buffer, channels_last (native_layout)
        return x.reshape(x.shape[0], 1, *x.shape[1:]) if x.ndim == 3 else x
    if x.ndim == 3:
        x = x[:, None, :, :] if data_format == "channels_last" else x[:, :, None, :]
    if data_format == "channels_first":
        x = np.transpose(x, (0, 2, 3, 1))
    return np.ascontiguousarray(x)


def from_nhwc(y, data_format, rank):
    """The inverse of to_nhwc for an output of the given rank."""
    if type(y) is not np.ndarray:
        return y.reshape(y.shape[0], *y.shape[2:]) if rank == 3 else y
    if data_format == "channels_first":
        y = np.transpose(y, (0, 3, 1, 2))
        return np.ascontiguousarray(y[:, :, 0, :] if rank == 3 else y)
    return y[:, 0] if rank == 3 else y


def spatial_nhwc(shape, data_format):
    """(N, H, W, C) of a rank-3 or rank-4 shape (H = 1 for rank 3); entries may be None."""
    if data_format == "channels_first":
        n, c, *sp = shape
    else:
        n, *sp, c = shape
    if len(sp) == 1:
        sp = [1] + sp
    return n, sp[0], sp[1], c


def build_shape(n, spatial, c, data_format, rank):
    """The output shape in the input's layout from NHWC pieces (drops H for rank 3)."""
    spatial = tuple(spatial[1:]) if rank == 3 else tuple(spatial)
    if data_format == "channels_first":
        return (n, c) + spatial
    return (n,) + spatial + (c,)


def normalize_tuple(value, n, name):
    """An int or an n-sequence of ints as an n-tuple (Keras's standardize_tuple)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,) * n
    try:
        out = tuple(value)
    except TypeError:
        out = ()
    if len(out) != n or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                                for v in out):
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. "
                         f"Received {name}={value}")
    return tuple(int(v) for v in out)


def check_rank(x, op_name):
    rank = len(su.shape_of(x))
    if rank not in (3, 4):
        raise ValueError(f"`{op_name}` supports inputs of rank 3 (1-D) or 4 (2-D), received a "
                         f"tensor of shape {su.shape_of(x)}.")
    return rank


def window_geometry(H, W, R, S, strides, dilation, padding):
    """(P, pad_top, Q, pad_left) for an NHWC input (H, W may be None: P/Q are then None)."""
    P, pt = (None, 0) if H is None else conv_output_size_and_padding(
        H, R, strides[0], dilation[0], padding)
    Q, pl = (None, 0) if W is None else conv_output_size_and_padding(
        W, S, strides[1], dilation[1], padding)
    return P, pt, Q, pl


# ---- the fused conv2d op ----

class Conv2D(Op):
    """y = act(conv(x, kernel) + bias); x rank 3 or 4 in `data_format`, kernel (R, S, C/g, K)."""

    name = "conv2d"
    device_native = True

    def native_on(self, inputs, attrs):
        return native_layout(attrs)

    def _geometry(self, xshape, kshape, strides, padding, dilation_rate, data_format):
        rank = len(xshape)
        N, H, W, C = spatial_nhwc(xshape, data_format)
        if len(kshape) != rank:
            raise ValueError(
                "Kernel shape must have the same length as input, but received kernel of shape "
                f"{tuple(kshape)} and input of shape {tuple(xshape)}.")
        R, S, Cg, K = (1,) + tuple(kshape) if rank == 3 else tuple(kshape)
        groups = 1
        if C is not None:
            if Cg == 0 or C % Cg:
                raise ValueError(
                    f"The number of input channels ({C}) must be a multiple of the kernel's "
                    f"input channels ({Cg}). Received inputs shape={tuple(xshape)}, kernel "
                    f"shape={tuple(kshape)}.")
            groups = C // Cg
            if K % groups:
                raise ValueError(f"The number of filters ({K}) must be divisible by the number "
                                 f"of groups ({groups}).")
        P, pt, Q, pl = window_geometry(H, W, R, S, strides, dilation_rate, padding)
        if (P is not None and P <= 0) or (Q is not None and Q <= 0):
            raise ValueError(
                "Computed output size would be zero or negative. Received "
                f"`inputs shape={tuple(xshape)}`, `kernel shape={tuple(kshape)}`, "
                f"`dilation_rate={np.array(dilation_rate[-(rank - 2):])}`, "
                f"`strides={tuple(strides[-(rank - 2):])}`, `padding={padding}`.")
        return dict(rank=rank, N=N, H=H, W=W, C=C, K=K, R=R, S=S, P=P, Q=Q, pt=pt, pl=pl,
                    groups=groups)

    def output_spec(self, x, kernel, bias=None, strides=(1, 1), padding="valid",
                    dilation_rate=(1, 1), data_format="channels_last", activation=0, alpha=0.0):
        g = self._geometry(su.shape_of(x), su.shape_of(kernel), strides, padding,
                           dilation_rate, data_format)
        if bias is not None and su.shape_of(bias) != (g["K"],):
            raise ValueError(f"`conv2d`: the bias must have shape ({g['K']},), received "
                             f"{su.shape_of(bias)}.")
        return build_shape(g["N"], (g["P"], g["Q"]), g["K"], data_format, g["rank"])

    def _sizes(self, g, strides, dilation_rate):
        return (g["N"], g["H"], g["W"], g["C"], g["K"], g["R"], g["S"], g["P"], g["Q"],
                strides[0], strides[1], dilation_rate[0], dilation_rate[1], g["pt"], g["pl"],
                g["groups"])

    def forward(self, dev, x, kernel, bias=None, strides=(1, 1), padding="valid",
                dilation_rate=(1, 1), data_format="channels_last", activation=0, alpha=0.0):
        g = self._geometry(x.shape, kernel.shape, strides, padding, dilation_rate, data_format)
        xs = to_nhwc(x, data_format)
        w = kernel.reshape(g["R"], g["S"], -1, g["K"])
        y = dev.empty((g["N"], g["P"], g["Q"], g["K"]))
        dev.kernels["conv2d_forward"](y, xs, w, bias, *self._sizes(g, strides, dilation_rate),
                                      activation, alpha)
        return from_nhwc(y, data_format, g["rank"]), (xs, w, y, bias is not None, g)

    def backward(self, dev, saved, grad, needs, strides=(1, 1), padding="valid",
                 dilation_rate=(1, 1), data_format="channels_last", activation=0, alpha=0.0):
        xs, w, y, has_bias, g = saved
        dz = to_nhwc(grad, data_format)
        db = dev.empty((g["K"],)) if has_bias and needs[2] else None
        fused = dev.kernels.get("bias_activation_backward")
        if fused is not None and (activation != codes.LINEAR or db is not None):
            # One pass over dy for the derivative (read off y: exact for the FUSED codes) and
            # the bias gradient, as in dense_backward; dz only when a product kernel reads it.
            dy, out = dz, None
            if activation != codes.LINEAR and (needs[0] or needs[1]):
                dz = out = dev.empty(y.shape)
            fused(out, db, dy, y, y.size // g["K"] if g["K"] else 0, g["K"], activation, alpha)
        else:  # a device without the fused pass: the derivative, then the bias sum over dz
            if activation != codes.LINEAR:
                dy, dz = dz, dev.empty(y.shape)
                dev.kernels["activation_backward"](dz, dy, y, y, y.size, activation, alpha)
            if db is not None:
                dev.kernels["bias_add_backward"](db, dz, dz.size // g["K"], g["K"])
        return (*self.products_backward(dev, dz, xs, w, g, needs, strides, dilation_rate,
                                        data_format), db)

    def products_backward(self, dev, dz, xs, w, g, needs, strides, dilation_rate,
                          data_format="channels_last"):
        """(dx, dw) of the convolution from dz, its pre-activation cotangent (NHWC), each None
        unless `needs` asks for it (also the fused conv + max-pool op's, ops/conv_pool.py)."""
        dx = dw = None
        sizes = self._sizes(g, strides, dilation_rate)
        if needs[0]:
            dxs = dev.empty(xs.shape)
            dev.kernels["conv2d_backward_input"](dxs, dz, w, *sizes)
            dx = from_nhwc(dxs, data_format, g["rank"])
        if needs[1]:
            dw = dev.empty(w.shape)
            dev.kernels["conv2d_backward_weight"](dw, dz, xs, *sizes)
            dw = dw.reshape(w.shape if g["rank"] == 4 else w.shape[1:])
        return dx, dw


# ---- public functions ----

def _conv_args(inputs, strides, dilation_rate, data_format, name):
    rank = check_rank(inputs, name)
    n = rank - 2
    strides = normalize_tuple(strides, n, "strides")
    dilation = normalize_tuple(dilation_rate, n, "dilation_rate")
    if n == 1:
        strides, dilation = (1,) + strides, (1,) + dilation
    return strides, dilation, config.data_format_or_default(data_format)


def normalize_padding(padding):
    mode = str(padding).lower()
    if mode not in ("valid", "same"):
        raise ValueError("The `padding` argument must be a list/tuple or one of "
                         f"{{'valid', 'same'}}. Received: {padding}")
    return mode


def conv2d(inputs, kernel, bias=None, strides=1, padding="valid", data_format=None,
           dilation_rate=1, activation="linear", alpha=0.0):
    """act(conv(inputs, kernel) + bias): the Conv2D layer's op.

    Args:
        inputs: (N, H, W, C) or (N, C, H, W) by `data_format` (rank 3 for a 1-D convolution).
        kernel: (kh, kw, C / groups, filters); groups = C / kernel.shape[-2].
        bias: (filters,) or None.
        activation: a name or code; linear, relu and leaky_relu fuse into the kernel.

    Returns:
        The output in the input's data format.
    """
    strides, dilation, fmt = _conv_args(inputs, strides, dilation_rate, data_format, "conv2d")
    code = codes.ACTIVATION_CODES[activation] if isinstance(activation, str) else int(activation)
    fused = code in FUSED and float(alpha) >= 0.0
    y = apply(_R["conv2d"], inputs, kernel, bias, strides=strides,
              padding=normalize_padding(padding), dilation_rate=dilation, data_format=fmt,
              activation=code if fused else codes.LINEAR, alpha=float(alpha) if fused else 0.0)
    if fused or code == codes.LINEAR:
        return y
    return apply(_R["activation"], y, code=code, alpha=float(alpha))


def conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """keras.ops.conv: an N-D convolution (N = 1, 2 or 3) without bias.

    Args:
        inputs: rank 3 (N, W, C), 4 (N, H, W, C) or 5 (N, D, H, W, C) (channels_first:
            channels second).
        kernel: (*kernel_size, C / groups, filters).
        strides, dilation_rate: an int or one int per spatial dimension.
        padding: "valid" or "same" (TensorFlow's rule: the extra padding goes at the end).
        data_format: "channels_last" or "channels_first"; None: the configured default.

    Example:
    ```python
    y = fkeras.ops.conv(np.ones((1, 5, 5, 3)), np.ones((3, 3, 3, 8)), padding="same")
    # y.shape == (1, 5, 5, 8)
    ```
    """
    if len(su.shape_of(inputs)) == 5:
        from fkeras.ops.conv_nd import conv3d

        return conv3d(inputs, kernel, None, strides, padding, data_format, dilation_rate)
    return conv2d(inputs, kernel, None, strides, padding, data_format, dilation_rate)

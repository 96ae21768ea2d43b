"""`keras.ops.image` filters: gaussian_blur, sobel_edges, extract_patches(_3d),
scale_and_translate and ssim, composed from differentiable fkeras ops (depthwise and plain
convolutions with constant kernels, tensordot with resampling matrices), as Keras 3.15
computes them on its torch backend."""

import numpy as np

from fkeras.ops.image_layout import (as_tensor, cast_back, check_rank, data_format_of, float_images,
                                     from_nhwc, integer_dtype, to_nhwc)
from fkeras.ops.image_sampling import gaussian_kernel1d


def gaussian_blur(images, kernel_size=(3, 3), sigma=(1.0, 1.0), data_format=None):
    """Blurs images with a Gaussian kernel (per channel, zero padding kernel_size[0] // 2 on
    both spatial axes, as Keras's torch backend).

    Args:
        images: rank 3 or 4 tensor.
        kernel_size: `(size_0, size_1)`.
        sigma: `(sigma_0, sigma_1)`.
        data_format: `"channels_last"` or `"channels_first"`.

    Returns:
        The blurred images.
    """
    from fkeras import ops

    data_format = data_format_of(data_format)
    images = as_tensor(images)
    check_rank(images)
    k0, k1 = int(kernel_size[0]), int(kernel_size[1])
    kx = gaussian_kernel1d(k0, float(np.asarray(sigma[0])))
    ky = gaussian_kernel1d(k1, float(np.asarray(sigma[1])))
    kernel2d = np.outer(ky, kx).reshape(k0, k1)  # torch's outer(y, x) viewed as (k0, k1)
    x, unbatched = to_nhwc(images, data_format)
    channels = x.shape[-1]
    kernel = np.ascontiguousarray(np.broadcast_to(kernel2d[:, :, None, None],
                                                  (k0, k1, channels, 1)), np.float32)
    p = k0 // 2
    x = ops.pad(x, [[0, 0], [p, p], [p, p], [0, 0]])
    y = ops.depthwise_conv(x, kernel, 1, "valid", "channels_last")
    return from_nhwc(y, data_format, unbatched)


SOBEL_Y = np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]], np.float32)
SOBEL_X = SOBEL_Y.T.copy()


def sobel_edges(images, data_format=None):
    """Sobel gradients [dy, dx] of each channel (zero padding).

    Args:
        images: rank 4 tensor.
        data_format: `"channels_last"` or `"channels_first"`.

    Returns:
        `(batch, height, width, channels, 2)` (channels_last) or
        `(batch, channels, height, width, 2)` (channels_first).
    """
    from fkeras import ops

    data_format = data_format_of(data_format)
    images = as_tensor(images)
    if len(images.shape) != 4:
        raise ValueError("Invalid images rank: expected rank 4 (batch of images). "
                         f"Received: images.shape={list(images.shape)}")
    x, _ = to_nhwc(images, data_format)
    channels = x.shape[-1]
    x = ops.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]])
    edges = []
    for k in (SOBEL_Y, SOBEL_X):
        kernel = np.ascontiguousarray(np.broadcast_to(k[:, :, None, None], (3, 3, channels, 1)))
        edges.append(ops.depthwise_conv(x, kernel, 1, "valid", "channels_last"))
    y = ops.stack(edges, axis=-1)  # (N, H, W, C, 2)
    if data_format == "channels_first":
        y = ops.transpose(y, (0, 3, 1, 2, 4))
    return y


def _patches(images, size, strides, dilation_rate, padding, data_format, ndim):
    from fkeras import ops

    data_format = data_format_of(data_format)
    if strides is None or (not isinstance(strides, int) and not strides):
        strides = size
    channels = images.shape[-1] if data_format == "channels_last" else images.shape[-1 - ndim]
    out_dim = int(np.prod(size)) * channels
    kernel = np.eye(out_dim, dtype=np.float32).reshape(tuple(size) + (channels, out_dim))
    unbatched = len(images.shape) == ndim + 1
    dtype = integer_dtype(images)
    images = float_images(images, dtype)
    if unbatched:
        images = ops.expand_dims(images, 0)
    patches = ops.conv(images, kernel, strides=strides, padding=padding,
                       data_format=data_format, dilation_rate=dilation_rate)
    return cast_back(ops.squeeze(patches, 0) if unbatched else patches, dtype)


def extract_patches(images, size, strides=None, dilation_rate=1, padding="valid",
                    data_format=None):
    """Extracts patches (2-D, or 3-D when `size` has 3 entries) as the channels of the
    output: each output position holds its patch flattened in (rows, cols, channels) order.

    Args:
        images: rank 3 or 4 tensor (rank 4 or 5 for 3-D patches).
        size: int or tuple of 2 (or 3) ints.
        strides: defaults to `size`.
        dilation_rate: int or tuple.
        padding: `"valid"` or `"same"`.
        data_format: `"channels_last"` or `"channels_first"`.

    Returns:
        The patches.
    """
    if not isinstance(size, int):
        if not isinstance(size, (tuple, list)):
            raise TypeError("Invalid `size` argument. Expected an int or a tuple. "
                            f"Received: size={size} of type {type(size).__name__}")
        if len(size) not in (2, 3):
            raise ValueError("Invalid `size` argument. Expected a tuple of length 2 or 3. "
                             f"Received: size={size} with length {len(size)}")
    images = as_tensor(images)
    if not isinstance(size, int) and len(size) == 3:
        return _patches_3d(images, size, strides, dilation_rate, padding, data_format)
    size = (size, size) if isinstance(size, int) else tuple(size)
    return _patches(images, size, strides, dilation_rate, padding, data_format, 2)


def _patches_3d(volumes, size, strides, dilation_rate, padding, data_format):
    size = (size,) * 3 if isinstance(size, int) else tuple(size)
    if strides is None:
        strides = size
    if isinstance(strides, int):
        strides = (strides,) * 3
    if len(strides) != 3:
        raise ValueError(f"Invalid `strides` argument. Got: {strides}")
    return _patches(volumes, size, tuple(strides), dilation_rate, padding, data_format, 3)


def extract_patches_3d(volumes, size, strides=None, dilation_rate=1, padding="valid",
                       data_format=None):
    """Extracts 3-D patches of volumes (rank 4 or 5) as the channels of the output.

    Returns:
        The patches: 4-D (unbatched) or 5-D.
    """
    if isinstance(size, int):
        size = (size, size, size)
    elif len(size) != 3:
        raise TypeError("Invalid `size` argument. Expected an int or a tuple of length 3. "
                        f"Received: size={size}")
    return _patches_3d(as_tensor(volumes), size, strides, dilation_rate, padding, data_format)


SCALE_AND_TRANSLATE_METHODS = ("linear", "bilinear", "trilinear", "cubic", "bicubic",
                               "tricubic", "lanczos3", "lanczos5")


def _kernel(method, x):
    if method == "linear":
        return np.maximum(0.0, 1.0 - np.abs(x))
    if method == "cubic":
        out = ((1.5 * x - 2.5) * x) * x + 1.0
        out = np.where(x >= 1.0, ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0, out)
        return np.where(x >= 2.0, 0.0, out)
    radius = 3.0 if method == "lanczos3" else 5.0
    y = radius * np.sin(np.pi * x) * np.sin(np.pi * x / radius)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(x > 1e-3, y / np.where(x != 0, np.pi ** 2 * x ** 2, 1.0), 1.0)
    return np.where(x > radius, 0.0, out)


def _weight_matrix(in_size, out_size, scale, translation, method, antialias):
    """(in_size, out_size) resampling weights (JAX's scale_and_translate)."""
    scale, translation = np.float32(scale), np.float32(translation)
    inv_scale = np.float32(1.0) / scale
    kernel_scale = max(inv_scale, np.float32(1.0)) if antialias else np.float32(1.0)
    sample_f = ((np.arange(out_size, dtype=np.float32) + np.float32(0.5)) * inv_scale
                - translation * inv_scale - np.float32(0.5))
    x = np.abs(sample_f[None, :] - np.arange(in_size, dtype=np.float32)[:, None]) / kernel_scale
    weights = _kernel(method, x.astype(np.float32)).astype(np.float32)
    total = weights.sum(axis=0, keepdims=True)
    weights = np.where(np.abs(total) > 1000.0 * float(np.finfo(np.float32).eps),
                       weights / np.where(total != 0, total, 1), 0)
    inside = (sample_f >= -0.5) & (sample_f <= in_size - 0.5)
    return np.where(inside[None, :], weights, 0).astype(np.float32)


def scale_and_translate(images, output_shape, scale, translation, spatial_dims, method,
                        antialias=True):
    """Resamples `images` along `spatial_dims` to `output_shape` with per-axis `scale` and
    `translation` (JAX's `jax.image.scale_and_translate`).

    Args:
        images: tensor.
        output_shape: the full output shape.
        scale, translation: one value per spatial dim (concrete values).
        spatial_dims: the resampled axes.
        method: `"linear"`/`"bilinear"`/`"trilinear"`, `"cubic"`/`"bicubic"`/`"tricubic"`,
            `"lanczos3"` or `"lanczos5"`.
        antialias: widen the kernel when downsampling.

    Returns:
        The resampled tensor.
    """
    from fkeras import ops
    from fkeras.engine.keras_tensor import KerasTensor

    if method not in SCALE_AND_TRANSLATE_METHODS:
        raise ValueError("Invalid value for argument `method`. Expected of one "
                         f"{set(SCALE_AND_TRANSLATE_METHODS)}. Received: method={method}")
    if isinstance(scale, KerasTensor) or isinstance(translation, KerasTensor):
        raise ValueError("`scale_and_translate`: fkeras needs concrete `scale` and "
                         "`translation` values (they set constant resampling matrices).")
    kind = {"bilinear": "linear", "trilinear": "linear", "bicubic": "cubic",
            "tricubic": "cubic"}.get(method, method)
    images = as_tensor(images)
    scale = np.asarray(getattr(scale, "numpy", lambda: scale)(), np.float32).reshape(-1)
    translation = np.asarray(getattr(translation, "numpy", lambda: translation)(),
                             np.float32).reshape(-1)
    out = images
    ndim = len(images.shape)
    for i, d in enumerate(spatial_dims):
        d = d % ndim
        w = _weight_matrix(images.shape[d], int(output_shape[d]), scale[i], translation[i],
                           kind, antialias)
        out = ops.moveaxis(ops.tensordot(out, w, axes=([d], [0])), -1, d)
    return out


def _gaussian_kernel2d(size, sigma):
    g = gaussian_kernel1d(size, sigma)
    return np.outer(g, g).astype(np.float32)


def ssim(image1, image2, max_val=1.0, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03,
         data_format=None):
    """Structural similarity (Gaussian window, "valid" filtering), averaged over the
    spatial axes and channels.

    Args:
        image1, image2: rank 3 or 4 tensors of the same shape.
        max_val: the dynamic range of the images.
        filter_size, filter_sigma: the Gaussian window.
        k1, k2: the SSIM constants.
        data_format: `"channels_last"` or `"channels_first"`.

    Returns:
        One value per image (a scalar for rank 3 inputs).
    """
    from fkeras import ops

    data_format = data_format_of(data_format)
    image1, image2 = as_tensor(image1), as_tensor(image2)
    check_rank(image1, "image1")
    check_rank(image2, "image2")
    x1, unbatched = to_nhwc(image1, data_format)
    x2, _ = to_nhwc(image2, data_format)
    _, height, width, channels = x1.shape
    kernel = _gaussian_kernel2d(int(filter_size), float(filter_sigma))[:, :, None, None]
    c1 = (k1 * max_val) ** 2
    c2 = (k2 * max_val) ** 2
    x1 = ops.reshape(ops.transpose(x1, (0, 3, 1, 2)), (-1, height, width, 1))
    x2 = ops.reshape(ops.transpose(x2, (0, 3, 1, 2)), (-1, height, width, 1))

    def blur(x):
        return ops.conv(x, kernel, 1, "valid", "channels_last")

    mu1, mu2 = blur(x1), blur(x2)
    mu1_sq, mu2_sq, mu1_mu2 = ops.multiply(mu1, mu1), ops.multiply(mu2, mu2), ops.multiply(mu1, mu2)
    s1 = ops.subtract(blur(ops.multiply(x1, x1)), mu1_sq)
    s2 = ops.subtract(blur(ops.multiply(x2, x2)), mu2_sq)
    s12 = ops.subtract(blur(ops.multiply(x1, x2)), mu1_mu2)
    num = ops.multiply(ops.add(ops.multiply(mu1_mu2, 2.0), c1), ops.add(ops.multiply(s12, 2.0), c2))
    den = ops.multiply(ops.add(ops.add(mu1_sq, mu2_sq), c1), ops.add(ops.add(s1, s2), c2))
    value = ops.mean(ops.divide(num, den), axis=(1, 2, 3))
    result = ops.mean(ops.reshape(value, (-1, channels)), axis=-1)
    return ops.squeeze(result, 0) if unbatched else result

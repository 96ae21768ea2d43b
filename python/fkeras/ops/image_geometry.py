"""`keras.ops.image` geometric transforms: map_coordinates, affine_transform,
perspective_transform, elastic_transform, on the `image_sample` op (`image_sampling.py`)."""

from fkeras.ops.image_layout import (UnknownChoiceError, as_tensor, check_rank, data_format_of,
                                     from_nhwc, to_nhwc)
from fkeras.ops.image_sampling import FILL_MODES, INTERPOLATIONS, sample


def _check_interpolation(interpolation):
    if interpolation not in INTERPOLATIONS:
        raise ValueError("Invalid value for argument `interpolation`. Expected of one "
                         f"{set(INTERPOLATIONS)}. Received: interpolation={interpolation}")


def _check_fill_mode(fill_mode):
    if fill_mode not in FILL_MODES:
        raise ValueError("Invalid value for argument `fill_mode`. Expected of one "
                         f"{set(FILL_MODES)}. Received: fill_mode={fill_mode}")


def map_coordinates(inputs, coordinates, order, fill_mode="constant", fill_value=0):
    """Samples `inputs` at `coordinates` (scipy's `map_coordinates`, orders 0 and 1).

    Args:
        inputs: tensor of any rank.
        coordinates: `(inputs.ndim, ...)` coordinates, one row per axis of `inputs`.
        order: 0 (nearest, round half to even) or 1 (linear).
        fill_mode: `"constant"`, `"nearest"`, `"wrap"`, `"mirror"` or `"reflect"`.
        fill_value: the value outside the input for `"constant"`.

    Returns:
        A tensor of shape `coordinates.shape[1:]`.
    """
    inputs, coordinates = as_tensor(inputs), as_tensor(coordinates)
    if coordinates.shape[0] != len(inputs.shape):
        raise ValueError("First dim of `coordinates` must be the same as the rank of "
                         f"`inputs`. Received inputs with shape: {tuple(inputs.shape)} and "
                         f"coordinate leading dim of {coordinates.shape[0]}")
    if len(coordinates.shape) < 2:
        raise ValueError("Invalid coordinates rank: expected at least rank 2. Received "
                         f"input with shape: {tuple(coordinates.shape)}")
    if fill_mode not in FILL_MODES:
        raise ValueError("Invalid value for argument `fill_mode`. Expected one of "
                         f"{set(FILL_MODES)}. Received: fill_mode={fill_mode}")
    if order not in (0, 1):  # Keras's text; its type (NotImplementedError) still catches it
        raise UnknownChoiceError("map_coordinates currently requires order<=1")
    return sample(inputs, coordinates, kind="map_coordinates", order=order,
                  fill_mode=fill_mode, fill_value=fill_value)


def affine_transform(images, transform, interpolation="bilinear", fill_mode="constant",
                     fill_value=0, data_format=None):
    """Applies projective transforms `[a0, a1, a2, b0, b1, b2, c0, c1]` (output (x, y) reads
    the input at (a0 x + a1 y + a2, b0 x + b1 y + b2); Keras's torch backend adds c0, c1
    times the channel index instead of dividing).

    Args:
        images: rank 3 or 4 tensor.
        transform: `(8,)` or `(N, 8)`.
        interpolation: `"nearest"` or `"bilinear"`.
        fill_mode: `"constant"`, `"nearest"`, `"wrap"`, `"mirror"` or `"reflect"`.
        fill_value: the value outside the image for `"constant"`.
        data_format: `"channels_last"` or `"channels_first"`.

    Returns:
        The transformed images.
    """
    data_format = data_format_of(data_format)
    images, transform = as_tensor(images), as_tensor(transform)
    _check_interpolation(interpolation)
    _check_fill_mode(fill_mode)
    check_rank(images)
    if len(transform.shape) not in (1, 2):
        raise ValueError("Invalid transform rank: expected rank 1 (single transform) or rank "
                         "2 (batch of transforms). Received input with shape: "
                         f"transform.shape={tuple(transform.shape)}")
    x, unbatched = to_nhwc(images, data_format)
    y = sample(x, transform, kind="affine", order=INTERPOLATIONS[interpolation],
               fill_mode=fill_mode, fill_value=fill_value)
    return from_nhwc(y, data_format, unbatched)


def _check_points(points, name):
    shape = tuple(points.shape)
    if shape[-2:] != (4, 2) or len(shape) not in (2, 3):
        raise ValueError(f"Invalid {name} shape: expected (4,2) for a single image or (N,4,2) "
                         f"for a batch. Received shape: {shape}")


def perspective_transform(images, start_points, end_points, interpolation="bilinear",
                          fill_value=0, data_format=None):
    """Warps images so that `start_points` (4 corners, (x, y)) move to `end_points`.

    Args:
        images: rank 3 or 4 tensor.
        start_points, end_points: `(4, 2)` or `(N, 4, 2)`.
        interpolation: `"nearest"` or `"bilinear"`.
        fill_value: the value outside the image.
        data_format: `"channels_last"` or `"channels_first"`.

    Returns:
        The transformed images.
    """
    data_format = data_format_of(data_format)
    images = as_tensor(images)
    start_points, end_points = as_tensor(start_points), as_tensor(end_points)
    _check_interpolation(interpolation)
    check_rank(images)
    _check_points(start_points, "start_points")
    _check_points(end_points, "end_points")
    if tuple(start_points.shape) != tuple(end_points.shape):
        raise ValueError("start_points and end_points must have the same shape. Received "
                         f"start_points.shape={tuple(start_points.shape)}, "
                         f"end_points.shape={tuple(end_points.shape)}")
    x, unbatched = to_nhwc(images, data_format)
    y = sample(x, start_points, end_points, kind="perspective",
               order=INTERPOLATIONS[interpolation], fill_value=fill_value)
    return from_nhwc(y, data_format, unbatched)


def elastic_transform(images, alpha=20.0, sigma=5.0, interpolation="bilinear",
                      fill_mode="reflect", fill_value=0.0, seed=None, data_format=None):
    """Elastic deformation: each pixel moves by alpha times a Gaussian-blurred (sigma) field
    of N(0, sigma^2) noise. The noise comes from NumPy's generator seeded by `seed` (an
    int gives the same field at every call; Keras's torch numbers are not reproduced).

    Returns:
        The deformed images.
    """
    data_format = data_format_of(data_format)
    _check_interpolation(interpolation)
    _check_fill_mode(fill_mode)
    images = as_tensor(images)
    check_rank(images)
    if seed is not None and not isinstance(seed, int):
        seed = int(getattr(seed, "seed", 0) or 0)  # a SeedGenerator: its initial seed
    x, unbatched = to_nhwc(images, data_format)
    y = sample(x, kind="elastic", order=INTERPOLATIONS[interpolation], fill_mode=fill_mode,
               fill_value=fill_value, alpha=float(alpha), sigma=float(sigma), seed=seed)
    return from_nhwc(y, data_format, unbatched)

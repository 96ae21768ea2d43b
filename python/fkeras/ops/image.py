"""`keras.ops.image` (Keras 3.15's 16 names, its signatures, checks and error texts; the
torch backend's numbers). One implementation per function, composed from differentiable
fkeras ops or, for the geometric samplers, the `image_sample` op (`image_sampling.py`, its
gradient a scatter-add). These names are not top-level `fkeras.ops` names (as in Keras).

Differentiable in the images: all of them (crop/pad/grayscale/resize/blur/sobel/patches/
scale_and_translate are linear; affine/perspective/elastic transforms and map_coordinates
through the sampler's adjoint; rgb_to_hsv and hsv_to_rgb through their ops' analytic
backward (`image_hsv.py`); ssim through its composed ops). Transforms, coordinates and
points get no gradient.
"""

from fkeras.ops.image_filters import (  # noqa: F401
    extract_patches,
    extract_patches_3d,
    gaussian_blur,
    scale_and_translate,
    sobel_edges,
    ssim,
)
from fkeras.ops.image_geometry import (  # noqa: F401
    affine_transform,
    elastic_transform,
    map_coordinates,
    perspective_transform,
)
from fkeras.ops.image_color import (  # noqa: F401
    crop_images,
    hsv_to_rgb,
    pad_images,
    resize,
    rgb_to_grayscale,
    rgb_to_hsv,
)

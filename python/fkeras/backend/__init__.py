"""fkeras.backend: devices and their kernel tables (fkeras/backend/devices.py), and the
keras.backend functions (fkeras/backend/keras_functions.py: Keras 3's names and the Keras 2
`K.` functions)."""

from fkeras.backend.devices import (
    Device,
    available_devices,
    current_device_name,
    device,
    get_device,
    get_kernels,
    set_device,
)
from fkeras.backend.keras_functions import (  # noqa: F401
    backend,
    batch_get_value,
    batch_set_value,
    clear_session,
    constant,
    count_params,
    dtype,
    epsilon,
    eval,
    floatx,
    get_uid,
    get_value,
    image_data_format,
    int_shape,
    is_float_dtype,
    is_int_dtype,
    is_keras_tensor,
    ndim,
    ones,
    random_normal_variable,
    random_uniform_variable,
    result_type,
    set_epsilon,
    set_floatx,
    set_image_data_format,
    set_value,
    shape,
    standardize_dtype,
    variable,
    zeros,
)

__all__ = [
    "Device",
    "available_devices",
    "current_device_name",
    "device",
    "get_device",
    "get_kernels",
    "set_device",
]

"""Devices and their kernel tables (see fkeras/backend/device.py)."""

from fkeras.backend.devices import (
    Device,
    available_devices,
    current_device_name,
    device,
    get_device,
    get_kernels,
    set_device,
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

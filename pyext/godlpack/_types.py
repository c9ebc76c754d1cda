"""Small Python-side types shared by the extension module and the package."""
from __future__ import annotations

import enum
from typing import NamedTuple


class DLDeviceType(enum.IntEnum):
    """DLPack 1.3 device types (DLDeviceType)."""

    CPU = 1
    CUDA = 2
    CUDA_HOST = 3
    OPENCL = 4
    VULKAN = 7
    METAL = 8
    VPI = 9
    ROCM = 10
    ROCM_HOST = 11
    EXT_DEV = 12
    CUDA_MANAGED = 13
    ONEAPI = 14
    WEBGPU = 15
    HEXAGON = 16
    MAIA = 17
    TRN = 18


class Device(NamedTuple):
    """A DLPack device: (device_type, device_id). Compares equal to a plain tuple."""

    device_type: int
    device_id: int

    def __str__(self) -> str:
        try:
            name = DLDeviceType(self.device_type).name.lower()
        except ValueError:
            name = f"device_type({self.device_type})"
        return f"{name}:{self.device_id}"

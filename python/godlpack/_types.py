"""Small Python-side types shared by the extension module and the package."""
from __future__ import annotations

from ._godlpack import Device
from ._tables import DLDeviceType

__all__ = ["Device", "DLDeviceType"]

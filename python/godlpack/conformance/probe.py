"""Counting probes: a producer whose deleters count their calls, and capsule helpers.

The C side is the small extension ``godlpack._probe`` (test scaffolding, kept out
of the production module).
"""
from __future__ import annotations

import ctypes
import gc
import struct
from typing import Any

from godlpack import _probe

READ_ONLY, IS_COPIED = 1, 2
_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype = ctypes.c_char_p
_get_name.argtypes = [ctypes.py_object]


_set_name = ctypes.pythonapi.PyCapsule_SetName
_set_name.argtypes = [ctypes.py_object, ctypes.c_char_p]
_NAMES: dict[str, bytes] = {}  # capsules keep the name pointer: keep the bytes alive


_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def capsule_name(cap: Any) -> str:
    return (_get_name(cap) or b"").decode()


def layout(cap: Any) -> dict[str, Any]:
    """Start address (data + byte_offset), shape, strides (None if NULL) and
    element size of an unused capsule's tensor, read with ctypes (x86-64/arm64
    DLTensor: data @0, ndim @16, dtype @20, shape @24, strides @32, byte_offset @40)."""
    name = capsule_name(cap)
    if name not in ("dltensor", "dltensor_versioned"):
        raise ValueError(f"not an unused DLPack capsule: {name!r}")
    t = _get_pointer(cap, name.encode()) + (32 if name == "dltensor_versioned" else 0)
    ndim = ctypes.c_int32.from_address(t + 16).value
    shape_p, strides_p = (ctypes.c_void_p.from_address(t + o).value for o in (24, 32))
    arr = ctypes.c_int64 * ndim
    return dict(start=(ctypes.c_void_p.from_address(t).value or 0) + ctypes.c_uint64.from_address(t + 40).value,
                shape=tuple(arr.from_address(shape_p)) if shape_p else None,
                strides=tuple(arr.from_address(strides_p)) if strides_p else None,
                itemsize=ctypes.c_uint8.from_address(t + 21).value * ctypes.c_uint16.from_address(t + 22).value // 8)


def rename(cap: Any, name: str) -> None:
    """Renames a capsule (as a consumer renames one it takes), for tests of refusals."""
    _set_name(cap, _NAMES.setdefault(name, name.encode()))


def compact_strides(shape: tuple[int, ...]) -> list[int]:
    out, acc = [0] * len(shape), 1
    for i in range(len(shape) - 1, -1, -1):
        out[i] = acc
        acc *= max(shape[i], 1)
    return out


class Probe:
    """A producer object whose capsules come from the counting probe.

    The managed tensor holds float64 ``values`` (or raw ``data`` bytes); every
    deleter call is counted, so exactly-once is observable for any consumer.
    """

    COMPACT = "compact"

    def __init__(self, shape=(4,), strides=COMPACT, values=(1.0, 2.0, 3.0, 4.0), *, data=None, version=(1, 3),
                 dtype=(2, 64, 1), device=(1, 0), byte_offset=0, flags=0, ndim=None, legacy_only=False):
        if strides == Probe.COMPACT:  # DLPack >= 1.2 producers always fill strides
            strides = tuple(compact_strides(shape))
        self.spec = dict(shape=shape, strides=strides, dtype=dtype, device=device, byte_offset=byte_offset,
                         flags=flags, version=version, ndim=len(shape) if ndim is None else ndim)
        self.data = data if data is not None or values is None else struct.pack(f"{len(values)}d", *values)
        self.legacy_only = legacy_only
        self.tokens: list[Any] = []
        self.capsules: list[Any] = []  # kept to read their names; release() drops them
        self.versioned: list[bool] = []

    def make(self, versioned: bool) -> Any:
        cap, tok = _probe.make(versioned, **self.spec, data=self.data)
        self.tokens.append(tok)
        self.capsules.append(cap)
        self.versioned.append(versioned)
        return cap

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        mv = kwargs.get("max_version")
        if self.legacy_only and set(kwargs) - {"stream"}:
            raise TypeError("legacy producer: unexpected keyword")
        return self.make(mv is not None and mv[0] >= 1)

    def __dlpack_device__(self) -> tuple[int, int]:
        return tuple(self.spec["device"])  # type: ignore[return-value]

    def calls(self) -> list[int]:
        return [t.calls for t in self.tokens]

    def last_name(self) -> str:
        return capsule_name(self.capsules[-1]) if self.capsules else ""

    def release(self) -> None:
        self.capsules.clear()
        gc.collect()

"""godlpack: DLPack for Go, as a CPython extension module written in Go.

Zero-copy, exactly-once exchange of tensors between Go and NumPy, PyTorch,
JAX and CuPy. See ``from_dlpack`` and ``Tensor``.
"""
from __future__ import annotations

import os as _os
from typing import Any, Sequence

from . import _godlpack
from ._godlpack import _C_API, Tensor, cuda_status, from_dlpack, is_cpu_accessible  # noqa: F401
from ._types import Device, DLDeviceType

__all__ = [
    "Tensor",
    "Device",
    "DLDeviceType",
    "from_dlpack",
    "dlpack_info",
    "is_cpu_accessible",
    "cuda_status",
    "check",
    "empty",
    "zeros",
    "full",
    "arange",
    "get_include",
    "__version__",
]

__version__ = "0.1.0"

_EMPTY, _ZEROS, _FULL, _ARANGE, _FULL_INT, _ARANGE_INT = range(6)
_INT_KINDS = ("bool", "int", "uint")


def _shape(shape: int | Sequence[int]) -> tuple[int, ...]:
    if isinstance(shape, int) and not isinstance(shape, bool):
        return (shape,)
    return tuple(shape)


def empty(shape: int | Sequence[int], dtype: str = "float64") -> Tensor:
    """Uninitialised CPU tensor in 64-byte-aligned memory allocated by Go."""
    return _godlpack._create(_EMPTY, _shape(shape), str(dtype), 0.0, 0.0, 0.0, 0.0, 0.0)


def zeros(shape: int | Sequence[int], dtype: str = "float64") -> Tensor:
    """CPU tensor of zeros in 64-byte-aligned memory allocated by Go."""
    return _godlpack._create(_ZEROS, _shape(shape), str(dtype), 0.0, 0.0, 0.0, 0.0, 0.0)


def _default_dtype(*values: Any) -> str:
    if all(isinstance(v, bool) for v in values):
        return "bool"
    if all(isinstance(v, int) for v in values):
        return "int64"
    if any(isinstance(v, complex) for v in values):
        return "complex128"
    return "float64"


def full(shape: int | Sequence[int], fill_value: complex, dtype: str | None = None) -> Tensor:
    """CPU tensor filled with ``fill_value`` (dtype inferred like NumPy when None)."""
    dtype = str(dtype or _default_dtype(fill_value))
    if isinstance(fill_value, int) and dtype.startswith(_INT_KINDS):
        # Exact: int64 values (and uint64 ones, by their bits) never pass through float64.
        bits = int(fill_value) & (2**64 - 1)
        return _godlpack._create(_FULL_INT, _shape(shape), dtype, 0.0, 0.0, 0.0, 0.0, 0.0,
                                 bits - 2**64 if bits >= 2**63 else bits)
    v = complex(fill_value)
    return _godlpack._create(_FULL, _shape(shape), dtype, v.real, v.imag, 0.0, 0.0, 0.0)


def arange(start: float, stop: float | None = None, step: float = 1, dtype: str | None = None) -> Tensor:
    """1-d tensor ``start, start+step, ...`` below ``stop``, like ``numpy.arange``."""
    if stop is None:
        start, stop = 0, start
    dtype = str(dtype or _default_dtype(start, stop, step))
    if all(isinstance(v, int) for v in (start, stop, step)) and dtype.startswith(_INT_KINDS):
        return _godlpack._create(_ARANGE_INT, (), dtype, 0.0, 0.0, 0.0, 0.0, 0.0, start, stop, step)
    return _godlpack._create(_ARANGE, (), dtype, 0.0, 0.0, float(start), float(stop), float(step))


def dlpack_info() -> dict[str, Any]:
    """What this godlpack speaks: versions, dtypes and device types.

    ``api_version`` is the DLPack version we implement and stamp on exports;
    ``max_version`` is the newest version we accept on import (any 1.x);
    ``abi_version`` is the version of godlpack's helper C API table.
    """
    return {
        "api_version": tuple(_godlpack.API_VERSION),
        "max_version": tuple(_godlpack.MAX_IMPORT_VERSION),
        "abi_version": _godlpack.ABI_VERSION,
        "dtypes": list(_godlpack._names(0)),
        "device_types": {name: DLDeviceType[name.upper()].value for name in _godlpack._names(1)},
    }


def check(*modules: str) -> list:
    """Run the DLPack conformance checks against the named libraries (see godlpack.conformance)."""
    from .conformance import check as _check

    return _check(*modules)


def get_include() -> str:
    """Folder holding godlpack's C headers (dlpack.h and godlpack.h)."""
    return _os.path.join(_os.path.dirname(__file__), "include")

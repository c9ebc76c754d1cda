"""godlpack: DLPack for Go, as a CPython extension module written in Go.

Zero-copy, exactly-once exchange of tensors between Go and NumPy, PyTorch,
JAX and CuPy. See ``from_dlpack`` and ``Tensor``.
"""
from __future__ import annotations

import os as _os
from typing import Any, Sequence

import math as _math
import sys as _sys
import operator as _operator

from . import _godlpack
from ._godlpack import _C_API, Device, Tensor, cuda_status, from_dlpack, go_runtimes, is_cpu_accessible  # noqa: F401
from ._tables import DTYPES as _DTYPES
from ._tables import VERSION as __version__
from ._types import DLDeviceType

__all__ = [
    "Tensor",
    "Device",
    "DLDeviceType",
    "from_dlpack",
    "dlpack_info",
    "is_cpu_accessible",
    "cuda_status",
    "go_runtimes",
    "check",
    "empty",
    "zeros",
    "full",
    "arange",
    "get_include",
    "get_go_source",
    "__version__",
]

_NATIVE_ORDER = "<" if _sys.byteorder == "little" else ">"

# DLPack type codes of the integer kinds (tables: int 0, uint 1, bool 6).
_CODE = {name: (code, bits) for name, code, bits in _DTYPES}


def _dtype_name(dtype: Any) -> str:
    """A dtype name from a name, a NumPy dtype or type, or a PyTorch dtype."""
    if isinstance(dtype, str):
        return dtype
    name = getattr(dtype, "name", None)  # numpy.dtype, ml_dtypes
    if isinstance(name, str):
        order = getattr(dtype, "byteorder", "=")  # '=' native, '|' no order (1 byte), '<'/'>' explicit
        if order not in ("=", "|") and order != _NATIVE_ORDER:
            raise ValueError(f"dtype {dtype!r} is byte-swapped ({order!r}): godlpack tensors hold values in the "
                             f"native byte order ({_NATIVE_ORDER!r}); use {name!r}")
        return name
    if isinstance(dtype, type):  # numpy.float32, float, int, bool, complex
        return dtype.__name__
    text = str(dtype)
    if text.startswith("torch."):  # torch.float32, torch.bfloat16
        return text[len("torch."):]
    raise TypeError(f"dtype must be a name such as 'float32', or a NumPy or PyTorch dtype, got {dtype!r}")


def _dim(d: Any) -> int:
    if isinstance(d, bool) or not hasattr(d, "__index__"):  # NumPy's rule: bools are no sizes
        raise TypeError(f"shape entries must be ints, got {type(d).__name__}")
    d = _operator.index(d)  # numpy.int64 and the like, exactly
    if not -(2**63) <= d < 2**63:
        raise ValueError(f"shape entry {d} is beyond int64 (maximum allowed dimension exceeded)")
    return d


def _shape(shape: int | Sequence[int]) -> tuple[int, ...]:
    if hasattr(shape, "__index__") and not hasattr(shape, "__len__") and not isinstance(shape, bool):
        return (_dim(shape),)
    if isinstance(shape, (str, dict, set, frozenset)):  # iterable, but no sequence of sizes
        raise TypeError(f"shape must be an int or a sequence of ints, got {type(shape).__name__}")
    try:
        dims = tuple(shape)  # type: ignore[arg-type]  # an int was handled above
    except TypeError:
        raise TypeError(f"shape must be an int or a sequence of ints, got {type(shape).__name__}") from None
    return tuple(_dim(d) for d in dims)


def _int_range(dtype: str) -> tuple[int, int] | None:
    """(min, max) of an integer or bool dtype, None for the others."""
    code, bits = _CODE.get(dtype, (None, 0))
    if code == 0:
        return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    if code == 1:
        return 0, 2**bits - 1
    return None


def _check_int(value: Any, dtype: str) -> None:
    """OverflowError for a value an integer dtype cannot hold (NumPy's rule)."""
    rng = _int_range(dtype)
    if rng is None or isinstance(value, bool):
        return
    if isinstance(value, float):
        if not _math.isfinite(value):
            raise OverflowError(f"cannot convert {value!r} to {dtype}")
        value = int(value)  # truncated toward zero, as the conversion does
    if isinstance(value, int) and not rng[0] <= value <= rng[1]:
        raise OverflowError(f"Python integer {value} out of bounds for {dtype}")


def empty(shape: int | Sequence[int], dtype: Any = "float64") -> Tensor:
    """Uninitialised CPU tensor in 64-byte-aligned memory allocated by Go."""
    return _godlpack._empty(_shape(shape), _dtype_name(dtype), False)


def zeros(shape: int | Sequence[int], dtype: Any = "float64") -> Tensor:
    """CPU tensor of zeros in 64-byte-aligned memory allocated by Go (committed lazily)."""
    return _godlpack._empty(_shape(shape), _dtype_name(dtype), True)


_PY_SCALARS = (bool, int, float, complex)


def _py_scalar(value: Any) -> Any:
    """A NumPy (or other array library's) scalar as the Python scalar it holds,
    so that integers are taken exactly, never through float64, and the dtype
    is inferred from the value's kind."""
    if isinstance(value, _PY_SCALARS):
        return value
    item = getattr(value, "item", None)  # numpy.int64, numpy.bool_, 0-d arrays
    if callable(item):
        v = item()
        if isinstance(v, _PY_SCALARS):
            return v
    if hasattr(value, "__index__"):
        return _operator.index(value)
    return value


def _default_dtype(*values: Any) -> str:
    if all(isinstance(v, bool) for v in values):
        return "bool"
    if all(isinstance(v, int) for v in values):
        return "int64"
    if any(isinstance(v, complex) for v in values):
        return "complex128"
    return "float64"


def full(shape: int | Sequence[int], fill_value: complex, dtype: Any = None) -> Tensor:
    """CPU tensor filled with ``fill_value`` (dtype inferred like NumPy when None).

    Raises OverflowError when an integer dtype cannot hold the value.
    """
    if dtype is None:  # a NumPy scalar keeps its own dtype, as in NumPy
        name = getattr(getattr(fill_value, "dtype", None), "name", None)
        dtype = name if name in _CODE else None
    fill_value = _py_scalar(fill_value)
    dtype = _dtype_name(dtype) if dtype is not None else _default_dtype(fill_value)
    dims = _shape(shape)
    _check_int(fill_value, dtype)
    if isinstance(fill_value, int) and _CODE.get(dtype, (None,))[0] in (0, 1, 6):
        # Exact: int64 values (and uint64 ones, by their bits) never pass through float64.
        bits = int(fill_value) & (2**64 - 1)
        if _CODE[dtype][0] == 6:
            bits = int(bool(fill_value))
        return _godlpack._full_int(dims, dtype, bits - 2**64 if bits >= 2**63 else bits)
    v = complex(fill_value)
    return _godlpack._full(dims, dtype, v.real, v.imag)


def arange(start: float, stop: float | None = None, step: float = 1, dtype: Any = None) -> Tensor:
    """1-d tensor ``start, start+step, ...`` below ``stop``, like ``numpy.arange``.

    Raises OverflowError when an integer dtype cannot hold every element.
    """
    if stop is None:
        start, stop = 0, start
    start, stop, step = _py_scalar(start), _py_scalar(stop), _py_scalar(step)
    dtype = _dtype_name(dtype) if dtype is not None else _default_dtype(start, stop, step)
    if _CODE.get(dtype, (None,))[0] == 6:
        raise TypeError("arange() has no bool dtype (as NumPy's): use full() or a comparison")
    if all(isinstance(v, int) for v in (start, stop, step)) and _CODE.get(dtype, (None,))[0] in (0, 1):
        if step != 0:
            count = max(0, -((start - stop) // step))  # ceil((stop - start) / step)
            if count:
                _check_int(start, dtype)
                _check_int(start + (count - 1) * step, dtype)
        for v in (start, stop, step):
            if not -(2**63) <= v < 2**63:
                raise OverflowError(f"Python integer {v} out of bounds for int64 arithmetic")
        return _godlpack._arange_int(dtype, int(start), int(stop), int(step))
    return _godlpack._arange(dtype, float(start), float(stop), float(step))


def dlpack_info() -> dict[str, Any]:
    """What this godlpack speaks: versions, dtypes and device types.

    ``api_version`` is the DLPack version we implement and stamp on exports;
    ``max_version`` is the newest version we accept on import (any 1.x);
    ``abi_version`` is the version of godlpack's helper C API table;
    ``dtypes`` are the element types, and ``vector_dtypes`` is how a vector of
    them (lanes > 1, carried as bytes) is named: ``"{dtype}x{lanes}"``, so
    PyTorch's float4_e2m1fn_x2 is ``"float4_e2m1fnx2"``.
    """
    return _godlpack.dlpack_info()


def check(*modules: str) -> list:
    """Run the DLPack conformance checks against the named libraries (see godlpack.conformance)."""
    from .conformance import check as _check

    return _check(*modules)


def get_go_source() -> str:
    """Folder holding the Go source of godlpack's module (github.com/godlpack/godlpack:
    go.mod and the packages an extension links: go list -deps ./pyext, the
    runtime's layers under internal/cpython/ included; include/), for a `replace` line in an extension's go.mod: shipped inside
    the installed package (godlpack/go), or the source tree (PYTHONPATH=python)."""
    here = _os.path.dirname(_os.path.abspath(__file__))
    shipped = _os.path.join(here, "go")  # installed from a wheel or sdist
    if _os.path.isfile(_os.path.join(shipped, "go.mod")):
        return shipped
    # The source tree (editable install, PYTHONPATH=python, or a copy of the
    # package under build/ such as make asan's): the nearest folder above
    # whose go.mod is godlpack's module.
    d = here
    while True:
        try:
            with open(_os.path.join(d, "go.mod"), encoding="utf-8") as f:
                if f.readline().split()[1:2] == ["github.com/godlpack/godlpack"]:
                    return d
        except OSError:
            pass
        parent = _os.path.dirname(d)
        if parent == d:
            raise FileNotFoundError(f"godlpack's Go source is neither shipped in {here} nor in a tree above it")
        d = parent


def get_include() -> str:
    """Folder holding godlpack's C headers (godlpack/dlpack.h and godlpack/godlpack.h)."""
    here = _os.path.dirname(_os.path.abspath(__file__))
    shipped = _os.path.join(here, "include")  # installed from a wheel
    if _os.path.isdir(shipped):
        return shipped
    return _os.path.normpath(_os.path.join(here, "..", "..", "include"))  # source tree, editable install

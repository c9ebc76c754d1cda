"""The tests' counting DLPack producer, and ctypes views of the DLPack structs.

``CtypesProducer`` describes a NumPy array (or any malformed variant of it) and
gets each managed tensor from the one counting producer, ``godlpack._probe.make``
(C structs, a C deleter that counts its calls). Its capsules have **no
destructor**: an unconsumed capsule never calls the deleter, so every deleter
call the tests see was made by the consumer.

Every record (its probe Token, its array) stays referenced from a module-level
list for the whole process, so the struct and its shape/strides stay allocated:
even a buggy double call of the deleter is counted, not a crash.

The ctypes structs are for reading capsules (``read_versioned``), mostly
godlpack's own exports.
"""
from __future__ import annotations

import ctypes
from ctypes import POINTER, Structure, c_int32, c_int64, c_uint8, c_uint16, c_uint32, c_uint64, c_void_p
from typing import Any, Callable

import numpy as np

from godlpack import _probe
from godlpack.conformance.probe import capsule_name

READ_ONLY = 1 << 0
IS_COPIED = 1 << 1
IS_SUBBYTE_TYPE_PADDED = 1 << 2


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [
        ("data", c_void_p),
        ("device", DLDevice),
        ("ndim", c_int32),
        ("dtype", DLDataType),
        ("shape", POINTER(c_int64)),
        ("strides", POINTER(c_int64)),
        ("byte_offset", c_uint64),
    ]


class DLPackVersion(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


DELETER = ctypes.CFUNCTYPE(None, c_void_p)


class DLManagedTensor(Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p), ("deleter", c_void_p)]


class DLManagedTensorVersioned(Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", c_void_p),
        ("deleter", c_void_p),
        ("flags", c_uint64),
        ("dl_tensor", DLTensor),
    ]


assert ctypes.sizeof(DLTensor) == 48
assert ctypes.sizeof(DLManagedTensor) == 64
assert ctypes.sizeof(DLManagedTensorVersioned) == 80
assert DLManagedTensorVersioned.flags.offset == 24 and DLManagedTensorVersioned.dl_tensor.offset == 32

_PyCapsule_GetName = ctypes.pythonapi.PyCapsule_GetName
_PyCapsule_GetName.restype = ctypes.c_char_p
_PyCapsule_GetName.argtypes = [ctypes.py_object]

_PyCapsule_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_PyCapsule_GetPointer.restype = c_void_p
_PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def capsule_pointer(cap: Any) -> int:
    """The pointer stored in a capsule (read under its current name)."""
    p = _PyCapsule_GetPointer(cap, _PyCapsule_GetName(cap))
    assert p, "capsule holds NULL"
    return p


def read_versioned(cap: Any) -> DLManagedTensorVersioned:
    """The DLManagedTensorVersioned behind an (unconsumed) versioned capsule."""
    assert capsule_name(cap) == "dltensor_versioned"
    return DLManagedTensorVersioned.from_address(capsule_pointer(cap))


def read_legacy(cap: Any) -> DLManagedTensor:
    assert capsule_name(cap) == "dltensor"
    return DLManagedTensor.from_address(capsule_pointer(cap))


def orphan_calls() -> int:
    """Probe deleter calls with a pointer no record knows (a bug if any)."""
    return _probe.orphans()


class Record:
    """One managed tensor made by a producer, and what happened to it."""

    def __init__(self, token: Any, managed: Structure, keep: list) -> None:
        self.token = token
        self.managed = managed  # a ctypes view of the probe's struct
        self.keep = keep

    @property
    def calls(self) -> int:
        return self.token.calls

    @property
    def threads(self) -> list[int]:
        """Thread ident of each deleter call (the first four)."""
        return list(self.token.threads)


_records: list[Record] = []  # never emptied: see the module docstring

_NUMPY_DTYPES = {
    np.dtype(np.bool_): (6, 8),
    np.dtype(np.int8): (0, 8),
    np.dtype(np.int16): (0, 16),
    np.dtype(np.int32): (0, 32),
    np.dtype(np.int64): (0, 64),
    np.dtype(np.uint8): (1, 8),
    np.dtype(np.uint16): (1, 16),
    np.dtype(np.uint32): (1, 32),
    np.dtype(np.uint64): (1, 64),
    np.dtype(np.float16): (2, 16),
    np.dtype(np.float32): (2, 32),
    np.dtype(np.float64): (2, 64),
    np.dtype(np.complex64): (5, 64),
    np.dtype(np.complex128): (5, 128),
}

_UNSET: Any = object()


class CtypesProducer:
    """An object speaking the DLPack protocol with counted managed tensors.

    By default it describes ``array`` (a NumPy array, kept alive) exactly;
    every keyword overrides one field so malformed tensors can be made:
    ``version`` (versioned only), ``flags``, ``ndim``, ``shape``, ``strides``
    (a list, or None for NULL), ``null_shape``, ``dtype`` ((code, bits,
    lanes)), ``device`` ((type, id)), ``data`` (an int address, 0 for NULL),
    ``byte_offset``, ``deleter`` (False for a NULL deleter), ``deleter_raises``
    (the deleter leaves a RuntimeError set, as a broken producer's may).

    Protocol knobs: ``versioned`` (None: follow max_version like a modern
    producer; True/False: always that kind), ``legacy_signature`` (the
    ``__dlpack__`` takes no max_version/dl_device/copy, like pre-2023
    producers), ``raises`` (an exception to raise from ``__dlpack__``),
    ``returns`` (a value returned instead of a capsule), ``name`` (the capsule
    name to use instead of the right one), ``python_deleter`` (a function the
    deleter runs, with the GIL, before its counted C part: a deleter that
    runs Python code).
    """

    def __init__(
        self,
        array: np.ndarray | None = None,
        *,
        versioned: bool | None = None,
        legacy_signature: bool = False,
        raises: BaseException | None = None,
        returns: Any = _UNSET,
        name: bytes | None = None,
        version: tuple[int, int] = (1, 3),
        flags: int = 0,
        ndim: int | None = None,
        shape: list[int] | None = _UNSET,
        strides: list[int] | None = _UNSET,
        null_shape: bool = False,
        dtype: tuple[int, int, int] | None = None,
        device: tuple[int, int] = (1, 0),
        data: int | None = None,
        byte_offset: int = 0,
        deleter: bool = True,
        python_deleter: Callable[[], None] | None = None,
        deleter_raises: bool = False,
    ) -> None:
        if array is None:
            array = np.arange(12, dtype=np.float32).reshape(3, 4)
        self.array = array
        self.versioned = versioned
        self.legacy_signature = legacy_signature
        self.raises = raises
        self.returns = returns
        self.python_deleter = python_deleter
        shape = list(array.shape) if shape is _UNSET else shape
        self.spec = dict(
            shape=None if null_shape else shape,
            strides=[s // array.itemsize for s in array.strides] if strides is _UNSET else strides,
            ndim=len(shape) if ndim is None else ndim,
            version=version,
            dtype=(*_NUMPY_DTYPES.get(array.dtype, (2, 32)), 1) if dtype is None else dtype,
            device=device,
            data=array.ctypes.data if data is None else data,
            byte_offset=byte_offset,
            flags=flags,
            name=None if name is None else name.decode(),
            deleter=deleter,
            raising=deleter_raises,
        )
        self.records: list[Record] = []
        self.calls: list[dict] = []  # the keyword arguments of each __dlpack__ call

    @property
    def deleter_calls(self) -> int:
        """Deleter calls over every managed tensor made."""
        return sum(r.calls for r in self.records)

    @property
    def live(self) -> int:
        """Managed tensors made and not yet deleted."""
        return sum(r.calls == 0 for r in self.records)

    def capsule(self, versioned: bool = True) -> Any:
        """A raw PyCapsule (no destructor) owning a fresh managed tensor."""
        cap, token = _probe.make(versioned, destructor=False, **self.spec)
        m = (DLManagedTensorVersioned if versioned else DLManagedTensor).from_address(capsule_pointer(cap))
        rec = Record(token, m, [self.array])
        if self.python_deleter is not None and m.deleter:
            rec.keep.append(_run_python_first(m, self.python_deleter))
        self.records.append(rec)
        _records.append(rec)
        return cap

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        if args:
            raise TypeError("__dlpack__ takes keyword arguments only")
        if self.legacy_signature:
            extra = set(kwargs) - {"stream"}
            if extra:
                raise TypeError(f"__dlpack__() got an unexpected keyword argument {sorted(extra)[0]!r}")
        self.calls.append(dict(kwargs))
        if self.raises is not None:
            raise self.raises
        if self.returns is not _UNSET:
            return self.returns
        versioned = self.versioned
        if versioned is None:
            mv = kwargs.get("max_version")
            versioned = mv is not None and mv[0] >= 1
        return self.capsule(versioned)

    def __dlpack_device__(self) -> tuple[int, int]:
        return tuple(self.spec["device"])  # type: ignore[return-value]


def _run_python_first(m: Structure, fn: Callable[[], None]) -> Any:
    """Points m's deleter at a ctypes one that runs fn, then the probe's counting
    deleter; returns the ctypes function, which must stay alive."""
    counted = DELETER(m.deleter)

    def deleter(ptr: int | None) -> None:
        try:
            fn()
        finally:
            counted(ptr)

    d = DELETER(deleter)
    m.deleter = ctypes.cast(d, c_void_p).value
    return d

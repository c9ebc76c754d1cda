"""A DLPack producer written with ctypes, for exactly-once deleter tests.

``CtypesProducer`` builds ``DLManagedTensorVersioned`` or ``DLManagedTensor``
structs by hand (optionally malformed), installs a CFUNCTYPE deleter that
counts its calls, and returns a PyCapsule made with ``PyCapsule_New`` and **no
destructor**: an unconsumed capsule therefore never calls the deleter, so every
deleter call the tests see was made by the consumer.

Every struct, shape/strides array and data buffer stays referenced from a
module-level registry for the whole process, so even a buggy double call of
the deleter cannot touch freed memory (it is counted instead).
"""
from __future__ import annotations

import ctypes
import itertools
import threading
from ctypes import POINTER, Structure, c_int32, c_int64, c_uint8, c_uint16, c_uint32, c_uint64, c_void_p
from typing import Any

import numpy as np

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

# --- the Python C API through ctypes ------------------------------------------

_api = ctypes.pythonapi
_PyCapsule_New = _api.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [c_void_p, ctypes.c_char_p, c_void_p]

_PyCapsule_GetName = _api.PyCapsule_GetName
_PyCapsule_GetName.restype = ctypes.c_char_p
_PyCapsule_GetName.argtypes = [ctypes.py_object]

_PyCapsule_GetPointer = _api.PyCapsule_GetPointer
_PyCapsule_GetPointer.restype = c_void_p
_PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]

# Capsules keep the name pointer: these buffers live as long as the process.
_NAMES: dict[bytes, ctypes.Array] = {}


def _static_name(name: bytes) -> ctypes.Array:
    if name not in _NAMES:
        _NAMES[name] = ctypes.create_string_buffer(name)
    return _NAMES[name]


def capsule_name(cap: Any) -> str | None:
    """The current name of a PyCapsule (None for a NULL name)."""
    n = _PyCapsule_GetName(cap)
    return None if n is None else n.decode()


def capsule_pointer(cap: Any) -> int:
    """The pointer stored in a capsule (read under its current name)."""
    name = _PyCapsule_GetName(cap)
    p = _PyCapsule_GetPointer(cap, name)
    assert p, "capsule holds NULL"
    return p


def read_versioned(cap: Any) -> DLManagedTensorVersioned:
    """The DLManagedTensorVersioned behind an (unconsumed) versioned capsule."""
    assert capsule_name(cap) == "dltensor_versioned"
    return DLManagedTensorVersioned.from_address(capsule_pointer(cap))


def read_legacy(cap: Any) -> DLManagedTensor:
    assert capsule_name(cap) == "dltensor"
    return DLManagedTensor.from_address(capsule_pointer(cap))


# --- the counting deleter --------------------------------------------------------

_lock = threading.Lock()
_ids = itertools.count(1)
_records: dict[int, "Record"] = {}  # manager_ctx -> record, never removed


class Record:
    """One managed tensor made by a producer, and what happened to it."""

    def __init__(self, producer: "CtypesProducer", managed: Structure, keep: list) -> None:
        self.producer = producer
        self.managed = managed
        self.keep = keep
        self.calls = 0
        self.threads: list[int] = []  # thread ident of each deleter call


def _deleter_impl(ptr: int | None) -> None:
    # Runs on whatever thread the consumer frees on; ctypes takes the GIL.
    # The record is found by the struct's address (the argument), so a
    # consumer passing anything else shows up as an orphan call.
    rec = _by_address.get(ptr) if ptr else None
    if rec is None:
        _orphans.append(ptr)
        return
    with _lock:
        rec.calls += 1
        rec.threads.append(threading.get_ident())
        rec.producer.deleter_calls += 1
        if rec.calls == 1:
            rec.producer.live -= 1


_by_address: dict[int, Record] = {}
_orphans: list = []  # deleter calls with an unknown pointer (a bug if any)
_DELETER = DELETER(_deleter_impl)
DELETER_ADDRESS = ctypes.cast(_DELETER, c_void_p).value


def orphan_calls() -> int:
    return len(_orphans)


# --- the producer ------------------------------------------------------------------

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
    """An object speaking the DLPack protocol through hand-built C structs.

    By default it describes ``array`` (a NumPy array, kept alive) exactly;
    every keyword overrides one field so malformed tensors can be made:
    ``version`` (versioned only), ``flags``, ``ndim``, ``shape``, ``strides``
    (a list, or None for NULL), ``null_shape``, ``dtype`` ((code, bits,
    lanes)), ``device`` ((type, id)), ``data`` (an int address, 0 for NULL),
    ``byte_offset``, ``deleter`` (False for a NULL deleter).

    Protocol knobs: ``versioned`` (None: follow max_version like a modern
    producer; True/False: always that kind), ``legacy_signature`` (the
    ``__dlpack__`` takes no max_version/dl_device/copy, like pre-2023
    producers), ``raises`` (an exception to raise from ``__dlpack__``),
    ``returns`` (a value returned instead of a capsule), ``name`` (the capsule
    name to use instead of the right one).
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
    ) -> None:
        if array is None:
            array = np.arange(12, dtype=np.float32).reshape(3, 4)
        self.array = array
        self.versioned = versioned
        self.legacy_signature = legacy_signature
        self.raises = raises
        self.returns = returns
        self.name = name
        self.version = version
        self.flags = flags
        self.ndim = ndim
        self.shape = shape
        self.strides = strides
        self.null_shape = null_shape
        self.dtype = dtype
        self.device = device
        self.data = data
        self.byte_offset = byte_offset
        self.use_deleter = deleter
        self.deleter_calls = 0  # total over every managed tensor made
        self.live = 0  # made and not yet deleted
        self.records: list[Record] = []
        self.calls: list[dict] = []  # the keyword arguments of each __dlpack__ call

    # -- building ---------------------------------------------------------------
    def _fill(self, t: DLTensor, keep: list) -> None:
        a = self.array
        if self.shape is _UNSET:
            shape = list(a.shape)
        else:
            shape = self.shape
        if self.strides is _UNSET:
            strides = [s // a.itemsize for s in a.strides]
        else:
            strides = self.strides
        n = len(shape) if self.ndim is None else self.ndim
        t.ndim = n
        if self.data is None:
            t.data = a.ctypes.data
        else:
            t.data = self.data or None
        t.device = DLDevice(*self.device)
        code, bits = _NUMPY_DTYPES.get(a.dtype, (2, 32))
        lanes = 1
        if self.dtype is not None:
            code, bits, lanes = self.dtype
        t.dtype = DLDataType(code, bits, lanes)
        if self.null_shape:
            t.shape = None
        else:
            sh = (c_int64 * max(len(shape), 1))(*shape)
            keep.append(sh)
            t.shape = ctypes.cast(sh, POINTER(c_int64))
        if strides is None:
            t.strides = None
        else:
            st = (c_int64 * max(len(strides), 1))(*strides)
            keep.append(st)
            t.strides = ctypes.cast(st, POINTER(c_int64))
        t.byte_offset = self.byte_offset

    def make(self, versioned: bool = True) -> tuple[Structure, Record]:
        keep: list = [self.array]
        if versioned:
            m = DLManagedTensorVersioned()
            m.version = DLPackVersion(*self.version)
            m.flags = self.flags
            self._fill(m.dl_tensor, keep)
        else:
            m = DLManagedTensor()
            self._fill(m.dl_tensor, keep)
        key = next(_ids)
        m.manager_ctx = key
        m.deleter = DELETER_ADDRESS if self.use_deleter else None
        rec = Record(self, m, keep)
        with _lock:
            _records[key] = rec
            _by_address[ctypes.addressof(m)] = rec
            self.records.append(rec)
            self.live += 1
        return m, rec

    def capsule(self, versioned: bool = True) -> Any:
        """A raw PyCapsule (no destructor) owning a fresh managed tensor."""
        m, _ = self.make(versioned)
        if self.name is not None:
            name = self.name
        else:
            name = b"dltensor_versioned" if versioned else b"dltensor"
        return _PyCapsule_New(ctypes.addressof(m), _static_name(name), None)

    # -- the protocol -------------------------------------------------------------
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
        return tuple(self.device)

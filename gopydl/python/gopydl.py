"""DLPack for gopy modules, in pure Python (ctypes).

gopy passes no Python objects to Go, only numbers, so arrays cross as the
address of a DLPack managed tensor (a Python int, a ``uintptr`` in Go):

- ``to_go(x)`` takes ``x.__dlpack__(max_version=(1, 3))`` (or a raw
  capsule), renames the capsule ``used_…`` and returns the tensor's address.
  Go owns it from then on: a gopydl function (``gopydl.MutableFloat32``,
  ``ViewFloat64``, ``Import``...) validates it and ``Array.Close`` calls its
  deleter exactly once. Pass the result straight into the gopy call: an
  address that never reaches Go is never freed (``free`` releases one).
- ``from_go(ptr)`` wraps a ``DLManagedTensorVersioned*`` made by gopydl's
  ``Export…`` in a single-use DLPack object for ``np.from_dlpack`` and the
  like. Its ``dltensor_versioned`` capsule has gopydl's C destructor, which
  calls the deleter only while the capsule is unused.
- ``call(fn, *args)`` calls a gopy function and turns the RuntimeError gopy
  raises for a gopydl refusal back into a BufferError.

This module must not import ``godlpack``: that would load a second Go
runtime into the process (the gopy module has its own).
"""

import ctypes
import os

__all__ = ["to_go", "from_go", "free", "call", "GoTensor"]

_api = ctypes.pythonapi
_capsule_new = _api.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
_capsule_is_valid = _api.PyCapsule_IsValid
_capsule_is_valid.restype = ctypes.c_int
_capsule_is_valid.argtypes = (ctypes.py_object, ctypes.c_char_p)
_capsule_get_pointer = _api.PyCapsule_GetPointer
_capsule_get_pointer.restype = ctypes.c_void_p
_capsule_get_pointer.argtypes = (ctypes.py_object, ctypes.c_char_p)
_capsule_set_name = _api.PyCapsule_SetName
_capsule_set_name.restype = ctypes.c_int
_capsule_set_name.argtypes = (ctypes.py_object, ctypes.c_void_p)

_CAPSULE_TYPE = type(_capsule_new(1, None, None))


def _static_name(s):
    """A C string that is never freed: a capsule keeps a pointer to its name."""
    buf = ctypes.create_string_buffer(s)
    _api.Py_IncRef(ctypes.py_object(buf))  # outlives this module's teardown
    return ctypes.addressof(buf)


_VERSIONED = _static_name(b"dltensor_versioned")
_USED_VERSIONED = _static_name(b"used_dltensor_versioned")
_USED_LEGACY = _static_name(b"used_dltensor")

# DLManagedTensorVersioned offsets (x86-64/arm64): version 0, deleter 16,
# dl_tensor 32 (data 32, device_type 40, device_id 44).
_OFF_DELETER = 16
_OFF_DEVICE = 40
_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_KDLCPU = 1


def to_go(obj):
    """The address of obj's DLPack tensor, for a gopydl function; Go owns it.

    obj: anything with ``__dlpack__`` or an unused DLPack capsule. A legacy
    ``dltensor`` (JAX) comes back with its lowest bit set, which gopydl's
    Import understands."""
    if type(obj) is _CAPSULE_TYPE:
        cap = obj
    elif hasattr(type(obj), "__dlpack__"):
        try:
            cap = obj.__dlpack__(max_version=(1, 3))
        except TypeError:  # producers older than DLPack 1.0
            cap = obj.__dlpack__()
    else:
        raise TypeError(f"{type(obj).__name__} does not support DLPack")
    try:  # one ctypes call less than asking PyCapsule_IsValid first
        ptr, used, tag = _capsule_get_pointer(cap, b"dltensor_versioned"), _USED_VERSIONED, 0
    except ValueError:
        if not _capsule_is_valid(cap, b"dltensor"):
            raise BufferError("not an unused DLPack capsule (already consumed, or another kind)") from None
        ptr, used, tag = _capsule_get_pointer(cap, b"dltensor"), _USED_LEGACY, 1
    if ptr & 1:
        raise BufferError("managed tensor address is odd: gopydl cannot tag it")
    _capsule_set_name(cap, used)  # from here the capsule no longer frees it
    return ptr | tag


def free(ptr):
    """Calls the deleter of an address from to_go (or an export) that Go never took."""
    if not ptr:
        return
    if ptr & 1:  # legacy DLManagedTensor: deleter after the 48-byte DLTensor and manager_ctx
        deleter = ctypes.c_void_p.from_address((ptr & ~1) + 56).value
    else:
        deleter = ctypes.c_void_p.from_address(ptr + _OFF_DELETER).value
    if deleter:
        _DELETER(deleter)(ptr & ~1)


_destructors = {}


def _destructor_for(deleter):
    """gopydl's C capsule destructor, from the library that holds the deleter."""
    d = _destructors.get(deleter)
    if d is not None:
        return d
    info = _DlInfo()
    if not _dladdr(ctypes.c_void_p(deleter), ctypes.byref(info)) or not info.dli_fname:
        raise TypeError("the tensor's deleter is in no loaded library: not a gopydl export")
    lib = ctypes.CDLL(info.dli_fname.decode(), mode=os.RTLD_NOLOAD)  # already loaded: no new runtime
    try:
        d = ctypes.cast(lib.gopydl_capsule_destructor, ctypes.c_void_p).value
    except AttributeError:
        raise TypeError(f"{info.dli_fname.decode()} does not link gopydl: not a gopydl export") from None
    _destructors[deleter] = d
    return d


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


_dladdr = ctypes.CDLL(None).dladdr
_dladdr.restype = ctypes.c_int
_dladdr.argtypes = (ctypes.c_void_p, ctypes.c_void_p)


class GoTensor:
    """A tensor exported by Go, for one consumer (``np.from_dlpack(t)``).

    If no consumer takes it, dropping it calls the deleter."""

    __slots__ = ("_capsule", "_device")

    def __init__(self, ptr):
        if not ptr or ptr & 1:
            raise ValueError(f"not a DLManagedTensorVersioned address: {ptr!r}")
        deleter = ctypes.c_void_p.from_address(ptr + _OFF_DELETER).value
        destructor = _destructor_for(deleter) if deleter else None
        dev = (ctypes.c_int32 * 2).from_address(ptr + _OFF_DEVICE)
        self._device = (dev[0], dev[1])
        # From here the capsule owns ptr: its destructor frees it if unused.
        self._capsule = _capsule_new(ptr, _VERSIONED, destructor)

    def __dlpack_device__(self):
        return self._device

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if self._capsule is None:
            raise BufferError("this Go tensor was already handed to a consumer (single use)")
        if max_version is None or max_version[0] < 1:
            raise BufferError("Go tensors are exported as DLPack 1.x only; pass max_version=(1, 0) or newer")
        if copy:
            raise BufferError("gopydl exports do not copy (copy=True)")
        if dl_device is not None and tuple(dl_device) != self._device:
            raise BufferError(f"cannot move a tensor on {self._device} to {tuple(dl_device)}")
        if self._device[0] == _KDLCPU and stream not in (None, -1):
            raise BufferError(f"stream {stream!r} on a CPU tensor")
        cap, self._capsule = self._capsule, None
        return cap


def from_go(ptr):
    """A DLPack object for a DLManagedTensorVersioned* from gopydl's Export…"""
    return GoTensor(ptr)


def call(fn, *args, **kwargs):
    """fn(*args, **kwargs), with gopydl refusals raised as BufferError."""
    try:
        return fn(*args, **kwargs)
    except RuntimeError as e:
        msg = str(e)
        if msg.startswith("BufferError: "):
            raise BufferError(msg[len("BufferError: "):]) from None
        raise

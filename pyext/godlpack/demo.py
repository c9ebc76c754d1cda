"""python -m godlpack demo: NumPy → Go → PyTorch → Go → NumPy, zero-copy.

Shows at each step the data pointer (it never changes), the capsule names
before and after the consumer takes ownership, and when each deleter runs.
"""
from __future__ import annotations

import ctypes
import gc
import sys
from typing import Any

import godlpack
from godlpack import _godlpack

_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype = ctypes.c_char_p
_get_name.argtypes = [ctypes.py_object]


def capsule_name(cap: Any) -> str:
    return (_get_name(cap) or b"").decode()


def _live() -> str:
    owners, exports = _godlpack._live()
    return f"godlpack owners alive={owners}, exported managed tensors alive={exports}"


def run(argv: list[str] | None = None) -> int:
    import numpy as np

    try:
        import torch
    except ImportError:  # the demo still shows NumPy ↔ Go without PyTorch
        torch = None

    print(f"godlpack {godlpack.__version__}: DLPack {godlpack.dlpack_info()['api_version']}")
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    ptr = a.ctypes.data
    base_refs = sys.getrefcount(a)
    print(f"\n1. NumPy array {a.tolist()} at 0x{ptr:x}")

    cap = a.__dlpack__(max_version=(1, 3))
    print(f"2. a.__dlpack__(max_version=(1, 3)) -> capsule {capsule_name(cap)!r}")
    g = godlpack.from_dlpack(cap)
    print(f"   godlpack.from_dlpack(capsule): capsule is now {capsule_name(cap)!r}; godlpack validated and owns it")
    print(f"   {g!r} data_ptr=0x{g.data_ptr:x} same={g.data_ptr == ptr}")
    del cap
    print(f"   NumPy's export holds a reference to the array: refcount {base_refs} -> {sys.getrefcount(a)}")

    last: Any = g  # the tensor handed back to NumPy at step 5
    if torch is not None:
        cap = g.__dlpack__(max_version=(1, 3))
        print(f"3. g.__dlpack__(max_version=(1, 3)) -> fresh capsule {capsule_name(cap)!r}; {_live()}")
        tt = torch.from_dlpack(cap)
        print(f"   torch.from_dlpack(capsule): capsule is now {capsule_name(cap)!r}")
        print(f"   torch tensor data_ptr=0x{tt.data_ptr():x} same={tt.data_ptr() == ptr}")
        del cap
        tt.mul_(10)
        print(f"   tt.mul_(10) in PyTorch is visible in NumPy (shared memory): a = {a.tolist()}")
        g2 = godlpack.from_dlpack(tt)
        print(f"4. godlpack.from_dlpack(torch tensor) -> {g2!r} same={g2.data_ptr == ptr}")
        last = g2
    else:
        print("3-4. PyTorch is not installed: skipping the PyTorch leg (pip install torch)")
        tt = g2 = None

    b = np.from_dlpack(last)
    del last
    print(f"5. np.from_dlpack(godlpack tensor) -> {b.tolist()} at 0x{b.ctypes.data:x} same={b.ctypes.data == ptr}")
    print(f"   {_live()}")

    print("\nReleasing, newest first:")
    del b
    gc.collect()
    print(f"   del b (NumPy view)  -> its capsule's deleter ran: {_live()}")
    if torch is not None:
        del g2
        gc.collect()
        print("   del g2 (godlpack)   -> PyTorch's deleter ran (PyTorch frees without the GIL)")
        del tt
        gc.collect()
        print(f"   del tt (torch)      -> godlpack's export deleter ran: {_live()}")
    del g
    gc.collect()
    print(f"   del g (godlpack)    -> NumPy's deleter ran: refcount of a back to {sys.getrefcount(a)} "
          f"(was {base_refs}); {_live()}")
    ok = sys.getrefcount(a) == base_refs
    print("\nEvery deleter ran exactly once." if ok else "\nA reference was not released!")
    return 0 if ok else 1

"""python -m godlpack demo: Go → NumPy → Go → NumPy, zero-copy, with NumPy alone;
PyTorch and JAX steps are added when those libraries are installed.

Every object is printed as it is made. Pointers show what is shared; the
deleter calls are counted from godlpack's live owner/export counters
(``godlpack._godlpack._live()``) and NumPy's reference counts, not assumed.
"""
from __future__ import annotations

import argparse
import ctypes
import gc
import importlib
import sys
from typing import Any

import godlpack
from godlpack import _godlpack

_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype = ctypes.c_char_p
_get_name.argtypes = [ctypes.py_object]

USAGE = "python -m godlpack demo [--no-peers]"
DESCRIPTION = (
    "Show godlpack at work: tensors made by Go, viewed by NumPy, imported back, copied by Go, "
    "with capsule names, data pointers and counted deleter calls. Needs NumPy only; adds PyTorch "
    "and JAX steps when they are installed (pip install 'godlpack[peers]')."
)


def capsule_name(cap: Any) -> str:
    return (_get_name(cap) or b"").decode()


class Counter:
    """Counts deleter calls from the changes in godlpack's live counters."""

    def __init__(self) -> None:
        self.owners, self.exports = _godlpack._live()

    def released(self) -> str:
        gc.collect()
        owners, exports = _godlpack._live()
        freed_o, freed_e = self.owners - owners, self.exports - exports
        self.owners, self.exports = owners, exports
        return (f"{freed_e} godlpack export deleter call(s), {freed_o} owner(s) released "
                f"[live now: {owners} owners, {exports} exports]")

    def mark(self) -> None:
        """Remembers the counters: the next released() counts from here."""
        gc.collect()
        self.owners, self.exports = _godlpack._live()

    def now(self) -> str:
        owners, exports = _godlpack._live()
        return f"[live: {owners} godlpack owners, {exports} exported managed tensors]"


def _optional(name: str, enabled: bool) -> Any:
    if not enabled:
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m godlpack demo", usage=USAGE, description=DESCRIPTION)
    p.add_argument("--no-peers", action="store_true", help="skip the PyTorch and JAX steps even if installed")
    return p.parse_args(argv)


def run(argv: list[str] | None = None) -> int:
    args = _parse(list(argv or []))
    try:
        import numpy as np
    except ImportError:
        print("the demo needs NumPy: pip install 'godlpack[demo]'", file=sys.stderr)
        return 2
    torch = _optional("torch", not args.no_peers)
    jnp = _optional("jax.numpy", not args.no_peers)

    info = godlpack.dlpack_info()
    print(f"godlpack {godlpack.__version__} (DLPack {info['api_version'][0]}.{info['api_version'][1]}), "
          f"NumPy {np.__version__}")
    for name, mod in (("PyTorch", torch), ("JAX", jnp)):
        state = "installed: its steps are included" if mod is not None else \
            "not installed: its steps are skipped (pip install 'godlpack[peers]' adds them)"
        print(f"{name} {state}")
    count = Counter()
    print(f"start {count.now()}")

    print("\n1. Go allocates and fills a tensor (64-byte-aligned C memory, written by Go):")
    print('   >>> g = godlpack.arange(12, dtype="float32")')
    g = godlpack.arange(12, dtype="float32")
    print(f"   {g!r}\n   values {g.tolist()}\n   data_ptr 0x{g.data_ptr:x} (ptr % 64 = {g.data_ptr % 64}) "
          f"{count.now()}")

    print("\n2. NumPy views Go's memory, zero-copy, through a fresh DLPack capsule:")
    print("   >>> cap = g.__dlpack__(max_version=(1, 3))")
    cap = g.__dlpack__(max_version=(1, 3))
    print(f"   {cap!r}: name {capsule_name(cap)!r} {count.now()}")
    print("   >>> a = np.from_dlpack(g).reshape(3, 4)   # NumPy calls __dlpack__ itself")
    a = np.from_dlpack(g).reshape(3, 4)
    print("   " + repr(a).replace("\n", "\n   "))
    print(f"   a.ctypes.data 0x{a.ctypes.data:x}: same memory as g: {a.ctypes.data == g.data_ptr}")
    count.mark()
    del cap
    print(f"   del cap (never consumed): its destructor ran the deleter -> {count.released()}")
    a[0, 0] = 100.0
    print(f"   a[0, 0] = 100 in NumPy; Go's tensor sees it: g.tolist()[:4] = {g.tolist()[:4]}")

    print("\n3. NumPy memory into godlpack: a strided view, imported without copying:")
    print("   >>> b = np.arange(1.0, 13.0).reshape(3, 4)[:, ::2]")
    b = np.arange(1.0, 13.0).reshape(3, 4)[:, ::2]
    b_refs = sys.getrefcount(b)
    print("   " + repr(b).replace("\n", "\n   "))
    cap = b.__dlpack__(max_version=(1, 3))
    print(f"   >>> cap = b.__dlpack__(max_version=(1, 3))  -> name {capsule_name(cap)!r}")
    v = godlpack.from_dlpack(cap)
    print(f"   >>> v = godlpack.from_dlpack(cap)  -> capsule renamed {capsule_name(cap)!r} (v owns it)")
    print(f"   {v!r} strides {v.strides} contiguous={v.is_contiguous}")
    print(f"   same memory as b: {v.data_ptr == b.ctypes.data} {count.now()}")
    held_refs = sys.getrefcount(b)
    print(f"   NumPy's export holds a reference to b until its deleter runs: refcount {b_refs} -> {held_refs}")
    count.mark()
    del cap

    print("\n4. Go computes on NumPy's memory: a strided gather into new aligned memory (Go code):")
    print("   >>> c = v.copy()")
    c = v.copy()
    print(f"   {c!r} strides {c.strides} contiguous={c.is_contiguous} values {c.tolist()}")
    print(f"   new memory: {c.data_ptr != v.data_ptr}, ptr % 64 = {c.data_ptr % 64} {count.now()}")
    print("   >>> back = np.from_dlpack(c)   # godlpack -> NumPy, zero-copy")
    back = np.from_dlpack(c)
    print(f"   {back.tolist()} equal to b: {bool((back == b).all())}, "
          f"same memory as c: {back.ctypes.data == c.data_ptr}")

    if torch is not None:
        print("\n5. PyTorch (installed): godlpack -> torch -> godlpack, zero-copy:")
        print("   >>> t = torch.from_dlpack(g); t.mul_(2)")
        t = torch.from_dlpack(g)
        t.mul_(2)
        print(f"   {t}\n   same memory as g: {t.data_ptr() == g.data_ptr}; NumPy sees it: a[0] = {a[0].tolist()}")
        print("   >>> h = godlpack.from_dlpack(t)")
        h = godlpack.from_dlpack(t)
        print(f"   {h!r} same memory: {h.data_ptr == g.data_ptr} {count.now()}")
        count.mark()
        del h, t
        print(f"   del h, t -> {count.released()}")
    else:
        print("\n5. PyTorch step skipped: not installed")
    if jnp is not None:
        print("\n6. JAX (installed): godlpack -> JAX, zero-copy (Go's memory is 64-byte aligned, as JAX needs):")
        print("   >>> j = jnp.from_dlpack(g)")
        j = jnp.from_dlpack(g)
        ptr = j.unsafe_buffer_pointer()
        print(f"   {j!r}".replace("\n", "\n   "))
        print(f"   same memory as g: {ptr == g.data_ptr}; sum computed by JAX: {float(j.sum())} {count.now()}")
        count.mark()
        del j
        print(f"   del j -> {count.released()}")
    else:
        print("\n6. JAX step skipped: not installed")

    print("\nReleasing, counted:")
    count.mark()
    del back
    print(f"   del back (NumPy's view of c)  -> {count.released()}")
    count.mark()
    del c
    print(f"   del c (Go memory)             -> {count.released()}")
    count.mark()
    del v
    print(f"   del v (view of b)             -> {count.released()}; "
          f"NumPy's deleter dropped its reference to b: refcount {held_refs} -> {sys.getrefcount(b)}"
          + (", back to {} as before the export".format(b_refs) if sys.getrefcount(b) == b_refs
             else f" (it was {b_refs} before the export)"))
    count.mark()
    del a
    print(f"   del a (NumPy's view of g)     -> {count.released()}")
    count.mark()
    del g
    print(f"   del g (Go memory)             -> {count.released()}")
    owners, exports = _godlpack._live()
    ok = owners == 0 and exports == 0 and sys.getrefcount(b) == b_refs
    print("\nEvery deleter ran exactly once; nothing is left alive." if ok else
          f"\nSomething is still alive: {owners} owners, {exports} exports")
    return 0 if ok else 1

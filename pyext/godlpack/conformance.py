"""DLPack conformance checker: ``python -m godlpack check MODULE [MODULE...]`` or
``godlpack.check("numpy", ...)``.

For each library it runs producer checks (the library's arrays exporting
capsules) and consumer checks (the library's ``from_dlpack`` importing
godlpack's counting probes, whose deleters count their calls), and reports one
row per check: PASS, FAIL or N/A with the reason.

Plugging in another library: any importable module with ``from_dlpack`` and
``asarray`` is checked through the generic adapter. For more control, add a
subclass of :class:`Peer` to ``PEERS`` (or pass ``peers=`` to :func:`check`).
"""
from __future__ import annotations

import ctypes
import gc
import importlib
import json
import struct
import subprocess
import sys
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable

import godlpack
from godlpack import _godlpack as _g

READ_ONLY, IS_COPIED = 1, 2
_set_name = ctypes.pythonapi.PyCapsule_SetName
_set_name.argtypes = [ctypes.py_object, ctypes.c_char_p]
_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype = ctypes.c_char_p
_get_name.argtypes = [ctypes.py_object]
_NAMES: dict[str, bytes] = {}  # capsules keep the name pointer: keep the bytes alive


def capsule_name(cap: Any) -> str:
    return (_get_name(cap) or b"").decode()


def _rename(cap: Any, name: str) -> None:
    _set_name(cap, _NAMES.setdefault(name, name.encode()))


@dataclass
class Result:
    module: str
    check: str
    status: str  # PASS, FAIL or N/A
    reason: str = ""


class Skip(Exception):
    """The check does not apply to this library (N/A)."""


class Probe:
    """A producer object whose capsules come from godlpack's counting probe.

    The managed tensor holds float64 ``values`` (or raw ``data`` bytes); every
    deleter call is counted, so exactly-once is observable for any consumer.
    """

    COMPACT = "compact"

    def __init__(self, shape=(4,), strides=COMPACT, values=(1.0, 2.0, 3.0, 4.0), *, data=None, version=(1, 3),
                 dtype=(2, 64, 1), device=(1, 0), byte_offset=0, flags=0, ndim=None, legacy_only=False):
        if strides == Probe.COMPACT:  # DLPack >= 1.2 producers always fill strides
            strides = tuple(godlpack_compact_strides(shape))
        self.spec = dict(shape=shape, strides=strides, dtype=dtype, device=device, byte_offset=byte_offset,
                         flags=flags, version=version, ndim=len(shape) if ndim is None else ndim)
        self.data = data if data is not None or values is None else struct.pack(f"{len(values)}d", *values)
        self.legacy_only = legacy_only
        self.tokens: list[int] = []
        self.capsules: list[Any] = []  # kept to read their names; release() drops them
        self.versioned: list[bool] = []

    def make(self, versioned: bool) -> Any:
        s = self.spec
        cap, tok = _g._probe_make(versioned, s["version"][0], s["version"][1], s["ndim"], s["shape"], s["strides"],
                                  *s["dtype"], *s["device"], self.data, s["byte_offset"], s["flags"], None)
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
        return [_g._probe_calls(t) for t in self.tokens]

    def last_name(self) -> str:
        return capsule_name(self.capsules[-1]) if self.capsules else ""

    def release(self) -> None:
        self.capsules.clear()
        gc.collect()


def godlpack_compact_strides(shape: tuple[int, ...]) -> list[int]:
    out, acc = [0] * len(shape), 1
    for i in range(len(shape) - 1, -1, -1):
        out[i] = acc
        acc *= max(shape[i], 1)
    return out


class Peer:
    """Adapter for one array library."""

    name = "generic"
    dtypes: tuple[str, ...] = ("bool", "int8", "int16", "int32", "int64", "uint8", "float32", "float64")
    has_readonly = False

    def __init__(self, module: Any) -> None:
        self.mod = module

    def from_dlpack(self, obj: Any) -> Any:
        return self.mod.from_dlpack(obj)

    def array(self, values: Any, dtype: str = "float64") -> Any:
        return self.mod.asarray(values, dtype=getattr(self.mod, dtype))

    def to_list(self, x: Any) -> Any:
        import numpy as np

        return np.asarray(np.from_dlpack(x)).tolist()

    def readonly(self, x: Any) -> Any:
        raise Skip("no read-only arrays")

    def is_readonly(self, x: Any) -> bool | None:
        return None


class NumpyPeer(Peer):
    name = "numpy"
    dtypes = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
              "float32", "float64", "complex64", "complex128")
    has_readonly = True

    def array(self, values, dtype="float64"):
        return self.mod.asarray(values, dtype=dtype)

    def to_list(self, x):
        return x.tolist()

    def readonly(self, x):
        x = x.copy()
        x.flags.writeable = False
        return x

    def is_readonly(self, x):
        return not x.flags.writeable


class TorchPeer(Peer):
    name = "torch"
    dtypes = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
              "bfloat16", "float32", "float64", "complex64", "complex128")

    def array(self, values, dtype="float64"):
        return self.mod.tensor(values, dtype=getattr(self.mod, dtype))

    def to_list(self, x):
        return x.tolist()

    def is_readonly(self, x):
        return False  # torch tensors have no read-only state


class JaxPeer(Peer):
    name = "jax"
    dtypes = ("bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16", "bfloat16", "float32",
              "complex64")

    def __init__(self, module):
        super().__init__(module)
        import jax.numpy as jnp

        self.jnp = jnp

    def from_dlpack(self, obj):
        return self.jnp.from_dlpack(obj)

    def array(self, values, dtype="float64"):
        import jax

        if dtype == "float64" and not jax.config.jax_enable_x64:
            dtype = "float32"  # JAX's default mode has no float64
        return self.jnp.asarray(values, dtype=dtype)

    def to_list(self, x):
        import numpy as np

        return np.asarray(x).tolist()

    def is_readonly(self, x):
        return True  # jax arrays are immutable


class CupyPeer(Peer):
    name = "cupy"

    def to_list(self, x):
        return x.get().tolist()


class GodlpackPeer(Peer):
    name = "godlpack"
    dtypes = NumpyPeer.dtypes + ("bfloat16",)
    has_readonly = True

    def from_dlpack(self, obj):
        return godlpack.from_dlpack(obj)

    def array(self, values, dtype="float64"):
        import numpy as np

        if dtype == "bfloat16":
            return godlpack.from_dlpack(self._torch().tensor(values, dtype=self._torch().bfloat16), copy=True)
        return godlpack.from_dlpack(np.asarray(values, dtype=dtype), copy=True)

    @staticmethod
    def _torch():
        import torch

        return torch

    def to_list(self, x):
        return x.tolist()

    def readonly(self, x):
        import numpy as np

        a = np.from_dlpack(x).copy()
        a.flags.writeable = False
        return godlpack.from_dlpack(a)

    def is_readonly(self, x):
        return x.readonly


PEERS: dict[str, type[Peer]] = {"numpy": NumpyPeer, "torch": TorchPeer, "jax": JaxPeer, "cupy": CupyPeer,
                                "godlpack": GodlpackPeer}


# --- the checks ----------------------------------------------------------------

CHECKS: list[tuple[str, Callable[[Peer], str]]] = []


def check_fn(name: str) -> Callable[[Callable[[Peer], str]], Callable[[Peer], str]]:
    def wrap(f: Callable[[Peer], str]) -> Callable[[Peer], str]:
        CHECKS.append((name, f))
        return f
    return wrap


class Fail(Exception):
    """The library does something the standard forbids."""


def expect(cond: bool, why: str) -> None:
    if not cond:
        raise Fail(why)


def _versioned(x: Any, **kw: Any) -> Any:
    try:
        cap = x.__dlpack__(max_version=(1, 0), **kw)
    except TypeError as e:
        raise Fail(f"__dlpack__ does not accept max_version/{'/'.join(kw)}: {e}") from e
    if capsule_name(cap) == "dltensor":
        _cleanup(cap)
        raise Skip("legacy-only producer: answers max_version=(1, 0) with a 'dltensor' capsule")
    return cap


def _cleanup(cap: Any) -> None:
    del cap
    gc.collect()


@check_fn("producer: fresh capsule and managed tensor per __dlpack__ call")
def _fresh(p: Peer) -> str:
    x = p.array([1.0, 2.0, 3.0])
    c1, c2 = x.__dlpack__(), x.__dlpack__()
    i1, i2 = _g._probe_inspect(c1), _g._probe_inspect(c2)
    expect(c1 is not c2, "the same capsule object was returned twice")
    expect(i1["pointer"] != i2["pointer"], "two capsules share one managed tensor")
    return "two calls gave two capsules and two managed tensors"


@check_fn("producer: capsule names follow max_version")
def _names(p: Peer) -> str:
    x = p.array([1.0, 2.0])
    got = {mv: capsule_name(x.__dlpack__(max_version=mv) if mv else x.__dlpack__()) for mv in (None, (0, 8))}
    expect(got[None] == "dltensor", f"max_version=None gave {got[None]!r}")
    expect(got[(0, 8)] == "dltensor", f"max_version=(0, 8) gave {got[(0, 8)]!r}")
    v = capsule_name(_versioned(x))
    expect(v == "dltensor_versioned", f"max_version=(1, 0) gave {v!r}")
    return "None, (0, 8) -> 'dltensor'; (1, 0) -> 'dltensor_versioned'"


@check_fn("producer: destructor calls the deleter iff the capsule is unused")
def _destructor(p: Peer) -> str:
    x = p.array([1.0, 2.0])
    cap = x.__dlpack__()
    tok = _g._probe_intercept(cap)
    del cap
    gc.collect()
    n = _g._probe_calls(tok)
    if n == 0:
        raise Skip("the capsule destructor released the tensor without calling its deleter field: not observable")
    expect(n == 1, f"unused capsule freed: deleter ran {n} times, want 1")
    cap = x.__dlpack__()
    tok = _g._probe_intercept(cap)
    _rename(cap, "used_dltensor")  # as a consumer would: it owns the tensor now
    del cap
    gc.collect()
    n = _g._probe_calls(tok)
    _g._probe_delete(tok)  # what the consumer would do: release it ourselves
    expect(n == 0, f"the destructor of a used capsule called the deleter ({n} time(s))")
    return "unused: deleter once; renamed 'used_dltensor': not called"


@check_fn("producer: strides non-NULL for ndim > 0 (DLPack >= 1.2)")
def _strides(p: Peer) -> str:
    x = p.array([[1.0, 2.0], [3.0, 4.0]])
    info = _g._probe_inspect(_versioned(x))
    ver = info["version"]
    if tuple(ver) < (1, 2):
        return f"exports version {ver[0]}.{ver[1]}: NULL strides allowed ({'NULL' if info['strides_null'] else 'set'})"
    expect(not info["strides_null"], f"version {ver[0]}.{ver[1]} with NULL strides")
    return f"version {ver[0]}.{ver[1]}, strides set"


@check_fn("producer: read-only arrays carry READ_ONLY; legacy export refused")
def _ro_producer(p: Peer) -> str:
    if not p.has_readonly:
        raise Skip("the library has no read-only arrays")
    x = p.readonly(p.array([1.0, 2.0]))
    info = _g._probe_inspect(_versioned(x))
    expect(info["flags"] & READ_ONLY, "READ_ONLY flag not set on a read-only array")
    try:
        x.__dlpack__()
    except BufferError:
        return "READ_ONLY set; legacy export raises BufferError"
    raise Fail("a read-only array was exported as a writable legacy capsule")


@check_fn("producer: copy=True sets IS_COPIED and copies")
def _copied(p: Peer) -> str:
    x = p.array([1.0, 2.0, 3.0])
    plain = _g._probe_inspect(_versioned(x))
    info = _g._probe_inspect(_versioned(x, copy=True))
    expect(info["flags"] & IS_COPIED, "IS_COPIED not set for copy=True"
           + (" (the data was copied)" if info["data"] != plain["data"] else " (and the data was not copied)"))
    expect(info["data"] != plain["data"], "copy=True returned the same data pointer")
    return "IS_COPIED set, new memory"


@check_fn("producer: impossible dl_device raises BufferError")
def _dl_device(p: Peer) -> str:
    x = p.array([1.0])
    try:
        cap = x.__dlpack__(max_version=(1, 0), dl_device=(17, 5))  # a MAIA device that isn't there
    except BufferError:
        return "dl_device=(17, 5) -> BufferError"
    except TypeError as e:
        raise Fail(f"dl_device keyword not accepted: {e}") from e
    except Exception as e:  # noqa: BLE001 - the type is what we check
        raise Fail(f"dl_device=(17, 5) raised {type(e).__name__}, not BufferError: {_short(e)}") from e
    dev = _g._probe_inspect(cap).get("device")
    raise Fail(f"dl_device=(17, 5) was accepted (capsule device {dev})")


@check_fn("producer: copy=False never copies")
def _copy_false(p: Peer) -> str:
    x = p.array([1.0, 2.0])
    info = _g._probe_inspect(_versioned(x, copy=False))
    expect(not info["flags"] & IS_COPIED, "IS_COPIED set for copy=False")
    return "no copy, IS_COPIED clear"


@check_fn("producer: CPU stream=None accepted")
def _stream(p: Peer) -> str:
    # The array API: "On CPU and other device types without streams, only None
    # is accepted." What other values do is reported, not judged.
    x = p.array([1.0])
    dev = x.__dlpack_device__()
    if int(dev[0]) != 1:
        raise Skip(f"not a CPU array (device {tuple(dev)})")
    try:
        x.__dlpack__(stream=None)
    except Exception as e:  # noqa: BLE001
        raise Fail(f"stream=None on CPU raised {type(e).__name__}: {_short(e)}") from e
    seen = []
    for s in (-1, 2):
        try:
            x.__dlpack__(stream=s)
            seen.append(f"{s} accepted")
        except Exception as e:  # noqa: BLE001
            seen.append(f"{s} -> {type(e).__name__}")
    return "None accepted; " + ", ".join(seen)


@check_fn("producer: deleter safe on a thread without the GIL")
def _nogil(p: Peer) -> str:
    # Run in a child process: a deleter that needs the GIL without taking it
    # crashes or hangs, and that must not take the checker down.
    code = (f"import godlpack.conformance as c; c._nogil_child({p.name!r}, {p.mod.__name__!r})")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    expect(r.returncode == 0, f"child exited with {r.returncode}: {(r.stderr or r.stdout).strip()[-200:]}")
    return r.stdout.strip() or "deleter ran on a native thread without the GIL"


def _nogil_child(peer: str, module: str) -> None:
    p = _peer(peer, importlib.import_module(module))
    x = p.array([1.0, 2.0, 3.0])
    cap = x.__dlpack__()
    tok = _g._probe_intercept(cap)
    _g._probe_free_nogil(cap)
    assert _g._probe_calls(tok) == 1, "deleter not called"
    print("deleter ran once on a native thread without the GIL")


def _consume(p: Peer, probe: Probe) -> tuple[Any, list[int]]:
    y = p.from_dlpack(probe)
    return y, probe.calls()


def _once_after(probe: Probe) -> None:
    """Every capsule the probe made had its deleter called exactly once, once
    the caller has dropped its own references to what the consumer returned."""
    probe.release()
    calls = probe.calls()
    expect(calls and all(c == 1 for c in calls), f"deleter calls per capsule {calls}, want exactly 1 each")


@check_fn("consumer: renames the capsule and calls the deleter exactly once")
def _consumer_once(p: Peer) -> str:
    probe = Probe()
    y = p.from_dlpack(probe)
    name = probe.last_name()
    expect(name.startswith("used_"), f"capsule not renamed (still {name!r})")
    expect(p.to_list(y) == [1.0, 2.0, 3.0, 4.0], f"values {p.to_list(y)}")
    during = probe.calls()[-1]
    del y
    _once_after(probe)
    return f"renamed to {name!r}; deleter {during} while alive, 1 after"


def _attempt(p: Peer, probe: Probe) -> tuple[Any, BaseException | None]:
    """p.from_dlpack(probe), returning the error instead of raising it. The
    traceback is dropped so its frames stop holding the capsule alive."""
    try:
        return p.from_dlpack(probe), None
    except Exception as e:  # noqa: BLE001 - callers judge the type
        e.__traceback__ = None
        return None, e


@check_fn("consumer: refuses a future major version and still calls the deleter")
def _future(p: Peer) -> str:
    probe = Probe(version=(2, 0))
    y, err = _attempt(p, probe)
    asked_versioned = any(probe.versioned)
    del y
    _once_after(probe)
    if not asked_versioned:
        raise Skip("asks for legacy capsules only, so never sees a version")
    expect(err is not None, "imported a DLPack 2.0 tensor")
    expect(isinstance(err, BufferError), f"raised {type(err).__name__}, not BufferError: {_short(err)}")
    return "BufferError, deleter once"


@check_fn("consumer: honours READ_ONLY")
def _ro_consumer(p: Peer) -> str:
    probe = Probe(flags=READ_ONLY)
    y = p.from_dlpack(probe)
    if not probe.versioned[-1]:
        del y
        _once_after(probe)
        raise Skip("asks for legacy capsules only (no flags)")
    ro = p.is_readonly(y)
    del y
    _once_after(probe)
    expect(ro is not False, "a READ_ONLY tensor was imported as writable")
    return "imported read-only" if ro else "no read-only state to check"


@check_fn("consumer: accepts legacy producers (no max_version)")
def _legacy(p: Peer) -> str:
    probe = Probe(legacy_only=True)
    y = p.from_dlpack(probe)
    expect(p.to_list(y) == [1.0, 2.0, 3.0, 4.0], f"values {p.to_list(y)}")
    del y
    _once_after(probe)
    return "fell back to the legacy call"


def _values_check(p: Peer, probe: Probe, want: Any, what: str) -> str:
    y, err = _attempt(p, probe)
    got = None if err else p.to_list(y)
    del y
    _once_after(probe)
    if err is not None:  # a refusal is allowed, a wrong exception type is not
        expect(isinstance(err, BufferError), f"{what}: {type(err).__name__}, not BufferError: {_short(err)}")
        raise Skip(f"{what}: refused with BufferError ({_short(err)}); deleter once")
    expect(got == want, f"{what}: got {got}, want {want}")
    return f"{what}: correct values, deleter once"


def _short(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return (text[0] if text else "")[:150]


@check_fn("consumer: byte_offset honoured")
def _byte_offset(p: Peer) -> str:
    return _values_check(p, Probe(values=(0, 1, 2, 3, 4, 5, 6, 7), byte_offset=16), [2.0, 3.0, 4.0, 5.0],
                         "byte_offset=16")


@check_fn("consumer: size-0 tensor with NULL data")
def _size0(p: Peer) -> str:
    return _values_check(p, Probe(shape=(0,), strides=(1,), values=None), [], "shape (0,), data NULL")


@check_fn("consumer: 0-d tensor")
def _zero_d(p: Peer) -> str:
    return _values_check(p, Probe(shape=(), strides=(), values=(7.5,)), 7.5, "shape ()")


@check_fn("consumer: size-1 dims with odd strides")
def _odd_strides(p: Peer) -> str:
    return _values_check(p, Probe(shape=(3, 1), strides=(1, 12345), values=(1, 2, 3)), [[1.0], [2.0], [3.0]],
                         "shape (3, 1) strides (1, 12345)")


@check_fn("consumer: negative strides")
def _neg_strides(p: Peer) -> str:
    return _values_check(p, Probe(shape=(4,), strides=(-1,), byte_offset=24, values=(0, 1, 2, 3)),
                         [3.0, 2.0, 1.0, 0.0], "strides (-1,)")


@check_fn("consumer: unknown dtype refused, deleter once")
def _bad_dtype(p: Peer) -> str:
    probe = Probe(dtype=(99, 64, 1))
    y, err = _attempt(p, probe)
    del y
    _once_after(probe)
    expect(err is not None, "imported dtype code 99")
    return f"{type(err).__name__}, deleter once"


@check_fn("round trip: every dtype through godlpack, zero-copy")
def _dtypes(p: Peer) -> str:
    bad, ok = [], []
    for dt in p.dtypes:
        values = [True, False, True] if dt == "bool" else [1, 2, 3]
        try:
            x = p.array(values, dt)
            g = godlpack.from_dlpack(x)
            y = p.from_dlpack(g)
        except Exception as e:  # noqa: BLE001
            bad.append(f"{dt}: {type(e).__name__}: {e}")
            continue
        if g.dtype != dt or p.to_list(y) != p.to_list(x):
            bad.append(f"{dt}: got {g.dtype} {p.to_list(y)}")
        else:
            ok.append(dt)
    expect(not bad, "; ".join(bad)[:300])
    return f"{len(ok)} dtypes: {', '.join(ok)}"


# --- running -------------------------------------------------------------------------


def _peer(name: str, module: Any) -> Peer:
    cls = PEERS.get(name, Peer)
    return cls(module)


def run_checks(name: str, peer: Peer | None = None) -> list[Result]:
    """All checks against one library; a library that isn't installed gives N/A."""
    if peer is None:
        try:
            module = importlib.import_module(name)
        except ImportError as e:
            return [Result(name, "import", "N/A", f"not installed ({e})")]
        if name == "cupy":
            try:
                module.cuda.runtime.getDeviceCount()
            except Exception as e:  # noqa: BLE001
                return [Result(name, "import", "N/A", f"no usable GPU ({e})")]
        if name not in PEERS and not (hasattr(module, "from_dlpack") and hasattr(module, "asarray")):
            return [Result(name, "import", "FAIL", "module has no from_dlpack/asarray to check")]
        peer = _peer(name, module)
    out = []
    for title, fn in CHECKS:
        try:
            out.append(Result(name, title, "PASS", fn(peer)))
        except Skip as e:
            out.append(Result(name, title, "N/A", str(e)))
        except Fail as e:
            out.append(Result(name, title, "FAIL", str(e)))
        except Exception as e:  # noqa: BLE001 - an unexpected error is a finding too
            out.append(Result(name, title, "FAIL", f"{type(e).__name__}: {_short(e)}"))
    return out


def check(*modules: str) -> list[Result]:
    """Check each named library; returns one Result per check."""
    results: list[Result] = []
    for m in modules:
        results.extend(run_checks(m))
    return results


def format_table(results: Iterable[Result]) -> str:
    rows = [("module", "check", "status", "reason")] + [(r.module, r.check, r.status, r.reason) for r in results]
    w = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = []
    for i, r in enumerate(rows):
        lines.append(f"{r[0]:<{w[0]}}  {r[1]:<{w[1]}}  {r[2]:<{w[2]}}  {r[3]}")
        if i == 0:
            lines.append("-" * (sum(w) + 6 + 20))
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    as_json = "--json" in argv
    mods = [a for a in argv if not a.startswith("-")]
    if not mods:
        print("usage: python -m godlpack check [--json] MODULE [MODULE...]", file=sys.stderr)
        return 2
    results = check(*mods)
    if as_json:
        print(json.dumps([asdict(r) for r in results], indent=2))
    else:
        print(format_table(results))
        counts = {s: sum(r.status == s for r in results) for s in ("PASS", "FAIL", "N/A")}
        print(f"\nchecks: PASS {counts['PASS']}, FAIL {counts['FAIL']}, N/A {counts['N/A']}")
    return 1 if any(r.status == "FAIL" for r in results) else 0

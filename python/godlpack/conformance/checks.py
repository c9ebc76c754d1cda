"""The checks, and running them against one library (see godlpack.conformance)."""
from __future__ import annotations

import gc
import importlib
from dataclasses import dataclass
from typing import Any, Callable

import godlpack
from godlpack import _probe

from .peers import PEERS, Peer, Skip
from .probe import IS_COPIED, READ_ONLY, Probe, capsule_name, layout

__all__ = ["CHECKS", "Result", "Skip", "Fail", "run_checks", "check"]


@dataclass
class Result:
    module: str
    check: str
    status: str  # PASS, FAIL or N/A
    reason: str = ""


# --- the checks ----------------------------------------------------------------

CHECKS: list[tuple[str, Callable[[Peer], str]]] = []
CPU_PROBES: set[str] = set()  # checks that hand the library CPU probes to import


def check_fn(name: str, cpu_probes: bool = False) -> Callable[[Callable[[Peer], str]], Callable[[Peer], str]]:
    def wrap(f: Callable[[Peer], str]) -> Callable[[Peer], str]:
        CHECKS.append((name, f))
        if cpu_probes:
            CPU_PROBES.add(name)
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
    i1, i2 = _probe.inspect(c1), _probe.inspect(c2)
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
    tok = _probe.intercept(cap)
    del cap
    gc.collect()
    n = tok.calls
    if n == 0:
        raise Skip("the capsule destructor released the tensor without calling its deleter field: not observable")
    expect(n == 1, f"unused capsule freed: deleter ran {n} times, want 1")
    cap = x.__dlpack__()
    tok = _probe.intercept(cap)
    _probe.take(cap)  # renamed 'used_dltensor', as a consumer does: it owns the tensor now
    del cap
    gc.collect()
    n = tok.calls
    if n == 0:
        _probe.delete(tok)  # what the consumer would do: release it ourselves
    expect(n == 0, f"the destructor of a used capsule called the deleter ({n} time(s))")
    return "unused: deleter once; renamed 'used_dltensor': not called"


@check_fn("producer: strides non-NULL for ndim > 0 (DLPack >= 1.2)")
def _strides(p: Peer) -> str:
    x = p.array([[1.0, 2.0], [3.0, 4.0]])
    info = _probe.inspect(_versioned(x))
    ver = info["version"]
    if tuple(ver) < (1, 2):
        return f"exports version {ver[0]}.{ver[1]}: NULL strides allowed ({'NULL' if info['strides_null'] else 'set'})"
    expect(not info["strides_null"], f"version {ver[0]}.{ver[1]} with NULL strides")
    return f"version {ver[0]}.{ver[1]}, strides set"


@check_fn("producer: negative strides of a reversed view (a[::-1])")
def _neg_producer(p: Peer) -> str:
    x = p.array([0.0, 1.0, 2.0, 3.0])
    r = p.reversed(x)
    base, got = layout(x.__dlpack__()), layout(r.__dlpack__())
    want = base["start"] + 3 * base["itemsize"]  # x's last element
    if got["strides"] in (None, (1,)) and got["start"] != want:
        raise Skip(f"x[::-1] is a compact copy (strides {got['strides']}), not a view")
    expect(got["shape"] == (4,), f"shape {got['shape']}, want (4,)")
    expect(got["strides"] == (-1,), f"strides {got['strides']}, want (-1,) (in elements)")
    off = got["start"] - base["start"]
    expect(off == 3 * base["itemsize"], f"data + byte_offset at {off:+d} bytes from x's data, want "
           f"{3 * base['itemsize']:+d} (the last element)")
    return "strides (-1,), data + byte_offset at the last element"


@check_fn("producer: read-only arrays carry READ_ONLY; legacy export refused")
def _ro_producer(p: Peer) -> str:
    if not p.has_readonly:
        raise Skip("the library has no read-only arrays")
    x = p.readonly(p.array([1.0, 2.0]))
    info = _probe.inspect(_versioned(x))
    expect(info["flags"] & READ_ONLY, "READ_ONLY flag not set on a read-only array")
    try:
        x.__dlpack__()
    except BufferError:
        return "READ_ONLY set; legacy export raises BufferError"
    raise Fail("a read-only array was exported as a writable legacy capsule")


@check_fn("producer: copy=True sets IS_COPIED and copies")
def _copied(p: Peer) -> str:
    x = p.array([1.0, 2.0, 3.0])
    plain = _probe.inspect(_versioned(x))
    try:
        info = _probe.inspect(_versioned(x, copy=True))
    except BufferError as e:  # may refuse what it cannot do; must not copy silently wrong
        raise Skip(f"copy=True refused with BufferError ({_short(e)})") from e
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
    dev = _probe.inspect(cap).get("device")
    raise Fail(f"dl_device=(17, 5) was accepted (capsule device {dev})")


@check_fn("producer: copy=False never copies")
def _copy_false(p: Peer) -> str:
    x = p.array([1.0, 2.0])
    info = _probe.inspect(_versioned(x, copy=False))
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
    # A deleter that needs the GIL without taking it crashes or hangs: check()
    # runs the checks in a child process, which reports either as a FAIL row.
    x = p.array([1.0, 2.0, 3.0])
    cap = x.__dlpack__()
    tok = _probe.intercept(cap)
    _probe.free_nogil(cap)
    expect(tok.calls == 1, f"deleter ran {tok.calls} times, want 1")
    return "deleter ran once on a native thread without the GIL"


def _consume(p: Peer, probe: Probe) -> tuple[Any, list[int]]:
    y = p.from_dlpack(probe)
    return y, probe.calls()


def _once_after(probe: Probe) -> None:
    """Every capsule the probe made had its deleter called exactly once, once
    the caller has dropped its own references to what the consumer returned."""
    probe.release()
    calls = probe.calls()
    expect(calls and all(c == 1 for c in calls), f"deleter calls per capsule {calls}, want exactly 1 each")


@check_fn("consumer: renames the capsule and calls the deleter exactly once", cpu_probes=True)
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


@check_fn("consumer: refuses a future major version and still calls the deleter", cpu_probes=True)
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


@check_fn("consumer: honours READ_ONLY", cpu_probes=True)
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


@check_fn("consumer: accepts legacy producers (no max_version)", cpu_probes=True)
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


@check_fn("consumer: byte_offset honoured", cpu_probes=True)
def _byte_offset(p: Peer) -> str:
    return _values_check(p, Probe(values=(0, 1, 2, 3, 4, 5, 6, 7), byte_offset=16), [2.0, 3.0, 4.0, 5.0],
                         "byte_offset=16")


@check_fn("consumer: size-0 tensor with NULL data", cpu_probes=True)
def _size0(p: Peer) -> str:
    return _values_check(p, Probe(shape=(0,), strides=(1,), values=None), [], "shape (0,), data NULL")


@check_fn("consumer: 0-d tensor", cpu_probes=True)
def _zero_d(p: Peer) -> str:
    return _values_check(p, Probe(shape=(), strides=(), values=(7.5,)), 7.5, "shape ()")


@check_fn("consumer: size-1 dims with odd strides", cpu_probes=True)
def _odd_strides(p: Peer) -> str:
    return _values_check(p, Probe(shape=(3, 1), strides=(1, 12345), values=(1, 2, 3)), [[1.0], [2.0], [3.0]],
                         "shape (3, 1) strides (1, 12345)")


@check_fn("consumer: negative strides", cpu_probes=True)
def _neg_strides(p: Peer) -> str:
    return _values_check(p, Probe(shape=(4,), strides=(-1,), byte_offset=24, values=(0, 1, 2, 3)),
                         [3.0, 2.0, 1.0, 0.0], "strides (-1,)")


@check_fn("consumer: unknown dtype refused, deleter once", cpu_probes=True)
def _bad_dtype(p: Peer) -> str:
    probe = Probe(dtype=(99, 64, 1))
    y, err = _attempt(p, probe)
    del y
    _once_after(probe)
    expect(err is not None, "imported dtype code 99")
    return f"{type(err).__name__}, deleter once"


@check_fn("round trip: every dtype through godlpack, zero-copy")
def _dtypes(p: Peer) -> str:
    # A library without a consumer is checked one way (its arrays into godlpack);
    # a dtype its __dlpack__ refuses with BufferError is listed, not failed (the
    # array API allows that for a dtype it cannot export).
    if p.no_export():
        raise Skip(p.no_export())
    one_way = p.no_import()
    bad, ok, refused = [], [], []
    for dt in p.dtypes:
        values = [True, False, True] if dt == "bool" else [1, 2, 3]
        try:
            x = p.array(values, dt)
            g = godlpack.from_dlpack(x)
        except BufferError as e:
            refused.append(f"{dt} ({_short(e)[:60]})")
            continue
        except Exception as e:  # noqa: BLE001
            bad.append(f"{dt}: {type(e).__name__}: {e}")
            continue
        try:
            got = g.tolist() if one_way else p.to_list(p.from_dlpack(g))
        except Exception as e:  # noqa: BLE001
            bad.append(f"{dt}: {type(e).__name__}: {e}")
            continue
        if g.dtype != dt or got != p.to_list(x):
            bad.append(f"{dt}: got {g.dtype} {got}")
        else:
            ok.append(dt)
    note = f"; refused with BufferError: {', '.join(refused)}" if refused else ""
    expect(not bad, "; ".join(bad)[:300] + (f" ({len(ok)} others pass)" if ok else ""))
    if not ok:
        raise Skip(f"every dtype refused{note[len('; refused'):]}"[:300])
    way = " into godlpack (export only)" if one_way else ""
    return f"{len(ok)} dtypes{way}: {', '.join(ok)}{note}"[:400]


# --- the C exchange table (DLPack 1.3), checked both ways ----------------------------


def _table(p: Peer) -> Any:
    api = p.exchange_api()
    if api is None:
        raise Skip("no DLPack C exchange table (__dlpack_c_exchange_api__)")
    ver = _probe.exchange_version(api)
    expect(ver[0] == 1, f"exchange table version {ver[0]}.{ver[1]}")
    return api


@check_fn("exchange table: export gives a 1.x tensor, strides set, deleter once")
def _table_export(p: Peer) -> str:
    api = _table(p)
    x = p.array([[1.0, 2.0], [3.0, 4.0]])
    cap = _probe.exchange_export(api, p.exchange_object(x))
    info = _probe.inspect(cap)
    tok = _probe.intercept(cap)
    del cap
    gc.collect()
    ver, calls = info["version"], tok.calls
    expect(ver[0] == 1, f"exported version {ver[0]}.{ver[1]}")
    expect(info.get("shape") == (2, 2), f"shape {info.get('shape')}")
    expect(tuple(ver) < (1, 2) or not info["strides_null"], f"version {ver[0]}.{ver[1]} with NULL strides")
    expect(calls == 1, f"deleter ran {calls} times, want 1")
    return f"version {ver[0]}.{ver[1]}, shape (2, 2), strides set, deleter once"


@check_fn("exchange table: import steals the tensor, deleter once", cpu_probes=True)
def _table_import(p: Peer) -> str:
    api = _table(p)
    probe = Probe()
    cap = probe.make(True)
    y = _probe.exchange_import(api, cap)
    del cap
    got = p.to_list(y)
    during = probe.calls()[-1]
    del y
    _once_after(probe)
    expect(got == [1.0, 2.0, 3.0, 4.0], f"values {got}")
    return f"correct values; deleter {during} while alive, 1 after"


@check_fn("exchange table: import refuses a future major, deleter once", cpu_probes=True)
def _table_future(p: Peer) -> str:
    api = _table(p)
    probe = Probe(version=(2, 0))
    cap = probe.make(True)
    try:
        y, err = _probe.exchange_import(api, cap), None
    except Exception as e:  # noqa: BLE001 - the type is what we check
        y, err = None, e
        e.__traceback__ = None
    del cap, y
    _once_after(probe)
    expect(err is not None, "imported a DLPack 2.0 tensor")
    expect(isinstance(err, BufferError), f"raised {type(err).__name__}, not BufferError: {_short(err)}")
    return "BufferError, deleter once"


# --- the clause each check holds a library to (cited by its FAIL rows) -------------
# "array API": the Python array API standard 2024.12 (array.__dlpack__, from_dlpack);
# "dlpack.h": the DLPack 1.3 header; "DLPack Python spec": dlpack's python_spec.rst.

_EXPORT = "array API array.__dlpack__"
_CONSUME = "DLPack Python spec: the consumer renames the capsule 'used_dltensor[_versioned]' and calls the deleter once"
SPEC = {
    "producer: fresh capsule and managed tensor per __dlpack__ call":
        "DLPack Python spec: each __dlpack__ call returns a new capsule owning its own managed tensor",
    "producer: capsule names follow max_version":
        f"{_EXPORT} max_version: None or < (1, 0) gives a 'dltensor' capsule, >= (1, 0) may give 'dltensor_versioned'",
    "producer: destructor calls the deleter iff the capsule is unused":
        "DLPack Python spec: the capsule destructor calls the deleter only if the capsule was not renamed 'used_*'",
    "producer: strides non-NULL for ndim > 0 (DLPack >= 1.2)": "dlpack.h DLTensor.strides: not NULL if ndim != 0 (1.2)",
    "producer: negative strides of a reversed view (a[::-1])":
        "dlpack.h DLTensor.strides (signed, in elements) and byte_offset",
    "producer: read-only arrays carry READ_ONLY; legacy export refused":
        "dlpack.h DLPACK_FLAG_BITMASK_READ_ONLY (1.0); a legacy capsule cannot carry it",
    "producer: copy=True sets IS_COPIED and copies":
        f"{_EXPORT} copy=True: always copy; dlpack.h DLPACK_FLAG_BITMASK_IS_COPIED",
    "producer: impossible dl_device raises BufferError":
        f"{_EXPORT} dl_device: BufferError when the producer cannot export to that device",
    "producer: copy=False never copies": f"{_EXPORT} copy=False: never copy",
    "producer: CPU stream=None accepted": f"{_EXPORT} stream: on CPU only None is accepted",
    "producer: deleter safe on a thread without the GIL":
        "dlpack.h DLManagedTensor[Versioned].deleter: callable by the consumer from any thread",
    "consumer: renames the capsule and calls the deleter exactly once": _CONSUME,
    "consumer: refuses a future major version and still calls the deleter":
        "dlpack.h DLPackVersion: a consumer refuses an unknown major version and calls the deleter; "
        "array API from_dlpack raises BufferError",
    "consumer: honours READ_ONLY": "dlpack.h DLPACK_FLAG_BITMASK_READ_ONLY: the consumer must not write the data",
    "consumer: accepts legacy producers (no max_version)":
        f"{_EXPORT} notes: a consumer retries without max_version on TypeError (legacy producers)",
    "consumer: byte_offset honoured": "dlpack.h DLTensor.byte_offset",
    "consumer: size-0 tensor with NULL data": "dlpack.h DLTensor.data: may be NULL for a size-0 tensor",
    "consumer: 0-d tensor": "dlpack.h DLTensor.ndim: 0 is a scalar (shape and strides may be NULL)",
    "consumer: size-1 dims with odd strides": "dlpack.h DLTensor.strides: any stride of a size-1 dimension is valid",
    "consumer: negative strides":
        "dlpack.h DLTensor.strides are signed; array API from_dlpack: BufferError for what cannot be imported",
    "consumer: unknown dtype refused, deleter once":
        f"dlpack.h DLDataType: a consumer must stop importing on an unexpected code; {_CONSUME}",
    "round trip: every dtype through godlpack, zero-copy":
        f"array API from_dlpack (the data in x); {_EXPORT} Raises: BufferError for an incompatible dtype",
    "exchange table: export gives a 1.x tensor, strides set, deleter once":
        "dlpack.h DLPackExchangeAPI.managed_tensor_from_py_object_no_sync (1.3)",
    "exchange table: import steals the tensor, deleter once":
        "dlpack.h DLPackExchangeAPI.managed_tensor_to_py_object_no_sync (1.3): takes ownership",
    "exchange table: import refuses a future major, deleter once":
        "dlpack.h DLPackVersion: a consumer refuses an unknown major version and calls the deleter",
}
assert set(SPEC) == {t for t, _ in CHECKS}, "every check cites its clause"


# --- running -------------------------------------------------------------------------


def load(name: str, cls: type[Peer] | None = None) -> Peer | Result:
    """The adapter (cls, or the registered one) for an importable library, or
    the Result that says why not."""
    try:
        module = importlib.import_module(name)
    except ImportError as e:
        return Result(name, "import", "N/A", f"not installed ({e})")
    if name == "cupy":
        try:
            module.cuda.runtime.getDeviceCount()
        except Exception as e:  # noqa: BLE001
            return Result(name, "import", "N/A", f"no usable GPU ({e})")
    cls = cls or PEERS.get(name, Peer)
    if cls is Peer and not (hasattr(module, "from_dlpack") and hasattr(module, "asarray")):
        return Result(name, "import", "FAIL", "module has no from_dlpack/asarray to check")
    return cls(module)


DEVICE_NAMES = {1: "CPU", 2: "CUDA", 3: "CUDAHost", 4: "OpenCL", 7: "Vulkan", 8: "Metal", 10: "ROCm",
                11: "ROCMHost", 13: "CUDAManaged", 14: "OneAPI"}


def _cpu_refusal(p: Peer) -> str | None:
    """Why the CPU probes do not apply to this consumer, or None: its Peer
    declares device memory only, or its from_dlpack refuses a plain CPU probe,
    naming the CPU, before taking any capsule (as cupy.from_dlpack does). A
    refusal after taking a capsule is judged by the checks, never excused."""
    if p.consumer_devices is not None:
        if 1 in p.consumer_devices:
            return None
        kinds = ", ".join(DEVICE_NAMES.get(d, str(d)) for d in p.consumer_devices)
        return f"{p.name}'s from_dlpack takes {kinds} memory only (its Peer says so); the probes are CPU memory"
    if "_cpu_refused" not in vars(p):
        probe = Probe()
        y, err = _attempt(p, probe)
        del y
        probe.release()
        refused = err is not None and not probe.tokens and "cpu" in str(err).lower()
        p._cpu_refused = (f"refuses CPU memory before taking a capsule ({type(err).__name__}: {_short(err)}); "
                          "the probes are CPU memory") if refused else None  # type: ignore[attr-defined]
    return p._cpu_refused  # type: ignore[attr-defined]


def run_one(name: str, title: str, fn: Callable[[Peer], str], peer: Peer) -> Result:
    """One check, in this process. A FAIL names the clause it breaks (SPEC)."""
    try:
        na = peer.not_applicable(title)
        if na:
            raise Skip(na)
        if title in CPU_PROBES:
            why = _cpu_refusal(peer)
            if why:
                raise Skip(why)
        return Result(name, title, "PASS", fn(peer))
    except Skip as e:
        return Result(name, title, "N/A", str(e))
    except Fail as e:
        return Result(name, title, "FAIL", f"{e} [{SPEC[title]}]")
    except Exception as e:  # noqa: BLE001 - an unexpected error is a finding too
        return Result(name, title, "FAIL", f"{type(e).__name__}: {_short(e)} [{SPEC[title]}]")


def run_checks(name: str, peer: Peer | None = None) -> list[Result]:
    """All checks against one library in this process (a library that crashes
    takes this process with it: check() runs them in a child); a library that
    isn't installed gives N/A."""
    if peer is None:
        loaded = load(name)
        if isinstance(loaded, Result):
            return [loaded]
        peer = loaded
    return [run_one(name, title, fn, peer) for title, fn in CHECKS]


TIMEOUT = 120.0  # seconds per check (and for the import) in a child process


def check(*modules: str, timeout: float = TIMEOUT, isolate: bool = True) -> list[Result]:
    """Check each named library; returns one Result per check. Each library is
    checked in a child process (isolate=False: in this one), so a crash or a
    hang is a FAIL row (signal, or "timed out after N s") and not the end of the caller."""
    from .isolate import run_isolated

    for m in modules:
        if not isinstance(m, str):
            raise TypeError(f"check() takes module names (str), got {type(m).__name__}")
        if not m or m.startswith("."):
            raise ValueError(f"check() takes absolute module names, got {m!r}")
    if not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    results: list[Result] = []
    for m in modules:
        results.extend(run_isolated(m, timeout) if isolate else run_checks(m))
    return results

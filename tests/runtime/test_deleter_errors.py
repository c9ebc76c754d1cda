"""A foreign deleter runs inside godlpack's deallocators: the tensor's and the
capsule destructor of godlpack's exports. DLPack deleters must not raise, but
one that leaves a Python error set is reported through sys.unraisablehook (as
CPython reports an exception in __del__), never dropped silently and never
leaked into unrelated code; and an exception pending when the deleter runs
survives it. The owner's deleter runs exactly once either way."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import godlpack
import ctypes_producer as cp
from harness import child_env


@pytest.fixture
def unraisable(monkeypatch):
    seen: list = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)
    return seen


def _raising(versioned: bool = True) -> cp.CtypesProducer:
    return cp.CtypesProducer(np.arange(4, dtype=np.float32), versioned=versioned, deleter_raises=True)


def _messages(seen) -> list[str]:
    return [f"{type(u.exc_value).__name__}: {u.exc_value}" for u in seen]


@pytest.mark.parametrize("versioned", [True, False])
def test_tensor_dealloc_reports_a_deleter_error(unraisable, versioned):
    p = _raising(versioned)
    t = godlpack.from_dlpack(p)
    del t
    assert p.deleter_calls == 1
    assert _messages(unraisable) == ["RuntimeError: the probe's deleter left this error set"]


@pytest.mark.parametrize("max_version", [None, (1, 3)])
def test_capsule_destructor_reports_a_deleter_error(unraisable, max_version):
    # The unused capsule is the last owner of the producer's tensor: its
    # destructor runs godlpack's deleter, which runs the producer's.
    p = _raising()
    cap = godlpack.from_dlpack(p).__dlpack__(max_version=max_version)
    assert p.deleter_calls == 0
    del cap
    assert p.deleter_calls == 1
    assert _messages(unraisable) == ["RuntimeError: the probe's deleter left this error set"]
    # The capsule is mid-deallocation: handing it to the hook would revive it
    # (a second dealloc, the deleter again on freed memory).
    assert unraisable[0].object is None


def test_capsule_destructor_report_frees_nothing_twice():
    # Under CPython's debug allocator a revived capsule is a crash: "double
    # free" or a segfault in the hook. The hook also keeps what it was given.
    code = textwrap.dedent("""
        import sys, numpy as np, godlpack
        from godlpack import _probe
        kept = []
        for hook in (None, kept.append):
            if hook is not None:
                sys.unraisablehook = hook
            for mv in (None, (1, 0)):
                cap, tok = _probe.make(True, shape=[4], strides=[1], data=np.arange(4.0).tobytes(), raising=True)
                c = godlpack.from_dlpack(cap).__dlpack__(max_version=mv)
                del cap
                del c
                assert tok.calls == 1, tok.calls
        for u in kept:
            assert u.object is None and type(u.exc_value) is RuntimeError, u
        print("done", len(kept))
    """)
    env = dict(child_env(), PYTHONMALLOC="debug")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0 and "done 2" in r.stdout, (r.returncode, r.stdout, r.stderr[-2000:])
    assert r.stderr.count("the probe's deleter left this error set") == 2, r.stderr[-2000:]


@pytest.mark.parametrize("max_version", [None, (1, 3)])
def test_capsule_destructor_keeps_a_pending_exception(unraisable, max_version):
    # The half-built list's items are dropped while ZeroDivisionError is pending.
    p = _raising()

    def build():
        return [godlpack.from_dlpack(p).__dlpack__(max_version=max_version), 1 // 0]

    with pytest.raises(ZeroDivisionError):
        build()
    assert p.deleter_calls == 1
    assert _messages(unraisable) == ["RuntimeError: the probe's deleter left this error set"]


def test_refused_import_reports_a_deleter_error_and_keeps_the_refusal(unraisable):
    # The validator refuses (unknown dtype code) and releases the producer's
    # tensor: the caller sees the BufferError, the deleter's error is reported.
    p = cp.CtypesProducer(np.arange(4, dtype=np.float32), dtype=(99, 32, 1), deleter_raises=True)
    with pytest.raises(BufferError):
        godlpack.from_dlpack(p)
    assert p.deleter_calls == 1
    assert _messages(unraisable) == ["RuntimeError: the probe's deleter left this error set"]


def test_no_report_without_an_error(unraisable):
    p = cp.CtypesProducer(np.arange(4, dtype=np.float32))
    cap = godlpack.from_dlpack(p).__dlpack__()
    del cap
    assert p.deleter_calls == 1
    assert unraisable == []


# --- a Python-level deleter keeps the pending exception ------------------------

def _raises_and_catches() -> None:
    """Python code in a deleter, as any Python-level deleter may run: raising and
    catching clears whatever exception the caller had pending unless it saved it."""
    try:
        raise KeyError("inside the deleter")
    except KeyError:
        pass


def test_failed_copy_keeps_its_exception():
    # A broadcast view of 2**62 elements: the producer (legacy) cannot copy,
    # godlpack's copy fails with MemoryError, and then drops the producer's
    # tensor, whose deleter must not swallow the MemoryError.
    p = cp.CtypesProducer(np.zeros(1, np.float32), shape=[2**62], strides=[0], versioned=False,
                          legacy_signature=True, python_deleter=_raises_and_catches)
    with pytest.raises(MemoryError):
        godlpack.from_dlpack(p, copy=True)
    assert p.deleter_calls == 1


def test_tensor_dealloc_keeps_a_pending_exception():
    # The interpreter drops the half-built list's items while ZeroDivisionError
    # is pending: the Tensor's dealloc runs the deleter then.
    p = cp.CtypesProducer(np.arange(4, dtype=np.float32), python_deleter=_raises_and_catches)

    def build():
        return [godlpack.from_dlpack(p), 1 // 0]

    with pytest.raises(ZeroDivisionError):
        build()
    assert p.deleter_calls == 1

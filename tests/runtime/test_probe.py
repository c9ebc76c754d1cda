"""The conformance checker's counting probes (godlpack._probe): exact counts, and
memory safety even when the private functions are misused from Python
(use-after-free through delete/inspect, a double intercept that leaked, a
static slot table that ran out after ~2,600 check() runs)."""
from __future__ import annotations

import ctypes
import gc
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from godlpack import _probe
from godlpack.conformance import Probe, capsule_name


def own(versioned=True):
    p = Probe()
    cap = p.make(versioned)
    return cap, p.tokens[-1]


def test_records_are_recycled_past_the_old_table_size():
    # The old probe had a static table of 65,536 slots that never recycled.
    base = _probe.live()
    for _ in range(70_000):
        cap, tok = own()
        del cap, tok
    assert _probe.live() == base
    cap, tok = own()
    del cap
    assert tok.calls == 1


def test_intercepted_records_are_recycled():
    a = np.arange(3.0)
    base = _probe.live()
    for _ in range(20_000):
        tok = _probe.intercept(a.__dlpack__())
        assert tok.calls == 1
        del tok
    assert _probe.live() == base


def test_delete_refused_while_the_capsule_is_unused():
    # Was: the deleter ran, then the capsule's destructor read the freed tensor.
    cap, tok = own()
    with pytest.raises(ValueError, match="does not own"):
        _probe.delete(tok)
    assert tok.calls == 0
    del cap
    assert tok.calls == 1


def test_delete_after_take_runs_once_and_never_again():
    cap, tok = own()
    _probe.take(cap)
    assert capsule_name(cap) == "used_dltensor_versioned"
    del cap
    assert tok.calls == 0  # a used capsule's destructor leaves the tensor to its consumer
    _probe.delete(tok)
    assert tok.calls == 1
    with pytest.raises(ValueError, match="already deleted"):
        _probe.delete(tok)
    assert tok.calls == 1


def test_delete_refused_for_a_consumed_tensor():
    cap, tok = own()
    y = np.from_dlpack(_Once(cap))
    del y
    gc.collect()
    assert tok.calls == 1
    with pytest.raises(ValueError):
        _probe.delete(tok)
    assert tok.calls == 1


class _Once:
    def __init__(self, cap):
        self.cap = cap

    def __dlpack__(self, **kw):
        cap, self.cap = self.cap, None
        return cap

    def __dlpack_device__(self):
        return (1, 0)


def test_inspect_refuses_used_capsules():
    # Was: inspect read a managed tensor its consumer had already freed.
    cap, tok = own()
    y = np.from_dlpack(_Once(cap))
    del y
    gc.collect()
    assert capsule_name(cap) == "used_dltensor_versioned" and tok.calls == 1
    with pytest.raises(ValueError, match="unused"):
        _probe.inspect(cap)
    for f in (_probe.intercept, _probe.take, _probe.free_nogil):
        with pytest.raises(ValueError):
            f(cap)
    assert tok.calls == 1


def test_inspect_reads_an_unused_capsule():
    p = Probe(shape=(2, 2), values=(1, 2, 3, 4))
    info = _probe.inspect(p.make(True))
    assert info["shape"] == (2, 2) and info["version"] == (1, 3) and not info["strides_null"]


def test_intercepting_twice_forwards_the_deleter_once():
    # Was: the second intercept wrapped the trampoline in itself, so the producer's
    # deleter never ran and the array leaked.
    a = np.arange(3.0)
    before = sys.getrefcount(a)
    base = _probe.live()
    cap = a.__dlpack__(max_version=(1, 0))
    t1 = _probe.intercept(cap)
    t2 = _probe.intercept(cap)
    assert _probe.live() == base + 1
    del cap
    assert t1.calls == t2.calls == 1
    assert sys.getrefcount(a) == before
    del t1, t2
    assert _probe.live() == base


def test_intercepting_an_own_probe_shares_its_record():
    cap, tok = own()
    base = _probe.live()
    t2 = _probe.intercept(cap)
    assert _probe.live() == base and not t2.intercepted
    del cap
    assert tok.calls == t2.calls == 1


def test_free_nogil_counts_once_and_refuses_a_second_time():
    for versioned in (True, False):
        cap, tok = own(versioned)
        _probe.free_nogil(cap)
        assert tok.calls == 1
        with pytest.raises(ValueError):
            _probe.free_nogil(cap)
        del cap
        assert tok.calls == 1


def test_a_record_lives_while_its_token_does():
    cap, tok = own()
    base = _probe.live()
    del cap  # deleter ran; the token still reads its count
    assert _probe.live() == base and tok.calls == 1
    del tok
    assert _probe.live() == base - 1


def test_wrong_arguments_are_refused():
    with pytest.raises(TypeError):
        _probe.delete(5)
    with pytest.raises(ValueError):
        _probe.inspect(object())
    with pytest.raises(ValueError):
        _probe.intercept(np.arange(2.0))


def test_capsule_without_destructor_leaves_every_call_to_its_consumer():
    cap, tok = _probe.make(True, shape=(2,), strides=(1,), data=bytes(16), destructor=False)
    del cap
    gc.collect()
    assert tok.calls == 0  # dropped unconsumed: nobody called the deleter
    cap, tok = _probe.make(True, shape=(2,), strides=(1,), data=bytes(16), destructor=False)
    np.from_dlpack(_Once(cap))  # imported and dropped at once
    assert tok.calls == 1 and len(tok.threads) == 1


def test_own_capsule_without_destructor_is_still_known_as_own():
    cap, tok = _probe.make(True, shape=(1,), strides=(1,), data=bytes(8), destructor=False)
    addr = _probe.inspect(cap)["pointer"]
    deleter = ctypes.c_void_p.from_address(addr + 16).value  # after version and manager_ctx
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(deleter)(addr)  # a consumer that did not rename it
    assert tok.calls == 1
    del tok  # the record goes, and the tensor's memory with it
    for f in (_probe.inspect, _probe.intercept, _probe.take, _probe.free_nogil):
        with pytest.raises(ValueError, match="deleted|still to run"):
            f(cap)


def test_make_refuses_a_null_deleter_with_a_destructor():
    with pytest.raises(ValueError, match="destructor=False"):
        _probe.make(True, deleter=False)
    cap, tok = _probe.make(False, deleter=False, destructor=False)
    assert _probe.inspect(cap)["ndim"] == 0 and tok.calls == 0


def test_deleter_calls_with_unknown_pointers_are_orphans():
    # In a process of its own: the suite fails any test that makes an orphan call.
    code = textwrap.dedent("""
        import ctypes
        from godlpack import _probe
        cap, tok = _probe.make(True, destructor=False)
        addr = _probe.inspect(cap)["pointer"]
        deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(ctypes.c_void_p.from_address(addr + 16).value)
        base = _probe.orphans()
        deleter(addr)
        del tok
        deleter(addr)  # its record is gone: counted as an orphan, memory not touched
        assert _probe.orphans() == base + 1, _probe.orphans()
    """)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(_probe.__file__)))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr[-2000:]

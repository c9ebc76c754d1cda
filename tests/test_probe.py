"""The conformance checker's counting probes (godlpack._probe): exact counts, and
memory safety even when the private functions are misused from Python (issue 12,
item 8: use-after-free through delete/inspect, a double intercept that leaked, a
static slot table that ran out after ~2,600 check() runs)."""
from __future__ import annotations

import gc
import sys

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

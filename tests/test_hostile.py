"""Hostile input: random DLTensor structs, lying producers, shutdown, fork.

Every case must end in a clear exception or a correct view, never a crash,
and the producer's deleter must run exactly once.
"""
from __future__ import annotations

import gc
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import godlpack
from ctypes_producer import CtypesProducer, capsule_name

BUF = np.zeros(4096, dtype=np.uint8)  # the only memory a fuzzed tensor may point into
MID = BUF.ctypes.data + 2048  # room on both sides for negative strides

dims = st.one_of(st.integers(0, 4), st.sampled_from([-1, 2**31, 2**40, 2**62, -(2**63), 2**63 - 1]))
strides_values = st.one_of(st.integers(-4, 4), st.sampled_from([2**40, -(2**40), 2**62, -(2**63), 2**63 - 1]))


@st.composite
def managed_specs(draw):
    ndim = draw(st.one_of(st.integers(0, 5), st.sampled_from([-1, -(2**31), 65, 1000, 64])))
    n = ndim if 0 <= ndim <= 64 else draw(st.integers(0, 3))  # memory is real, only values lie
    return dict(
        versioned=draw(st.booleans()),
        version=(draw(st.sampled_from([0, 1, 1, 1, 2, 255])), draw(st.integers(0, 5))),
        flags=draw(st.integers(0, 7)),
        ndim=ndim,
        shape=draw(st.lists(dims, min_size=n, max_size=n)),
        strides=draw(st.one_of(st.none(), st.lists(strides_values, min_size=n, max_size=n))),
        null_shape=draw(st.booleans()) and draw(st.booleans()),
        dtype=(draw(st.integers(0, 20)), draw(st.sampled_from([0, 1, 4, 6, 8, 16, 32, 64, 128, 255])),
               draw(st.sampled_from([1, 1, 1, 0, 2, 4]))),
        device=(draw(st.sampled_from([1, 1, 1, 2, 3, 0, 5, 13, 19, -1])), draw(st.sampled_from([0, 0, 1, -1]))),
        data=draw(st.sampled_from([MID, MID, 0])),
        byte_offset=draw(st.sampled_from([0, 0, 8, 16, 2**63, 2**64 - 1])),
    )


def _span_inside(t: godlpack.Tensor) -> bool:
    """Whether the view lies inside BUF (a valid struct may still lie about memory)."""
    lo = hi = t.data_ptr
    for n, s in zip(t.shape, t.strides):
        if n == 0:
            return True
        ext = (n - 1) * s * t.itemsize
        lo, hi = (lo + ext, hi) if ext < 0 else (lo, hi + ext)
    return BUF.ctypes.data <= lo and hi + t.itemsize <= BUF.ctypes.data + BUF.size


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(managed_specs())
def test_random_structs_never_crash_and_delete_once(spec):
    versioned = spec.pop("versioned")
    p = CtypesProducer(BUF, versioned=versioned, **spec)
    try:
        t = godlpack.from_dlpack(p)
    except BufferError as e:
        assert str(e), "refusals must say why"
        assert p.deleter_calls == 1
        return
    # Accepted: the view must say exactly what the struct said.
    assert t.ndim == spec["ndim"] and list(t.shape) == spec["shape"]
    if spec["strides"] is not None and t.size > 0:
        assert all(a == b for a, b, n in zip(t.strides, spec["strides"], t.shape) if n != 1)
    assert t.device == spec["device"]
    assert p.deleter_calls == 0
    readable = godlpack.is_cpu_accessible(t.device) and t.dtype in ("uint8", "int8", "float32", "float64", "bool")
    if 0 < t.size <= 4096 and readable and _span_inside(t):
        assert len(t.tolist()) == t.shape[0] if t.ndim else t.tolist() is not None
    del t
    gc.collect()
    assert p.deleter_calls == 1


def test_dlpack_device_lies_do_not_matter():
    # from_dlpack reads the device from the struct, never from __dlpack_device__.
    p = CtypesProducer(np.arange(4.0))
    p.__dlpack_device__ = lambda: "junk"  # type: ignore[method-assign]
    t = godlpack.from_dlpack(p)
    assert t.device == (1, 0) and t.tolist() == [0.0, 1.0, 2.0, 3.0]
    del t
    gc.collect()
    assert p.deleter_calls == 1


def test_device_request_checked_against_the_struct():
    p = CtypesProducer(np.arange(4.0), device=(2, 0))  # claims CUDA; never dereferenced
    with pytest.raises(BufferError, match=r"device \(2, 0\), not the requested \(1, 0\)"):
        godlpack.from_dlpack(p, device=(1, 0))
    gc.collect()
    assert p.deleter_calls == 1


def test_capsule_renamed_by_someone_else_is_refused():
    p = CtypesProducer(np.arange(4.0))
    cap = p.capsule(True)
    from godlpack.conformance.probe import rename

    rename(cap, "used_dltensor_versioned")
    with pytest.raises(BufferError, match="already consumed"):
        godlpack.from_dlpack(cap)
    assert p.deleter_calls == 0  # not ours to delete


def _run(code: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout)


def test_tensors_alive_at_interpreter_shutdown():
    r = _run("""
        import atexit, numpy as np, godlpack
        try:
            import torch  # optional peer: its tensors join in when installed
        except ImportError:
            torch = None
        a = np.arange(10.0)
        keep = [godlpack.from_dlpack(a), godlpack.zeros(5)]
        keep.append(np.from_dlpack(keep[1]))
        if torch is not None:
            keep.append(godlpack.from_dlpack(torch.ones(3)))
            keep.append(torch.from_dlpack(keep[0]))
        cycle = {"t": godlpack.arange(4)}
        cycle["self"] = cycle
        capsule = keep[1].__dlpack__(max_version=(1, 3))  # never consumed
        atexit.register(lambda: keep.append(godlpack.from_dlpack(np.ones(2))))
        print("ok")
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


def test_fork_child_gets_a_clear_error_not_a_hang():
    r = _run("""
        import multiprocessing as mp, numpy as np, godlpack

        def child(q):
            inherited = q_parent_tensor  # what is written in C works in the child
            out = [np.from_dlpack(inherited).tolist(), godlpack.from_dlpack(np.arange(2.0)).tolist()]
            try:
                godlpack.zeros(3)  # Go allocation: a clear error, not a hang
            except RuntimeError as e:
                out.append("fork" in str(e))
            q.put(out)

        q_parent_tensor = godlpack.arange(3)
        ctx = mp.get_context("fork")
        q = ctx.Queue()
        p = ctx.Process(target=child, args=(q,))
        p.start()
        print(q.get(timeout=60))
        p.join(60)
        print(p.exitcode)
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["[[0,", "1,", "2],", "[0.0,", "1.0],", "True]", "0"]


def test_spawned_children_work_fully(tmp_path):
    script = tmp_path / "spawn_child.py"
    script.write_text(textwrap.dedent("""
        import multiprocessing as mp, numpy as np, godlpack

        def child(q):
            q.put(godlpack.from_dlpack(np.arange(3.0)).tolist())

        if __name__ == "__main__":
            ctx = mp.get_context("spawn")
            q = ctx.Queue()
            p = ctx.Process(target=child, args=(q,))
            p.start()
            print(q.get(timeout=60))
            p.join(60)
            print(p.exitcode)
    """))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["[0.0,", "1.0,", "2.0]", "0"]


@pytest.mark.parametrize("make", [lambda torch: torch.tensor([1 + 2j]).conj(),
                                  lambda torch: torch._neg_view(torch.tensor([1.0, 2.0])),
                                  lambda torch: torch.ones(3, requires_grad=True)])
def test_torch_exchange_table_never_gives_silently_wrong_values(make):
    # PyTorch's C exchange table exports conjugate/negative views and tensors
    # requiring grad that its __dlpack__ refuses; godlpack must not import
    # them with wrong values, so both paths refuse alike.
    torch = pytest.importorskip("torch")
    x = make(torch)
    if not x.is_neg():  # torch exports negative views with the wrong sign: not asserted here
        with pytest.raises(BufferError):
            x.__dlpack__()
    with pytest.raises(BufferError):
        godlpack.from_dlpack(x)
    assert godlpack.from_dlpack(x.resolve_conj().resolve_neg().detach()).tolist() == x.tolist()


def test_broadcast_views_report_sizes_without_overflow():
    # A valid view of 2**62 float64 elements over 8 bytes (stride 0).
    p = CtypesProducer(np.arange(1.0), shape=[2**62], strides=[0])
    t = godlpack.from_dlpack(p)
    assert t.size == 2**62 and t.nbytes == 2**65
    with pytest.raises(BufferError, match="overflows"):
        memoryview(t)
    with pytest.raises(MemoryError):
        t.copy()
    del t
    gc.collect()
    assert p.deleter_calls == 1


def test_checker_probes_refuse_foreign_capsules():
    from godlpack import _probe

    with pytest.raises(ValueError, match="DLPack capsule"):
        _probe.intercept(godlpack._C_API)
    with pytest.raises(ValueError, match="DLPack capsule"):
        _probe.inspect(godlpack._C_API)
    cap = np.arange(3.0).__dlpack__()
    before = sys.getrefcount(True)
    for _ in range(1000):
        info = _probe.inspect(cap)
    assert info["shape"] == (3,) and sys.getrefcount(True) - before < 10

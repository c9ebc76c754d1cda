"""Free-threaded CPython (docs/free-threading.md): godlpack._godlpack declares
Py_MOD_GIL_NOT_USED (every piece of the runtime's state has its own guard);
a pyext extension declares Py_MOD_GIL_USED unless its author calls
Module.FreeThreaded. The declarations are read from the sources and from the
built definitions. The stress tests hammer each guarded cache from many
threads and check every result: on a regular build the GIL serialises them
(they still catch a cache that hands out stale or freed entries); on a
free-threaded one (make test-pythons runs python3.Xt when it has one) they
run without it."""
from __future__ import annotations

import gc
import importlib.util
import os
import pickle
import re
import subprocess
import sys
import sysconfig
import threading
import tracemalloc

import numpy as np
import pytest

import godlpack
from harness import child_env
from threads import in_threads
from ctypes_producer import capsule_name, read_legacy, read_versioned
from godlpack import _godlpack

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
HAS_GIL_SLOT = sys.version_info >= (3, 13)  # Py_mod_gil exists from 3.13
# Slot ids (moduleobject.h; 3.15's slots_generated.h renumbers them, and keeps the old for compat).
PY_MOD_EXEC, PY_MOD_GIL = (2, 85), (4, 87)
GIL_USED, GIL_NOT_USED = 0, 1

# Prints the slots {slot: value} of the PyModuleDef that a library's PyInit
# function returns (in a child: a pyext library brings a Go runtime of its own).
_SLOTS = r"""
import ctypes, sys
class Slot(ctypes.Structure):
    _fields_ = [("slot", ctypes.c_int), ("value", ctypes.c_void_p)]
init = getattr(ctypes.PyDLL(sys.argv[1]), sys.argv[2])
init.restype = ctypes.c_void_p
d = init()
# PyModuleDef: PyObject_HEAD, m_init, m_index, m_copy, m_name, m_doc, m_size, m_methods, m_slots
p = ctypes.sizeof(ctypes.c_void_p)
slots = ctypes.cast(ctypes.c_void_p.from_address(d + object.__basicsize__ + 7 * p).value, ctypes.POINTER(Slot))
out, i = {}, 0
while slots[i].slot != 0:
    out[slots[i].slot] = slots[i].value or 0
    i += 1
print(out)
"""


def declared_slots(lib: str, init: str) -> dict[int, int]:
    r = subprocess.run([sys.executable, "-c", _SLOTS, lib, init], capture_output=True, text=True, timeout=120,
                       env=child_env())
    assert r.returncode == 0, r.stderr
    slots = eval(r.stdout)  # a dict literal of ints, printed above
    assert any(s in slots for s in PY_MOD_EXEC), slots  # the layout was read right
    return slots


def expect_gil_slot(slots: dict[int, int], value: int) -> None:
    gil = [slots[s] for s in PY_MOD_GIL if s in slots]
    assert gil == ([value] if HAS_GIL_SLOT else []), slots


def test_sources_declare_godlpack_free_threaded_and_extensions_by_choice():
    # The extensions' definition ships with every godlpack (the Go source
    # extensions build against); godlpack's own where the source tree is here.
    ext = open(os.path.join(godlpack.get_go_source(), "pyext", "ext_module.c"), encoding="utf-8").read()
    assert re.search(r"Py_mod_gil;.*free_threaded \? Py_MOD_GIL_NOT_USED : Py_MOD_GIL_USED", ext, re.S), \
        "ext_module.c: GIL_USED unless Module.FreeThreaded"
    own = os.path.join(ROOT, "module", "module.c")
    if os.path.exists(own):
        src = open(own, encoding="utf-8").read()
        assert re.search(r"\{Py_mod_gil, Py_MOD_GIL_NOT_USED\}", src), f"{own} does not declare Py_MOD_GIL_NOT_USED"
        assert "Py_MOD_GIL_USED" not in src, own


def test_built_godlpack_declares_gil_not_used():
    expect_gil_slot(declared_slots(_godlpack.__file__, "PyInit__godlpack"), GIL_NOT_USED)


def test_importing_godlpack_leaves_the_gil_off_where_free_threaded():
    code = ("import sys, warnings\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    import godlpack, numpy as np\n"
            "assert godlpack.from_dlpack(np.arange(3.0)).tolist() == [0.0, 1.0, 2.0]\n"
            "gil = sys._is_gil_enabled() if hasattr(sys, '_is_gil_enabled') else True\n"
            "print(gil, [str(x.message) for x in w if 'GIL' in str(x.message)])\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=child_env())
    assert r.returncode == 0, r.stderr
    gil, warned = r.stdout.strip().split(" ", 1)
    # CPython's warning names the module that re-enabled the GIL: never godlpack's.
    assert "_godlpack" not in warned, warned
    if not FREE_THREADED:
        assert gil == "True" and warned == "[]", r.stdout
    elif warned == "[]":  # nor did NumPy (a NumPy built for free-threading)
        assert gil == "False", r.stdout


def test_pyext_extensions_declare_gil_used_unless_free_threaded():
    # tests/pyext/ftmod: PyInit_ftmod (Module.FreeThreaded) and PyInit_ftmod_gil (the
    # default) in one library; check_ftmod.py calls ftmod from eight threads.
    from gomod import built

    lib = built("ftmod")
    expect_gil_slot(declared_slots(lib, "PyInit_ftmod"), GIL_NOT_USED)
    expect_gil_slot(declared_slots(lib, "PyInit_ftmod_gil"), GIL_USED)


# --- the guarded caches, from many threads ----------------------------------------------


def test_dlpack_keyword_cache_from_eight_threads():
    # Each call site passes its own keyword-names tuple, in orders that bind
    # differently: the cache of the last tuple's slots changes on every call,
    # and a tuple paired with another's slots binds stream to a version (or
    # max_version to a stream), which raises or gives the other capsule kind.
    t = godlpack.arange(6, dtype="float32")

    def work(k):
        for i in range(2000):
            if (i + k) % 4 == 0:
                c = t.__dlpack__(max_version=(1, 0), stream=None)
                assert read_versioned(c).dl_tensor.data == t.data_ptr
            elif (i + k) % 4 == 1:
                c = t.__dlpack__(stream=-1, max_version=None)
                assert read_legacy(c).dl_tensor.data == t.data_ptr
            elif (i + k) % 4 == 2:
                c = t.__dlpack__(copy=True, max_version=(1, 3))
                assert read_versioned(c).dl_tensor.data != t.data_ptr
            else:
                c = t.__dlpack__(dl_device=(1, 0), copy=False)
                assert capsule_name(c) == "dltensor"

    in_threads(work)


def test_exchange_type_cache_with_types_born_and_dying_in_threads():
    # Every from_dlpack of a new type fills an entry, evicting another (the
    # cache has 8) while other threads use theirs; each type dies after use,
    # and its entry is emptied by a weak-reference callback in whichever
    # thread frees it. NumPy arrays in between keep a hot entry under use.
    def work(k):
        for i in range(300):
            src = np.arange(4.0) + k * 1000 + i
            # Attributes of the class, so the type carries its own __dlpack__.
            P = type(f"P{k}_{i}", (), {"__dlpack__": lambda self, **kw: src.__dlpack__(**kw),
                                       "__dlpack_device__": lambda self: (1, 0)})
            assert godlpack.from_dlpack(P()).tolist() == src.tolist()
            assert godlpack.from_dlpack(src).tolist() == src.tolist()
            del P
            if i % 50 == k:
                gc.collect()  # types die in this thread while others look theirs up

    in_threads(work)
    gc.collect()
    x = np.arange(3.0)
    assert godlpack.from_dlpack(x).tolist() == [0.0, 1.0, 2.0]


def test_first_memoryviews_of_a_tensor_raced():
    # Eight threads take the first memoryview of each of many tensors at once:
    # the shape and byte strides are made by one of them, and all see them whole.
    tensors = [godlpack.zeros((k % 4 + 1, 3, 2), dtype="float64") for k in range(1500)]

    def work(k):
        for i, t in enumerate(tensors):
            m = memoryview(t)
            n = i % 4 + 1
            # a stride of an extent of 1 is given as 0 (buffer.c)
            assert m.shape == (n, 3, 2) and m.strides == (48 if n > 1 else 0, 16, 8), (m.shape, m.strides)
            m.release()

    in_threads(work)


def test_memoryviews_of_one_tensor_make_its_dims_once():
    # The dims are made on the first getbuffer and kept: later ones allocate nothing.
    t = godlpack.zeros((2, 3), dtype="int32")
    memoryview(t).release()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(2000):
            with memoryview(t) as m:
                assert m.shape == (2, 3)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 2000 * 32, grown  # 32 bytes of dims per call would be 64000


def test_pickling_while_the_module_is_executed_again():
    # A new module object from godlpack._godlpack's spec runs its exec again,
    # which sets the reconstructor pickles name; pickling in other threads
    # meanwhile must keep giving tensors that unpickle equal, by a name that
    # still gives the same function.
    spec = importlib.util.spec_from_file_location("godlpack._godlpack", _godlpack.__file__)
    rebuild = _godlpack._rebuild_tensor
    refs = sys.getrefcount(rebuild)
    t = godlpack.arange(10, dtype="int16")
    stop = threading.Event()

    def work(k):
        if k == 0:
            try:
                for _ in range(100):
                    m = importlib.util.module_from_spec(spec)
                    spec.loader.exec_module(m)
                    assert m._rebuild_tensor is rebuild
            finally:
                stop.set()
            return
        n = 0
        while not stop.is_set() or n < 50:
            for protocol in (2, 5):
                assert pickle.loads(pickle.dumps(t, protocol=protocol)).tolist() == list(range(10))
            n += 1

    in_threads(work, 4)
    assert _godlpack._rebuild_tensor is rebuild
    gc.collect()
    assert sys.getrefcount(rebuild) == refs  # each __reduce_ex__ dropped the reference it held


def test_torch_key_set_calibration_raced_by_first_imports():
    # In a fresh process eight threads make the first PyTorch imports at once:
    # one measures the key-set read, the others call the methods meanwhile;
    # every answer is right either way, and the measurement ends usable or not.
    pytest.importorskip("torch")
    code = r"""
import threading, torch, godlpack
from godlpack import _godlpack
barrier, errors = threading.Barrier(8), []
neg = torch._neg_view(torch.arange(3.0))
def work(k):
    try:
        barrier.wait()
        for i in range(40):
            x = torch.arange(3.0) + k
            assert godlpack.from_dlpack(x).tolist() == x.tolist()
            try:
                godlpack.from_dlpack(neg)
                errors.append("negative view imported")
            except BufferError:
                pass
    except BaseException as e:
        errors.append(repr(e))
ts = [threading.Thread(target=work, args=(k,)) for k in range(8)]
for t in ts: t.start()
for t in ts: t.join()
assert not errors, errors[:3]
print("keyset", _godlpack._torch_keyset())
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=child_env())
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"keyset (1|-1)$", r.stdout.strip()), r.stdout

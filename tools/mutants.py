"""`make mutants`: one-line sabotages of godlpack's core invariants, each
applied to a copy of the tree (never in place), rebuilt and run against the
tests that should catch it. A mutant is killed when those tests fail (or
crash, or time out); the run fails if any mutant survives, if a sabotage no
longer applies (the code moved: update MUTANTS), or if the unmutated copy does
not pass its own tests.

usage: python tools/mutants.py [--python PY] [--jobs N] [--keep] [--list] [NAME_SUBSTRING...]
"""
from __future__ import annotations

import argparse
import dataclasses
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXT = "python/godlpack/_godlpack" + sysconfig.get_config_var("EXT_SUFFIX")

# Test sets (paths relative to the tree).
INVARIANTS = ["tests/runtime/test_invariants.py"]
IMPORT = ["tests/runtime/test_from_dlpack.py", "tests/runtime/test_malformed.py"] + INVARIANTS
EXPORT = ["tests/runtime/test_export.py"] + INVARIANTS
HOSTILE = ["tests/runtime/test_hostile.py"]
MEMORY = INVARIANTS + ["tests/runtime/test_memory.py"]
BUFFER = INVARIANTS + ["tests/runtime/test_api.py"]
GO_VALIDATE = [("./consumer", ".")]
ARRMOD = ["tests/pyext/arrmod/check_arrmod.py"]  # a test extension's checks (tests/conftest.py builds it)
CLASSMOD = ["tests/pyext/classmod/check_classmod.py"]
OPMOD = ["tests/pyext/opmod/check_opmod.py"]
CBMOD = ["tests/pyext/cbmod/check_cbmod.py"]
VALMOD = ["tests/pyext/valmod/check_valmod.py"]
DECLMOD = ["tests/pyext/declmod/check_declmod.py"]
SHAPE = "core/shape.c"  # the validator's count and span arithmetic


@dataclasses.dataclass
class Mutant:
    name: str
    file: str
    old: str  # must occur exactly once in file
    new: str
    pytest: list[str]
    go: list[tuple[str, str]] = dataclasses.field(default_factory=list)  # (package, -run regex)


def _validator(name: str, old: str, new: str, file: str = "core/validate.c") -> Mutant:
    return Mutant(f"validate: {name}", file, old, new, IMPORT + HOSTILE, GO_VALIDATE)


MUTANTS = [
    # --- deleters run exactly once --------------------------------------------------------
    Mutant("owner: foreign versioned deleter never called", "core/owner.c",
           "DLManagedTensorVersioned* m = managed;\n    if (m->deleter) m->deleter(m);",
           "DLManagedTensorVersioned* m = managed;\n    (void)m;", IMPORT),
    Mutant("owner: foreign legacy deleter never called", "core/owner.c",
           "DLManagedTensor* m = managed;\n    if (m->deleter) m->deleter(m);",
           "DLManagedTensor* m = managed;\n    (void)m;", IMPORT),
    Mutant("owner: foreign deleter called twice", "core/owner.c",
           "gdl_managed_free(f->managed, f->versioned);",
           "gdl_managed_free(f->managed, f->versioned); gdl_managed_free(f->managed, f->versioned);", IMPORT),
    Mutant("owner: decref releases one reference early", "core/owner.c",
           "__atomic_sub_fetch(&o->refs, 1, __ATOMIC_ACQ_REL) != 0) return;", "__atomic_sub_fetch(&o->refs, 1, __ATOMIC_ACQ_REL) > 1) return;",
           IMPORT),
    Mutant("owner: export never takes a reference", "core/owner.c",
           "gdl_fill_dims(&m->dl_tensor, view, (int64_t*)(m + 1));\n  gdl_owner_incref(owner);\n  __atomic_add_fetch(&live_exports, 1, __ATOMIC_RELAXED);\n  return m;\n}\n\nDLManagedTensor*",
           "gdl_fill_dims(&m->dl_tensor, view, (int64_t*)(m + 1));\n  __atomic_add_fetch(&live_exports, 1, __ATOMIC_RELAXED);\n  return m;\n}\n\nDLManagedTensor*",
           EXPORT),
    Mutant("capsule: destructor deletes an unused versioned capsule's tensor never", "capsule/capsule.c",
           "if (m->deleter != NULL) m->deleter(m);\n  } else {",
           "(void)m;\n  } else {", EXPORT + ["tests/runtime/test_memory.py"]),
    Mutant("capsule: destructor ignores the used_ name", "capsule/capsule.c",
           "  if (versioned < 0) return;\n",
           "  if (versioned < 0 && name != NULL && strncmp(name, \"used_\", 5) == 0)\n"
           "    versioned = strcmp(name, GDL_NAME_USED_VERSIONED) == 0;\n"
           "  if (versioned < 0) return;\n", EXPORT),
    Mutant("capsule: taking a capsule does not rename it to used_*", "capsule/capsule.c",
           "if (PyCapsule_SetName(capsule, used) != 0) return NULL;", "(void)used;", IMPORT),
    Mutant("import: deleter not run on a validator refusal", "internal/cpython/tensor/tensor.c",
           "  if (bad) {\n    owner_decref_keep_error(owner);", "  if (bad) {", IMPORT),
    Mutant("import: deleter not run on a padded sub-byte refusal", "internal/cpython/tensor/tensor.c",
           "        (uint32_t)m->dl_tensor.dtype.bits * m->dl_tensor.dtype.lanes < 8) {\n      owner_decref_keep_error(owner);",
           "        (uint32_t)m->dl_tensor.dtype.bits * m->dl_tensor.dtype.lanes < 8) {", IMPORT),
    Mutant("import: deleter not run when the producer's device cannot be moved to", "internal/cpython/exchange/import.c",
           "      Py_DECREF(result); /* may run the producer's deleter: the error is kept (tensor_dealloc saves it) */",
           "      (void)result;", IMPORT + HOSTILE),
    Mutant("import: deleter not run when copy=False got a copy", "internal/cpython/exchange/import.c",
           "  if (copy == Py_False && copied) {\n    Py_DECREF(result);", "  if (copy == Py_False && copied) {", IMPORT),
    # --- READ_ONLY --------------------------------------------------------------------------
    Mutant("export: READ_ONLY dropped", "internal/cpython/exchange/export.c",
           "return capsule_for(self, &view, versioned, self->flags & DLPACK_FLAG_BITMASK_READ_ONLY);",
           "return capsule_for(self, &view, versioned, 0);", EXPORT),
    Mutant("import: READ_ONLY dropped on re-wrap", "internal/cpython/tensor/placement.c",
           "r = gdl_tensor_new(t->owner, &t->view, t->flags & DLPACK_FLAG_BITMASK_READ_ONLY);",
           "r = gdl_tensor_new(t->owner, &t->view, 0);", IMPORT),
    Mutant("import: READ_ONLY of a versioned producer dropped", "internal/cpython/tensor/tensor.c",
           "return gdl_tensor_new(owner, &m->dl_tensor, m->flags);",
           "return gdl_tensor_new(owner, &m->dl_tensor, m->flags & ~DLPACK_FLAG_BITMASK_READ_ONLY);", IMPORT),
    Mutant("buffer: read-only tensor grants a writable buffer", "internal/cpython/tensor/buffer.c",
           "if ((flags & PyBUF_WRITABLE) == PyBUF_WRITABLE && (t->flags & DLPACK_FLAG_BITMASK_READ_ONLY)) {",
           "if (0) {", BUFFER),
    Mutant("buffer: read-only flag not reported", "internal/cpython/tensor/buffer.c",
           "view->readonly = (t->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;", "view->readonly = 0;", BUFFER),
    # --- IS_COPIED ----------------------------------------------------------------------------
    Mutant("import: copy=True on the same device not IS_COPIED", "internal/cpython/tensor/placement.c",
           ": gdl_device_copy(t, DLPACK_FLAG_BITMASK_IS_COPIED);", ": gdl_device_copy(t, 0);", IMPORT),
    Mutant("import: copy=True of host-visible memory to the CPU not IS_COPIED", "internal/cpython/tensor/placement.c",
           "? gdl_tensor_copy(t, DLPACK_FLAG_BITMASK_IS_COPIED)", "? gdl_tensor_copy(t, 0)",
           IMPORT + ["tests/runtime/test_cuda.py"]),
    Mutant("export: __dlpack__(copy=True) not IS_COPIED", "internal/cpython/exchange/export.c",
           "versioned ? DLPACK_FLAG_BITMASK_IS_COPIED : 0", "0", EXPORT),
    # --- validator refusals (core/validate.c, shape.c: the Python import path and Go consumer) ---------
    _validator("negative ndim", "t->ndim < 0 || t->ndim > GDL_MAX_NDIM", "t->ndim < -1 || t->ndim > GDL_MAX_NDIM"),
    _validator("ndim above 64", "t->ndim < 0 || t->ndim > GDL_MAX_NDIM", "t->ndim < 0 || t->ndim > GDL_MAX_NDIM + 1"),
    _validator("zero bits", "if (d.bits == 0)", "if (0)"),
    _validator("lanes 0", "if (d.lanes == 0)", "if (0)"),
    _validator("vector lanes not whole bytes", "if (d.lanes > 1 && vbits % 8 != 0)", "if (0)"),
    _validator("padded vector of sub-byte lanes", "if (d.lanes > 1)\n    return refuse(msg, n, GDL_E_FLAGS",
               "if (0)\n    return refuse(msg, n, GDL_E_FLAGS"),
    _validator("unknown dtype", "if (!gdl_dtype_known(d.code, d.bits))", "if (0)"),
    _validator("unknown device", "if (!gdl_device_known(dt))", "if (0)"),
    _validator("negative device id", "if (t->device.device_id < 0)", "if (t->device.device_id < -1)"),
    _validator("NULL shape", "if (t->ndim > 0 && t->shape == NULL)", "if (t->ndim > 1 && t->shape == NULL)"),
    _validator("NULL strides since 1.2", "if (t->ndim > 0 && t->strides == NULL && !allow_null_strides)",
               "if (0)"),
    _validator("negative shape (off by one)", "if (shape[i] < 0)", "if (shape[i] < -1)", SHAPE),
    _validator("element count overflow", "if (!mul_ok(n, shape[i], &n))", "if (!mul_ok(n, shape[i], &n) && 0)", SHAPE),
    _validator("INT64_MIN stride", "if (st == INT64_MIN) return", "if (0) return", SHAPE),
    _validator("stride extent overflow", "if (!mul_ok(s - 1, st < 0 ? -st : st, &ext))",
               "if (!mul_ok(s - 1, st < 0 ? -st : st, &ext) && 0)", SHAPE),
    _validator("byte span overflow", "if (lo == INT64_MIN || hi == INT64_MAX ||", "if (0 &&", SHAPE),
    _validator("NULL data", "if (addr < GDL_MIN_DATA_ADDRESS) {", "if (addr == 1) {"),
    _validator("byte_offset wrap", "if (first < base || t->byte_offset > (uint64_t)INT64_MAX)", "if (0)"),
    _validator("view wraps the address space", "if (lo_bytes > first || first + hi_bytes < first)", "if (0)"),
    _validator("DLPack major too new", "if (v.major > GDL_MAX_IMPORT_MAJOR)", "if (v.major > GDL_MAX_IMPORT_MAJOR + 1)"),
    _validator("versioned major 0", "if (v.major == 0) return", "if (0) return"),
    _validator("padded sub-byte extent", "return check_extent(&m->dl_tensor, 8, msg, n);", "return GDL_OK;"),
    Mutant("span: an empty view's strides are read", SHAPE,
           "if (shape[i] == 0) return GDL_SHAPE_OK; /* checked before any stride is read */", "if (0) return 0;",
           ["tests/runtime/test_fakecuda.py"]),
    # --- GPU copies (the stand-in driver) ------------------------------------------------------
    Mutant("cuda: a released device block is reused while queued kernels may read it", "internal/cpython/cuda/cudamem.c",
           "if (c->kind == GDL_MEM_DEVICE && gdl_cu.CtxSynchronize() == 0)", "if (c->kind == GDL_MEM_DEVICE)",
           ["tests/runtime/test_fakecuda.py"]),
    Mutant("parcopy: a share's last bytes are not staged", "internal/cpython/cuda/parcopy.c",
           "    n -= blocks * 64;\n", "    n = 0;\n", ["tests/runtime/test_fakecuda.py"]),
    # --- Go extensions --------------------------------------------------------------------------
    Mutant("ext: a method's option by index counts the receiver", "pyext/options.go",
           "\t\t\t\ti = v + off", "\t\t\t\ti = v", [], [("./pyext", "TestOptionsByIndexAsBefore")]),
    Mutant("ext: a method's option by name may name the receiver", "pyext/options.go",
           "\t\t\t\t\tif have == v && j >= off {", "\t\t\t\t\tif have == v {",
           [], [("./pyext", "TestClassDefinitionChecks")]),
    Mutant("ext: a second __init__ of a live object is silent", "pyext/ext_class.c",
           "  if (o->handle != 0 || GDL_SLOT(Py_TYPE(self), tp_dealloc, destructor) == gdl_obj_dealloc) {",
           "  if (GDL_SLOT(Py_TYPE(self), tp_dealloc, destructor) == gdl_obj_dealloc) return 0;\n  if (o->handle != 0) {",
           CLASSMOD + ["tests/pyext/test_examples.py"]),
    Mutant("ext: an operand Go cannot take is passed on, not NotImplemented", "pyext/ext_class.c",
           "      if (!takes) Py_RETURN_NOTIMPLEMENTED;", "", ["tests/pyext/opmod/check_opmod.py"]),
    Mutant("ext: slices reach Go unclipped", "pyext/ext_class.c",
           "  PySlice_AdjustIndices(len, &start, &stop, step);", "", ["tests/pyext/opmod/check_opmod.py"]),
    Mutant("ext: a read-only buffer is exported for writing", "pyext/ext_buffer.c",
           "  if ((flags & PyBUF_WRITABLE) == PyBUF_WRITABLE && b.readonly) refusal = \"is read-only\";\n  else ", "  ",
           ["tests/pyext/opmod/check_opmod.py"]),
    Mutant("ext: a buffer view never unpins its Go memory", "pyext/ext_buffer.c",
           "  if (!gdl_forked()) gdlpyReleaseBuffer(st->pin);", "", ["tests/pyext/opmod/check_opmod.py"]),
    # --- arguments at rest: C's images of Tensor arguments (pyext/tensorarg.go) -----------------
    Mutant("ext: a full shape block is refilled in place, under kept Tensors", "pyext/tensorarg.go",
           "\tbuf := new([512]int64)\n", "\tbuf := tensorBlock.buf\n\tif buf == nil {\n\t\tbuf = new([512]int64)\n\t}\n",
           ["tests/pyext/tensormod/check_tensormod.py"]),
    Mutant("ext: C copies every Tensor's shape to the same place", "pyext/ext.c",
           "  b->used += 2 * nd;\n", "", ["tests/pyext/tensormod/check_tensormod.py"]),
    Mutant("ext: a returned slice may alias a Tensor argument C imaged", "pyext/typed.go",
           "\t\tcase in[i].img != nil: // C's image of a Tensor argument\n\t\t\tt = *(*godlpack.Tensor)(in[i].img)\n", "",
           ["tests/pyext/tensormod/check_tensormod.py"]),
    # --- many Go runtimes ---------------------------------------------------------------------
    Mutant("sigchain: the dispatcher is never installed", "internal/cpython/base/sigchain.c",
           "  if (ok && t->count() > 0) ok = install(t) == 0;", "", ["tests/pyext/test_runtimes.py"]),
    Mutant("sigchain: a handler that forwards back recurses", "internal/cpython/base/sigchain.c",
           "  if (dispatching) return;\n", "", ["tests/pyext/test_runtimes.py"]),
    # --- values (issue 33) ----------------------------------------------------------------------
    Mutant("arange: integer elements out of the dtype wrap", "producer/arange.go",
           "if n > 0 && !ok0 || n > 1 && !ok1 {", "if (n > 0 && !ok0 || n > 1 && !ok1) && dt.Bits == 0 {",
           ["tests/runtime/test_constructors.py"],
           [("./producer", "TestArange")]),
    Mutant("import: the legacy retry drops stream=None", "internal/cpython/exchange/import.c",
           "  return gdl_call_dlpack(obj, NULL, stream, NULL, NULL, NULL);",
           "  return gdl_call_dlpack(obj, NULL, NULL, NULL, NULL, NULL);", IMPORT),
    # --- frees of exports and objects ---------------------------------------------------------
    Mutant("owner: versioned export struct never freed", "core/owner.c",
           "  gdl_owner* o = self->manager_ctx;\n  free(self);\n  __atomic_sub_fetch(&live_exports, 1, __ATOMIC_RELAXED);\n  gdl_owner_decref(o);\n}\n\nstatic void gdl_deleter_legacy",
           "  gdl_owner* o = self->manager_ctx;\n  __atomic_sub_fetch(&live_exports, 1, __ATOMIC_RELAXED);\n  gdl_owner_decref(o);\n}\n\nstatic void gdl_deleter_legacy",
           MEMORY),
    Mutant("owner: C memory never freed", "core/owner.c",
           "static void release_aligned(gdl_owner* o) { gdl_aligned_free(o); }",
           "static void release_aligned(gdl_owner* o) { (void)o; }",
           MEMORY),
    Mutant("owner: foreign owner struct never freed", "core/owner.c",
           "gdl_managed_free(f->managed, f->versioned);\n  free(f);", "gdl_managed_free(f->managed, f->versioned);",
           MEMORY),
    Mutant("tensor: Tensor object never freed", "internal/cpython/tensor/tensor.c",
           "  PyObject_Free(obj);\n  /* Last:", "  /* Last:", MEMORY),
    Mutant("tensor: Tensor never releases its owner", "internal/cpython/tensor/tensor.c",
           "if (o != NULL) owner_decref_keep_error(o);", "(void)o;", IMPORT),
    # --- free-threading guards (docs/free-threading.md), undone where a GIL build sees it ------
    Mutant("ft: the keyword cache keeps a tuple with another's slots", "internal/cpython/exchange/export.c",
           "  memcpy(last_slots, slots, (size_t)nk);\n  gdl_mutex_unlock(&kw_lock);", "  gdl_mutex_unlock(&kw_lock);",
           EXPORT + ["tests/runtime/test_free_threading.py"]),
    Mutant("ft: a type-cache hit hands out the entry without a reference", "internal/cpython/exchange/import_table.c",
           "        __atomic_add_fetch(&e->refs, 1, __ATOMIC_RELAXED); /* before unlocking: eviction cannot free it */\n",
           "", IMPORT + ["tests/runtime/test_free_threading.py"]),
    # (in pickle.c: go build does not rebuild a package for a header of another directory, ftlock.h)
    Mutant("ft: __reduce_ex__ holds no reference to the reconstructor", "internal/cpython/exchange/pickle.c",
           "PyObject* rebuild_ref = gdl_ref_slot_get(&rebuild_fn);", "PyObject* rebuild_ref = rebuild_fn.obj;",
           ["tests/runtime/test_free_threading.py", "tests/runtime/test_pickle.py"]),
    Mutant("ft: a re-executed module makes a new pickle reconstructor", "internal/cpython/exchange/pickle.c",
           "  if (!same) Py_CLEAR(f);", "  Py_CLEAR(f);", ["tests/runtime/test_free_threading.py"]),
    Mutant("ft: every getbuffer makes the tensor's dims again", "internal/cpython/tensor/buffer.c",
           "  if (t->bufdims == NULL && n > 0) {", "  if (n > 0) {", ["tests/runtime/test_free_threading.py"]),
    Mutant("ft: a popped argument state stays in the pool", "pyext/ext_arrays.c",
           "arg_state* st = npool ? pool[--npool] : NULL;", "arg_state* st = npool ? pool[npool - 1] : NULL;",
           ["tests/pyext/ftmod/check_ftmod.py"]),
    # --- issue 42: buffers as typed slices, operands, wording (pyext/ext.c, ext_arrays.c) ---------
    Mutant("buffers: a typed slice ignores buffers", "pyext/ext.c",
           "int buffer = fn->req[i] == NULL && typed ? gdl_buffer_only(obj) : 0;", "int buffer = 0;", ARRMOD),
    Mutant("buffers: a held buffer is never released", "pyext/ext_arrays.c",
           "if (st->has_buf) PyBuffer_Release(&st->buf);", "(void)0;", ARRMOD),
    Mutant("buffers: a read-only buffer is taken as writable", "pyext/ext_arrays.c",
           "d->readonly = b->readonly != 0;", "d->readonly = 0;", ARRMOD),
    Mutant("operators: a slice operand is not marked", "pyext/operators.go",
           "\tmarkOperand(f.c, 1)\n", "\n", ARRMOD),
    Mutant("operators: a refused operand raises instead of NotImplemented", "pyext/ext.c",
           "int other = fn->req[i] != NULL && fn->req[i]->operand && PyErr_ExceptionMatches(PyExc_BufferError);",
           "int other = 0;", ARRMOD),
    Mutant("buffers: a foreign byte order is taken", "pyext/ext_arrays.c",
           "(code != kDLComplex && isz == 16) || (!native && isz > 1))", "(code != kDLComplex && isz == 16))", ARRMOD),
    Mutant("buffers: a released buffer's ValueError does not name the argument", "pyext/ext_arrays.c",
           ": PyErr_Occurred() == PyExc_ValueError ? PyExc_ValueError : NULL;", ": NULL;", ARRMOD),
    Mutant("buffers: Convert reads bytes as one scalar", "pyext/ext_arrays.c",
           "PyObject* in = st->has_buf ? PyMemoryView_FromObject(obj) : Py_NewRef(obj);",
           "PyObject* in = Py_NewRef(obj);", ARRMOD),
    Mutant("wording: the DLPack path's dtype refusal in the old form", "pyext/ext.c",
           "\"%s() argument %d: want dtype %s, got %U; pass a conforming copy, or allow a \"\n                   \"conversion in Go (pyext.Convert)\", fn->name, i + 1, dtype_name(e.code, e.bits), got);",
           "\"%s() argument %d: dtype %U, want %s\", fn->name, i + 1, got, dtype_name(e.code, e.bits));", ARRMOD),
    Mutant("scaffold: a name shadowing a well-known module is accepted", "python/godlpack/scaffold.py",
           "    if shadowed is not None:", "    if False:",
           ["tests/tooling/test_scaffold.py::test_new_refuses_a_name_that_shadows_a_well_known_module"]),
    Mutant("demo: the refcount line counts from before the export", "python/godlpack/demo.py",
           "refcount {held_refs} -> {sys.getrefcount(b)}\"", "refcount {b_refs} -> {sys.getrefcount(b)}\"",
           ["tests/pyext/test_examples.py"]),
    # --- issue 42: functions and classes (pyext/ext_module.c, ext_class.c, ext_obj.c) --------------
    Mutant("functions: __self__ is not the module (no pickling by reference)", "pyext/ext_module.c",
           "PyCFunction_NewEx(def, m, modname)", "PyCFunction_NewEx(def, NULL, modname)",
           CLASSMOD + ["tests/pyext/test_examples.py"]),
    Mutant("methods: no __reduce__ (no pickling by reference)", "pyext/ext_class.c",
           ".tp_methods = method_methods,", ".tp_methods = NULL,", CLASSMOD + ["tests/pyext/test_examples.py"]),
    Mutant("classes: a Python subclass's object pickles through the Go class's reduce", "pyext/ext_class.c",
           "if (GDL_SLOT(Py_TYPE(self), tp_dealloc, destructor) != gdl_obj_dealloc) { /* a Python subclass's object",
           "if (0) { /* a Python subclass's object", CLASSMOD),
    Mutant("re-import: an object of the earlier import's class is not the class's", "pyext/ext_obj.c",
           "return gdl_go_type(Py_TYPE(obj)) != NULL && GDL_AS(gdl_obj, obj)->cls == cls;", "return 0;", CLASSMOD),
    Mutant("re-import: the earlier class makes objects of the new one", "pyext/ext_class.c",
           "if (r != NULL && Py_TYPE(r) != type && gdl_is_obj(c->id, r)) r = gdl_obj_retype(r, type);",
           "if (0) r = gdl_obj_retype(r, type);", CLASSMOD),
    Mutant("classes: __init__ after a hand-called __new__ is silent", "pyext/ext_class.c",
           "GDL_AS(gdl_obj, r)->fresh = paired;", "GDL_AS(gdl_obj, r)->fresh = 1;", CLASSMOD),
    Mutant("contains: a value Go cannot take raises instead of False", "pyext/ext_class.c",
           "if (PyErr_ExceptionMatches(PyExc_TypeError) || PyErr_ExceptionMatches(PyExc_OverflowError)) PyErr_Clear();",
           "if (0) PyErr_Clear();", CLASSMOD),
    Mutant("slices: a huge positive step reaches Go", "pyext/ext_class.c",
           "if (step > most) step = most;", "if (0) step = most;", CLASSMOD),
    Mutant("slices: a huge negative step reaches Go", "pyext/ext_class.c",
           "if (step < -most) step = -most;", "if (0) step = -most;", CLASSMOD),
    Mutant("slices: a clamped step may become 1 (a plain slice)", "pyext/ext_class.c",
           "Py_ssize_t most = len > 2 ? len : 2;", "Py_ssize_t most = len > 1 ? len : 1;", CLASSMOD),
    # --- issue 42: Go sequences as iterators, callables (pyext/pull.go, ext_iter.c, callback.go) --
    Mutant("iter: the end frees the handle under other threads", "pyext/ext_iter.c",
           "__atomic_store_n(&it->ended, 1, __ATOMIC_RELEASE); /* its goroutine has ended; Go let go of the sequence */",
           "drop_sequence(__atomic_exchange_n(&it->handle, 0, __ATOMIC_ACQ_REL));", OPMOD),
    Mutant("iter: a sequence's own goroutine may wait for itself", "pyext/pull.go",
           "if r := p.runner.Load(); r != 0 && r == goid() {", "if r := p.runner.Load(); false && r == goid() {",
           [], [("./pyext", "TestPullRefuses")]),
    Mutant("iter: next waits for a goroutine refused at exit", "pyext/pull.go",
           "\t\tif isRefused(p.runner.Load()) {", "\t\tif false && isRefused(p.runner.Load()) {",
           [], [("./pyext", "TestPullGivesUp")]),
    Mutant("iter: a refusal at exit wakes no waiter", "pyext/goroutine.go",
           "\tclose(*refused.signal.Swap(&next))", "\trefused.signal.Swap(&next)", OPMOD),
    Mutant("iter: an ended sequence is kept", "pyext/pull.go", "\tp.seq = nil", "\t_ = p.seq", [],
           [("./pyext", "TestPullRefuses")]),
    Mutant("iter: an exception while a freed iterator stops is lost", "pyext/ext_iter.c",
           "  if (kind == GDL_ERR_NONE) return;", "  if (1) return;", OPMOD),
    Mutant("callbacks: the exit watch imports while finalizing", "pyext/ext_pyobj.c",
           "  if (finalizing()) { /* atexit hooks have run", "  if (0) { /* atexit hooks have run", CBMOD),
    Mutant("callbacks: a collection releases kept callables", "pyext/callback.go",
           "\t\tif h.ref.Value() == nil {", "\t\tif true || h.ref.Value() == nil {", CBMOD),
    Mutant("callbacks: the hook asks Go in a forked child", "pyext/ext_pyobj.c",
           "      PyLong_AsLong(gen) == 2 && !gdl_forked())", "      PyLong_AsLong(gen) == 2)", CBMOD),
    # --- issue 39: bytes and tuple results (pyext/ext.c, results.go, typed.go) --------------------
    Mutant("results: a bytes result's C copy (without the GIL) is never freed", "pyext/ext.c",
           "        b = PyBytes_FromStringAndSize(v->s, (Py_ssize_t)v->n);\n        free((void*)v->s);",
           "        b = PyBytes_FromStringAndSize(v->s, (Py_ssize_t)v->n);", VALMOD),
    Mutant("results: a tuple's first result leaks when a later one fails", "pyext/ext.c",
           "      Py_XDECREF((PyObject*)out[i].p);", "", VALMOD),
    Mutant("results: a str result that is not UTF-8 does not name the function", "pyext/ext.c",
           "      if (s == NULL) note_result(fn, i);", "      if (0) note_result(fn, i);", VALMOD),
    Mutant("results: an error in a tuple's value slot is taken", "pyext/typed.go",
           "if err == nil && rc.isErr {", "if false && err == nil && rc.isErr {", [], [("./pyext", "TestTupleWrapper")]),
    Mutant("results: a []byte result is a Tensor again", "pyext/results.go",
           "if isBytes(t) {", "if false {", VALMOD),
    Mutant("results: a bytes object made ahead and left unused is never dropped", "pyext/ext.c",
           "!(made && out[i].p == ahead[i])) Py_DECREF(ahead[i]);", "!(made && out[i].p == ahead[i])) (void)0;",
           VALMOD),
    Mutant("results: Go fills a bytes object made ahead at another size", "pyext/bytesresult.go",
           "if v.data != nil && C.int64_t(len(b)) == v.ncap {", "if v.data != nil && C.int64_t(len(b)) <= v.ncap {",
           VALMOD),
    # --- issue 39: declared once (pyext/pyextgen), read-only by default, "/" and "*" ----------------
    Mutant("arrays: every array parameter writable again (no Writes, no read-only)", "pyext/funcs.go",
           "\tc.writes = C.uint32_t(mask)", "\tc.writes = C.uint32_t(1<<nparams - 1)", DECLMOD),
    Mutant("keywords: a positional-only parameter taken by keyword", "pyext/ext.c",
           "    if (j >= 0 && j + off < fn->posonly) {", "    if (0) {", DECLMOD),
    Mutant("keywords: a keyword-only parameter taken by position", "pyext/ext.c",
           "  int npos = fn->kwonly - off; /* how many may be positional */", "  int npos = np;", DECLMOD),
    Mutant("overlap: a read argument sharing a written one's memory is not copied", "pyext/ext.c",
           "  if (fn->writes && a.arrays) return call_separated(fn, &a);", "  if (0) return call_separated(fn, &a);",
           DECLMOD),
    Mutant("optional slice: None is an empty slice, not nil", "pyext/typed.go",
           "\t\tif v.n == 0 && v.ncap < 0 {", "\t\tif false {", DECLMOD),
    Mutant("any: a list nested past the limit is walked on (a cycle recurses)", "pyext/ext_any.c",
           "const frame* f) {\n  if (depth >= GDL_ANY_DEPTH) return too_deep(t);\n  PyObject* items",
           "const frame* f) {\n  PyObject* items", VALMOD),
    Mutant("any: an int beyond int64 read in the wrong base", "pyext/anyconv.go",
           "new(big.Int).SetString(string(d.bytes(nd)), 0)", "new(big.Int).SetString(string(d.bytes(nd)), 16)", VALMOD),
    Mutant("pyextgen: an option naming no parameter passes the generator", "pyext/pyextgen/check.go",
           "\t\t\tif !names[n] {", "\t\t\tif false {", [], [("./pyext/pyextgen", "TestWrongDirectives")]),
    # --- issue 42 bug 6: a callable released when its call returns (pyext/callable.go) --------------
    Mutant("callables: released never (held as if kept)", "pyext/callable.go",
           "\tif cb.kept != nil || cb.active > 0 {\n\t\treturn 0", "\tif true {\n\t\treturn 0", CBMOD),
    Mutant("callables: a goroutine's last call never releases", "pyext/callable.go",
           "\tif cb.active == 0 && cb.ended && cb.kept == nil {", "\tif false {", CBMOD),
    Mutant("callables: the call's end never marks its callables", "pyext/callable.go",
           "\tif !cb.ended && cb.kept == nil {", "\tif false {", CBMOD),
    Mutant("callables: the end-of-call hook skipped", "pyext/call.go",
           "\tif f.callables {", "\tif false && f.callables {", CBMOD),
]


# pytest as each mutant runs it: without the cache plugin (the tree is
# thrown away) and without hypothesis's, whose end-of-run summary imports all
# of hypothesis (0.6 of the 1.0 CPU-s a one-test run of a check file takes);
# the tests that use hypothesis import it themselves and run as they do
# under the plugin, which only reports.
PYTEST = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest"]


def _run(cmd: list[str], cwd: str, env: dict, timeout: float) -> tuple[int, str]:
    try:
        r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
        return r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired as e:
        return 124, f"timed out after {timeout:.0f} s\n{e.stdout or ''}"


def go_test_env(env: dict) -> dict:
    """env for `go test` of packages that include Python.h or embed CPython
    (pyext's), with the flags make gotest gives them."""
    lib = sysconfig.get_config_var("LIBDIR") or ""
    return dict(env, CGO_CFLAGS=f"-I{sysconfig.get_paths()['include']} -O2",
                CGO_LDFLAGS=f"-L{lib} -lpython{sysconfig.get_config_var('LDVERSION')}",
                LD_LIBRARY_PATH=os.pathsep.join(p for p in (lib, env.get("LD_LIBRARY_PATH", "")) if p))


def copy_tree(dst: str) -> None:
    """The tracked and untracked (not ignored) files, plus the built probe."""
    files = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for f in files:
        src = os.path.join(ROOT, f)
        if not f:
            continue
        os.makedirs(os.path.dirname(os.path.join(dst, f)), exist_ok=True)
        if os.path.islink(src):  # a tracked link (examples/vecmath/tools -> ../../tools) stays a link
            os.symlink(os.readlink(src), os.path.join(dst, f))
        elif os.path.isfile(src):
            shutil.copy2(src, os.path.join(dst, f))
    for so in glob.glob(os.path.join(ROOT, "python/godlpack/_probe*.so")):
        shutil.copy2(so, os.path.join(dst, "python/godlpack"))


def unoptimized_cc(tree: str, env: dict, cccache: str, cache: str) -> str:
    """A C compiler for the mutant trees' builds: the go command's own (go
    env CC), run with -O0 last, which overrides the -O2 of the #cgo lines
    (the go command puts them after $CGO_CFLAGS), behind cccache
    (internal/testkit/cccache), a compile cache all trees share: a mutant
    makes the go command compile its whole cgo package again, and every
    compile but the mutated file's is one the run made before. Every
    sabotage here is caught at -O0 too."""
    real = subprocess.run(["go", "env", "CC"], cwd=ROOT, env=env, capture_output=True, text=True,
                          check=True).stdout.strip() or "cc"
    path = os.path.join(tree, ".mutants-cc")
    with open(path, "w") as f:  # the paths quoted; CC as the go command splits it (it may hold flags)
        f.write(f'#!/bin/sh\nexec {" ".join(map(shlex.quote, (cccache, cache, tree)))} {real} "$@" -O0\n')
    os.chmod(path, 0o755)
    return path


def build_cccache(folder: str) -> tuple[str, str]:
    """(the cccache command, built into folder, its cache folder)."""
    exe = os.path.join(folder, "cccache")
    subprocess.run(["go", "build", "-o", exe, "./internal/testkit/cccache"], cwd=ROOT, check=True,
                   env=dict(os.environ, GOFLAGS="-buildvcs=false"))
    cache = os.path.join(folder, "cache")
    os.makedirs(cache, exist_ok=True)
    return exe, cache


class Tree:
    def __init__(self, path: str, python: str, cc: tuple[str, str]) -> None:
        self.path, self.python = path, python
        self.built_in = 0.0  # seconds the last mutant's build took (printed with its verdict)
        self.module_mutated = False  # the module file was last built with a mutant
        # -ldflags=-w: the trees' libraries are thrown away, so the link writes
        # no DWARF (Go's tracebacks read the pclntab, which stays).
        self.env = dict(os.environ, PYTHONPATH=os.path.join(path, "python"), GOFLAGS="-buildvcs=false -ldflags=-w",
                        PYTHONDONTWRITEBYTECODE="1")
        self.env.pop("CGO_CFLAGS", None)  # the build recipe adds Python's include directory
        self.env["CC"] = unoptimized_cc(path, self.env, *cc)

    def build(self) -> tuple[int, str]:
        return _run([self.python, "tools/godlpack_build.py", EXT, "./module"], self.path, self.env, 600)

    def test(self, m: Mutant, collect_only: bool = False) -> tuple[int, str]:
        """0 when every selected test passes (collect_only: is collected)."""
        if m.pytest:
            mode = ["--collect-only"] if collect_only else ["-x"]
            rc, out = _run([self.python, *PYTEST, *mode, *m.pytest],
                           self.path, self.env, 600)
            if rc != 0:
                return rc, out
        for pkg, run in m.go:
            cmd = ["go", "vet", pkg] if collect_only else ["go", "test", "-count=1", "-run", run, pkg]
            rc, out = _run(cmd, self.path, go_test_env(self.env), 600)
            out = GO_OUTPUT + out
            if rc != 0:
                return rc, out
        return 0, ""

    def judge(self, m: Mutant, module_dirs: set[str]) -> tuple[str, str, float]:
        """Applies m to this tree, rebuilds and tests it, and undoes it:
        (verdict, detail, seconds). godlpack's module is rebuilt only where
        m's file is in one of its packages (module_dirs): a mutant of pyext
        reaches the tests through the test extensions, which their tests build."""
        t1 = time.monotonic()
        path = os.path.join(self.path, m.file)
        original = open(path).read()
        open(path, "w").write(original.replace(m.old, m.new))
        try:
            # A module built with an earlier mutant is rebuilt clean for a mutant outside it.
            in_module = os.path.dirname(m.file) in module_dirs
            rc, out = self.build() if in_module or self.module_mutated else (0, "")
            self.module_mutated = in_module
            if rc:
                return "DOES NOT BUILD", _tail(out), time.monotonic() - t1
            self.built_in = time.monotonic() - t1
            # The test that killed it last time first (KILLERS): a failure there is a kill
            # without the tests before it in its file; 4 and 5 (no such test) are none.
            first = killers.get(m.name)
            if first == GO_TESTS and m.go:
                rc, out = self.test(dataclasses.replace(m, pytest=[]))
                if rc:
                    return "killed", "by its Go tests (first)", time.monotonic() - t1
            elif first and m.pytest:
                rc, out = _run([self.python, *PYTEST, "-x", first],
                               self.path, self.env, 600)
                if rc not in (0, 4, 5):
                    return "killed", f"by {first} (first)", time.monotonic() - t1
            rc, out = self.test(m)
            if not rc:
                return "SURVIVED", "", time.monotonic() - t1
            killer = _failed_test(out) or (GO_TESTS if m.go and out.lstrip().startswith(GO_OUTPUT) else None)
            if killer:
                killers[m.name] = killer
            return "killed", f"by {killer or '?'}: " + _tail(out, 1), time.monotonic() - t1
        finally:
            open(path, "w").write(original)


# Each mutant's killing test (pytest node id), run before its list: kept in
# KILLERS_FILE, rewritten by --record-killers. A stale entry only costs
# the full list's run.
KILLERS_FILE = os.path.join(ROOT, "tools", "mutant_killers.json")
GO_TESTS = "go test"  # the killer is the mutant's Go tests (Mutant.go), run first
GO_OUTPUT = "\x00go"  # Tree.test's mark on the output of a failing go test
killers: dict[str, str] = {}


def _failed_test(out: str) -> str | None:
    """The node id of the first test pytest reports FAILED or ERROR in out,
    else of the test a crash's faulthandler stack was in (file::function)."""
    for line in out.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):  # "FAILED <node id> - <message>"; an id may hold spaces
            return line.split(" ", 1)[1].split(" - ", 1)[0].strip()
    frames = re.findall(r'File "[^"]*?/(tests/[^"]+\.py)", line \d+ in (test_\w+)', out)
    return f"{frames[-1][0]}::{frames[-1][1]}" if frames else None


def _module_dirs() -> set[str]:
    """The tree's folders (relative) that godlpack's own module is built from."""
    r = subprocess.run(["go", "list", "-deps", "-f", "{{if .Module}}{{.Module.Path}} {{.Dir}}{{end}}", "./module"],
                       cwd=ROOT, capture_output=True, text=True, check=True)
    dirs = {line.split(" ", 1)[1] for line in r.stdout.splitlines() if line.startswith("github.com/godlpack/godlpack ")}
    return {os.path.relpath(d, ROOT) if d != ROOT else "" for d in dirs}


def _tail(out: str, n: int = 6) -> str:
    lines = [ln for ln in out.strip().splitlines() if ln.strip()]
    return "\n      ".join(lines[-n:])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=sys.executable, help="the interpreter with pytest, numpy, torch")
    ap.add_argument("--keep", action="store_true", help="keep the temporary tree")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                    help="mutants judged at once, each in a copy of the tree of its own (default: 2 where 2 cores)")
    ap.add_argument("--baseline", choices=["full", "collect"], default="full",
                    help="the unmutated copy's check: its tests pass (full), or only import (collect: for a run "
                         "beside make test, which runs them on the same tree)")
    ap.add_argument("--record-killers", action="store_true",
                    help=f"rewrite {os.path.relpath(KILLERS_FILE, ROOT)} with the tests that killed this run's mutants")
    ap.add_argument("names", nargs="*", help="run only mutants whose name contains one of these")
    args = ap.parse_args()
    chosen = [m for m in MUTANTS if not args.names or any(s in m.name for s in args.names)]
    if args.list:
        for m in chosen:
            print(f"{m.name}  [{m.file}]")
        return 0
    t0 = time.monotonic()
    if os.path.exists(KILLERS_FILE):
        with open(KILLERS_FILE) as f:
            killers.update(json.load(f))
    jobs = max(1, min(args.jobs, len(chosen)))
    tmps = [tempfile.mkdtemp(prefix="godlpack-mutants-") for _ in range(jobs + 1)]  # the last: the compile cache
    try:
        cc = build_cccache(tmps[-1])
        for tmp in tmps[:-1]:
            copy_tree(tmp)
        trees = [Tree(tmp, args.python, cc) for tmp in tmps[:-1]]
        tree = trees[0]
        stale = [m.name for m in chosen if open(os.path.join(tree.path, m.file)).read().count(m.old) != 1]
        if stale:
            print("sabotages that no longer apply exactly once (update tools/mutants.py):\n  " + "\n  ".join(stale))
            return 2
        for t in trees:
            rc, out = t.build()
            if rc:
                print("the unmutated tree does not build:\n" + out)
                return 2
        module_dirs = _module_dirs()
        # The unmutated copy must pass every selected test, or a 'kill' means
        # nothing. --baseline collect: only that every test file imports (its
        # test extension builds) in the copy, for a run beside one of the same
        # tests on the same tree (CI's make test), which holds them to passing.
        union = Mutant("baseline", "", "", "", sorted({p for m in chosen for p in m.pytest}),
                       sorted({g for m in chosen for g in m.go}))
        rc, out = tree.test(union, collect_only=args.baseline == "collect")
        if rc:
            print("the unmutated tree fails its tests:\n      " + _tail(out, 30))
            return 2
        print(f"baseline ({args.baseline}): built and passed in {time.monotonic() - t0:.0f} s; "
              f"{jobs} mutant(s) at a time", flush=True)
        survived, broken = [], []
        lock = threading.Lock()
        # The mutants outside the module first: they need no module build while it is clean.
        todo = sorted(enumerate(chosen, 1), key=lambda im: os.path.dirname(im[1].file) in module_dirs)

        def worker(t: Tree) -> None:
            while True:
                with lock:
                    if not todo:
                        return
                    i, m = todo.pop(0)
                verdict, detail, seconds = t.judge(m, module_dirs)
                with lock:
                    if verdict == "SURVIVED":
                        survived.append(m.name)
                    elif verdict == "DOES NOT BUILD":
                        broken.append(m.name)
                    print(f"[{i}/{len(chosen)}] {verdict:8} {m.name} ({seconds:.0f} s, build {t.built_in:.0f})", flush=True)
                    if detail:
                        print("      " + detail, flush=True)

        workers = [threading.Thread(target=worker, args=(t,)) for t in trees]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        print(f"\n{len(chosen) - len(survived) - len(broken)} of {len(chosen)} mutants killed, "
              f"{len(survived)} survived, {len(broken)} did not build; {time.monotonic() - t0:.0f} s in all")
        for n in survived:
            print(f"  survived: {n}")
        for n in broken:
            print(f"  does not build: {n}")
        if args.record_killers:
            known = {m.name for m in MUTANTS}
            with open(KILLERS_FILE, "w") as f:
                json.dump({k: v for k, v in sorted(killers.items()) if k in known}, f, indent=1)
                f.write("\n")
            print(f"wrote {os.path.relpath(KILLERS_FILE, ROOT)}")
        return 1 if survived or broken else 0
    finally:
        for tmp in tmps:
            if args.keep:
                print(f"tree kept in {tmp}")
            else:
                shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

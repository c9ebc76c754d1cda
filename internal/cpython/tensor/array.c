/* Tensor.__array__(dtype=None, copy=None): what np.asarray(t) calls when the
 * buffer protocol refuses. bfloat16 and the float8/float6/float4 types have
 * no PEP 3118 format; with ml_dtypes installed they become arrays of its
 * dtypes, bit for bit (zero-copy, except packed float6/float4, which are
 * unpacked to one byte per element as ml_dtypes stores them). Without
 * ml_dtypes, and for tensors NumPy cannot read, BufferError says why (never a
 * 0-d object array holding the Tensor). No NumPy C API: NumPy is called
 * through Python, imported only here. */
#include <string.h>
#include "tensor.h"

/* The ml_dtypes dtypes: bfloat16 and the float8/6/4 codes, one lane. */
static int is_ml_dtype(DLDataType dt) {
  if (dt.lanes != 1) return 0;
  return (dt.code == kDLBfloat && dt.bits == 16) || (dt.code >= kDLFloat8_e3m4 && dt.code <= kDLFloat4_e2m1fn);
}

static PyObject* call_method(PyObject* obj, const char* name, PyObject* arg) {
  PyObject* m = PyObject_GetAttrString(obj, name);
  if (m == NULL) return NULL;
  PyObject* r = PyObject_CallOneArg(m, arg);
  Py_DECREF(m);
  return r;
}

/* A Tensor sharing t's owner with dtype replaced (same bits or uint8 compact). */
static PyObject* retyped(GdlTensor* t, const DLTensor* v) {
  gdl_owner_incref(t->owner);
  PyObject* r = gdl_tensor_new(t->owner, v, t->flags & DLPACK_FLAG_BITMASK_READ_ONLY);
  if (r) GDL_AS(GdlTensor, r)->stream = t->stream;
  return r;
}

/* Packed float6/float4 (little bit-endian, DLPack's layout) unpacked into
 * one byte per element, row-major: a new writable uint8 Tensor. */
static PyObject* unpacked(GdlTensor* t) {
  if (!gdl_cpu_accessible(t->view.device.device_type)) {
    PyErr_SetString(PyExc_BufferError, "NumPy needs a CPU-accessible tensor");
    return NULL;
  }
  if (gdl_host_sync(t->view.device, t->stream) != 0) return NULL;
  int32_t n = t->view.ndim;
  int64_t count = gdl_shape_count(t->dims, n), bits = t->view.dtype.bits;
  if (!gdl_is_compact(t->dims, t->dims + n, n, 0)) { /* row-major compact only, as the Go copy requires */
    PyErr_SetString(PyExc_BufferError, "a strided packed float6/float4 view cannot be given to NumPy");
    return NULL;
  }
  void* out;
  gdl_owner* owner = gdl_owner_alloc((uint64_t)count, &out);
  if (owner == NULL) return PyErr_NoMemory();
  const uint8_t* base = (const uint8_t*)t->view.data + t->view.byte_offset;
  uint8_t mask = (uint8_t)((1u << bits) - 1);
  for (int64_t k = 0; k < count; k++) { /* k * bits < 8 * the data's bytes */
    int64_t bit = k * bits, shift = bit % 8;
    unsigned v = base[bit / 8];
    if (shift + bits > 8) v |= (unsigned)base[bit / 8 + 1] << 8;
    ((uint8_t*)out)[k] = (uint8_t)((v >> shift) & mask);
  }
  DLTensor v = t->view;
  v.data = out;
  v.byte_offset = 0;
  v.dtype = (DLDataType){kDLUInt, 8, 1};
  v.strides = NULL;
  return gdl_tensor_new(owner, &v, 0);
}

PyObject* gdl_tensor_array(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  GdlTensor* t = GDL_AS(GdlTensor, self);
  PyObject *dtype = Py_None, *copy = Py_None;
  if (nargs > 2) {
    PyErr_SetString(PyExc_TypeError, "__array__() takes at most 2 arguments");
    return NULL;
  }
  if (nargs > 0) dtype = args[0];
  if (nargs > 1) copy = args[1];
  Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t i = 0; i < nk; i++) {
    PyObject* k = PyTuple_GET_ITEM(kwnames, i);
    if (PyUnicode_CompareWithASCIIString(k, "dtype") == 0) dtype = args[nargs + i];
    else if (PyUnicode_Compare(k, GDL.s_copy) == 0) copy = args[nargs + i];
    else {
      PyErr_Format(PyExc_TypeError, "__array__() got an unexpected keyword argument '%U'", k);
      return NULL;
    }
  }
  DLDataType dt = t->view.dtype;
  int subbyte = (uint32_t)dt.bits * dt.lanes < 8;
  if (subbyte && copy == Py_False) {
    PyErr_SetString(PyExc_ValueError, "packed float6/float4 data needs a copy (one byte per element) for NumPy");
    return NULL;
  }
  PyObject* np = PyImport_ImportModule("numpy");
  if (np == NULL) return NULL;
  PyObject *mltype = NULL, *src = NULL, *arr = NULL, *r = NULL;
  if (is_ml_dtype(dt)) {
    PyObject* ml = PyImport_ImportModule("ml_dtypes");
    if (ml == NULL) {
      if (!PyErr_ExceptionMatches(PyExc_ImportError)) goto done;
      PyObject* name = gdl_dtype_name(dt);
      PyErr_Clear();
      PyErr_Format(PyExc_BufferError, "NumPy has no %S dtype: install ml_dtypes for np.asarray() of this tensor",
                   name);
      Py_XDECREF(name);
      goto done;
    }
    PyObject* name = gdl_dtype_name(dt);
    mltype = name ? PyObject_GetAttr(ml, name) : NULL;
    Py_XDECREF(name);
    Py_DECREF(ml);
    if (mltype == NULL) goto done;
    if (subbyte) {
      src = unpacked(t);
    } else {
      DLTensor v = t->view;
      v.dtype = (DLDataType){kDLUInt, dt.bits, 1}; /* same bits, a buffer format */
      src = retyped(t, &v);
    }
  } else {
    src = Py_NewRef(self); /* the buffer protocol says why it refuses, if it does */
  }
  if (src == NULL) goto done;
  PyObject* mv = PyMemoryView_FromObject(src);
  if (mv == NULL) goto done;
  arr = call_method(np, "asarray", mv);
  Py_DECREF(mv);
  if (arr != NULL && mltype != NULL) Py_SETREF(arr, call_method(arr, "view", mltype));
  if (arr == NULL) goto done;
  if (dtype == Py_None && copy != Py_True) {
    r = Py_NewRef(arr);
  } else {
    /* NumPy's own rules for dtype and copy (copy=False with a cast: ValueError). */
    PyObject* f = PyObject_GetAttrString(np, "array");
    PyObject* a[1] = {arr};
    PyObject* kw = f ? Py_BuildValue("{s:O,s:O}", "dtype", dtype, "copy", subbyte ? Py_None : copy) : NULL;
    PyObject* tup = kw ? PyTuple_Pack(1, a[0]) : NULL;
    r = tup ? PyObject_Call(f, tup, kw) : NULL;
    Py_XDECREF(tup);
    Py_XDECREF(kw);
    Py_XDECREF(f);
  }
done:
  Py_XDECREF(arr);
  Py_XDECREF(src);
  Py_XDECREF(mltype);
  Py_DECREF(np);
  return r;
}

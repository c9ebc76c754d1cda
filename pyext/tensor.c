/* The godlpack.Tensor type: construction from owners, lifetime, properties. */
#include <string.h>
#include "gdl.h"

void gdl_owner_decref_keep_error(gdl_owner* owner) {
  if (!PyErr_Occurred()) { /* the common case: no error to keep */
    gdl_owner_decref(owner);
    if (PyErr_Occurred()) PyErr_WriteUnraisable(NULL); /* a deleter must not raise */
    return;
  }
#if PY_VERSION_HEX >= 0x030C0000
  PyObject* exc = PyErr_GetRaisedException();
  gdl_owner_decref(owner);
  if (PyErr_Occurred()) PyErr_WriteUnraisable(NULL); /* a deleter must not raise */
  PyErr_SetRaisedException(exc);
#else
  PyObject *et, *ev, *etb;
  PyErr_Fetch(&et, &ev, &etb);
  gdl_owner_decref(owner);
  if (PyErr_Occurred()) PyErr_WriteUnraisable(NULL); /* a deleter must not raise */
  PyErr_Restore(et, ev, etb);
#endif
}

PyObject* gdl_tensor_new(gdl_owner* owner, const DLTensor* view, uint64_t flags) {
  GdlTensor* t = PyObject_New(GdlTensor, &GdlTensor_Type);
  if (t == NULL) {
    gdl_owner_decref_keep_error(owner);
    return NULL;
  }
  int32_t n = view->ndim;
  t->owner = owner;
  t->view = *view;
  t->flags = flags;
  t->bufdims = NULL;
  t->weakrefs = NULL;
  t->stream = 1;
  t->dims = n <= GDL_INLINE_DIMS ? t->inline_dims : PyMem_Malloc(2 * (size_t)n * sizeof(int64_t));
  if (t->dims == NULL) {
    t->view.ndim = 0;
    t->dims = t->inline_dims;
    Py_DECREF(t);
    return PyErr_NoMemory();
  }
  gdl_fill_dims(&t->view, view, t->dims);
  return (PyObject*)t;
}

PyObject* gdl_tensor_from_managed(void* managed, int versioned) {
  char err[512];
  /* Own it first: from here every path releases it exactly once. */
  gdl_owner* owner = gdl_owner_foreign(managed, versioned);
  if (owner == NULL) {
    gdl_managed_free(managed, versioned);
    return PyErr_NoMemory();
  }
  /* core/validate.c, the one validator (Go's consumer calls it too). */
  int bad = versioned ? gdl_check_versioned(managed, err, sizeof err) : gdl_check_legacy(managed, err, sizeof err);
  if (bad) {
    gdl_owner_decref_keep_error(owner);
    PyErr_SetString(PyExc_BufferError, err);
    return NULL;
  }
  if (versioned) {
    DLManagedTensorVersioned* m = managed;
    /* A Tensor's sizes, copies and re-exports assume packed sub-byte
     * elements; a padded layout (one byte each) would be misread. */
    if ((m->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) &&
        (uint32_t)m->dl_tensor.dtype.bits * m->dl_tensor.dtype.lanes < 8) {
      gdl_owner_decref_keep_error(owner);
      PyErr_SetString(PyExc_BufferError,
                      "padded sub-byte tensors (IS_SUBBYTE_TYPE_PADDED) are not supported; "
                      "export them packed");
      return NULL;
    }
    return gdl_tensor_new(owner, &m->dl_tensor, m->flags);
  }
  DLManagedTensor* m = managed;
  return gdl_tensor_new(owner, &m->dl_tensor, 0);
}

static void tensor_dealloc(GdlTensor* self) {
  if (self->weakrefs != NULL) PyObject_ClearWeakRefs((PyObject*)self);
  if (self->dims != self->inline_dims) PyMem_Free(self->dims);
  PyMem_Free(self->bufdims);
  gdl_owner* o = self->owner;
  PyObject_Free(self);
  /* Last: may run a foreign deleter, which may call back into Python. */
  if (o != NULL) gdl_owner_decref_keep_error(o);
}

static PyObject* tensor_new(PyTypeObject* type, PyObject* args, PyObject* kwds) {
  (void)type;
  PyObject* obj;
  static char* kwlist[] = {"obj", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O:Tensor", kwlist, &obj)) return NULL;
  PyObject* a[1] = {obj};
  return gdl_from_dlpack(NULL, a, 1, NULL);
}

/* --- properties ---------------------------------------------------------- */

static PyObject* int64_tuple(const int64_t* v, int32_t n) {
  PyObject* t = PyTuple_New(n);
  if (t == NULL) return NULL;
  for (int32_t i = 0; i < n; i++) {
    PyObject* x = PyLong_FromLongLong(v[i]);
    if (x == NULL) {
      Py_DECREF(t);
      return NULL;
    }
    PyTuple_SET_ITEM(t, i, x);
  }
  return t;
}

static int64_t num_elements(const GdlTensor* t) { return gdl_shape_count(t->dims, t->view.ndim); }

static PyObject* get_shape(GdlTensor* t, void* c) { (void)c; return int64_tuple(t->dims, t->view.ndim); }
static PyObject* get_strides(GdlTensor* t, void* c) {
  (void)c;
  return int64_tuple(t->dims + t->view.ndim, t->view.ndim);
}
static PyObject* get_ndim(GdlTensor* t, void* c) { (void)c; return PyLong_FromLong(t->view.ndim); }
static PyObject* get_size(GdlTensor* t, void* c) { (void)c; return PyLong_FromLongLong(num_elements(t)); }
static PyObject* get_nbytes(GdlTensor* t, void* c) {
  (void)c;
  uint64_t bits = (uint64_t)t->view.dtype.bits * t->view.dtype.lanes, total;
  /* A broadcast view (stride 0) may describe more bytes than exist. */
  if (__builtin_mul_overflow((uint64_t)num_elements(t), bits, &total)) {
    PyObject* n = PyLong_FromLongLong(num_elements(t));
    PyObject* b = PyLong_FromUnsignedLongLong(bits);
    PyObject* prod = n && b ? PyNumber_Multiply(n, b) : NULL;
    PyObject* eight = prod ? PyLong_FromLong(8) : NULL;
    PyObject* seven = eight ? PyLong_FromLong(7) : NULL;
    PyObject* up = seven ? PyNumber_Add(prod, seven) : NULL; /* rounded up: packed sub-byte too */
    PyObject* r = up ? PyNumber_FloorDivide(up, eight) : NULL;
    Py_XDECREF(n), Py_XDECREF(b), Py_XDECREF(prod), Py_XDECREF(eight), Py_XDECREF(seven), Py_XDECREF(up);
    return r;
  }
  return PyLong_FromUnsignedLongLong(total / 8 + (total % 8 != 0));
}
static PyObject* get_itemsize(GdlTensor* t, void* c) {
  (void)c;
  return PyLong_FromLong(((long)t->view.dtype.bits * t->view.dtype.lanes + 7) / 8);
}
static PyObject* get_readonly(GdlTensor* t, void* c) {
  (void)c;
  return PyBool_FromLong((t->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
}
static PyObject* get_is_copied(GdlTensor* t, void* c) {
  (void)c;
  return PyBool_FromLong((t->flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0);
}
static PyObject* get_data_ptr(GdlTensor* t, void* c) {
  (void)c;
  return PyLong_FromUnsignedLongLong((uint64_t)(uintptr_t)t->view.data + t->view.byte_offset);
}
static PyObject* get_device(GdlTensor* t, void* c) { (void)c; return gdl_device_obj(t->view.device); }

static PyObject* get_dtype(GdlTensor* t, void* c) {
  (void)c;
  return gdl_dtype_name(t->view.dtype);
}

static PyObject* get_is_contiguous(GdlTensor* t, void* c) {
  (void)c;
  return PyBool_FromLong(gdl_is_compact(t->dims, t->dims + t->view.ndim, t->view.ndim, 0));
}

static PyGetSetDef tensor_getset[] = {
    {"shape", (getter)get_shape, NULL, "Extent of each dimension.", NULL},
    {"strides", (getter)get_strides, NULL, "Strides in elements (not bytes).", NULL},
    {"ndim", (getter)get_ndim, NULL, "Number of dimensions.", NULL},
    {"size", (getter)get_size, NULL, "Number of elements.", NULL},
    {"nbytes", (getter)get_nbytes, NULL, "Bytes covered by the elements (packed).", NULL},
    {"itemsize", (getter)get_itemsize, NULL, "Bytes per element (rounded up).", NULL},
    {"dtype", (getter)get_dtype, NULL, "Element type name, NumPy style; vectors (lanes > 1) add x<lanes>: float32x4.",
     NULL},
    {"device", (getter)get_device, NULL, "(device_type, device_id) as a godlpack.Device.", NULL},
    {"readonly", (getter)get_readonly, NULL, "True if the producer marked the data read-only.", NULL},
    {"is_copied", (getter)get_is_copied, NULL, "True if the producer copied the data for us.", NULL},
    {"is_contiguous", (getter)get_is_contiguous, NULL, "True if row-major contiguous.", NULL},
    {"data_ptr", (getter)get_data_ptr, NULL, "Address of the first element (data + byte_offset).", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

/* --- methods --------------------------------------------------------------- */

PyObject* gdl_tensor_copy(GdlTensor* self, uint64_t extra_flags) {
  char err[512];
  if (!gdl_cpu_accessible(self->view.device.device_type)) {
    PyErr_SetString(PyExc_BufferError, "godlpack can only copy CPU-accessible tensors");
    return NULL;
  }
  uint64_t nbytes;
  if (gdl_compact_nbytes(self->dims, self->view.ndim, self->view.dtype, &nbytes) != GDL_SHAPE_OK) {
    PyErr_SetString(PyExc_MemoryError, "a compact copy of this (broadcast) view would not fit in memory");
    return NULL;
  }
  void* data;
  if (!gdl_go_ready()) return NULL;
  gdl_owner* owner = gdl_owner_alloc(nbytes, &data);
  if (owner == NULL) return PyErr_NoMemory();
  int kind;
  /* self (held by the caller) keeps the source alive while the GIL is released. */
  Py_BEGIN_ALLOW_THREADS kind = gdlCopyCompact(&self->view, data, err, sizeof err);
  Py_END_ALLOW_THREADS if (kind != 0) {
    gdl_owner_decref(owner);
    gdl_raise_go(kind, err);
    return NULL;
  }
  DLTensor v = self->view;
  v.data = data;
  v.byte_offset = 0;
  v.device.device_type = kDLCPU;
  v.device.device_id = 0;
  v.strides = NULL; /* compact */
  return gdl_tensor_new(owner, &v, extra_flags);
}

static PyObject* tensor_copy_method(GdlTensor* self, PyObject* unused) {
  (void)unused;
  return gdl_tensor_copy(self, 0);
}

static PyObject* tensor_repr(GdlTensor* t) {
  PyObject* shape = get_shape(t, NULL);
  PyObject* dtype = get_dtype(t, NULL);
  PyObject* dev = gdl_device_obj(t->view.device);
  PyObject* r = NULL;
  if (shape && dtype && dev) {
    r = PyUnicode_FromFormat("%s(shape=%R, dtype=%U, device=%S%s)", Py_TYPE(t)->tp_name, shape, dtype, dev,
                             (t->flags & DLPACK_FLAG_BITMASK_READ_ONLY) ? ", readonly" : "");
  }
  Py_XDECREF(shape);
  Py_XDECREF(dtype);
  Py_XDECREF(dev);
  return r;
}

static PyMethodDef tensor_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))gdl_dlpack, METH_FASTCALL | METH_KEYWORDS,
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)\n"
     "Export as a new DLPack capsule (a fresh managed tensor every call)."},
    {"__dlpack_device__", (PyCFunction)gdl_dlpack_device, METH_NOARGS,
     "Return (device_type, device_id)."},
    {"__dlpack_info__", (PyCFunction)gdl_dlpack_info, METH_NOARGS,
     "Return the DLPack versions, dtypes and devices godlpack supports."},
    {"tolist", (PyCFunction)gdl_tolist, METH_NOARGS, "Nested Python lists of the elements."},
    {"__complex__", gdl_number_complex, METH_NOARGS, "complex(t) of a 0-d tensor."},
    {"__array__", (PyCFunction)(void (*)(void))gdl_tensor_array, METH_FASTCALL | METH_KEYWORDS,
     "__array__(dtype=None, copy=None)\n"
     "For np.asarray(): bfloat16/float8/float6/float4 as ml_dtypes arrays, bit for bit."},
    {"copy", (PyCFunction)tensor_copy_method, METH_NOARGS,
     "A compact copy in new 64-byte-aligned memory owned by godlpack."},
    {"__reduce_ex__", gdl_tensor_reduce_ex, METH_O,
     "Pickling: protocol 5 passes the data out-of-band, as a PickleBuffer over the tensor's memory."},
    {"__copy__", gdl_tensor_copy_dunder, METH_NOARGS, "copy.copy(t): the data in new memory, flags kept."},
    {"__deepcopy__", gdl_tensor_copy_dunder, METH_O, "copy.deepcopy(t): as copy.copy(t)."},
    {NULL, NULL, 0, NULL}};

PyTypeObject GdlTensor_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "godlpack.Tensor",
    .tp_basicsize = sizeof(GdlTensor),
    .tp_dealloc = (destructor)tensor_dealloc,
    .tp_repr = (reprfunc)tensor_repr,
    .tp_as_buffer = &gdl_buffer_procs,
    .tp_as_number = &gdl_number_methods,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Tensor(obj)\n--\n\nA DLPack tensor held by godlpack: a zero-copy view of memory owned by\n"
              "Go, by godlpack or by another library. Tensor(obj) is from_dlpack(obj).",
    .tp_weaklistoffset = offsetof(GdlTensor, weakrefs),
    .tp_methods = tensor_methods,
    .tp_getset = tensor_getset,
    .tp_new = tensor_new,
};

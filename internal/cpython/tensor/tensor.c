/* The godlpack.Tensor type: construction from owners, lifetime, properties,
 * repr. Its methods are wired in by exchange/tensor_type.c. */
#include <string.h>
#include "tensor.h"

/* gdl_owner_decref for callers holding the GIL: the release may run a foreign
 * deleter that runs Python code, so the pending exception (if any) is saved
 * around it. */
static void owner_decref_keep_error(gdl_owner* owner) {
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
  GdlTensor* t = GDL_NEW(GdlTensor, GDL_TENSOR_TYPE);
  if (t == NULL) {
    owner_decref_keep_error(owner);
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
    Py_DECREF(GDL_OBJ(t));
    return PyErr_NoMemory();
  }
  gdl_fill_dims(&t->view, view, t->dims);
  return GDL_OBJ(t);
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
    owner_decref_keep_error(owner);
    PyErr_SetString(PyExc_BufferError, err);
    return NULL;
  }
  if (versioned) {
    DLManagedTensorVersioned* m = managed;
    /* A Tensor's sizes, copies and re-exports assume packed sub-byte
     * elements; a padded layout (one byte each) would be misread. */
    if ((m->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) &&
        (uint32_t)m->dl_tensor.dtype.bits * m->dl_tensor.dtype.lanes < 8) {
      owner_decref_keep_error(owner);
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

static void tensor_dealloc(PyObject* obj) {
  GdlTensor* self = GDL_AS(GdlTensor, obj);
  if (self->weakrefs != NULL) PyObject_ClearWeakRefs(obj);
  if (self->dims != self->inline_dims) PyMem_Free(self->dims);
  PyMem_Free(self->bufdims);
  gdl_owner* o = self->owner;
  PyObject_Free(obj);
  /* Last: may run a foreign deleter, which may call back into Python. */
  if (o != NULL) owner_decref_keep_error(o);
#ifdef Py_LIMITED_API
  Py_DECREF(gdl_tensor_type); /* a heap type's instances hold a reference to it */
#endif
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

static PyObject* get_shape(PyObject* self, void* c) {
  GdlTensor* t = GDL_AS(GdlTensor, self);
  (void)c;
  return int64_tuple(t->dims, t->view.ndim);
}
static PyObject* get_strides(PyObject* self, void* c) {
  GdlTensor* t = GDL_AS(GdlTensor, self);
  (void)c;
  return int64_tuple(t->dims + t->view.ndim, t->view.ndim);
}
static PyObject* get_ndim(PyObject* self, void* c) {
  GdlTensor* t = GDL_AS(GdlTensor, self);
  (void)c;
  return PyLong_FromLong(t->view.ndim);
}
static PyObject* get_size(PyObject* self, void* c) {
  GdlTensor* t = GDL_AS(GdlTensor, self);
  (void)c;
  return PyLong_FromLongLong(num_elements(t));
}
static PyObject* get_nbytes(PyObject* self, void* c) {
  GdlTensor* t = GDL_AS(GdlTensor, self);
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
static PyObject* get_itemsize(PyObject* self, void* c) {
  GdlTensor* t = GDL_AS(GdlTensor, self);
  (void)c;
  return PyLong_FromLong(((long)t->view.dtype.bits * t->view.dtype.lanes + 7) / 8);
}
static PyObject* get_readonly(PyObject* self, void* c) {
  GdlTensor* t = GDL_AS(GdlTensor, self);
  (void)c;
  return PyBool_FromLong((t->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
}
static PyObject* get_is_copied(PyObject* self, void* c) {
  GdlTensor* t = GDL_AS(GdlTensor, self);
  (void)c;
  return PyBool_FromLong((t->flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0);
}
static PyObject* get_data_ptr(PyObject* self, void* c) {
  GdlTensor* t = GDL_AS(GdlTensor, self);
  (void)c;
  return PyLong_FromUnsignedLongLong((uint64_t)(uintptr_t)t->view.data + t->view.byte_offset);
}
static PyObject* get_device(PyObject* self, void* c) {
  GdlTensor* t = GDL_AS(GdlTensor, self);
  (void)c;
  return gdl_device_obj(t->view.device);
}

static PyObject* get_dtype(PyObject* self, void* c) {
  GdlTensor* t = GDL_AS(GdlTensor, self);
  (void)c;
  return gdl_dtype_name(t->view.dtype);
}

static PyObject* get_is_contiguous(PyObject* self, void* c) {
  GdlTensor* t = GDL_AS(GdlTensor, self);
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

static PyObject* tensor_repr(PyObject* self) {
  GdlTensor* t = GDL_AS(GdlTensor, self);
  PyObject* shape = get_shape(self, NULL);
  PyObject* dtype = get_dtype(self, NULL);
  PyObject* dev = gdl_device_obj(t->view.device);
  PyObject* r = NULL;
  if (shape && dtype && dev) {
    r = PyUnicode_FromFormat("%s(shape=%R, dtype=%U, device=%S%s)", GDL_TP_NAME(Py_TYPE(self)), shape, dtype, dev,
                             (t->flags & DLPACK_FLAG_BITMASK_READ_ONLY) ? ", readonly" : "");
  }
  Py_XDECREF(shape);
  Py_XDECREF(dtype);
  Py_XDECREF(dev);
  return r;
}

#define TENSOR_DOC                                                                             \
  "Tensor(obj)\n--\n\nA DLPack tensor held by godlpack: a zero-copy view of memory owned by\n" \
  "Go, by godlpack or by another library. Tensor(obj) is from_dlpack(obj)."
#ifdef Py_LIMITED_API
static PyMemberDef tensor_members[] = {
    {"__weaklistoffset__", Py_T_PYSSIZET, offsetof(GdlTensor, weakrefs), GDL_MEMBER_FLAGS, NULL}, {NULL, 0, 0, 0, NULL}};
PyTypeObject* gdl_tensor_type;
PyType_Slot gdl_tensor_slots[] = {
    {Py_tp_dealloc, (void*)tensor_dealloc}, {Py_tp_repr, (void*)tensor_repr},
    {Py_bf_getbuffer, (void*)gdl_tensor_getbuffer}, {Py_nb_int, (void*)gdl_number_int},
    {Py_nb_float, (void*)gdl_number_float}, {Py_nb_index, (void*)gdl_number_index},
    {Py_nb_bool, (void*)gdl_number_bool}, {Py_tp_doc, (void*)TENSOR_DOC},
    {Py_tp_members, tensor_members}, {Py_tp_getset, tensor_getset}, {0, NULL}};
#else
PyTypeObject GdlTensor_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "godlpack.Tensor",
    .tp_basicsize = sizeof(GdlTensor),
    .tp_dealloc = (destructor)tensor_dealloc,
    .tp_repr = (reprfunc)tensor_repr,
    .tp_as_buffer = &gdl_buffer_procs,
    .tp_as_number = &gdl_number_methods,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = TENSOR_DOC,
    .tp_weaklistoffset = offsetof(GdlTensor, weakrefs),
    .tp_getset = tensor_getset,
};
#endif

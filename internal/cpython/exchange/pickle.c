/* Pickling and copying of Tensors, for every module that links this layer.
 *
 * Tensor.__reduce_ex__ gives (<module>._rebuild_tensor, args), the
 * reconstructor of the module that owns the type (registered by
 * gdl_layer_add_types), so unpickling vecmath.Tensor imports vecmath alone.
 * args: (PICKLE_FORMAT, data, (code, bits, lanes), shape, order, readonly,
 * device). data is the compact bytes of the tensor in order 'C' or 'F':
 * with protocol 5 a PickleBuffer over the tensor's own memory (out-of-band
 * when the pickler has a buffer_callback), else bytes. A view that is compact
 * in neither order is copied first; a CUDA tensor is copied to the host and
 * carries its device, which the reconstructor copies it back to.
 *
 * _rebuild_tensor keeps the received buffer as the tensor's memory (no copy)
 * when it is writable, or the tensor read-only, and aligned for the dtype;
 * otherwise it copies once into new aligned memory. */
#include <stdio.h>
#include <string.h>
#include "exchange.h"

#define PICKLE_FORMAT 1
#define GIL_FREE_COPY ((size_t)1 << 20) /* larger copies release the GIL */

/* The last executed module's _rebuild_tensor: a module's exec replaces it
 * while other threads may be pickling. */
static gdl_ref_slot rebuild_fn;

/* --- raw bytes of a compact tensor ---------------------------------------
 * The buffer protocol of a Tensor refuses dtypes with no PEP 3118 format
 * (bfloat16, float8, sub-byte, vectors); pickling needs the bytes of all of
 * them. A TensorBytes exports a compact tensor's bytes as unsigned bytes and
 * holds the tensor, so its memory lives as long as the buffer is used. */
typedef struct {
  GDL_HEAD
  PyObject* tensor;
  void* buf;
  Py_ssize_t len;
  int readonly;
} TensorBytes;

#ifdef Py_LIMITED_API
static PyTypeObject* tensor_bytes_type;
#endif

static int bytes_getbuffer(PyObject* self, Py_buffer* view, int flags) {
  TensorBytes* b = GDL_AS(TensorBytes, self);
  return PyBuffer_FillInfo(view, self, b->buf, b->len, b->readonly, flags);
}

static void bytes_dealloc(PyObject* self) {
  Py_XDECREF(GDL_AS(TensorBytes, self)->tensor);
  PyObject_Free(self);
#ifdef Py_LIMITED_API
  Py_DECREF(tensor_bytes_type); /* a heap type's instances hold a reference to it */
#endif
}

#define TENSOR_BYTES_DOC "The bytes of a compact tensor (pickling's out-of-band buffer)."
#ifdef Py_LIMITED_API
static PyObject* pickle_buffer; /* pickle.PickleBuffer: PyPickleBuffer_FromObject is not in the limited API */
#define PyPickleBuffer_FromObject(o) PyObject_CallOneArg(pickle_buffer, (o))
#define TENSOR_BYTES_TYPE tensor_bytes_type

int gdl_pickle_init(const char* module_name) {
  if (tensor_bytes_type != NULL) return 0;
  static char name[256];
  snprintf(name, sizeof name, "%s._TensorBytes", module_name);
  PyType_Slot slots[] = {{Py_tp_dealloc, (void*)bytes_dealloc}, {Py_bf_getbuffer, (void*)bytes_getbuffer},
                         {Py_tp_doc, (void*)TENSOR_BYTES_DOC}, {0, NULL}};
  PyType_Spec spec = {name, GDL_BASICSIZE(TensorBytes), 0, Py_TPFLAGS_DEFAULT, slots};
  pickle_buffer = gdl_module_attr("pickle", "PickleBuffer");
  if (pickle_buffer == NULL) return -1;
  tensor_bytes_type = (PyTypeObject*)PyType_FromSpec(&spec);
  return tensor_bytes_type ? 0 : -1;
}
#else
#define TENSOR_BYTES_TYPE (&TensorBytes_Type)
static PyBufferProcs bytes_procs = {.bf_getbuffer = bytes_getbuffer};

static PyTypeObject TensorBytes_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "godlpack._TensorBytes",
    .tp_basicsize = sizeof(TensorBytes),
    .tp_dealloc = bytes_dealloc,
    .tp_as_buffer = &bytes_procs,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = TENSOR_BYTES_DOC,
};

int gdl_pickle_init(const char* module_name) {
  static char name[256];
  snprintf(name, sizeof name, "%s._TensorBytes", module_name);
  TensorBytes_Type.tp_name = name;
  return PyType_Ready(&TensorBytes_Type);
}
#endif

/* --- pickling ---------------------------------------------------------------- */

static PyObject* dims_tuple(const int64_t* v, int32_t n) {
  PyObject* t = PyTuple_New(n);
  for (int32_t i = 0; t != NULL && i < n; i++) {
    PyObject* x = PyLong_FromLongLong(v[i]);
    if (x == NULL) Py_CLEAR(t);
    else PyTuple_SET_ITEM(t, i, x);
  }
  return t;
}

/* t's bytes: a PickleBuffer (protocol 5) or bytes. t is compact. */
static PyObject* data_of(GdlTensor* t, uint64_t nbytes, int protocol) {
  char* p = (char*)t->view.data + t->view.byte_offset;
  if (nbytes > PY_SSIZE_T_MAX) return PyErr_NoMemory();
  if (protocol < 5) return PyBytes_FromStringAndSize(nbytes ? p : NULL, (Py_ssize_t)nbytes);
  TensorBytes* b = GDL_NEW(TensorBytes, TENSOR_BYTES_TYPE);
  if (b == NULL) return NULL;
  b->tensor = Py_NewRef(GDL_OBJ(t));
  b->buf = p;
  b->len = (Py_ssize_t)nbytes;
  b->readonly = (t->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
  PyObject* pb = PyPickleBuffer_FromObject(GDL_OBJ(b));
  Py_DECREF(GDL_OBJ(b));
  return pb;
}

PyObject* gdl_tensor_reduce_ex(PyObject* self, PyObject* arg) {
  GdlTensor* t = GDL_AS(GdlTensor, self);
  long protocol = PyLong_AsLong(arg);
  if (protocol == -1 && PyErr_Occurred()) return NULL;
  PyObject* rebuild_ref = gdl_ref_slot_get(&rebuild_fn); /* held: a re-executed module may replace it */
  if (rebuild_ref == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "Tensor pickling is not set up (module not initialised)");
    return NULL;
  }
  DLDevice dev = t->view.device, to = {kDLCPU, 0};
  PyObject* host = NULL; /* a copy that src points at, when one is made */
  GdlTensor* src = t;
  if (dev.device_type == kDLCUDA) {
    host = gdl_cuda_copy(t, to, t->stream); /* compact, on the host */
    if (host == NULL) {
      Py_DECREF(rebuild_ref);
      return NULL;
    }
    src = GDL_AS(GdlTensor, host);
  } else if (gdl_cpu_accessible(dev.device_type)) {
    dev = to; /* host memory (CUDAHost, CUDAManaged...) unpickles as CPU memory */
    if (gdl_host_sync(t->view.device, t->stream) != 0) {
      Py_DECREF(rebuild_ref);
      return NULL;
    }
  } else {
    PyErr_Format(PyExc_BufferError,
                 "cannot pickle a tensor on device (%d, %d): only CPU-accessible and CUDA tensors pickle",
                 (int)dev.device_type, (int)dev.device_id);
    Py_DECREF(rebuild_ref);
    return NULL;
  }
  int32_t n = src->view.ndim;
  const char* order = "C";
  if (!gdl_is_compact(src->dims, src->dims + n, n, 0)) {
    if (n > 1 && gdl_is_compact(src->dims, src->dims + n, n, 1)) {
      order = "F";
    } else { /* strided or broadcast: its logical contents, compacted */
      PyObject* c = gdl_tensor_copy(src, 0);
      Py_XDECREF(host);
      if (c == NULL) {
        Py_DECREF(rebuild_ref);
        return NULL;
      }
      host = c;
      src = GDL_AS(GdlTensor, c);
    }
  }
  uint64_t nbytes;
  if (gdl_compact_nbytes(src->dims, n, src->view.dtype, &nbytes) != GDL_SHAPE_OK) { /* not reached: compact */
    Py_XDECREF(host);
    Py_DECREF(rebuild_ref);
    return PyErr_NoMemory();
  }
  PyObject* data = data_of(src, nbytes, (int)(protocol > 5 ? 5 : protocol));
  PyObject* shape = data ? dims_tuple(src->dims, n) : NULL;
  PyObject* r = NULL;
  if (shape != NULL) {
    DLDataType dt = src->view.dtype;
    r = Py_BuildValue("(O(iO(iii)OsO(ii)))", rebuild_ref, PICKLE_FORMAT, data, dt.code, dt.bits, dt.lanes, shape,
                      order, (t->flags & DLPACK_FLAG_BITMASK_READ_ONLY) ? Py_True : Py_False, (int)dev.device_type,
                      (int)dev.device_id);
  }
  Py_XDECREF(data);
  Py_XDECREF(shape);
  Py_XDECREF(host);
  Py_DECREF(rebuild_ref);
  return r;
}

/* --- copy.copy and copy.deepcopy: new memory, same contents and flags ----- */

PyObject* gdl_tensor_copy_dunder(PyObject* self, PyObject* unused) {
  (void)unused;
  GdlTensor* t = GDL_AS(GdlTensor, self);
  uint64_t ro = t->flags & DLPACK_FLAG_BITMASK_READ_ONLY;
  PyObject* r = gdl_device_copy(t, ro);
  if (r != NULL) GDL_AS(GdlTensor, r)->flags = ro; /* a copy as pickling gives: no IS_COPIED */
  return r;
}

/* --- unpickling -------------------------------------------------------------- */

/* A managed tensor whose memory is a Python buffer: the deleter releases it
 * (with the GIL, on whichever thread drops the last reference). */
typedef struct {
  DLManagedTensorVersioned m;
  Py_buffer buf;
  int64_t dims[2 * GDL_MAX_NDIM];
} held_buffer;

static void held_deleter(DLManagedTensorVersioned* m) {
  held_buffer* h = (held_buffer*)m;
  if (Py_IsInitialized()) { /* at exit the buffer's object is gone with the interpreter */
    PyGILState_STATE g = PyGILState_Ensure();
    PyBuffer_Release(&h->buf);
    PyGILState_Release(g);
  }
  PyMem_RawFree(h);
}

/* Alignment a kernel expects of an element: its lane's size (half of it for
 * complex), as a power of two; 1 for sub-byte types. */
static uintptr_t elem_align(DLDataType dt) {
  unsigned b = dt.code == kDLComplex ? dt.bits / 16u : dt.bits / 8u;
  if (b == 0) return 1;
  b &= -b;
  return b > 64 ? 64 : b;
}

static int small_int(PyObject* o, const char* what, long lo, long hi, long* out) {
  if (!PyLong_Check(o) || PyBool_Check(o)) {
    PyErr_Format(PyExc_TypeError, "_rebuild_tensor: %s must be an int, got %.200s", what, GDL_TP_NAME(Py_TYPE(o)));
    return -1;
  }
  int over;
  *out = PyLong_AsLongAndOverflow(o, &over);
  if (*out == -1 && PyErr_Occurred()) return -1;
  if (over || *out < lo || *out > hi) {
    PyErr_Format(PyExc_ValueError, "_rebuild_tensor: %s %R is out of range [%ld, %ld]", what, o, lo, hi);
    return -1;
  }
  return 0;
}

/* Reads the pickled dtype, shape and order into view (dims: 2*GDL_MAX_NDIM
 * slots), with compact strides; -1 with ValueError/TypeError for anything a
 * pickle of a Tensor cannot hold. *nbytes: the bytes the data must have. */
static int read_layout(PyObject* dtype, PyObject* shape, PyObject* order, DLTensor* view, int64_t* dims,
                       uint64_t* nbytes) {
  long code, bits, lanes;
  if (!PyTuple_Check(dtype) || PyTuple_GET_SIZE(dtype) != 3) {
    PyErr_SetString(PyExc_TypeError, "_rebuild_tensor: dtype must be a (code, bits, lanes) tuple");
    return -1;
  }
  if (small_int(PyTuple_GET_ITEM(dtype, 0), "dtype code", 0, 255, &code) ||
      small_int(PyTuple_GET_ITEM(dtype, 1), "dtype bits", 1, 255, &bits) ||
      small_int(PyTuple_GET_ITEM(dtype, 2), "dtype lanes", 1, 65535, &lanes))
    return -1;
  view->dtype = (DLDataType){(uint8_t)code, (uint8_t)bits, (uint16_t)lanes};
  if (!PyTuple_Check(shape) || PyTuple_GET_SIZE(shape) > GDL_MAX_NDIM) {
    PyErr_Format(PyExc_ValueError, "_rebuild_tensor: shape must be a tuple of at most %d ints", GDL_MAX_NDIM);
    return -1;
  }
  int32_t n = (int32_t)PyTuple_GET_SIZE(shape);
  int64_t span = 1; /* product of the extents, 0s counted as 1: the largest stride must fit */
  for (int32_t i = 0; i < n; i++) {
    long long d;
    PyObject* x = PyTuple_GET_ITEM(shape, i);
    if (!PyLong_Check(x) || PyBool_Check(x)) {
      PyErr_Format(PyExc_TypeError, "_rebuild_tensor: shape entries must be ints, got %.200s", GDL_TP_NAME(Py_TYPE(x)));
      return -1;
    }
    d = PyLong_AsLongLong(x);
    if (d == -1 && PyErr_Occurred()) return -1;
    if (d < 0) {
      PyErr_Format(PyExc_ValueError, "_rebuild_tensor: negative extent %lld in the shape", d);
      return -1;
    }
    if (__builtin_mul_overflow(span, d > 0 ? d : 1, &span)) {
      PyErr_SetString(PyExc_ValueError, "_rebuild_tensor: the shape's element count overflows");
      return -1;
    }
    dims[i] = d;
  }
  const char* o = PyUnicode_Check(order) ? PyUnicode_AsUTF8(order) : NULL;
  if (o == NULL || (strcmp(o, "C") != 0 && strcmp(o, "F") != 0)) {
    PyErr_Clear();
    PyErr_SetString(PyExc_ValueError, "_rebuild_tensor: order must be 'C' or 'F'");
    return -1;
  }
  int64_t* strides = dims + n;
  int64_t acc = 1;
  for (int32_t k = 0; k < n; k++) { /* no overflow: acc <= span */
    int32_t i = o[0] == 'C' ? n - 1 - k : k;
    strides[i] = acc;
    if (dims[i] > 0) acc *= dims[i];
  }
  view->ndim = n;
  view->shape = dims;
  view->strides = strides;
  if (gdl_compact_nbytes(dims, n, view->dtype, nbytes) != GDL_SHAPE_OK) {
    PyErr_SetString(PyExc_ValueError, "_rebuild_tensor: the tensor's size in bytes overflows");
    return -1;
  }
  return 0;
}

/* The tensor over buf's memory, which it keeps (the buffer is released by
 * the deleter). Consumes *buf either way. */
static PyObject* share(Py_buffer* buf, const DLTensor* view, uint64_t flags) {
  held_buffer* h = PyMem_RawCalloc(1, sizeof *h);
  if (h == NULL) {
    PyBuffer_Release(buf);
    return PyErr_NoMemory();
  }
  h->buf = *buf;
  memcpy(h->dims, view->shape, 2 * (size_t)view->ndim * sizeof(int64_t));
  h->m.version = (DLPackVersion){DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  h->m.manager_ctx = h;
  h->m.deleter = held_deleter;
  h->m.flags = flags;
  h->m.dl_tensor = *view;
  h->m.dl_tensor.data = buf->buf;
  h->m.dl_tensor.byte_offset = 0;
  h->m.dl_tensor.device = (DLDevice){kDLCPU, 0};
  h->m.dl_tensor.shape = h->dims;
  h->m.dl_tensor.strides = h->dims + view->ndim;
  return gdl_tensor_from_managed(&h->m, 1); /* validated there; the deleter runs once either way */
}

/* A copy of buf's bytes in new aligned C memory (no Go: works after fork). */
static PyObject* copy_in(Py_buffer* buf, DLTensor* view, uint64_t flags) {
  void* p;
  gdl_owner* owner = gdl_owner_alloc((uint64_t)buf->len, &p);
  if (owner == NULL) {
    PyBuffer_Release(buf);
    return PyErr_NoMemory();
  }
  if ((size_t)buf->len >= GIL_FREE_COPY) {
    Py_BEGIN_ALLOW_THREADS memcpy(p, buf->buf, (size_t)buf->len);
    Py_END_ALLOW_THREADS
  } else if (buf->len > 0) {
    memcpy(p, buf->buf, (size_t)buf->len);
  }
  PyBuffer_Release(buf);
  view->data = p;
  view->byte_offset = 0;
  return gdl_tensor_new(owner, view, flags); /* view was validated over buf */
}

/* _rebuild_tensor(format, data, (code, bits, lanes), shape, order, readonly, device) */
static PyObject* rebuild(PyObject* mod, PyObject* const* args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 7) {
    PyErr_Format(PyExc_TypeError, "_rebuild_tensor() takes 7 arguments (%zd given)", nargs);
    return NULL;
  }
  long format;
  if (small_int(args[0], "pickle format", 0, 1L << 30, &format)) return NULL;
  if (format != PICKLE_FORMAT) {
    PyErr_Format(PyExc_ValueError, "_rebuild_tensor: pickle format %ld is not %d (pickled by another version?)",
                 format, PICKLE_FORMAT);
    return NULL;
  }
  int64_t dims[2 * GDL_MAX_NDIM];
  DLTensor view = {0};
  uint64_t nbytes;
  if (read_layout(args[2], args[3], args[4], &view, dims, &nbytes) < 0) return NULL;
  if (!PyBool_Check(args[5])) {
    PyErr_SetString(PyExc_TypeError, "_rebuild_tensor: readonly must be a bool");
    return NULL;
  }
  int readonly = args[5] == Py_True;
  DLDevice dev;
  if (gdl_parse_device(args[6], &dev) < 0) return NULL;
  if (!(dev.device_type == kDLCPU && dev.device_id == 0) && !(dev.device_type == kDLCUDA && dev.device_id >= 0)) {
    PyErr_Format(PyExc_ValueError, "_rebuild_tensor: device (%d, %d) is not one a pickle holds",
                 (int)dev.device_type, (int)dev.device_id);
    return NULL;
  }
  if (dev.device_type == kDLCUDA && gdl_cu_ready() != 0) { /* say so before any copy */
    PyObject *et, *ev, *etb;
    PyErr_Fetch(&et, &ev, &etb);
    PyErr_Format(PyExc_BufferError, "cannot unpickle a CUDA tensor here: %S", ev ? ev : Py_None);
    Py_XDECREF(et), Py_XDECREF(ev), Py_XDECREF(etb);
    return NULL;
  }
  Py_buffer buf;
  int writable = PyObject_GetBuffer(args[1], &buf, PyBUF_WRITABLE) == 0;
  if (!writable) {
    PyErr_Clear();
    if (PyObject_GetBuffer(args[1], &buf, PyBUF_SIMPLE) < 0) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "_rebuild_tensor: data must be a contiguous buffer, got %.200s",
                   GDL_TP_NAME(Py_TYPE(args[1])));
      return NULL;
    }
  }
  if ((uint64_t)buf.len != nbytes) {
    PyErr_Format(PyExc_ValueError, "_rebuild_tensor: the data has %zd bytes, the dtype and shape need %llu",
                 buf.len, (unsigned long long)nbytes);
    PyBuffer_Release(&buf);
    return NULL;
  }
  view.data = buf.buf;
  view.device = (DLDevice){kDLCPU, 0};
  char err[512];
  if (gdl_check_tensor(&view, 0, err, sizeof err) != GDL_OK) { /* unknown dtypes, odd lanes... */
    PyErr_Format(PyExc_ValueError, "_rebuild_tensor: %s", err);
    PyBuffer_Release(&buf);
    return NULL;
  }
  uint64_t flags = readonly && dev.device_type == kDLCPU ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
  int keep = dev.device_type == kDLCPU && nbytes > 0 && (writable || readonly) &&
             (uintptr_t)buf.buf % elem_align(view.dtype) == 0;
  PyObject* t = keep ? share(&buf, &view, flags) : copy_in(&buf, &view, flags);
  if (t == NULL || dev.device_type == kDLCPU) return t;
  PyObject* r = gdl_tensor_on(GDL_AS(GdlTensor, t), dev, Py_None); /* host -> device through the driver */
  Py_DECREF(t);
  if (r != NULL) GDL_AS(GdlTensor, r)->flags = readonly ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
  return r;
}

static PyMethodDef rebuild_def = {
    "_rebuild_tensor", (PyCFunction)(void (*)(void))rebuild, METH_FASTCALL,
    "_rebuild_tensor(format, data, dtype, shape, order, readonly, device)\n--\n\n"
    "Unpickles a Tensor (what Tensor.__reduce_ex__ gives; internal)."};

/* The reconstructor last made, if it was made for the module named name (a
 * new reference), else NULL. A module executed again under its name (a new
 * module object from its spec) takes that one: a pickle names it by module
 * and attribute, and pickle refuses a name that gives another object. */
static PyObject* rebuild_of(PyObject* name) {
  PyObject* f = gdl_ref_slot_get(&rebuild_fn);
  PyObject* owner = f ? PyObject_GetAttrString(f, "__module__") : NULL;
  int same = owner != NULL && PyUnicode_Check(owner) && PyUnicode_Compare(owner, name) == 0;
  Py_XDECREF(owner);
  PyErr_Clear(); /* no match: a new one is made */
  if (!same) Py_CLEAR(f);
  return f;
}

int gdl_pickle_add(PyObject* m) {
  PyObject* name = PyModule_GetNameObject(m);
  if (name == NULL) return -1;
  PyObject* f = rebuild_of(name);
  if (f == NULL) f = PyCFunction_NewEx(&rebuild_def, NULL, name);
  Py_DECREF(name);
  if (f == NULL || PyModule_AddObjectRef(m, "_rebuild_tensor", f) < 0) {
    Py_XDECREF(f);
    return -1;
  }
  gdl_ref_slot_set(&rebuild_fn, f);
  Py_DECREF(f);
  return 0;
}

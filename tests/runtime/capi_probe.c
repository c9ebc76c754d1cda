/* capi_probe: a third-party extension that uses godlpack only through its
 * public headers: the GodlpackCAPI table (godlpack._C_API) and the DLPack 1.3
 * C exchange API tables found on types. Built by tests/runtime/test_capi.py. */
#define PY_SSIZE_T_CLEAN
#include <godlpack/godlpack.h>

#include <stdint.h>
#include <string.h>

static const GodlpackCAPI* api;

/* --- helpers ---------------------------------------------------------------- */

static DLTensor* dl_of(void* m, int versioned) {
  return versioned ? &((DLManagedTensorVersioned*)m)->dl_tensor : &((DLManagedTensor*)m)->dl_tensor;
}

static void free_any(void* m, int versioned) {
  if (versioned)
    api->free_managed_versioned((DLManagedTensorVersioned*)m);
  else
    api->free_managed((DLManagedTensor*)m);
}

static PyObject* int64_tuple(const int64_t* v, int32_t n) {
  if (v == NULL) Py_RETURN_NONE;
  PyObject* t = PyTuple_New(n < 0 ? 0 : n);
  if (t == NULL) return NULL;
  for (int32_t i = 0; i < n; i++) {
    PyObject* x = PyLong_FromLongLong((long long)v[i]);
    if (x == NULL) {
      Py_DECREF(t);
      return NULL;
    }
    PyTuple_SET_ITEM(t, i, x);
  }
  return t;
}

/* A dict describing a DLTensor (the pointers as ints, strides None if NULL). */
static PyObject* describe(const DLTensor* t) {
  PyObject* shape = int64_tuple(t->shape, t->ndim);
  PyObject* strides = shape ? int64_tuple(t->strides, t->ndim) : NULL;
  PyObject* r = NULL;
  if (strides != NULL)
    r = Py_BuildValue("{s:K,s:(ii),s:i,s:(iii),s:O,s:O,s:K}", "data", (unsigned long long)(uintptr_t)t->data,
                      "device", (int)t->device.device_type, (int)t->device.device_id, "ndim", (int)t->ndim,
                      "dtype", (int)t->dtype.code, (int)t->dtype.bits, (int)t->dtype.lanes, "shape", shape,
                      "strides", strides, "byte_offset", (unsigned long long)t->byte_offset);
  Py_XDECREF(shape);
  Py_XDECREF(strides);
  return r;
}

static int parse_version(PyObject* args, const char* fmt, PyObject** obj, DLPackVersion* v) {
  unsigned int major = 1, minor = 3;
  if (!PyArg_ParseTuple(args, fmt, obj, &major, &minor)) return -1;
  v->major = major;
  v->minor = minor;
  return 0;
}

static int parse_version_stream(PyObject* args, PyObject** obj, DLPackVersion* v, PyObject** stream) {
  unsigned int major = 1, minor = 3;
  *stream = NULL;
  if (!PyArg_ParseTuple(args, "O|IIO", obj, &major, &minor, stream)) return -1;
  v->major = major;
  v->minor = minor;
  return 0;
}

/* --- the GodlpackCAPI table ------------------------------------------------- */

static PyObject* versions(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  return Py_BuildValue("(IIIII)", (unsigned)api->abi_version, (unsigned)api->size,
                       (unsigned)api->api_version.major, (unsigned)api->api_version.minor,
                       (unsigned)api->max_import_major);
}

/* The size this header expects, to compare with api->size. */
static PyObject* header_size(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  return PyLong_FromSize_t(sizeof(GodlpackCAPI));
}

/* import_tensor(obj, major=1, minor=3) -> (godlpack.Tensor, versioned) */
static PyObject* import_tensor(PyObject* self, PyObject* args) {
  (void)self;
  PyObject* obj;
  DLPackVersion mv;
  if (parse_version(args, "O|II", &obj, &mv) != 0) return NULL;
  void* m = NULL;
  int versioned = -1;
  if (api->managed_from_object(obj, NULL, mv, &m, &versioned) != 0) return NULL;
  PyObject* t = api->tensor_from_managed(m, versioned);
  if (t == NULL) return NULL;
  return Py_BuildValue("(Ni)", t, versioned);
}

/* import_bad_version(obj): managed_from_object, the version major set to 99
 * (versioned only), then tensor_from_managed, which must fail with
 * BufferError having called the deleter (it steals m). */
static PyObject* import_bad_version(PyObject* self, PyObject* obj) {
  (void)self;
  void* m = NULL;
  int versioned = -1;
  if (api->managed_from_object(obj, NULL, (DLPackVersion){1, 3}, &m, &versioned) != 0) return NULL;
  if (!versioned) {
    free_any(m, versioned);
    PyErr_SetString(PyExc_TypeError, "import_bad_version needs a versioned producer");
    return NULL;
  }
  ((DLManagedTensorVersioned*)m)->version.major = 99;
  return api->tensor_from_managed(m, versioned);
}

/* import_legacy(obj) -> (godlpack.Tensor, versioned), asking for max_version {0, 0}. */
static PyObject* import_legacy(PyObject* self, PyObject* obj) {
  (void)self;
  void* m = NULL;
  int versioned = -1;
  if (api->managed_from_object(obj, NULL, (DLPackVersion){0, 0}, &m, &versioned) != 0) return NULL;
  PyObject* t = api->tensor_from_managed(m, versioned);
  if (t == NULL) return NULL;
  return Py_BuildValue("(Ni)", t, versioned);
}

/* inspect(obj, major=1, minor=3, stream=NULL) -> dict of the managed tensor's
 * fields, then frees it. stream is passed through (omitted: NULL). */
static PyObject* inspect(PyObject* self, PyObject* args) {
  (void)self;
  PyObject *obj, *stream;
  DLPackVersion mv;
  if (parse_version_stream(args, &obj, &mv, &stream) != 0) return NULL;
  void* m = NULL;
  int versioned = -1;
  if (api->managed_from_object(obj, stream, mv, &m, &versioned) != 0) return NULL;
  PyObject* d = describe(dl_of(m, versioned));
  if (d != NULL) {
    PyObject* extra;
    if (versioned) {
      DLManagedTensorVersioned* v = m;
      extra = Py_BuildValue("{s:i,s:(II),s:K}", "versioned", 1, "version", (unsigned)v->version.major,
                            (unsigned)v->version.minor, "flags", (unsigned long long)v->flags);
    } else {
      extra = Py_BuildValue("{s:i}", "versioned", 0);
    }
    if (extra == NULL || PyDict_Update(d, extra) != 0) Py_CLEAR(d);
    Py_XDECREF(extra);
  }
  free_any(m, versioned);
  return d;
}

/* sum_f64(obj, major=1, minor=3): the sum of a CPU float64 tensor, computed
 * in C following shape, strides (elements; NULL = compact) and byte_offset. */
static PyObject* sum_f64(PyObject* self, PyObject* args) {
  (void)self;
  PyObject* obj;
  DLPackVersion mv;
  if (parse_version(args, "O|II", &obj, &mv) != 0) return NULL;
  void* m = NULL;
  int versioned = -1;
  if (api->managed_from_object(obj, NULL, mv, &m, &versioned) != 0) return NULL;
  const DLTensor* t = dl_of(m, versioned);
  if (!api->is_cpu_accessible(t->device) || t->dtype.code != kDLFloat || t->dtype.bits != 64 ||
      t->dtype.lanes != 1 || t->ndim < 0 || t->ndim > 64) {
    free_any(m, versioned);
    PyErr_SetString(PyExc_TypeError, "sum_f64 needs a CPU float64 tensor");
    return NULL;
  }
  int32_t nd = t->ndim;
  int64_t compact[64], idx[64];
  const int64_t* st = t->strides;
  if (st == NULL) { /* DLPack < 1.2: compact row-major */
    int64_t s = 1;
    for (int32_t i = nd - 1; i >= 0; i--) {
      compact[i] = s;
      s *= t->shape[i];
    }
    st = compact;
  }
  int64_t n = 1;
  for (int32_t i = 0; i < nd; i++) {
    n *= t->shape[i];
    idx[i] = 0;
  }
  const char* base = (const char*)t->data + t->byte_offset;
  double sum = 0;
  for (int64_t k = 0; k < n; k++) {
    int64_t off = 0;
    for (int32_t i = 0; i < nd; i++) off += idx[i] * st[i];
    sum += ((const double*)base)[off];
    for (int32_t i = nd - 1; i >= 0; i--) { /* odometer */
      if (++idx[i] < t->shape[i]) break;
      idx[i] = 0;
    }
  }
  free_any(m, versioned);
  return PyFloat_FromDouble(sum);
}

/* export_capsule(obj, major=1, minor=3): managed_from_object then a capsule
 * made by capsule_from_managed_versioned / capsule_from_managed. */
static PyObject* export_capsule(PyObject* self, PyObject* args) {
  (void)self;
  PyObject* obj;
  DLPackVersion mv;
  if (parse_version(args, "O|II", &obj, &mv) != 0) return NULL;
  void* m = NULL;
  int versioned = -1;
  if (api->managed_from_object(obj, NULL, mv, &m, &versioned) != 0) return NULL;
  return versioned ? api->capsule_from_managed_versioned(m) : api->capsule_from_managed(m);
}

/* take(capsule) -> versioned: capsule_take, then the deleter via free_*. */
static PyObject* take(PyObject* self, PyObject* capsule) {
  (void)self;
  int versioned = -1;
  void* m = api->capsule_take(capsule, &versioned);
  if (m == NULL) return NULL;
  free_any(m, versioned);
  return PyLong_FromLong(versioned);
}

static PyObject* device_of(PyObject* self, PyObject* obj) {
  (void)self;
  DLDevice d = {0, -1};
  if (api->device_of(obj, &d) != 0) return NULL;
  return Py_BuildValue("(ii)", (int)d.device_type, (int)d.device_id);
}

static PyObject* is_cpu_accessible(PyObject* self, PyObject* args) {
  (void)self;
  int type, id;
  if (!PyArg_ParseTuple(args, "ii", &type, &id)) return NULL;
  DLDevice d = {(DLDeviceType)type, (int32_t)id};
  return PyBool_FromLong(api->is_cpu_accessible(d));
}

/* Records one NULL-argument call: did it return the error value with an
 * exception set? Stores the exception's type name (or None) and clears it. */
static int record(PyObject* out, const char* name, int failed) {
  PyObject* exc = PyErr_Occurred();
  PyObject* v;
  if (exc != NULL) {
    v = Py_BuildValue("(Os)", failed ? Py_True : Py_False, ((PyTypeObject*)exc)->tp_name);
    PyErr_Clear();
  } else {
    v = Py_BuildValue("(OO)", failed ? Py_True : Py_False, Py_None);
  }
  if (v == NULL) return -1;
  int r = PyDict_SetItemString(out, name, v);
  Py_DECREF(v);
  return r;
}

/* null_checks(obj, capsule) -> {call: (returned error, exception type name)}
 * for every pointer argument passed as NULL. obj is a DLPack producer and
 * capsule an unused DLPack capsule, both used as the non-NULL arguments. */
static PyObject* null_checks(PyObject* self, PyObject* args) {
  (void)self;
  PyObject *obj, *capsule;
  if (!PyArg_ParseTuple(args, "OO", &obj, &capsule)) return NULL;
  PyObject* out = PyDict_New();
  if (out == NULL) return NULL;
  void* m = (void*)1;
  int versioned = 7;
  DLDevice d;
  DLPackVersion v13 = {1, 3};
#define REC(name, failed) \
  if (record(out, name, failed) != 0) goto fail
  /* Never fail: nothing to report but "no crash, no exception". */
  api->free_managed(NULL);
  REC("free_managed(NULL)", 0);
  api->free_managed_versioned(NULL);
  REC("free_managed_versioned(NULL)", 0);
  DLManagedTensor no_deleter_legacy;
  memset(&no_deleter_legacy, 0, sizeof no_deleter_legacy);
  api->free_managed(&no_deleter_legacy);
  REC("free_managed(deleter NULL)", 0);
  DLManagedTensorVersioned no_deleter;
  memset(&no_deleter, 0, sizeof no_deleter);
  api->free_managed_versioned(&no_deleter);
  REC("free_managed_versioned(deleter NULL)", 0);

  REC("managed_from_object(obj NULL)", api->managed_from_object(NULL, NULL, v13, &m, &versioned) == -1);
  REC("managed_from_object(out NULL)", api->managed_from_object(obj, NULL, v13, NULL, &versioned) == -1);
  REC("managed_from_object(versioned NULL)", api->managed_from_object(obj, NULL, v13, &m, NULL) == -1);
  REC("device_of(obj NULL)", api->device_of(NULL, &d) == -1);
  REC("device_of(out NULL)", api->device_of(obj, NULL) == -1);
  REC("capsule_from_managed_versioned(NULL)", api->capsule_from_managed_versioned(NULL) == NULL);
  REC("capsule_from_managed(NULL)", api->capsule_from_managed(NULL) == NULL);
  REC("capsule_take(capsule NULL)", api->capsule_take(NULL, &versioned) == NULL);
  REC("capsule_take(versioned NULL)", api->capsule_take(capsule, NULL) == NULL);
  REC("tensor_from_managed(NULL, 1)", api->tensor_from_managed(NULL, 1) == NULL);
  REC("tensor_from_managed(NULL, 0)", api->tensor_from_managed(NULL, 0) == NULL);
#undef REC
  return out;
fail:
  Py_DECREF(out);
  return NULL;
}

/* --- the DLPack 1.3 C exchange API --------------------------------------------- */

static const DLPackExchangeAPI* exchange_of(PyObject* type) {
  if (!PyType_Check(type)) {
    PyErr_SetString(PyExc_TypeError, "expected a type");
    return NULL;
  }
  PyObject* cap = PyObject_GetAttrString(type, "__dlpack_c_exchange_api__");
  if (cap == NULL) return NULL;
  const DLPackExchangeAPI* x = PyCapsule_GetPointer(cap, DLPACK_EXCHANGE_API_CAPSULE_NAME);
  Py_DECREF(cap); /* the table is static: it outlives the capsule */
  if (x == NULL) return NULL;
  if (x->header.version.major != 1) {
    PyErr_Format(PyExc_BufferError, "exchange API major version %u, this probe knows 1",
                 (unsigned)x->header.version.major);
    return NULL;
  }
  return x;
}

/* exchange_header(type) -> dict of the table's header and which functions are set. */
static PyObject* exchange_header(PyObject* self, PyObject* type) {
  (void)self;
  const DLPackExchangeAPI* x = exchange_of(type);
  if (x == NULL) return NULL;
  return Py_BuildValue("{s:(II),s:O,s:O,s:O,s:O,s:O,s:O}", "version", (unsigned)x->header.version.major,
                       (unsigned)x->header.version.minor, "prev_api_null", x->header.prev_api ? Py_False : Py_True,
                       "managed_tensor_allocator", x->managed_tensor_allocator ? Py_True : Py_False,
                       "managed_tensor_from_py_object_no_sync",
                       x->managed_tensor_from_py_object_no_sync ? Py_True : Py_False,
                       "managed_tensor_to_py_object_no_sync",
                       x->managed_tensor_to_py_object_no_sync ? Py_True : Py_False,
                       "dltensor_from_py_object_no_sync", x->dltensor_from_py_object_no_sync ? Py_True : Py_False,
                       "current_work_stream", x->current_work_stream ? Py_True : Py_False);
}

/* exchange_cross(obj, src_type, dst_type): src's managed_tensor_from_py_object_no_sync
 * on obj, then dst's managed_tensor_to_py_object_no_sync (which steals the tensor). */
static PyObject* exchange_cross(PyObject* self, PyObject* args) {
  (void)self;
  PyObject *obj, *src_type, *dst_type;
  if (!PyArg_ParseTuple(args, "OOO", &obj, &src_type, &dst_type)) return NULL;
  const DLPackExchangeAPI* src = exchange_of(src_type);
  const DLPackExchangeAPI* dst = src ? exchange_of(dst_type) : NULL;
  if (dst == NULL) return NULL;
  DLManagedTensorVersioned* m = NULL;
  if (src->managed_tensor_from_py_object_no_sync(obj, &m) != 0) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "from_py failed without an exception");
    return NULL;
  }
  if (m == NULL) {
    PyErr_SetString(PyExc_SystemError, "from_py returned 0 but no tensor");
    return NULL;
  }
  void* out = NULL;
  if (dst->managed_tensor_to_py_object_no_sync(m, &out) != 0) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "to_py failed without an exception");
    return NULL;
  }
  if (out == NULL) {
    PyErr_SetString(PyExc_SystemError, "to_py returned 0 but no object");
    return NULL;
  }
  return (PyObject*)out;
}

/* exchange_to_py_bad_version(obj, src_type, dst_type): like exchange_cross,
 * but with the version major set to 2 before dst's to_py, which steals the
 * tensor: it must fail with an exception and have called the deleter. */
static PyObject* exchange_to_py_bad_version(PyObject* self, PyObject* args) {
  (void)self;
  PyObject *obj, *src_type, *dst_type;
  if (!PyArg_ParseTuple(args, "OOO", &obj, &src_type, &dst_type)) return NULL;
  const DLPackExchangeAPI* src = exchange_of(src_type);
  const DLPackExchangeAPI* dst = src ? exchange_of(dst_type) : NULL;
  if (dst == NULL) return NULL;
  DLManagedTensorVersioned* m = NULL;
  if (src->managed_tensor_from_py_object_no_sync(obj, &m) != 0) return NULL;
  m->version.major = 2;
  void* out = NULL;
  if (dst->managed_tensor_to_py_object_no_sync(m, &out) != 0) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "to_py failed without an exception");
    return NULL;
  }
  return (PyObject*)out;
}

/* exchange_managed(obj, type) -> dict: type's from_py on obj, fields, then the deleter. */
static PyObject* exchange_managed(PyObject* self, PyObject* args) {
  (void)self;
  PyObject *obj, *type;
  if (!PyArg_ParseTuple(args, "OO", &obj, &type)) return NULL;
  const DLPackExchangeAPI* x = exchange_of(type);
  if (x == NULL) return NULL;
  DLManagedTensorVersioned* m = NULL;
  int rc = x->managed_tensor_from_py_object_no_sync(obj, &m);
  if (rc != 0) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "from_py failed without an exception");
    return NULL;
  }
  PyObject* d = describe(&m->dl_tensor);
  PyObject* extra = d ? Py_BuildValue("{s:(II),s:K,s:O}", "version", (unsigned)m->version.major,
                                      (unsigned)m->version.minor, "flags", (unsigned long long)m->flags,
                                      "has_deleter", m->deleter ? Py_True : Py_False)
                      : NULL;
  if (extra == NULL || PyDict_Update(d, extra) != 0) Py_CLEAR(d);
  Py_XDECREF(extra);
  if (m->deleter) m->deleter(m);
  return d;
}

typedef struct {
  int calls;
  char kind[64];
  char message[256];
} set_error_ctx;

static void set_error(void* ctx, const char* kind, const char* message) {
  set_error_ctx* c = ctx;
  c->calls++;
  snprintf(c->kind, sizeof c->kind, "%s", kind ? kind : "(null)");
  snprintf(c->message, sizeof c->message, "%s", message ? message : "(null)");
}

/* exchange_alloc(alloc_type, to_type, shape, (code, bits, lanes), (device_type, device_id), ndim=None)
 * -> dict(rc, set_error_calls, kind, message, exception_set, obj): the allocator of
 * alloc_type's table with a prototype, its result handed to to_type's to_py. ndim
 * overrides len(shape) (e.g. -1). */
static PyObject* exchange_alloc(PyObject* self, PyObject* args) {
  (void)self;
  PyObject *alloc_type, *to_type, *shape_obj, *ndim_obj = Py_None;
  int code, bits, lanes, dev_type, dev_id;
  if (!PyArg_ParseTuple(args, "OOO(iii)(ii)|O", &alloc_type, &to_type, &shape_obj, &code, &bits, &lanes,
                        &dev_type, &dev_id, &ndim_obj))
    return NULL;
  const DLPackExchangeAPI* ax = exchange_of(alloc_type);
  const DLPackExchangeAPI* tx = ax ? exchange_of(to_type) : NULL;
  if (tx == NULL) return NULL;
  int64_t shape[64];
  Py_ssize_t n = PySequence_Size(shape_obj);
  if (n < 0) return NULL;
  if (n > 64) {
    PyErr_SetString(PyExc_ValueError, "at most 64 dims");
    return NULL;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject* it = PySequence_GetItem(shape_obj, i);
    if (it == NULL) return NULL;
    shape[i] = PyLong_AsLongLong(it);
    Py_DECREF(it);
    if (shape[i] == -1 && PyErr_Occurred()) return NULL;
  }
  DLTensor proto;
  memset(&proto, 0, sizeof proto);
  proto.device.device_type = (DLDeviceType)dev_type;
  proto.device.device_id = dev_id;
  proto.ndim = ndim_obj == Py_None ? (int32_t)n : (int32_t)PyLong_AsLong(ndim_obj);
  if (PyErr_Occurred()) return NULL;
  proto.dtype.code = (uint8_t)code;
  proto.dtype.bits = (uint8_t)bits;
  proto.dtype.lanes = (uint16_t)lanes;
  proto.shape = n > 0 ? shape : NULL;
  set_error_ctx ctx = {0, "", ""};
  DLManagedTensorVersioned* m = NULL;
  int rc = ax->managed_tensor_allocator(&proto, &m, &ctx, set_error);
  int exc_set = PyErr_Occurred() != NULL;
  PyErr_Clear();
  PyObject* obj = Py_None;
  int own_obj = 0;
  if (rc == 0 && m != NULL) {
    void* out = NULL;
    if (tx->managed_tensor_to_py_object_no_sync(m, &out) != 0) return NULL;
    obj = out;
    own_obj = 1;
  }
  PyObject* r = Py_BuildValue("{s:i,s:i,s:s,s:s,s:O,s:O,s:O}", "rc", rc, "set_error_calls", ctx.calls, "kind",
                              ctx.kind, "message", ctx.message, "exception_set", exc_set ? Py_True : Py_False,
                              "out_set", m != NULL ? Py_True : Py_False, "obj", obj);
  if (own_obj) Py_DECREF(obj);
  return r;
}

/* exchange_dltensor(obj, type) -> dict or None (when the table has no such function). */
static PyObject* exchange_dltensor(PyObject* self, PyObject* args) {
  (void)self;
  PyObject *obj, *type;
  if (!PyArg_ParseTuple(args, "OO", &obj, &type)) return NULL;
  const DLPackExchangeAPI* x = exchange_of(type);
  if (x == NULL) return NULL;
  if (x->dltensor_from_py_object_no_sync == NULL) Py_RETURN_NONE;
  DLTensor t;
  memset(&t, 0, sizeof t);
  if (x->dltensor_from_py_object_no_sync(obj, &t) != 0) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "dltensor failed without an exception");
    return NULL;
  }
  return describe(&t);
}

/* exchange_stream(type, device_type, device_id) -> stream pointer as an int (0 = NULL). */
static PyObject* exchange_stream(PyObject* self, PyObject* args) {
  (void)self;
  PyObject* type;
  int dev_type, dev_id;
  if (!PyArg_ParseTuple(args, "Oii", &type, &dev_type, &dev_id)) return NULL;
  const DLPackExchangeAPI* x = exchange_of(type);
  if (x == NULL) return NULL;
  void* s = (void*)0x1234; /* must be overwritten */
  if (x->current_work_stream((DLDeviceType)dev_type, dev_id, &s) != 0) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "current_work_stream failed without an exception");
    return NULL;
  }
  return PyLong_FromVoidPtr(s);
}

static PyMethodDef methods[] = {
    {"versions", versions, METH_NOARGS, NULL},
    {"header_size", header_size, METH_NOARGS, NULL},
    {"import_tensor", import_tensor, METH_VARARGS, NULL},
    {"import_legacy", import_legacy, METH_O, NULL},
    {"import_bad_version", import_bad_version, METH_O, NULL},
    {"exchange_to_py_bad_version", exchange_to_py_bad_version, METH_VARARGS, NULL},
    {"inspect", inspect, METH_VARARGS, NULL},
    {"sum_f64", sum_f64, METH_VARARGS, NULL},
    {"export_capsule", export_capsule, METH_VARARGS, NULL},
    {"take", take, METH_O, NULL},
    {"device_of", device_of, METH_O, NULL},
    {"is_cpu_accessible", is_cpu_accessible, METH_VARARGS, NULL},
    {"null_checks", null_checks, METH_VARARGS, NULL},
    {"exchange_header", exchange_header, METH_O, NULL},
    {"exchange_cross", exchange_cross, METH_VARARGS, NULL},
    {"exchange_managed", exchange_managed, METH_VARARGS, NULL},
    {"exchange_alloc", exchange_alloc, METH_VARARGS, NULL},
    {"exchange_dltensor", exchange_dltensor, METH_VARARGS, NULL},
    {"exchange_stream", exchange_stream, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "capi_probe",
                                        "Uses godlpack only through its public C headers.", -1, methods,
                                        NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_capi_probe(void) {
  api = godlpack_import_capi();
  if (api == NULL) return NULL;
  return PyModule_Create(&module_def);
}

/* DLPack 1.3 C exchange API: the table our Tensor type offers as
 * __dlpack_c_exchange_api__, and its use by from_dlpack on other types. */
#include <string.h>
#include "gdl.h"

static void report(void* ctx, void (*set_error)(void*, const char*, const char*), const char* kind,
                   const char* msg) {
  if (set_error != NULL) set_error(ctx, kind, msg);
}

/* Allocates a compact CPU tensor shaped like prototype (64-byte aligned). */
static int ex_alloc(DLTensor* proto, DLManagedTensorVersioned** out, void* ctx,
                    void (*set_error)(void*, const char*, const char*)) {
  if (proto == NULL || out == NULL) {
    report(ctx, set_error, "ValueError", "godlpack allocator: NULL prototype or out");
    return -1;
  }
  if (proto->device.device_type != kDLCPU) {
    report(ctx, set_error, "BufferError", "godlpack allocates CPU memory only");
    return -1;
  }
  if (proto->ndim < 0 || proto->ndim > 64 || (proto->ndim > 0 && proto->shape == NULL) ||
      proto->dtype.bits == 0 || proto->dtype.lanes == 0) {
    report(ctx, set_error, "ValueError", "godlpack allocator: invalid prototype (ndim, shape or dtype)");
    return -1;
  }
  uint64_t bits = (uint64_t)proto->dtype.bits * proto->dtype.lanes, n = 1;
  for (int32_t i = 0; i < proto->ndim; i++) {
    if (proto->shape[i] < 0 || __builtin_mul_overflow(n, (uint64_t)proto->shape[i], &n)) {
      report(ctx, set_error, "ValueError", "godlpack allocator: negative or overflowing shape");
      return -1;
    }
  }
  if (n > (UINT64_MAX - 7) / bits) {
    report(ctx, set_error, "MemoryError", "godlpack allocator: size overflows");
    return -1;
  }
  void* data;
  gdl_owner* owner = gdl_owner_alloc((n * bits + 7) / 8, &data);
  if (owner == NULL) {
    report(ctx, set_error, "MemoryError", "godlpack allocator: out of memory");
    return -1;
  }
  DLTensor v = *proto;
  v.data = data;
  v.strides = NULL; /* compact; the export fills them in */
  v.byte_offset = 0;
  *out = gdl_export_versioned(&v, 0, owner);
  gdl_owner_decref(owner); /* the export holds its own reference */
  if (*out == NULL) {
    report(ctx, set_error, "MemoryError", "godlpack allocator: out of memory");
    return -1;
  }
  return 0;
}

static int check_tensor(void* obj) {
  if (obj != NULL && GdlTensor_Check((PyObject*)obj)) return 0;
  PyErr_SetString(PyExc_TypeError, "godlpack exchange API: object is not a godlpack.Tensor");
  return -1;
}

static int ex_from_py(void* obj, DLManagedTensorVersioned** out) {
  if (check_tensor(obj) != 0) return -1;
  if (out == NULL) {
    PyErr_SetString(PyExc_ValueError, "godlpack exchange API: NULL out");
    return -1;
  }
  GdlTensor* t = obj;
  *out = gdl_tensor_export(t, &t->view, 1, t->flags & DLPACK_FLAG_BITMASK_READ_ONLY);
  return *out == NULL ? -1 : 0;
}

static int ex_to_py(DLManagedTensorVersioned* m, void** out) {
  if (m == NULL) {
    PyErr_SetString(PyExc_BufferError, "godlpack exchange API: NULL managed tensor");
    return -1;
  }
  if (out == NULL) { /* the tensor is stolen all the same */
    if (m->deleter) m->deleter(m);
    PyErr_SetString(PyExc_ValueError, "godlpack exchange API: NULL out_py_object");
    return -1;
  }
  PyObject* r = gdl_tensor_from_managed(m, 1);
  if (r == NULL) return -1;
  *out = r;
  return 0;
}

static int ex_dltensor(void* obj, DLTensor* out) {
  if (check_tensor(obj) != 0) return -1;
  if (out == NULL) {
    PyErr_SetString(PyExc_ValueError, "godlpack exchange API: NULL out");
    return -1;
  }
  *out = ((GdlTensor*)obj)->view; /* non-owning: valid while obj lives */
  return 0;
}

static int ex_stream(DLDeviceType type, int32_t id, void** out) {
  (void)type;
  (void)id;
  if (out == NULL) {
    PyErr_SetString(PyExc_ValueError, "godlpack exchange API: NULL out_current_stream");
    return -1;
  }
  *out = NULL; /* godlpack launches no device work: the default stream */
  return 0;
}

static DLPackExchangeAPI exchange_api = {
    {{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION}, NULL}, ex_alloc, ex_from_py, ex_to_py, ex_dltensor,
    ex_stream};

const DLPackExchangeAPI* gdl_exchange_api(void) { return &exchange_api; }

/* --- consumer side ---------------------------------------------------------- */

/* One-entry cache of the last type looked up, keyed by its version tag
 * (which changes whenever the type's attributes do). */
static PyTypeObject* cached_type;
static unsigned int cached_tag;
static const DLPackExchangeAPI* cached_api;
static int cached_guard;
static PyObject *s_exchange_attr, *s_is_conj, *s_is_neg, *s_requires_grad;

/* PyTorch's table exports tensors that its __dlpack__ refuses: with the
 * conjugate bit set (the values would be silently wrong) or requiring grad;
 * those take the __dlpack__ path, so both paths agree. Tensors with the
 * negative bit come out with the wrong sign from both paths, so they are
 * refused. Used for types having is_conj/is_neg. Returns 1 to use the table,
 * 0 to fall back (also when the object cannot answer), -1 with BufferError. */
static int table_safe_for(PyObject* obj) {
  PyObject* names[] = {s_is_neg, s_is_conj};
  for (int i = 0; i < 2; i++) {
    PyObject* r = PyObject_CallMethodNoArgs(obj, names[i]);
    int set = r == NULL ? -1 : PyObject_IsTrue(r);
    Py_XDECREF(r);
    if (set < 0) { /* a subclass that cannot answer: let __dlpack__ decide */
      PyErr_Clear();
      return 0;
    }
    if (set && i == 0) {
      PyErr_SetString(PyExc_BufferError,
                      "the tensor has PyTorch's negative bit set, which DLPack cannot carry (its export "
                      "would have the wrong sign); call .resolve_neg() first");
      return -1;
    }
    if (set) return 0;
  }
  PyObject* g = PyObject_GetAttr(obj, s_requires_grad);
  int bad = g == NULL ? -1 : PyObject_IsTrue(g);
  Py_XDECREF(g);
  if (bad < 0) PyErr_Clear();
  return bad == 0;
}

static const DLPackExchangeAPI* lookup_api(PyTypeObject* tp, int* err, int* guard) {
  *err = 0;
  if (tp == cached_type && (tp->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG) && tp->tp_version_tag == cached_tag) {
    *guard = cached_guard;
    return cached_api;
  }
  const DLPackExchangeAPI* api = NULL;
  PyObject* cap = PyObject_GetAttr((PyObject*)tp, s_exchange_attr);
  if (cap == NULL) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
      *err = 1;
      return NULL;
    }
    PyErr_Clear();
  } else {
    if (PyCapsule_IsValid(cap, DLPACK_EXCHANGE_API_CAPSULE_NAME)) {
      api = PyCapsule_GetPointer(cap, DLPACK_EXCHANGE_API_CAPSULE_NAME);
      /* Only a 1.x table has the layout we know; the function must exist. */
      if (api != NULL && (api->header.version.major != 1 || api->managed_tensor_from_py_object_no_sync == NULL))
        api = NULL;
    }
    Py_DECREF(cap);
  }
  *guard = api != NULL && PyObject_HasAttr((PyObject*)tp, s_is_conj) && PyObject_HasAttr((PyObject*)tp, s_is_neg);
  if (tp->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG) {
    Py_INCREF(tp); /* keeps the cached pointer from being reused by another type */
    Py_XSETREF(cached_type, tp);
    cached_tag = tp->tp_version_tag;
    cached_api = api;
    cached_guard = *guard;
  }
  return api;
}

int gdl_exchange_managed_from_object(PyObject* obj, DLManagedTensorVersioned** out) {
  PyTypeObject* tp = Py_TYPE(obj);
  if (tp == &PyCapsule_Type || tp == &GdlTensor_Type) return 0;
  int err, guard;
  const DLPackExchangeAPI* api = lookup_api(tp, &err, &guard);
  if (err) return -1;
  if (api == NULL) return 0;
  if (guard) {
    int safe = table_safe_for(obj);
    if (safe <= 0) return safe;
  }
  DLManagedTensorVersioned* m = NULL;
  if (api->managed_tensor_from_py_object_no_sync(obj, &m) != 0) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_BufferError, "exchange API export failed");
    return -1;
  }
  if (m == NULL) {
    PyErr_SetString(PyExc_BufferError, "exchange API returned no tensor");
    return -1;
  }
  if (m->version.major == 1 && !gdl_cpu_accessible(m->dl_tensor.device.device_type)) {
    /* Device memory needs the stream handshake of __dlpack__: give it back. */
    if (m->deleter) m->deleter(m);
    return 0;
  }
  *out = m;
  return 1;
}

int gdl_exchange_init(PyTypeObject* type) {
  s_exchange_attr = PyUnicode_InternFromString("__dlpack_c_exchange_api__");
  s_is_conj = PyUnicode_InternFromString("is_conj");
  s_is_neg = PyUnicode_InternFromString("is_neg");
  s_requires_grad = PyUnicode_InternFromString("requires_grad");
  if (!s_exchange_attr || !s_is_conj || !s_is_neg || !s_requires_grad) return -1;
  PyObject* cap = PyCapsule_New(&exchange_api, DLPACK_EXCHANGE_API_CAPSULE_NAME, NULL);
  if (cap == NULL) return -1;
  int r = PyDict_SetItem(type->tp_dict, s_exchange_attr, cap);
  Py_DECREF(cap);
  PyType_Modified(type);
  return r;
}

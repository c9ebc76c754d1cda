/* DLPack 1.3 C exchange API, producer half: the table our Tensor type offers
 * other consumers as __dlpack_c_exchange_api__. */
#include <string.h>
#include "exchange.h"

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
  if (proto->device.device_type != kDLCPU || proto->device.device_id != 0) {
    report(ctx, set_error, "BufferError", "godlpack allocates CPU memory (device (1, 0)) only");
    return -1;
  }
  if (proto->ndim < 0 || proto->ndim > 64 || (proto->ndim > 0 && proto->shape == NULL) ||
      proto->dtype.bits == 0 || proto->dtype.lanes == 0) {
    report(ctx, set_error, "ValueError", "godlpack allocator: invalid prototype (ndim, shape or dtype)");
    return -1;
  }
  /* Nothing godlpack's import would then refuse: vectors (lanes > 1) fill whole bytes. */
  if (!gdl_dtype_known(proto->dtype.code, proto->dtype.bits) ||
      (proto->dtype.lanes > 1 && (uint32_t)proto->dtype.bits * proto->dtype.lanes % 8 != 0)) {
    report(ctx, set_error, "BufferError",
           "godlpack allocator: unsupported dtype (unknown code/bits, or vector lanes that are not whole bytes)");
    return -1;
  }
  uint64_t nbytes;
  switch (gdl_compact_nbytes(proto->shape, proto->ndim, proto->dtype, &nbytes)) {
    case GDL_SHAPE_OK:
      break;
    case GDL_SPAN_BYTES:
      report(ctx, set_error, "MemoryError", "godlpack allocator: size overflows");
      return -1;
    default:
      report(ctx, set_error, "ValueError", "godlpack allocator: negative or overflowing shape");
      return -1;
  }
  void* data;
  gdl_owner* owner = gdl_owner_alloc(nbytes, &data);
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
  GdlTensor* t = GDL_AS(GdlTensor, (PyObject*)obj);
  /* Our current_work_stream names the legacy stream: the data must be ready there. */
  if (gdl_stream_sync(t->view.device, t->stream, 1) != 0) return -1;
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
  GdlTensor* t = GDL_AS(GdlTensor, (PyObject*)obj);
  if (gdl_stream_sync(t->view.device, t->stream, 1) != 0) return -1; /* as ex_from_py */
  *out = t->view; /* non-owning: valid while obj lives */
  return 0;
}

static int ex_stream(DLDeviceType type, int32_t id, void** out) {
  (void)type;
  (void)id;
  if (out == NULL) {
    PyErr_SetString(PyExc_ValueError, "godlpack exchange API: NULL out_current_stream");
    return -1;
  }
  /* godlpack has no current stream of its own: its exports through this
   * table are made ready on the legacy default stream (NULL). */
  *out = NULL;
  return 0;
}

static DLPackExchangeAPI exchange_api = {
    {{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION}, NULL}, ex_alloc, ex_from_py, ex_to_py, ex_dltensor,
    ex_stream};

int gdl_export_table_add(PyTypeObject* type) {
  PyObject* cap = PyCapsule_New(&exchange_api, DLPACK_EXCHANGE_API_CAPSULE_NAME, NULL);
  if (cap == NULL) return -1;
#ifdef Py_LIMITED_API
  int r = PyObject_SetAttrString((PyObject*)type, "__dlpack_c_exchange_api__", cap); /* a heap type */
#else
  int r = PyDict_SetItemString(type->tp_dict, "__dlpack_c_exchange_api__", cap);
#endif
  Py_DECREF(cap);
  PyType_Modified(type);
  return r;
}

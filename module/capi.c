/* godlpack._C_API: the helper function table of include/godlpack/godlpack.h. */
#include "exchange.h"
#include "module.h"

static void c_free_managed(DLManagedTensor* m) { gdl_managed_free(m, 0); }

static void c_free_managed_versioned(DLManagedTensorVersioned* m) { gdl_managed_free(m, 1); }

static int c_is_cpu_accessible(DLDevice d) { return gdl_cpu_accessible(d.device_type); }

static int c_managed_from_object(PyObject* obj, PyObject* stream, DLPackVersion max_version, void** out,
                                 int* versioned) {
  if (obj == NULL || out == NULL || versioned == NULL) {
    PyErr_SetString(PyExc_ValueError, "godlpack C API: NULL argument");
    return -1;
  }
  *out = NULL;
  int want_versioned = max_version.major >= 1;
  if (GdlTensor_Check(obj) && (stream == NULL || stream == Py_None)) {
    /* Our own tensor: a fresh export, no Python call (a stream goes through
     * __dlpack__, which checks it). */
    GdlTensor* t = (GdlTensor*)obj;
    /* As __dlpack__(stream=None): the consumer uses the legacy default stream. */
    if (gdl_stream_sync(t->view.device, t->stream, 1) != 0) return -1;
    *out = gdl_tensor_export(t, &t->view, want_versioned, t->flags & DLPACK_FLAG_BITMASK_READ_ONLY);
    if (*out == NULL) return -1;
    *versioned = want_versioned;
    return 0;
  }
  PyObject* mv = NULL;
  if (want_versioned) {
    mv = Py_BuildValue("(II)", (unsigned)max_version.major, (unsigned)max_version.minor);
    if (mv == NULL) return -1;
  }
  *out = gdl_managed_from_object(obj, stream, mv, NULL, NULL, versioned);
  Py_XDECREF(mv);
  return *out == NULL ? -1 : 0;
}

static int c_device_of(PyObject* obj, DLDevice* out) {
  if (obj == NULL || out == NULL) {
    PyErr_SetString(PyExc_ValueError, "godlpack C API: NULL argument");
    return -1;
  }
  if (GdlTensor_Check(obj)) {
    *out = ((GdlTensor*)obj)->view.device;
    return 0;
  }
  PyObject* d = PyObject_CallMethodNoArgs(obj, GDL.s_dlpack_device);
  if (d == NULL) return -1;
  int r = gdl_parse_device(d, out);
  Py_DECREF(d);
  return r;
}

static PyObject* c_capsule_versioned(DLManagedTensorVersioned* m) {
  if (m == NULL) {
    PyErr_SetString(PyExc_ValueError, "godlpack C API: NULL managed tensor");
    return NULL;
  }
  return gdl_capsule_versioned(m);
}

static PyObject* c_capsule_legacy(DLManagedTensor* m) {
  if (m == NULL) {
    PyErr_SetString(PyExc_ValueError, "godlpack C API: NULL managed tensor");
    return NULL;
  }
  return gdl_capsule_legacy(m);
}

static void* c_capsule_take(PyObject* capsule, int* versioned) {
  if (capsule == NULL || versioned == NULL) {
    PyErr_SetString(PyExc_ValueError, "godlpack C API: NULL argument");
    return NULL;
  }
  return gdl_capsule_take(capsule, versioned);
}

static PyObject* c_tensor_from_managed(void* m, int versioned) {
  if (m == NULL) {
    PyErr_SetString(PyExc_BufferError, "godlpack C API: NULL managed tensor");
    return NULL;
  }
  return gdl_tensor_from_managed(m, versioned != 0);
}

static const GodlpackCAPI capi = {
    .abi_version = GODLPACK_CAPI_ABI_VERSION,
    .size = sizeof(GodlpackCAPI),
    .api_version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION},
    .max_import_major = GDL_MAX_IMPORT_MAJOR,
    .free_managed = c_free_managed,
    .free_managed_versioned = c_free_managed_versioned,
    .is_cpu_accessible = c_is_cpu_accessible,
    .managed_from_object = c_managed_from_object,
    .device_of = c_device_of,
    .capsule_from_managed_versioned = c_capsule_versioned,
    .capsule_from_managed = c_capsule_legacy,
    .capsule_take = c_capsule_take,
    .tensor_from_managed = c_tensor_from_managed,
};

PyObject* gdl_capi_capsule(void) {
  /* Published as godlpack._C_API by the package's __init__.py. */
  return PyCapsule_New((void*)&capi, GODLPACK_CAPI_CAPSULE, NULL);
}

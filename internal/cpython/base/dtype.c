/* dtype names (tables_gen.c), interned once so that .dtype and repr cost no
 * allocation. */
#include "base.h"

static PyObject* names[GDL_NUM_DTYPES];

int gdl_dtype_init(void) {
  for (int i = 0; i < GDL_NUM_DTYPES; i++) {
    if (names[i] == NULL && (names[i] = PyUnicode_InternFromString(gdl_dtypes[i].name)) == NULL) return -1;
  }
  return 0;
}

/* A vector (lanes > 1) is named by its lanes' dtype, GDL_LANES_SEPARATOR
 * and the lane count: float32x4, float4_e2m1fnx2 (as Go's DType.String). */
PyObject* gdl_dtype_name(DLDataType dt) {
  if (dt.lanes >= 1) {
    for (int i = 0; i < GDL_NUM_DTYPES; i++) {
      if (gdl_dtypes[i].code != dt.code || gdl_dtypes[i].bits != dt.bits) continue;
      if (dt.lanes == 1) return Py_NewRef(names[i]);
      return PyUnicode_FromFormat("%U" GDL_LANES_SEPARATOR "%d", names[i], (int)dt.lanes);
    }
  }
  return PyUnicode_FromFormat("dtype(code=%d, bits=%d, lanes=%d)", dt.code, dt.bits, dt.lanes);
}

int gdl_refuse_vector(PyObject* exc, DLDataType dt, const char* what) {
  PyObject* name = gdl_dtype_name(dt);
  if (name == NULL) return -1;
  PyErr_Format(exc, "%s: vector dtype %U holds %d values per element, which godlpack carries as bytes, unread", what,
               name, (int)dt.lanes);
  Py_DECREF(name);
  return -1;
}

/* dlpack_info(): versions, dtypes (and how vectors of them are named) and
 * device types, from the tables alone (no Go call, so it works in a fork
 * child too). */
PyObject* gdl_dlpack_info(PyObject* mod, PyObject* unused) {
  PyObject* dtypes = PyList_New(GDL_NUM_DTYPES);
  PyObject* devices = PyDict_New();
  for (int i = 0; dtypes && i < GDL_NUM_DTYPES; i++) PyList_SET_ITEM(dtypes, i, Py_NewRef(names[i]));
  for (int i = 0; devices && i < GDL_NUM_DEVICES; i++) {
    PyObject* v = PyLong_FromLong(gdl_devices[i].type);
    if (v == NULL || PyDict_SetItemString(devices, gdl_devices[i].name, v) < 0) Py_CLEAR(devices);
    Py_XDECREF(v);
  }
  PyObject* r = NULL;
  if (dtypes && devices) {
    r = Py_BuildValue("{s:(ii),s:(ii),s:i,s:O,s:s,s:O}", "api_version", DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION,
                      "max_version", GDL_MAX_IMPORT_MAJOR, 255, "abi_version", GODLPACK_CAPI_ABI_VERSION, "dtypes",
                      dtypes, "vector_dtypes", "{dtype}" GDL_LANES_SEPARATOR "{lanes}", "device_types", devices);
  }
  Py_XDECREF(dtypes);
  Py_XDECREF(devices);
  return r;
}

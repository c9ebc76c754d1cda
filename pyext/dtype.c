/* dtype names (tables_gen.c), interned once so that .dtype and repr cost no
 * allocation. */
#include "gdl.h"

static PyObject* names[GDL_NUM_DTYPES];

int gdl_dtype_init(void) {
  for (int i = 0; i < GDL_NUM_DTYPES; i++) {
    if (names[i] == NULL && (names[i] = PyUnicode_InternFromString(gdl_dtypes[i].name)) == NULL) return -1;
  }
  return 0;
}

PyObject* gdl_dtype_name(DLDataType dt) {
  if (dt.lanes == 1) {
    for (int i = 0; i < GDL_NUM_DTYPES; i++) {
      if (gdl_dtypes[i].code == dt.code && gdl_dtypes[i].bits == dt.bits) return Py_NewRef(names[i]);
    }
  }
  return PyUnicode_FromFormat("dtype(code=%d, bits=%d, lanes=%d)", dt.code, dt.bits, dt.lanes);
}

/* dlpack_info(): versions, dtypes and device types, from the tables alone
 * (no Go call, so it works in a fork child too). */
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
    r = Py_BuildValue("{s:(ii),s:(ii),s:i,s:O,s:O}", "api_version", DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION,
                      "max_version", GDL_MAX_IMPORT_MAJOR, 255, "abi_version", GODLPACK_CAPI_ABI_VERSION, "dtypes",
                      dtypes, "device_types", devices);
  }
  Py_XDECREF(dtypes);
  Py_XDECREF(devices);
  return r;
}

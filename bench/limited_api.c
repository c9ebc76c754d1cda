/* The limited API's cost on the access patterns of godlpack's hot paths: item
 * reads and shape-tuple building with the full API's macros vs the limited
 * API's functions (bench/limited_api.py builds and times it). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
/* sum of the sizes of a tuple's items, read with the macro (full API) */
static PyObject* macro_read(PyObject* self, PyObject* t) {
  Py_ssize_t n = PyTuple_GET_SIZE(t), s = 0;
  for (Py_ssize_t i = 0; i < n; i++) s += (Py_ssize_t)PyTuple_GET_ITEM(t, i) & 1;
  return PyLong_FromSsize_t(s);
}
/* the same with the functions the limited API offers */
static PyObject* func_read(PyObject* self, PyObject* t) {
  Py_ssize_t n = PyTuple_Size(t), s = 0;
  for (Py_ssize_t i = 0; i < n; i++) s += (Py_ssize_t)PyTuple_GetItem(t, i) & 1;
  return PyLong_FromSsize_t(s);
}
/* building a shape tuple of 4 ints: SET_ITEM macro vs SetItem function */
static PyObject* macro_build(PyObject* self, PyObject* unused) {
  PyObject* t = PyTuple_New(4);
  for (int i = 0; i < 4; i++) PyTuple_SET_ITEM(t, i, PyLong_FromLong(i + 1));
  return t;
}
static PyObject* func_build(PyObject* self, PyObject* unused) {
  PyObject* t = PyTuple_New(4);
  for (int i = 0; i < 4; i++) PyTuple_SetItem(t, i, PyLong_FromLong(i + 1));
  return t;
}
static PyMethodDef m[] = {{"macro_read", macro_read, METH_O, ""}, {"func_read", func_read, METH_O, ""},
  {"macro_build", macro_build, METH_NOARGS, ""}, {"func_build", func_build, METH_NOARGS, ""}, {0}};
static struct PyModuleDef d = {PyModuleDef_HEAD_INIT, "lim", "", -1, m};
PyMODINIT_FUNC PyInit_lim(void) { return PyModule_Create(&d); }

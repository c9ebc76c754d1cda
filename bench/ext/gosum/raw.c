/* Hand-written entry points for the cost breakdown: no pyext dispatch, one
 * cgo call each. raw_dl_sum imports the array the way pyext and nanobind do
 * (__dlpack__(max_version=(1, 0)), then the deleter); raw_buf_sum uses the
 * buffer protocol. Errors are reported, but only float64 C-contiguous CPU
 * arrays are meant to come here. */
#include <Python.h>
#include "godlpack/dlpack.h"
#include "_cgo_export.h"

static PyObject* raw_c_noop(PyObject* self, PyObject* unused) { Py_RETURN_NONE; }

static PyObject* raw_go_noop(PyObject* self, PyObject* unused) {
  gosumNoop();
  Py_RETURN_NONE;
}

static PyObject* raw_buf_sum(PyObject* self, PyObject* arg) {
  Py_buffer b;
  if (PyObject_GetBuffer(arg, &b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return NULL;
  if (b.itemsize != 8 || b.format == NULL || strcmp(b.format, "d") != 0) {
    PyBuffer_Release(&b);
    PyErr_SetString(PyExc_BufferError, "raw_buf_sum: want float64");
    return NULL;
  }
  double s = gosumSum((double*)b.buf, (long long)(b.len / 8));
  PyBuffer_Release(&b);
  return PyFloat_FromDouble(s);
}

static PyObject *s_dlpack, *kw_max_version, *v10;

static PyObject* raw_dl_sum(PyObject* self, PyObject* arg) {
  PyObject* argv[2] = {arg, v10};
  PyObject* cap = PyObject_VectorcallMethod(s_dlpack, argv, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, kw_max_version);
  if (cap == NULL) return NULL;
  DLManagedTensorVersioned* m = PyCapsule_GetPointer(cap, "dltensor_versioned");
  if (m == NULL || PyCapsule_SetName(cap, "used_dltensor_versioned") < 0) {
    Py_DECREF(cap);
    return NULL;
  }
  Py_DECREF(cap);
  const DLTensor* t = &m->dl_tensor;
  long long n = 1;
  for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
  int ok = t->dtype.code == kDLFloat && t->dtype.bits == 64 && t->dtype.lanes == 1 && t->device.device_type == kDLCPU;
  double s = ok ? gosumSum((double*)((char*)t->data + t->byte_offset), n) : 0;
  if (m->deleter) m->deleter(m);
  if (!ok) {
    PyErr_SetString(PyExc_BufferError, "raw_dl_sum: want float64 on the CPU");
    return NULL;
  }
  return PyFloat_FromDouble(s);
}

static PyMethodDef raw_methods[] = {
    {"raw_c_noop", raw_c_noop, METH_NOARGS, "C only: the floor of a call."},
    {"raw_go_noop", raw_go_noop, METH_NOARGS, "C, then one cgo call to an empty Go function."},
    {"raw_buf_sum", raw_buf_sum, METH_O, "Buffer protocol, then one cgo call to sum."},
    {"raw_dl_sum", raw_dl_sum, METH_O, "__dlpack__(max_version=(1, 0)), one cgo call to sum, the deleter."},
    {NULL, NULL, 0, NULL}};

int gosum_add_raw(PyObject* m) {
  s_dlpack = PyUnicode_InternFromString("__dlpack__");
  kw_max_version = Py_BuildValue("(s)", "max_version");
  v10 = Py_BuildValue("(ii)", 1, 0);
  if (s_dlpack == NULL || kw_max_version == NULL || v10 == NULL) return -1;
  return PyModule_AddFunctions(m, raw_methods);
}

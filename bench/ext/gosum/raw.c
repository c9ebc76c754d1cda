/* Hand-written entry points for the cost breakdown: no pyext dispatch, one
 * cgo call each. raw_dl*_sum import the array the way pyext and nanobind do
 * (__dlpack__, then the deleter), adding pyext's Go steps one at a time;
 * raw_buf_sum uses the buffer protocol. Only float64 C-contiguous CPU arrays
 * are meant to come here (others raise BufferError). */
#include <string.h>
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

/* __dlpack__(max_version=(1, 0)) (versioned) or __dlpack__() (legacy, as
 * nanobind asks for read-only arguments), then step(m, data, n) in Go. */
enum { SUM, VALIDATE_SUM, REFLECT_SUM, REFLECT_SLICE, REFLECT_CALL };
static PyObject* dl_sum(PyObject* arg, int versioned, int step) {
  PyObject* argv[2] = {arg, v10};
  PyObject* cap = PyObject_VectorcallMethod(s_dlpack, argv, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                            versioned ? kw_max_version : NULL);
  if (cap == NULL) return NULL;
  void* m = PyCapsule_GetPointer(cap, versioned ? "dltensor_versioned" : "dltensor");
  if (m == NULL || PyCapsule_SetName(cap, versioned ? "used_dltensor_versioned" : "used_dltensor") < 0) {
    Py_DECREF(cap);
    return NULL;
  }
  Py_DECREF(cap);
  const DLTensor* t = versioned ? &((DLManagedTensorVersioned*)m)->dl_tensor : &((DLManagedTensor*)m)->dl_tensor;
  long long n = 1;
  for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
  int ok = t->dtype.code == kDLFloat && t->dtype.bits == 64 && t->dtype.lanes == 1 && t->device.device_type == kDLCPU;
  double s = 0;
  if (ok) {
    if (step == VALIDATE_SUM) s = gosumValidateSum(m);
    else if (step >= REFLECT_SUM) s = gosumReflectSum(m, step - REFLECT_SUM);
    else s = gosumSum((double*)((char*)t->data + t->byte_offset), n);
  }
  if (versioned && ((DLManagedTensorVersioned*)m)->deleter) ((DLManagedTensorVersioned*)m)->deleter(m);
  if (!versioned && ((DLManagedTensor*)m)->deleter) ((DLManagedTensor*)m)->deleter(m);
  if (!ok) {
    PyErr_SetString(PyExc_BufferError, "raw dlpack sum: want float64 on the CPU");
    return NULL;
  }
  return PyFloat_FromDouble(s);
}

static PyObject* raw_dl_sum(PyObject* self, PyObject* arg) { return dl_sum(arg, 1, SUM); }
static PyObject* raw_dl0_sum(PyObject* self, PyObject* arg) { return dl_sum(arg, 0, SUM); }
static PyObject* raw_dlv_sum(PyObject* self, PyObject* arg) { return dl_sum(arg, 1, VALIDATE_SUM); }
static PyObject* raw_dlr_sum(PyObject* self, PyObject* arg) { return dl_sum(arg, 1, REFLECT_SUM); }
static PyObject* raw_dlrs_sum(PyObject* self, PyObject* arg) { return dl_sum(arg, 1, REFLECT_SLICE); }
static PyObject* raw_dlrc_sum(PyObject* self, PyObject* arg) { return dl_sum(arg, 1, REFLECT_CALL); }

static PyMethodDef raw_methods[] = {
    {"raw_c_noop", raw_c_noop, METH_NOARGS, "C only: the floor of a call."},
    {"raw_go_noop", raw_go_noop, METH_NOARGS, "C, then one cgo call to an empty Go function."},
    {"raw_buf_sum", raw_buf_sum, METH_O, "Buffer protocol, then one cgo call to sum."},
    {"raw_dl_sum", raw_dl_sum, METH_O, "__dlpack__(max_version=(1, 0)), one cgo call to sum, the deleter."},
    {"raw_dl0_sum", raw_dl0_sum, METH_O, "raw_dl_sum with a legacy capsule (__dlpack__() without arguments)."},
    {"raw_dlv_sum", raw_dlv_sum, METH_O, "raw_dl_sum, Go validating the tensor again first."},
    {"raw_dlr_sum", raw_dlr_sum, METH_O, "raw_dlv_sum, with pyext's reflect slice and reflect.Call."},
    {"raw_dlrs_sum", raw_dlrs_sum, METH_O, "raw_dlv_sum, with pyext's reflect slice only."},
    {"raw_dlrc_sum", raw_dlrc_sum, METH_O, "raw_dlv_sum, with reflect.Call only."},
    {NULL, NULL, 0, NULL}};

int gosum_add_raw(PyObject* m) {
  s_dlpack = PyUnicode_InternFromString("__dlpack__");
  kw_max_version = Py_BuildValue("(s)", "max_version");
  v10 = Py_BuildValue("(ii)", 1, 0);
  if (s_dlpack == NULL || kw_max_version == NULL || v10 == NULL) return -1;
  return PyModule_AddFunctions(m, raw_methods);
}

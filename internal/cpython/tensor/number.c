/* float(t), int(t), complex(t) and operator.index(t) of a 0-d tensor, as
 * NumPy's scalars convert: through the element's Python value (tolist). Other
 * tensors are refused with TypeError rather than guessed at. bool(t) is
 * NumPy's: the one element's truth, ValueError for none or several. An
 * element of a vector dtype (lanes > 1) holds several values, as a NumPy
 * array does: TypeError for the conversions, ValueError for bool. */
#include <stdio.h>
#include "tensor.h"

/* The element of a 0-d tensor as a Python scalar; NULL with TypeError else. */
static PyObject* scalar_of(PyObject* self, const char* what) {
  GdlTensor* t = GDL_AS(GdlTensor, self);
  if (t->view.ndim != 0) {
    PyErr_Format(PyExc_TypeError, "only 0-d tensors can be converted to Python %s, not a %d-d tensor", what,
                 (int)t->view.ndim);
    return NULL;
  }
  if (t->view.dtype.lanes > 1) {
    char msg[64];
    snprintf(msg, sizeof msg, "no conversion to Python %s", what);
    gdl_refuse_vector(PyExc_TypeError, t->view.dtype, msg);
    return NULL;
  }
  return gdl_tolist(self, NULL);
}

static PyObject* number_float(PyObject* self) {
  PyObject* v = scalar_of(self, "float");
  if (v == NULL) return NULL;
  PyObject* r = PyNumber_Float(v);
  Py_DECREF(v);
  return r;
}

static PyObject* number_int(PyObject* self) {
  PyObject* v = scalar_of(self, "int");
  if (v == NULL) return NULL;
  PyObject* r = PyNumber_Long(v);
  Py_DECREF(v);
  return r;
}

PyObject* gdl_number_complex(PyObject* self, PyObject* unused) {
  (void)unused;
  PyObject* v = scalar_of(self, "complex");
  if (v == NULL) return NULL;
  PyObject* r = PyObject_CallOneArg((PyObject*)&PyComplex_Type, v);
  Py_DECREF(v);
  return r;
}

static int number_bool(PyObject* self) {
  GdlTensor* t = GDL_AS(GdlTensor, self);
  int empty = 0, many = 0;
  for (int32_t i = 0; i < t->view.ndim; i++) {
    empty |= t->view.shape[i] == 0;
    many |= t->view.shape[i] > 1;
  }
  if (empty || many) {
    PyErr_SetString(PyExc_ValueError, empty ? "the truth value of an empty tensor is ambiguous; use t.size > 0"
                                            : "the truth value of a tensor with more than one element is ambiguous");
    return -1;
  }
  if (t->view.dtype.lanes > 1)
    return gdl_refuse_vector(PyExc_ValueError, t->view.dtype, "the truth value of one element is ambiguous");
  PyObject* v = gdl_tolist(self, NULL); /* nested one-element lists for ndim > 0 */
  if (v == NULL) return -1;
  PyObject* e = v;
  for (int32_t i = 0; i < t->view.ndim; i++) e = PyList_GET_ITEM(e, 0);
  int r = PyObject_IsTrue(e);
  Py_DECREF(v);
  return r;
}

/* operator.index: integer dtypes only, like NumPy's (a bool is no index). */
static PyObject* number_index(PyObject* self) {
  GdlTensor* t = GDL_AS(GdlTensor, self);
  uint8_t code = t->view.dtype.code;
  if (t->view.dtype.lanes > 1) {
    gdl_refuse_vector(PyExc_TypeError, t->view.dtype, "no index");
    return NULL;
  }
  if (code != kDLInt && code != kDLUInt) {
    PyErr_SetString(PyExc_TypeError, "only integer 0-d tensors can be used as an index");
    return NULL;
  }
  PyObject* v = scalar_of(self, "int");
  if (v == NULL) return NULL;
  PyObject* r = PyNumber_Index(v);
  Py_DECREF(v);
  return r;
}

#ifdef Py_LIMITED_API
PyObject* gdl_number_int(PyObject* self) { return number_int(self); }
PyObject* gdl_number_float(PyObject* self) { return number_float(self); }
PyObject* gdl_number_index(PyObject* self) { return number_index(self); }
int gdl_number_bool(PyObject* self) { return number_bool(self); }
#else
PyNumberMethods gdl_number_methods = {
    .nb_int = number_int,
    .nb_float = number_float,
    .nb_index = number_index,
    .nb_bool = number_bool,
};
#endif

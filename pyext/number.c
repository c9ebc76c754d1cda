/* float(t), int(t), complex(t) and operator.index(t) of a 0-d tensor, as
 * NumPy's scalars convert: through the element's Python value (tolist). Other
 * tensors are refused with TypeError rather than guessed at. */
#include "gdl.h"

/* The element of a 0-d tensor as a Python scalar; NULL with TypeError else. */
static PyObject* scalar_of(PyObject* self, const char* what) {
  GdlTensor* t = (GdlTensor*)self;
  if (t->view.ndim != 0) {
    PyErr_Format(PyExc_TypeError, "only 0-d tensors can be converted to Python %s, not a %d-d tensor", what,
                 (int)t->view.ndim);
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

/* operator.index: integer and bool dtypes only, like NumPy's. */
static PyObject* number_index(PyObject* self) {
  GdlTensor* t = (GdlTensor*)self;
  uint8_t code = t->view.dtype.code;
  if (code != kDLInt && code != kDLUInt && code != kDLBool) {
    PyErr_SetString(PyExc_TypeError, "only integer and bool 0-d tensors can be used as an index");
    return NULL;
  }
  PyObject* v = scalar_of(self, "int");
  if (v == NULL) return NULL;
  PyObject* r = PyNumber_Index(v);
  Py_DECREF(v);
  return r;
}

PyNumberMethods gdl_number_methods = {
    .nb_int = number_int,
    .nb_float = number_float,
    .nb_index = number_index,
};

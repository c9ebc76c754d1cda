/* NumPy's array object as compiled extensions read it (ext.c's fast path
 * for typed slices, ext_arrays.c's for parameters with requirements). */
#ifndef GODLPACK_EXT_NP_H_
#define GODLPACK_EXT_NP_H_

#include "exchange.h"
#include "ext.h"

/* The start of NumPy's array and dtype objects, as NumPy's own macros
 * (PyArray_DATA, PyArray_DESCR, PyArray_TYPE...) read them in every
 * compiled extension: the same in NumPy 1.x and 2.x. */
typedef struct {
  PyObject_HEAD
  PyTypeObject* typeobj;
  char kind, type, byteorder, flags_1x; /* flags moved in NumPy 2 */
  int type_num;
} np_descr;

typedef struct {
  PyObject_HEAD
  char* data;
  int nd;
  Py_ssize_t* dimensions;
  Py_ssize_t* strides;
  PyObject* base;
  np_descr* descr;
  int flags;
} np_array;

#define NP_C_CONTIGUOUS 0x0001 /* NumPy's flag: row-major, as godlpack.IsCompact */
#define NP_ALIGNED 0x0100
#define NP_WRITEABLE 0x0400

/* NumPy's ndarray type, recognised by name when the first one is passed: a
 * static type, so its address is fixed for the process. Subclasses are not
 * it (they take the DLPack path). */
static PyTypeObject* ndarray_type; /* one per file that includes this */

static inline int is_ndarray(PyObject* obj) {
  PyTypeObject* t = Py_TYPE(obj);
  if (t == ndarray_type) return 1;
  if (ndarray_type != NULL || (t->tp_flags & Py_TPFLAGS_HEAPTYPE) || strcmp(t->tp_name, "numpy.ndarray") != 0) return 0;
  ndarray_type = t;
  return 1;
}

/* The element type of NumPy's built-in numeric type numbers (NPY_BOOL...
 * NPY_CDOUBLE, NPY_HALF) in native byte order; {0, 0} for any other. */
static inline gdl_elem np_elem(const np_descr* d) {
  gdl_elem none = {0, 0};
  if (d->byteorder != '=' && d->byteorder != '|') return none;
  switch (d->type_num) {
    case 0: return (gdl_elem){kDLBool, 8};
    case 1: return (gdl_elem){kDLInt, 8};
    case 2: return (gdl_elem){kDLUInt, 8};
    case 3: return (gdl_elem){kDLInt, 8 * sizeof(short)};
    case 4: return (gdl_elem){kDLUInt, 8 * sizeof(short)};
    case 5: return (gdl_elem){kDLInt, 8 * sizeof(int)};
    case 6: return (gdl_elem){kDLUInt, 8 * sizeof(int)};
    case 7: return (gdl_elem){kDLInt, 8 * sizeof(long)};
    case 8: return (gdl_elem){kDLUInt, 8 * sizeof(long)};
    case 9: return (gdl_elem){kDLInt, 8 * sizeof(long long)};
    case 10: return (gdl_elem){kDLUInt, 8 * sizeof(long long)};
    case 11: return (gdl_elem){kDLFloat, 32};
    case 12: return (gdl_elem){kDLFloat, 64};
    case 14: return (gdl_elem){kDLComplex, 64};
    case 15: return (gdl_elem){kDLComplex, 128};
    case 23: return (gdl_elem){kDLFloat, 16};
  }
  return none;
}

#endif

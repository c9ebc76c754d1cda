/* NumPy's array object as compiled extensions read it (ext.c's fast path
 * for typed slices, ext_arrays.c's for parameters with requirements). */
#ifndef GODLPACK_EXT_NP_H_
#define GODLPACK_EXT_NP_H_

#include "exchange.h"
#include "ext.h"

/* The start of NumPy's array and dtype objects after their PyObject, as
 * NumPy's own macros (PyArray_DATA, PyArray_DESCR, PyArray_TYPE...) read them
 * in every compiled extension: the same in NumPy 1.x and 2.x. Reached by
 * NP_ARRAY and NP_DESCR (limited.h's GDL_FOREIGN: abi3t cannot know
 * sizeof(PyObject) when compiling). */
typedef struct {
  PyTypeObject* typeobj;
  char kind, type, byteorder, flags_1x; /* flags moved in NumPy 2 */
  int type_num;
} np_descr;

typedef struct {
  char* data;
  int nd;
  Py_ssize_t* dimensions;
  Py_ssize_t* strides;
  PyObject* base;
  PyObject* descr; /* np_descr after its PyObject */
  int flags;
} np_array;

#ifdef GDL_OPAQUE
#define NP_ARRAY(o) GDL_FOREIGN(const np_array, o)
#define NP_DESCR(o) GDL_FOREIGN(const np_descr, o)
#else /* the structs with their PyObject in front, as NumPy's own */
typedef struct {
  PyObject_HEAD
  np_array a;
} np_array_object;
typedef struct {
  PyObject_HEAD
  np_descr d;
} np_descr_object;
#define NP_ARRAY(o) (&((const np_array_object*)(o))->a)
#define NP_DESCR(o) (&((const np_descr_object*)(o))->d)
#endif

#define NP_C_CONTIGUOUS 0x0001 /* NumPy's flag: row-major, as godlpack.IsCompact */
#define NP_F_CONTIGUOUS 0x0002 /* column-major; both as ext_arrays.c's compact() decides (dimensions of 1 take any stride, empty arrays are both) */
#define NP_ALIGNED 0x0100
#define NP_WRITEABLE 0x0400

/* NumPy's ndarray type, recognised by name when the first one is passed: a
 * static type, so its address is fixed for the process. Subclasses are not
 * it (they take the DLPack path). */
static PyTypeObject* ndarray_type; /* one per file that includes this */

#ifdef Py_LIMITED_API
/* The last static type found not to be ndarray (static types live as long
 * as the process): a limited build's type name is dear (gdl_tp_name). */
static PyTypeObject* not_ndarray_type;
#endif

static inline int is_ndarray(PyObject* obj) {
  PyTypeObject* t = Py_TYPE(obj);
  if (t == ndarray_type) return 1;
#ifdef Py_LIMITED_API
  if (ndarray_type != NULL || t == not_ndarray_type || PyType_HasFeature(t, Py_TPFLAGS_HEAPTYPE)) return 0;
  if (strcmp(GDL_TP_NAME(t), "numpy.ndarray") != 0) {
    not_ndarray_type = t;
    return 0;
  }
#else
  if (ndarray_type != NULL || PyType_HasFeature(t, Py_TPFLAGS_HEAPTYPE) || strcmp(GDL_TP_NAME(t), "numpy.ndarray") != 0) return 0;
#endif
  ndarray_type = t;
  return 1;
}

/* The element type of NumPy's built-in numeric type numbers (NPY_BOOL...
 * NPY_CDOUBLE, NPY_HALF) in native byte order; {0, 0} for any other. A
 * table, inlined: the callers read its bytes as loaded (a gdl_elem returned
 * in a register and stored byte by byte cost a store-forwarding stall). */
static const gdl_elem np_elems[24] = {
    [0] = {kDLBool, 8},
    [1] = {kDLInt, 8},
    [2] = {kDLUInt, 8},
    [3] = {kDLInt, 8 * sizeof(short)},
    [4] = {kDLUInt, 8 * sizeof(short)},
    [5] = {kDLInt, 8 * sizeof(int)},
    [6] = {kDLUInt, 8 * sizeof(int)},
    [7] = {kDLInt, 8 * sizeof(long)},
    [8] = {kDLUInt, 8 * sizeof(long)},
    [9] = {kDLInt, 8 * sizeof(long long)},
    [10] = {kDLUInt, 8 * sizeof(long long)},
    [11] = {kDLFloat, 32},
    [12] = {kDLFloat, 64},
    [14] = {kDLComplex, 64},
    [15] = {kDLComplex, 128},
    [23] = {kDLFloat, 16},
};

static inline __attribute__((always_inline)) const gdl_elem* np_elem_ref(PyObject* descr) {
  static const gdl_elem none = {0, 0};
  const np_descr* d = NP_DESCR(descr);
  unsigned t = (unsigned)d->type_num;
  if ((d->byteorder != '=' && d->byteorder != '|') || t >= sizeof np_elems / sizeof np_elems[0]) return &none;
  return &np_elems[t];
}

static inline __attribute__((always_inline)) gdl_elem np_elem(PyObject* d) { return *np_elem_ref(d); }

/* log2 of an element size in bytes (1, 2, 4, 8 or 16): strides divide by
 * shifting (an idiv per dimension was a tenth of a Tensor argument). */
static inline int np_shift(int64_t isz) { return __builtin_ctzll((unsigned long long)isz); }

#endif

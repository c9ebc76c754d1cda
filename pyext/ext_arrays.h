/* Requirements on the array parameters of Go extension functions
 * (pyext.Require, pyext.Convert, pyext.NDArray; arrays.go), checked by
 * ext_arrays.c before the call. */
#ifndef GODLPACK_EXT_ARRAYS_H_
#define GODLPACK_EXT_ARRAYS_H_

#include <stdint.h>
#include "ext.h"

#define GDL_REQ_MAX_DIMS 32 /* the longest pyext.Shape */

/* Layouts (order). */
#define GDL_ORDER_ANY 0 /* any strides whose elements Go can address (NDArray) */
#define GDL_ORDER_C 'C'
#define GDL_ORDER_F 'F'

/* Devices. */
#define GDL_DEV_ANY 0
#define GDL_DEV_CPU 1  /* memory the CPU reads (gdl_cpu_accessible) */
#define GDL_DEV_CUDA 2 /* kDLCUDA */

/* Conversions into a conforming temporary. */
#define GDL_CONV_NONE 0
#define GDL_CONV_COPY 1      /* read-only parameters */
#define GDL_CONV_WRITE_BACK 2 /* written parameters: copied back after the call */

/* Views Go takes of the argument. */
#define GDL_VIEW_TENSOR 0 /* godlpack.Tensor, *consumer.Tensor: v->p */
#define GDL_VIEW_SLICE 1  /* []T: data, n, i */
#define GDL_VIEW_ND 2     /* NDArray[T]: data, i, n, ndim, shape, strides, off */

/* An NDArray argument (the start of gdl_value.st), laid out as Go's
 * pyext.NDArray[T] on a 64-bit platform (ndarray.go checks the offsets), so
 * that Go passes C's view to the function as it is: one copy, from memory
 * written before the call into Go. */
typedef struct {
  void* buf;                    /* the lowest element the view reaches, NULL when empty */
  int64_t buf_len, buf_cap;     /* elements from buf */
  int64_t off;                  /* buf index of element (0, ..., 0) */
  const int64_t* shape;         /* never NULL (an empty slice for 0-d) */
  int64_t shape_len, shape_cap; /* ndim */
  const int64_t* strides;       /* elements */
  int64_t strides_len, strides_cap;
} gdl_view;

/* One parameter's requirements, made by Go when the function is defined and
 * kept for the process. */
struct gdl_req {
  int32_t ndim;                     /* -1: any */
  int64_t shape[GDL_REQ_MAX_DIMS];  /* ndim entries when has_shape; -1: any size */
  uint8_t has_shape;
  uint8_t order;   /* GDL_ORDER_* */
  uint8_t device;  /* GDL_DEV_* */
  uint8_t convert; /* GDL_CONV_* */
  uint8_t view;    /* GDL_VIEW_* */
  uint8_t code, bits; /* a dtype for Tensor parameters; bits 0: any */
  uint8_t operand;    /* a binary operator's operand: a refusal is NotImplemented (operators.go) */
};
typedef struct gdl_req gdl_req;

#ifdef Py_PYTHON_H /* the C layer; Go reads the structs only */
/* Imports obj as argument i of fn under fn->req[i] (NULL: a plain typed
 * slice's defaults, for a buffer-protocol argument), into v (v->st holds
 * what must be released: free it with gdl_req_free, also after a failure).
 * 0, or -1 with the exception set (BufferError for refusals). */
int gdl_req_arg(const gdl_fn* fn, int i, PyObject* obj, gdl_value* v);
/* Whether a typed slice or NDArray takes obj through the buffer protocol:
 * it exports a buffer and has no __dlpack__ (DLPack comes first, for its
 * devices and flags): bytes, bytearray, memoryview, array.array, mmap. 1,
 * 0, or -1 with an exception. */
int gdl_buffer_only(PyObject* obj);
/* The most dimensions of an argument gdl_req_view takes. */
#define GDL_VIEW_NDIM 8

/* The view of an argument that needs nothing released but a reference to
 * it, on the caller's stack. */
typedef struct {
  gdl_view view; /* first: Go reads it through gdl_value.st */
  int64_t shape[GDL_VIEW_NDIM];
  int64_t estrides[GDL_VIEW_NDIM]; /* elements */
} gdl_stack_view;

/* The common case of gdl_req_arg with no state of its own: obj, an exact
 * NumPy array of at most GDL_VIEW_NDIM dimensions that conforms to
 * fn->req[i] as it is (no conversion), taken into v and sv (v->st = sv): 1,
 * and the caller holds a reference to obj until the call returns. 0: nothing
 * set, and gdl_req_arg decides. */
int gdl_req_view(const gdl_fn* fn, int i, PyObject* obj, gdl_value* v, gdl_stack_view* sv);
/* After the call: copies a converted written argument back (ConvertWriteBack). */
void gdl_req_write_back(gdl_value* v);
/* Releases the argument (any pending exception survives). */
void gdl_req_free(gdl_value* v);
#endif

#endif

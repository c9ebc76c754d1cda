/* Shape arithmetic, the one copy in C (Go's is in the root package's
 * tensor.go): element counts, compact strides and sizes, contiguity and the
 * memory span of a strided view. */
#ifndef GODLPACK_SHAPE_H_
#define GODLPACK_SHAPE_H_

#include <stdint.h>
#include "godlpack/dlpack.h"

/* Why a shape or span computation failed; dim says where. */
enum {
  GDL_SHAPE_OK = 0,
  GDL_SHAPE_NEGATIVE,     /* an extent is negative */
  GDL_SHAPE_OVERFLOW,     /* the element count overflows int64 */
  GDL_SPAN_INT64_MIN,     /* a stride is INT64_MIN (its magnitude overflows) */
  GDL_SPAN_EXTENT,        /* (extent - 1) * |stride| overflows */
  GDL_SPAN_SUM,           /* the sum of the extents overflows */
  GDL_SPAN_BYTES,         /* the span in bytes overflows */
};

/* The product of a shape already validated (non-negative, fits int64). */
int64_t gdl_shape_count(const int64_t* shape, int32_t ndim);

/* The element count of any shape: 0 as soon as an extent is 0, whatever
 * the others. GDL_SHAPE_OK, or NEGATIVE/OVERFLOW with *dim set. */
int gdl_shape_count_checked(const int64_t* shape, int32_t ndim, int64_t* count, int32_t* dim);

/* Bytes of a compact copy, ceil(count * bits * lanes / 8), of any shape:
 * GDL_SHAPE_OK, NEGATIVE, OVERFLOW (count) or GDL_SPAN_BYTES (bytes). */
int gdl_compact_nbytes(const int64_t* shape, int32_t ndim, DLDataType dt, uint64_t* nbytes);

/* Row-major compact strides in elements (a size-0 extent counts as 1). */
void gdl_compact_strides(const int64_t* shape, int32_t ndim, int64_t* strides);

/* Whether a validated view with strides is compact in row-major
 * (fortran = 0) or column-major order. Strides of size-1 extents are never
 * used; an empty view is compact. */
int gdl_is_compact(const int64_t* shape, const int64_t* strides, int32_t ndim, int fortran);

/* The bytes a view touches relative to its first element: *before bytes
 * below it and *after bytes from it on (rounded up to whole bytes for
 * sub-byte types). strides NULL means compact. An empty view touches none,
 * whatever its strides (they are never used). GDL_SHAPE_OK or the reason,
 * with *dim set for the stride reasons. The shape must be non-negative. */
int gdl_byte_span(const int64_t* shape, const int64_t* strides, int32_t ndim, uint64_t bits_per_element,
                  uint64_t* before, uint64_t* after, int32_t* dim);

#endif

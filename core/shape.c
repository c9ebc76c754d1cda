/* See shape.h. */
#include "shape.h"

static int mul_ok(int64_t a, int64_t b, int64_t* out) {
  return a >= 0 && b >= 0 && !__builtin_mul_overflow(a, b, out);
}

int64_t gdl_shape_count(const int64_t* shape, int32_t ndim) {
  /* Unsigned: an empty view's other extents may multiply past int64 before
   * its 0 is reached (validation allows that); a 0 factor still gives 0. */
  uint64_t n = 1;
  for (int32_t i = 0; i < ndim; i++) n *= (uint64_t)shape[i];
  return (int64_t)n;
}

int gdl_shape_count_checked(const int64_t* shape, int32_t ndim, int64_t* count, int32_t* dim) {
  int zero = 0;
  *count = 0;
  for (int32_t i = 0; i < ndim; i++) {
    if (shape[i] < 0) return *dim = i, GDL_SHAPE_NEGATIVE;
    if (shape[i] == 0) zero = 1;
  }
  if (zero) return GDL_SHAPE_OK;
  int64_t n = 1;
  for (int32_t i = 0; i < ndim; i++)
    if (!mul_ok(n, shape[i], &n)) return *dim = i, GDL_SHAPE_OVERFLOW;
  *count = n;
  return GDL_SHAPE_OK;
}

int gdl_compact_nbytes(const int64_t* shape, int32_t ndim, DLDataType dt, uint64_t* nbytes) {
  int64_t count;
  int32_t dim;
  int r = gdl_shape_count_checked(shape, ndim, &count, &dim);
  if (r != GDL_SHAPE_OK) return r;
  uint64_t bits;
  if (__builtin_mul_overflow((uint64_t)count, (uint64_t)dt.bits * dt.lanes, &bits)) return GDL_SPAN_BYTES;
  *nbytes = bits / 8 + (bits % 8 != 0);
  return GDL_SHAPE_OK;
}

void gdl_compact_strides(const int64_t* shape, int32_t ndim, int64_t* strides) {
  int64_t acc = 1;
  for (int32_t i = ndim - 1; i >= 0; i--) {
    strides[i] = acc;
    if (shape[i] > 0) acc *= shape[i];
  }
}

int gdl_is_compact(const int64_t* shape, const int64_t* strides, int32_t ndim, int fortran) {
  for (int32_t k = 0; k < ndim; k++)
    if (shape[k] == 0) return 1;
  int64_t acc = 1;
  for (int32_t k = 0; k < ndim; k++) {
    int32_t i = fortran ? k : ndim - 1 - k;
    if (shape[i] != 1 && strides[i] != acc) return 0;
    acc *= shape[i];
  }
  return 1;
}

int gdl_byte_span(const int64_t* shape, const int64_t* strides, int32_t ndim, uint64_t bits_per_element,
                  uint64_t* before, uint64_t* after, int32_t* dim) {
  *before = *after = 0;
  for (int32_t i = 0; i < ndim; i++)
    if (shape[i] == 0) return GDL_SHAPE_OK; /* checked before any stride is read */
  /* lo and hi are the lowest and highest element reached, in elements. */
  int64_t lo = 0, hi = 0;
  if (strides == NULL) {
    hi = gdl_shape_count(shape, ndim) - 1;
  } else {
    for (int32_t i = 0; i < ndim; i++) {
      int64_t s = shape[i], st = strides[i], ext;
      if (s == 1) continue; /* the stride of a size-1 extent is never used */
      if (st == INT64_MIN) return *dim = i, GDL_SPAN_INT64_MIN;
      if (!mul_ok(s - 1, st < 0 ? -st : st, &ext)) return *dim = i, GDL_SPAN_EXTENT;
      if (st > 0 ? __builtin_add_overflow(hi, ext, &hi) : __builtin_sub_overflow(lo, ext, &lo))
        return *dim = i, GDL_SPAN_SUM;
    }
  }
  int64_t per = (int64_t)bits_per_element, lo_bits, hi_bits;
  if (lo == INT64_MIN || hi == INT64_MAX || !mul_ok(-lo, per, &lo_bits) || !mul_ok(hi + 1, per, &hi_bits))
    return GDL_SPAN_BYTES;
  *before = (uint64_t)(lo_bits / 8 + (lo_bits % 8 != 0));
  *after = (uint64_t)(hi_bits / 8 + (hi_bits % 8 != 0));
  return GDL_SHAPE_OK;
}

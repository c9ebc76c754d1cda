/* See validate.h. Checks run in a fixed order (ndim, dtype, device, shape,
 * strides, extent) so that the first refusal is the reported one. */
#include <stdarg.h>
#include <stdio.h>
#include "validate.h"
#include "shape.h"

static int refuse(char* msg, size_t n, int kind, const char* fmt, ...) {
  if (msg != NULL && n > 0) {
    int k = snprintf(msg, n, "%s: ", gdl_refusal_text[kind]);
    if (k >= 0 && (size_t)k < n) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(msg + k, n - (size_t)k, fmt, ap);
      va_end(ap);
    }
  }
  return kind;
}

/* Element count, stride span and address checks (shape.c computes them). */
static int check_extent(const DLTensor* t, uint8_t bits, char* msg, size_t n) {
  int64_t count;
  int32_t i = 0;
  switch (gdl_shape_count_checked(t->shape, t->ndim, &count, &i)) {
    case GDL_SHAPE_NEGATIVE:
      return refuse(msg, n, GDL_E_SHAPE, "shape[%d] = %lld is negative", i, (long long)t->shape[i]);
    case GDL_SHAPE_OVERFLOW:
      return refuse(msg, n, GDL_E_OVERFLOW, "product of shape up to dim %d overflows", i);
  }
  if (count == 0) return GDL_OK; /* an empty view touches no memory */
  uint64_t lo_bytes, hi_bytes;
  switch (gdl_byte_span(t->shape, t->strides, t->ndim, (uint64_t)bits * t->dtype.lanes, &lo_bytes, &hi_bytes, &i)) {
    case GDL_SPAN_INT64_MIN:
      return refuse(msg, n, GDL_E_OVERFLOW, "strides[%d] is INT64_MIN", i);
    case GDL_SPAN_EXTENT:
      return refuse(msg, n, GDL_E_OVERFLOW, "(shape[%d]-1)*strides[%d] overflows", i, i);
    case GDL_SPAN_SUM:
      return refuse(msg, n, GDL_E_OVERFLOW, "stride span overflows at dim %d", i);
    case GDL_SPAN_BYTES:
      return refuse(msg, n, GDL_E_OVERFLOW, "byte span of the view overflows");
  }
  uintptr_t addr = (uintptr_t)t->data;
  if (addr < GDL_MIN_DATA_ADDRESS) {
    if (addr != 0)
      return refuse(msg, n, GDL_E_NIL_DATA, "data %#lx lies in the first page, for %lld elements",
                    (unsigned long)addr, (long long)count);
    return refuse(msg, n, GDL_E_NIL_DATA, "data is NULL for %lld elements", (long long)count);
  }
  uint64_t base = addr, first = base + t->byte_offset;
  if (first < base || t->byte_offset > (uint64_t)INT64_MAX)
    return refuse(msg, n, GDL_E_OVERFLOW, "byte_offset %llu wraps the address space",
                  (unsigned long long)t->byte_offset);
  if (lo_bytes > first || first + hi_bytes < first)
    return refuse(msg, n, GDL_E_OVERFLOW, "the view wraps the address space");
  return GDL_OK;
}

int gdl_check_tensor(const DLTensor* t, int allow_null_strides, char* msg, size_t n) {
  if (t->ndim < 0 || t->ndim > GDL_MAX_NDIM)
    return refuse(msg, n, GDL_E_NDIM, "ndim = %d, want 0..%d", t->ndim, GDL_MAX_NDIM);
  DLDataType d = t->dtype;
  if (d.bits == 0)
    return refuse(msg, n, GDL_E_DTYPE, "dtype(code=%d, bits=%d, lanes=%d) has 0 bits", d.code, d.bits, d.lanes);
  if (d.lanes == 0)
    return refuse(msg, n, GDL_E_LANES, "dtype(code=%d, bits=%d, lanes=%d) has 0 lanes", d.code, d.bits, d.lanes);
  if (!gdl_dtype_known(d.code, d.bits))
    return refuse(msg, n, GDL_E_DTYPE, "unknown type code %d with %d bits", d.code, d.bits);
  /* A vector (lanes > 1) is carried as bytes: it must fill whole bytes. Only
   * single float4/float6 elements are packed below a byte. bits * lanes is at
   * most 255 * 65535: no overflow in 32 bits. */
  uint32_t vbits = (uint32_t)d.bits * d.lanes;
  if (d.lanes > 1 && vbits % 8 != 0)
    return refuse(msg, n, GDL_E_LANES, "dtype(code=%d, bits=%d, lanes=%d): %d lanes of %d bits are %u bits, "
                  "not whole bytes", d.code, d.bits, d.lanes, d.lanes, d.bits, vbits);
  int32_t dt = (int32_t)t->device.device_type;
  if (!gdl_device_known(dt)) return refuse(msg, n, GDL_E_DEVICE, "unknown device type %d", dt);
  if (t->device.device_id < 0) return refuse(msg, n, GDL_E_DEVICE, "negative device id %d", t->device.device_id);
  if (t->ndim > 0 && t->shape == NULL)
    return refuse(msg, n, GDL_E_NIL_POINTER, "shape is NULL with ndim = %d", t->ndim);
  if (t->ndim > 0 && t->strides == NULL && !allow_null_strides)
    return refuse(msg, n, GDL_E_STRIDES, "strides are NULL with ndim = %d (required since DLPack 1.2)", t->ndim);
  return check_extent(t, d.bits, msg, n);
}

int gdl_check_versioned(const DLManagedTensorVersioned* m, char* msg, size_t n) {
  if (m == NULL) return refuse(msg, n, GDL_E_NIL_POINTER, "managed tensor is NULL");
  DLPackVersion v = m->version;
  if (v.major > GDL_MAX_IMPORT_MAJOR)
    return refuse(msg, n, GDL_E_VERSION, "DLPack %u.%u is newer than the %d.x we understand", v.major, v.minor,
                  GDL_MAX_IMPORT_MAJOR);
  if (v.major == 0) return refuse(msg, n, GDL_E_VERSION, "a versioned tensor claims DLPack %u.%u", v.major, v.minor);
  int r = gdl_check_tensor(&m->dl_tensor, v.major == 1 && v.minor < GDL_STRIDES_REQUIRED_MINOR, msg, n);
  if (r != GDL_OK) return r;
  DLDataType d = m->dl_tensor.dtype;
  if (!(m->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) || d.bits >= 8) return GDL_OK;
  /* Padded sub-byte lanes in a vector: a byte per lane or per vector? */
  if (d.lanes > 1)
    return refuse(msg, n, GDL_E_FLAGS, "IS_SUBBYTE_TYPE_PADDED with a vector dtype(code=%d, bits=%d, lanes=%d) "
                  "of sub-byte lanes is ambiguous", d.code, d.bits, d.lanes);
  return check_extent(&m->dl_tensor, 8, msg, n); /* padded: a byte per element */
}

int gdl_check_legacy(const DLManagedTensor* m, char* msg, size_t n) {
  if (m == NULL) return refuse(msg, n, GDL_E_NIL_POINTER, "managed tensor is NULL");
  return gdl_check_tensor(&m->dl_tensor, 1, msg, n);
}

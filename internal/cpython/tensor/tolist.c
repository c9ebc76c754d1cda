/* Tensor.tolist(): nested lists of Python scalars, following strides. */
#include <string.h>
#include "tensor.h"

typedef PyObject* (*scalar_fn)(const char* p);

static PyObject* s_bool(const char* p) { return PyBool_FromLong(*(const uint8_t*)p != 0); }
static PyObject* s_i8(const char* p) { return PyLong_FromLong(*(const int8_t*)p); }
static PyObject* s_i16(const char* p) { int16_t v; memcpy(&v, p, 2); return PyLong_FromLong(v); }
static PyObject* s_i32(const char* p) { int32_t v; memcpy(&v, p, 4); return PyLong_FromLong(v); }
static PyObject* s_i64(const char* p) { int64_t v; memcpy(&v, p, 8); return PyLong_FromLongLong(v); }
static PyObject* s_u8(const char* p) { return PyLong_FromUnsignedLong(*(const uint8_t*)p); }
static PyObject* s_u16(const char* p) { uint16_t v; memcpy(&v, p, 2); return PyLong_FromUnsignedLong(v); }
static PyObject* s_u32(const char* p) { uint32_t v; memcpy(&v, p, 4); return PyLong_FromUnsignedLong(v); }
static PyObject* s_u64(const char* p) { uint64_t v; memcpy(&v, p, 8); return PyLong_FromUnsignedLongLong(v); }
#ifdef Py_LIMITED_API
#include <math.h>
/* IEEE half, little-endian (PyFloat_Unpack2 is outside the stable ABI). */
static double unpack_half(const char* p) {
  uint16_t h;
  memcpy(&h, p, 2);
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
  return (h >> 15) ? -v : v;
}
#define PyFloat_Unpack2(p, le) unpack_half(p)
#endif
static PyObject* s_f16(const char* p) {
  double d = PyFloat_Unpack2(p, 1);
  return d == -1.0 && PyErr_Occurred() ? NULL : PyFloat_FromDouble(d);
}
static PyObject* s_bf16(const char* p) {
  uint16_t h; memcpy(&h, p, 2);
  uint32_t b = (uint32_t)h << 16; float f; memcpy(&f, &b, 4);
  return PyFloat_FromDouble(f);
}
static PyObject* s_f32(const char* p) { float v; memcpy(&v, p, 4); return PyFloat_FromDouble(v); }
static PyObject* s_f64(const char* p) { double v; memcpy(&v, p, 8); return PyFloat_FromDouble(v); }
static PyObject* s_c64(const char* p) { float v[2]; memcpy(v, p, 8); return PyComplex_FromDoubles(v[0], v[1]); }
static PyObject* s_c128(const char* p) { double v[2]; memcpy(v, p, 16); return PyComplex_FromDoubles(v[0], v[1]); }

static scalar_fn scalar_for(DLDataType dt) {
  if (dt.lanes != 1) return NULL;
  switch (dt.code) {
    case kDLBool: return dt.bits == 8 ? s_bool : NULL;
    case kDLInt: return dt.bits == 8 ? s_i8 : dt.bits == 16 ? s_i16 : dt.bits == 32 ? s_i32 : dt.bits == 64 ? s_i64 : NULL;
    case kDLUInt: return dt.bits == 8 ? s_u8 : dt.bits == 16 ? s_u16 : dt.bits == 32 ? s_u32 : dt.bits == 64 ? s_u64 : NULL;
    case kDLFloat: return dt.bits == 16 ? s_f16 : dt.bits == 32 ? s_f32 : dt.bits == 64 ? s_f64 : NULL;
    case kDLBfloat: return dt.bits == 16 ? s_bf16 : NULL;
    case kDLComplex: return dt.bits == 64 ? s_c64 : dt.bits == 128 ? s_c128 : NULL;
  }
  return NULL;
}

static PyObject* build(const GdlTensor* t, scalar_fn f, int32_t d, const char* p, int64_t itemsize) {
  int32_t n = t->view.ndim;
  if (d == n) return f(p);
  /* Validation bounds stride * itemsize where a stride is used: extents of
   * 2 or more of a non-empty view. Others may be anything, even overflow
   * (an empty view's outer extents): no element is read through them. */
  int64_t len = t->dims[d], step = 0;
  if (len > 1 && __builtin_mul_overflow(t->dims[n + d], itemsize, &step)) step = 0;
  PyObject* list = PyList_New((Py_ssize_t)len);
  if (list == NULL) return NULL;
  for (int64_t i = 0; i < len; i++) {
    PyObject* x = build(t, f, d + 1, p + i * step, itemsize);
    if (x == NULL) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, x);
  }
  return list;
}

PyObject* gdl_tolist(PyObject* self, PyObject* unused) {
  (void)unused;
  GdlTensor* t = GDL_AS(GdlTensor, self);
  if (!gdl_cpu_accessible(t->view.device.device_type)) {
    PyErr_SetString(PyExc_BufferError, "tolist() needs a CPU-accessible tensor");
    return NULL;
  }
  if (t->view.dtype.lanes > 1) {
    gdl_refuse_vector(PyExc_TypeError, t->view.dtype, "tolist() reads elements");
    return NULL;
  }
  scalar_fn f = scalar_for(t->view.dtype);
  if (f == NULL) {
    PyObject* name = PyObject_GetAttrString(self, "dtype");
    PyErr_Format(PyExc_TypeError, "tolist() does not support dtype %S", name);
    Py_XDECREF(name);
    return NULL;
  }
  if (gdl_host_sync(t->view.device, t->stream) != 0) return NULL; /* managed memory: GPU work first */
  return build(t, f, 0, (const char*)t->view.data + t->view.byte_offset, t->view.dtype.bits / 8);
}

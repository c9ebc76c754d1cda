/* Python values of Go types beyond scalars, strings and arrays (ext_conv.h):
 * complex, big ints (as hex text beyond int64, which both sides read and
 * write in linear time), aware datetimes and timedeltas (through the
 * datetime C API) and paths (os.fspath, the file system encoding); Go's
 * any trees are ext_any.c's. */
#include "exchange.h"
#include "ext.h"
#include "ext_conv.h"

#include "ext_any.h"

#ifndef Py_LIMITED_API
#include <datetime.h>
#endif
#include <math.h>
#include <stdarg.h>
#include <string.h>

/* Raises type as "f() argument 2" followed by fmt's words. */
static int raise_arg(PyObject* type, const char* fn, int pos, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  PyObject* tail = PyUnicode_FromFormatV(fmt, ap);
  va_end(ap);
  if (tail != NULL) PyErr_Format(type, "%s() argument %d%U", fn, pos, tail);
  Py_XDECREF(tail);
  return -1;
}

#ifdef Py_LIMITED_API
/* The datetime C API is outside the limited API: the module's classes and
 * attributes, through Python calls, under the same names. An attribute
 * read that fails leaves its exception set and reads 0: callers check
 * PyErr_Occurred() once (the fields of a datetime or timedelta never fail). */
static PyObject *dt_datetime, *dt_timedelta, *dt_timezone, *dt_utc;

static int need_datetime(void) {
  if (__atomic_load_n(&dt_utc, __ATOMIC_ACQUIRE) != NULL) return 0;
  PyObject* m = PyImport_ImportModule("datetime");
  if (m == NULL) return -1;
  dt_datetime = PyObject_GetAttrString(m, "datetime");
  dt_timedelta = dt_datetime ? PyObject_GetAttrString(m, "timedelta") : NULL;
  dt_timezone = dt_timedelta ? PyObject_GetAttrString(m, "timezone") : NULL;
  PyObject* utc = dt_timezone ? PyObject_GetAttrString(dt_timezone, "utc") : NULL;
  Py_DECREF(m);
  if (utc == NULL) return -1;
  __atomic_store_n(&dt_utc, utc, __ATOMIC_RELEASE); /* last: the others are set */
  return 0;
}

static int dt_int(PyObject* o, const char* name) {
  PyObject* v = PyObject_GetAttrString(o, name);
  int r = v ? (int)PyLong_AsLong(v) : 0;
  Py_XDECREF(v);
  return r == -1 && PyErr_Occurred() ? 0 : r;
}

/* The datetime's tzinfo, borrowed: the datetime (immutable) holds it. */
static PyObject* dt_tzinfo(PyObject* o) {
  PyObject* v = PyObject_GetAttrString(o, "tzinfo");
  Py_XDECREF(v);
  return v;
}

#define PyDateTime_Check(o) (PyObject_IsInstance((o), dt_datetime) > 0)
#define PyDelta_Check(o) (PyObject_IsInstance((o), dt_timedelta) > 0)
#define PyDateTime_DATE_GET_TZINFO(o) dt_tzinfo(o)
#define PyDateTime_TimeZone_UTC dt_utc
#define PyDateTime_GET_YEAR(o) dt_int((o), "year")
#define PyDateTime_GET_MONTH(o) dt_int((o), "month")
#define PyDateTime_GET_DAY(o) dt_int((o), "day")
#define PyDateTime_DATE_GET_HOUR(o) dt_int((o), "hour")
#define PyDateTime_DATE_GET_MINUTE(o) dt_int((o), "minute")
#define PyDateTime_DATE_GET_SECOND(o) dt_int((o), "second")
#define PyDateTime_DATE_GET_MICROSECOND(o) dt_int((o), "microsecond")
#define PyDateTime_DELTA_GET_DAYS(o) dt_int((o), "days")
#define PyDateTime_DELTA_GET_SECONDS(o) dt_int((o), "seconds")
#define PyDateTime_DELTA_GET_MICROSECONDS(o) dt_int((o), "microseconds")
#define PyDelta_FromDSU(d, s, us) PyObject_CallFunction(dt_timedelta, "iii", (d), (s), (us))
#define PyTimeZone_FromOffset(off) PyObject_CallOneArg(dt_timezone, (off))
#define DT_FROM_DATE_AND_TIME(y, mo, d, h, mi, s, us, tz) \
  PyObject_CallFunction(dt_datetime, "iiiiiiiO", (y), (mo), (d), (h), (mi), (s), (us), (tz))
#define DT_DELTA(d, s, us) PyObject_CallFunction(dt_timedelta, "iii", (d), (s), (us))
/* One check for the attribute reads above. */
#define DT_READ_FAILED() (PyErr_Occurred() != NULL)
#else
/* The datetime C API (a capsule imported once per process). */
static int need_datetime(void) {
  if (PyDateTimeAPI == NULL) PyDateTime_IMPORT;
  return PyDateTimeAPI == NULL ? -1 : 0;
}
#define DT_FROM_DATE_AND_TIME(y, mo, d, h, mi, s, us, tz) \
  PyDateTimeAPI->DateTime_FromDateAndTime((y), (mo), (d), (h), (mi), (s), (us), (tz), PyDateTimeAPI->DateTimeType)
#define DT_DELTA(d, s, us) PyDateTimeAPI->Delta_FromDelta((d), (s), (us), 1, PyDateTimeAPI->DeltaType)
#define DT_READ_FAILED() 0
#endif

/* A float32 part of a complex64: finite values beyond float32's range
 * would become inf, as a float32 parameter refuses. */
static int beyond_float32(double x) { return isfinite(x) && isinf((float)x); }

#ifdef Py_LIMITED_API
/* Py_complex and PyComplex_AsCComplex are outside the limited API: the
 * same conversion, complex(obj) (which also takes __complex__, __float__,
 * __index__ and refuses str here), read by part. */
typedef struct {
  double real, imag;
} Py_complex;

static Py_complex PyComplex_AsCComplex(PyObject* obj) {
  Py_complex c = {-1.0, 0.0};
  if (PyUnicode_Check(obj) || PyBytes_Check(obj) || PyByteArray_Check(obj)) { /* complex("1") parses: refused */
    PyErr_Format(PyExc_TypeError, "complex() argument must be a number, not '%.200s'", GDL_TP_NAME(Py_TYPE(obj)));
    return c;
  }
  PyObject* z = PyComplex_Check(obj) ? Py_NewRef(obj) : PyObject_CallOneArg((PyObject*)&PyComplex_Type, obj);
  if (z == NULL) return c;
  c.real = PyComplex_RealAsDouble(z);
  c.imag = PyComplex_ImagAsDouble(z);
  Py_DECREF(z);
  if (PyErr_Occurred()) c.real = -1.0;
  return c;
}
#endif

static int complex_arg(gdl_elem e, PyObject* obj, gdl_value* v, const char* fn, int pos) {
  Py_complex c = PyComplex_AsCComplex(obj); /* complex, float, int, __complex__, __float__, __index__ */
  if (c.real == -1.0 && PyErr_Occurred()) {
    if (PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();
      return raise_arg(PyExc_TypeError, fn, pos, " must be complex, not %.200s", GDL_TP_NAME(Py_TYPE(obj)));
    }
    if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
      PyErr_Clear();
      return raise_arg(PyExc_OverflowError, fn, pos, ": %R out of range for complex128", obj);
    }
    return -1;
  }
  if (e.bits == 64 && (beyond_float32(c.real) || beyond_float32(c.imag)))
    return raise_arg(PyExc_OverflowError, fn, pos, ": %R out of range for complex64", obj);
  v->f = c.real;
  memcpy(&v->i, &c.imag, sizeof c.imag); /* complexconv.go reads the bits */
  return 0;
}

/* An int in int64 is v->i (versioned 0); a larger one its hex text
 * ("0x1f", "-0x1f") at s, n (versioned 1), held. */
static int bigint_arg(PyObject* obj, gdl_value* v, PyObject** held, const char* fn, int pos) {
  if (PyBool_Check(obj) || !PyIndex_Check(obj))
    return raise_arg(PyExc_TypeError, fn, pos, " must be int, not %.200s", GDL_TP_NAME(Py_TYPE(obj)));
  PyObject* n = PyNumber_Index(obj);
  if (n == NULL) return -1;
  int overflow;
  long long x = PyLong_AsLongLongAndOverflow(n, &overflow);
  if (!overflow) {
    Py_DECREF(n);
    if (x == -1 && PyErr_Occurred()) return -1;
    v->i = x;
    v->versioned = 0;
    return 0;
  }
  PyObject* hex = PyNumber_ToBase(n, 16);
  Py_DECREF(n);
  if (hex == NULL) return -1;
  Py_ssize_t len;
  v->s = PyUnicode_AsUTF8AndSize(hex, &len);
  if (v->s == NULL) {
    Py_DECREF(hex);
    return -1;
  }
  v->n = len;
  v->versioned = 1;
  *held = hex;
  return 0;
}

/* A datetime's wall clock packed as Go reads it (timeconv.go): i
 * YYYYMMDDhhmmss, n microseconds, ncap the UTC offset in seconds, versioned
 * 1 for timezone.utc. */
static int64_t pack_clock(int y, int mo, int d, int h, int mi, int s) {
  return ((((int64_t)y * 100 + mo) * 100 + d) * 100 + h) * 10000 + (int64_t)mi * 100 + s;
}

static int time_arg(PyObject* obj, gdl_value* v, const char* fn, int pos) {
  if (need_datetime() < 0) return -1;
  if (!PyDateTime_Check(obj))
    return raise_arg(PyExc_TypeError, fn, pos, " must be datetime.datetime, not %.200s", GDL_TP_NAME(Py_TYPE(obj)));
  PyObject* tz = PyDateTime_DATE_GET_TZINFO(obj); /* borrowed */
  int64_t off = 0;
  v->versioned = tz == PyDateTime_TimeZone_UTC;
  if (!v->versioned) {
    PyObject* d = tz == Py_None ? Py_NewRef(Py_None) : PyObject_CallMethod(obj, "utcoffset", NULL);
    if (d == NULL) return -1;
    if (d == Py_None) {
      Py_DECREF(d);
      return raise_arg(PyExc_TypeError, fn, pos,
                       " must be an aware datetime (utcoffset() not None), not a naive one: "
                       "give it a tzinfo (e.g. datetime.timezone.utc)");
    }
    if (!PyDelta_Check(d)) { /* utcoffset() itself checks this; a subclass may not */
      Py_DECREF(d);
      return raise_arg(PyExc_TypeError, fn, pos, ": utcoffset() returned no timedelta");
    }
    int us = PyDateTime_DELTA_GET_MICROSECONDS(d);
    off = (int64_t)PyDateTime_DELTA_GET_DAYS(d) * 86400 + PyDateTime_DELTA_GET_SECONDS(d);
    Py_DECREF(d);
    if (DT_READ_FAILED()) return -1;
    if (us != 0)
      return raise_arg(PyExc_ValueError, fn, pos, ": a UTC offset with microseconds, which time.Time cannot hold");
  }
  v->i = pack_clock(PyDateTime_GET_YEAR(obj), PyDateTime_GET_MONTH(obj), PyDateTime_GET_DAY(obj),
                    PyDateTime_DATE_GET_HOUR(obj), PyDateTime_DATE_GET_MINUTE(obj), PyDateTime_DATE_GET_SECOND(obj));
  v->n = PyDateTime_DATE_GET_MICROSECOND(obj);
  v->ncap = off;
  return DT_READ_FAILED() ? -1 : 0;
}

/* A timedelta as nanoseconds in v->i; beyond int64's (about 292 years) an
 * OverflowError. */
static int duration_arg(PyObject* obj, gdl_value* v, const char* fn, int pos) {
  if (need_datetime() < 0) return -1;
  if (!PyDelta_Check(obj))
    return raise_arg(PyExc_TypeError, fn, pos, " must be datetime.timedelta, not %.200s", GDL_TP_NAME(Py_TYPE(obj)));
  int64_t s, us, ns;
  if (__builtin_mul_overflow((int64_t)PyDateTime_DELTA_GET_DAYS(obj), 86400, &s) ||
      __builtin_add_overflow(s, (int64_t)PyDateTime_DELTA_GET_SECONDS(obj), &s) ||
      __builtin_mul_overflow(s, 1000000, &us) ||
      __builtin_add_overflow(us, (int64_t)PyDateTime_DELTA_GET_MICROSECONDS(obj), &us) ||
      __builtin_mul_overflow(us, 1000, &ns)) {
    if (DT_READ_FAILED()) return -1;
    return raise_arg(PyExc_OverflowError, fn, pos, ": %R out of range for time.Duration (about 292 years either way)",
                     obj);
  }
  if (DT_READ_FAILED()) return -1;
  v->i = ns;
  return 0;
}

/* A path: os.fspath's str (encoded as os.fsencode does) or bytes, held. */
static int path_arg(PyObject* obj, gdl_value* v, PyObject** held, const char* fn, int pos) {
  PyObject* p = PyOS_FSPath(obj);
  if (p == NULL) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) return -1;
    PyErr_Clear();
    return raise_arg(PyExc_TypeError, fn, pos, " must be str, bytes or os.PathLike, not %.200s",
                     GDL_TP_NAME(Py_TYPE(obj)));
  }
  if (PyUnicode_Check(p)) {
    PyObject* b = PyUnicode_EncodeFSDefault(p); /* surrogateescape: undecodable names come back as they were */
    Py_DECREF(p);
    if (b == NULL) return -1;
    p = b;
  }
  v->s = PyBytes_AS_STRING(p);
  v->n = PyBytes_GET_SIZE(p);
  *held = p;
  return 0;
}

int gdl_conv_arg(char kind, gdl_elem e, PyObject* obj, gdl_value* v, PyObject** held, const char* fn, int pos) {
  switch (kind) {
    case GDL_V_COMPLEX: return complex_arg(e, obj, v, fn, pos);
    case GDL_V_BIGINT: return bigint_arg(obj, v, held, fn, pos);
    case GDL_V_TIME: return time_arg(obj, v, fn, pos);
    case GDL_V_DURATION: return duration_arg(obj, v, fn, pos);
    case GDL_V_PATH: return path_arg(obj, v, held, fn, pos);
    case GDL_V_ANY: return gdl_any_arg(e, obj, v, held, fn, pos);
  }
  PyErr_SetString(PyExc_SystemError, "godlpack: unknown parameter kind");
  return -1;
}

static PyObject* time_result(const gdl_value* v) {
  if (need_datetime() < 0) return NULL;
  int64_t c = v->i;
  int s = (int)(c % 100), mi = (int)(c / 100 % 100), h = (int)(c / 10000 % 100);
  int d = (int)(c / 1000000 % 100), mo = (int)(c / 100000000 % 100), y = (int)(c / 10000000000LL);
  PyObject* tz;
  if (v->versioned) {
    tz = Py_NewRef(PyDateTime_TimeZone_UTC);
  } else {
    PyObject* off = PyDelta_FromDSU(0, (int)v->ncap, 0);
    tz = off ? PyTimeZone_FromOffset(off) : NULL;
    Py_XDECREF(off);
  }
  if (tz == NULL) return NULL;
  PyObject* r = DT_FROM_DATE_AND_TIME(y, mo, d, h, mi, s, (int)v->n, tz);
  Py_DECREF(tz);
  return r;
}

/* Nanoseconds as a timedelta, truncated toward zero to microseconds. */
static PyObject* duration_result(const gdl_value* v) {
  if (need_datetime() < 0) return NULL;
  int64_t us = v->i / 1000;
  int64_t day = 86400LL * 1000000;
  return DT_DELTA((int)(us / day), (int)(us % day / 1000000), (int)(us % 1000000));
}

PyObject* gdl_conv_result(char kind, gdl_value* v) {
  PyObject* r = NULL;
  switch (kind) {
    case GDL_V_COMPLEX: {
      double imag;
      memcpy(&imag, &v->i, sizeof imag);
      return PyComplex_FromDoubles(v->f, imag);
    }
    case GDL_V_BIGINT:
      if (!v->versioned) return PyLong_FromLongLong(v->i);
      r = PyLong_FromString(v->s, NULL, 16);
      break;
    case GDL_V_TIME: return time_result(v);
    case GDL_V_ANY: return gdl_any_result(v);
    case GDL_V_DURATION: return duration_result(v);
    case GDL_V_PATH:
      r = PyUnicode_DecodeFSDefaultAndSize(v->s, (Py_ssize_t)v->n);
      break;
    case GDL_V_BYTEARRAY:
      r = (PyObject*)v->p; /* made by Go under the GIL */
      if (r == NULL) r = PyByteArray_FromStringAndSize(v->s, (Py_ssize_t)v->n);
      v->p = NULL;
      break;
    default:
      PyErr_SetString(PyExc_SystemError, "godlpack: unknown result kind");
      return NULL;
  }
  gdl_conv_drop(kind, v);
  return r;
}

void gdl_conv_drop(char kind, gdl_value* v) {
  if (kind == GDL_V_ANY) gdl_any_drop(v);
  if (kind == GDL_V_BYTEARRAY) {
    Py_XDECREF((PyObject*)v->p);
    v->p = NULL;
  }
  if ((kind == GDL_V_BIGINT && v->versioned) || kind == GDL_V_PATH || kind == GDL_V_BYTEARRAY) {
    free((void*)v->s);
    v->s = NULL;
  }
}

void* gdl_bytearray_new(const char* data, int64_t n) {
  PyObject* b = PyByteArray_FromStringAndSize(data, (Py_ssize_t)n);
  if (b == NULL) PyErr_Clear();
  return b;
}

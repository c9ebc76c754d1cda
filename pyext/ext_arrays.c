/* Array parameters with requirements (pyext.Require, Convert,
 * ConvertWriteBack, NDArray; arrays.go), and buffer-protocol arguments of
 * any typed slice: the argument is imported (an exact NumPy array from its
 * fields, an object with a buffer and no __dlpack__ through the buffer
 * protocol, anything else through DLPack), checked
 * against the parameter's dtype, shape, layout, device and writability, and
 * taken zero-copy when it conforms. Otherwise it is refused with
 * BufferError, or, where the author allowed it, copied into a conforming
 * temporary (C for a change of layout or alignment, NumPy for a change of
 * dtype or a non-array), which a written parameter gets copied back after
 * the call. */
#include "aligned.h" /* core/ */
#include "exchange.h"
#include "ext.h"
#include "ext_arrays.h"
#include "ext_np.h"

_Static_assert(sizeof(Py_ssize_t) == sizeof(int64_t), "NumPy's dimensions are read as int64_t");

/* What C holds for one argument until the call returns. */
typedef struct {
  gdl_view view; /* first: Go reads it through gdl_value.st */
  void* managed; /* the DLPack import, or NULL */
  int versioned;
  int has_buf;    /* buf is held (PyObject_GetBuffer): released once, by gdl_req_free */
  Py_buffer buf;
  PyObject* held; /* an exact ndarray (the argument, or NumPy's converted copy) */
  void* tmp;      /* C's conforming copy (64-byte aligned) */
  char* back;     /* ConvertWriteBack: the argument's element (0, ..., 0) */
  int nd;
  size_t isz;
  int64_t shape[GDL_MAX_NDIM];
  int64_t bstrides[GDL_MAX_NDIM]; /* the argument's, in bytes (write-back) */
  int64_t tstrides[GDL_MAX_NDIM]; /* the temporary's, in bytes */
  int64_t estrides[GDL_MAX_NDIM]; /* Go's view, in elements */
} arg_state;

/* An argument as seen before any decision. */
typedef struct {
  char* data; /* element (0, ..., 0) */
  int nd;
  const int64_t* shape;
  int64_t bstr[GDL_MAX_NDIM]; /* byte strides (when isz > 0) */
  const int64_t* estr;        /* DLPack's element strides, NULL: compact (DLPack only) */
  DLDataType dt;
  int known;    /* a dtype godlpack names, in native byte order */
  PyObject* np_dtype; /* borrowed: an ndarray's dtype (for messages) */
  const char* fmt;    /* a buffer's struct format (for messages), or NULL */
  int readonly; /* marked read-only by its producer */
  DLDevice dev;
  int is_c, is_f;
} arg_desc;

/* "f() argument 2": how refusals name an argument. The one place to add
 * parameter names when functions have them. */
static const char* arg_label(const gdl_fn* fn, int i, char* buf, size_t len) {
  snprintf(buf, len, "%s() argument %d", fn->name, i + 1);
  return buf;
}

/* Prefixes the pending exception's message with the argument's label
 * ("f() argument 2: ..."): a BufferError (any subclass becomes one), or a
 * ValueError as it is (a released memoryview, a closed mmap); other
 * exceptions pass as they are. */
static void relabel(const gdl_fn* fn, int i) {
  char lab[256];
  PyObject* as = PyErr_ExceptionMatches(PyExc_BufferError) ? PyExc_BufferError
                 : PyErr_Occurred() == PyExc_ValueError ? PyExc_ValueError : NULL;
  if (as == NULL) return;
  PyObject *et, *ev, *etb;
  PyErr_Fetch(&et, &ev, &etb);
  PyErr_NormalizeException(&et, &ev, &etb);
  PyErr_Format(as, "%s: %S", arg_label(fn, i, lab, sizeof lab), ev);
  Py_XDECREF(et);
  Py_XDECREF(ev);
  Py_XDECREF(etb);
}

static const char* elem_name(uint8_t code, uint8_t bits) {
  for (int i = 0; i < GDL_NUM_DTYPES; i++) {
    if (gdl_dtypes[i].code == code && gdl_dtypes[i].bits == bits) return gdl_dtypes[i].name;
  }
  return "unknown dtype";
}

/* dims as a Python tuple: (4, 2), (4,), (); -1 as * when wild. */
static void put_tuple(char* s, size_t len, const int64_t* dims, int nd, int wild) {
  size_t k = (size_t)snprintf(s, len, "(");
  for (int i = 0; i < nd && k < len; i++) {
    if (wild && dims[i] == -1) k += (size_t)snprintf(s + k, len - k, i ? ", *" : "*");
    else k += (size_t)snprintf(s + k, len - k, i ? ", %lld" : "%lld", (long long)dims[i]);
  }
  if (k < len) snprintf(s + k, len - k, nd == 1 ? ",)" : ")");
}

/* Whether (shape, strides) is compact in C (fortran 0) or Fortran order,
 * strides counted in units of unit. */
static int compact(const int64_t* shape, const int64_t* str, int nd, int64_t unit, int fortran) {
  int64_t want = unit;
  for (int k = 0; k < nd; k++) {
    if (shape[k] == 0) return 1; /* empty: any strides */
  }
  for (int i = 0; i < nd; i++) {
    int k = fortran ? i : nd - 1 - i;
    if (shape[k] != 1 && str[k] != want) return 0;
    want *= shape[k];
  }
  return 1;
}

static int64_t count(const int64_t* shape, int nd) {
  int64_t n = 1;
  for (int k = 0; k < nd; k++) n *= shape[k];
  return n;
}

/* Copies the elements of shape from src to dst, each with its byte strides. */
static void strided_copy(char* dst, const int64_t* ds, const char* src, const int64_t* ss, const int64_t* shape,
                         int nd, size_t isz) {
  if (count(shape, nd) == 0) return;
  if (nd == 0) {
    memcpy(dst, src, isz);
    return;
  }
  int64_t idx[GDL_MAX_NDIM] = {0}, doff = 0, soff = 0;
  const int last = nd - 1;
  const int64_t len = shape[last], dl = ds[last], sl = ss[last];
  for (;;) {
    char* d = dst + doff;
    const char* s = src + soff;
#define GDL_COPY_ROW(N)                                  \
  for (int64_t k = 0; k < len; k++, d += dl, s += sl) memcpy(d, s, N)
    switch (isz) {
      case 1: GDL_COPY_ROW(1); break;
      case 2: GDL_COPY_ROW(2); break;
      case 4: GDL_COPY_ROW(4); break;
      case 8: GDL_COPY_ROW(8); break;
      case 16: GDL_COPY_ROW(16); break;
      default: GDL_COPY_ROW(isz); break;
    }
#undef GDL_COPY_ROW
    int j = last - 1;
    for (; j >= 0; j--) {
      doff += ds[j];
      soff += ss[j];
      if (++idx[j] < shape[j]) break;
      doff -= ds[j] * shape[j];
      soff -= ss[j] * shape[j];
      idx[j] = 0;
    }
    if (j < 0) return;
  }
}

/* Sets v's view of the argument (Go's NDArray, or a compact slice) and w,
 * over shape and estr (nd of each, elements of isz bytes): n elements, the
 * lowest reached lo and the highest hi bytes from data, element (0, ..., 0). */
static void put_view(gdl_value* v, gdl_view* w, const int64_t* shape, const int64_t* estr, int nd, int64_t isz,
                     const gdl_req* r, char* data, int64_t n, int64_t lo, int64_t hi) {
  int shift = __builtin_ctzll((unsigned long long)isz); /* a power of 2 */
  v->n = v->ncap = n;
  w->shape = shape;
  w->strides = estr;
  w->shape_len = w->shape_cap = w->strides_len = w->strides_cap = nd;
  w->off = 0;
  w->buf = NULL;
  w->buf_len = w->buf_cap = 0;
  if (n == 0) {
    v->data = NULL;
    v->i = 0;
    return;
  }
  if (r->view == GDL_VIEW_SLICE) { /* compact: data is the lowest element */
    v->data = data;
    v->i = n * isz;
    return;
  }
  v->data = data + lo;
  v->i = hi - lo + isz;
  w->off = -lo >> shift;
  w->buf = v->data;
  w->buf_len = w->buf_cap = v->i >> shift;
}

/* The view Go gets of conforming memory: data is element (0, ..., 0),
 * bstr its byte strides (multiples of st->isz). */
static void fill_view(gdl_value* v, arg_state* st, const gdl_req* r, char* data, const int64_t* bstr) {
  int nd = st->nd, shift = __builtin_ctzll(st->isz); /* a power of 2 */
  int64_t n = count(st->shape, nd), lo = 0, hi = 0;
  for (int k = 0; k < nd; k++) {
    int64_t e = (st->shape[k] - 1) * bstr[k];
    st->estrides[k] = bstr[k] >> shift; /* whole elements (checked): exact, also when negative */
    if (st->shape[k] == 0) continue;
    if (e < 0) lo += e;
    else hi += e;
  }
  put_view(v, &st->view, st->shape, st->estrides, nd, (int64_t)st->isz, r, data, n, lo, hi);
}

static PyObject* numpy_module(void) {
  static PyObject* np; /* with the GIL */
  if (np == NULL) np = PyImport_ImportModule("numpy");
  return np;
}

/* Takes obj under r; may_convert 0 once obj is NumPy's conversion. */
static int take(const gdl_fn* fn, int i, const gdl_req* r, PyObject* obj, gdl_value* v, arg_state* st,
                int may_convert);

/* NumPy's conversion of obj to the parameter's dtype and order (a change of
 * dtype, or no array at all), then taken as a NumPy array. */
static int convert_numpy(const gdl_fn* fn, int i, const gdl_req* r, PyObject* obj, gdl_value* v, arg_state* st,
                         const char* why) {
  char lab[256];
  gdl_elem e = fn->elem[i];
  const char* want = elem_name(e.code, e.bits);
  PyObject* np = numpy_module();
  if (np == NULL) return -1;
  PyObject* src = NULL;
  /* A buffer as NumPy reads a memoryview of it: its elements (bytes are
   * uint8 values, not one bytes scalar). */
  PyObject* in = st->has_buf ? PyMemoryView_FromObject(obj) : Py_NewRef(obj);
  int dl = in && !st->has_buf && PyObject_HasAttrString(obj, "__dlpack__") && !PyObject_HasAttrString(obj, "__array__");
  PyObject* meth = in ? PyObject_GetAttrString(np, dl ? "from_dlpack" : "asarray") : NULL;
  src = meth ? PyObject_CallOneArg(meth, in) : NULL;
  Py_XDECREF(meth);
  Py_XDECREF(in);
  PyObject* res = NULL;
  if (src != NULL) {
    PyObject* args = Py_BuildValue("(s)", want);
    PyObject* kw = Py_BuildValue("{s:s,s:s}", "order", r->order == GDL_ORDER_F ? "F" : "C", "casting", "same_kind");
    PyObject* astype = PyObject_GetAttrString(src, "astype");
    if (args && kw && astype) res = PyObject_Call(astype, args, kw);
    Py_XDECREF(args);
    Py_XDECREF(kw);
    Py_XDECREF(astype);
  }
  Py_XDECREF(src);
  if (res == NULL) {
    PyObject *et, *ev, *etb;
    PyErr_Fetch(&et, &ev, &etb);
    PyErr_NormalizeException(&et, &ev, &etb);
    PyErr_Format(PyExc_BufferError, "%s: %s, and converting the %.200s to %s failed: %S", arg_label(fn, i, lab, sizeof lab),
                 why, GDL_TP_NAME(Py_TYPE(obj)), want, ev ? ev : Py_None);
    Py_XDECREF(et);
    Py_XDECREF(ev);
    Py_XDECREF(etb);
    return -1;
  }
  int rc = take(fn, i, r, res, v, st, 0);
  Py_DECREF(res);
  return rc;
}

/* Whether obj is the NumPy array type itself (not a subclass). */
static int exact_ndarray(PyObject* obj) { return is_ndarray(obj); }

static int describe_ndarray(PyObject* obj, arg_desc* d) {
  const np_array* x = NP_ARRAY(obj);
  gdl_elem e = np_elem(x->descr);
  d->data = x->data;
  d->nd = x->nd;
  d->shape = (const int64_t*)x->dimensions;
  d->estr = NULL;
  d->dt = (DLDataType){e.code, e.bits, 1};
  d->known = e.bits != 0;
  d->np_dtype = (PyObject*)x->descr;
  d->fmt = NULL;
  d->readonly = !(x->flags & NP_WRITEABLE);
  d->dev = (DLDevice){kDLCPU, 0};
  for (int k = 0; k < d->nd; k++) d->bstr[k] = x->strides[k];
  int64_t isz = e.bits ? e.bits / 8 : 1;
  d->is_c = compact(d->shape, d->bstr, d->nd, isz, 0);
  d->is_f = compact(d->shape, d->bstr, d->nd, isz, 1);
  return 0;
}

static __attribute__((noinline)) void describe_dlpack(const DLTensor* t, uint64_t flags, arg_desc* d) {
  d->data = t->data ? (char*)t->data + t->byte_offset : NULL;
  d->nd = t->ndim;
  d->shape = t->shape;
  d->estr = t->strides;
  d->dt = t->dtype;
  d->known = 1;
  d->np_dtype = NULL;
  d->fmt = NULL;
  d->readonly = (flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
  d->dev = t->device;
  int64_t isz = (int64_t)t->dtype.bits * t->dtype.lanes / 8;
  int64_t c[GDL_MAX_NDIM];
  c[0] = 0; /* ndim 0: unread, but set */
  if (t->strides == NULL) { /* compact C */
    int64_t s = 1;
    for (int k = t->ndim - 1; k >= 0; k--) {
      c[k] = s;
      s *= t->shape[k];
    }
  }
  const int64_t* es = t->strides ? t->strides : c;
  for (int k = 0; k < t->ndim; k++) d->bstr[k] = es[k] * isz;
  d->is_c = compact(d->shape, es, d->nd, 1, 0);
  d->is_f = compact(d->shape, es, d->nd, 1, 1);
}

/* The dtype of a buffer's struct format and item size, in native byte
 * order (1), or 0: one godlpack does not name. Sizes come from itemsize
 * (a native 'l' is 8 bytes, a standard one 4). */
static int buffer_dtype(const char* f, Py_ssize_t isz, DLDataType* dt) {
  int native = 1;
  if (f == NULL) f = "B"; /* PyBUF_FORMAT's rule: no format is unsigned bytes */
  if (*f == '@' || *f == '=') {
    f++;
  } else if (*f == '<' || *f == '>' || *f == '!') {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    native = *f == '<';
#else
    native = *f != '<';
#endif
    f++;
  }
  uint8_t code;
  Py_ssize_t want = 0; /* a float's own size; 0: any integer size */
  if (f[0] == 'Z' && f[1] != '\0' && f[2] == '\0') { /* NumPy's complex: Zf, Zd */
    code = kDLComplex;
    want = f[1] == 'f' ? 8 : f[1] == 'd' ? 16 : -1;
  } else if (f[0] == '\0' || f[1] != '\0') {
    return 0;
  } else {
    switch (f[0]) {
      case '?': code = kDLBool; want = 1; break;
      case 'b': case 'h': case 'i': case 'l': case 'q': case 'n': code = kDLInt; break;
      case 'B': case 'c': case 'H': case 'I': case 'L': case 'Q': case 'N': code = kDLUInt; break;
      case 'e': code = kDLFloat; want = 2; break;
      case 'f': code = kDLFloat; want = 4; break;
      case 'd': code = kDLFloat; want = 8; break;
      case 'F': code = kDLComplex; want = 8; break; /* struct's complex formats (3.14) */
      case 'D': code = kDLComplex; want = 16; break;
      default: return 0;
    }
  }
  if ((want != 0 && isz != want) || (isz != 1 && isz != 2 && isz != 4 && isz != 8 && isz != 16) ||
      (code != kDLComplex && isz == 16) || (!native && isz > 1))
    return 0;
  *dt = (DLDataType){code, (uint8_t)(isz * 8), 1};
  return 1;
}

/* An exported buffer (PyBUF_RECORDS_RO: shape and strides, no suboffsets)
 * as an argument on the CPU. */
static void describe_buffer(const Py_buffer* b, arg_desc* d) {
  d->data = b->buf;
  d->nd = b->ndim;
  d->shape = (const int64_t*)b->shape;
  d->estr = NULL;
  d->known = buffer_dtype(b->format, b->itemsize, &d->dt);
  d->np_dtype = NULL;
  d->fmt = b->format ? b->format : "B";
  d->readonly = b->readonly != 0;
  d->dev = (DLDevice){kDLCPU, 0};
  int64_t s = b->itemsize;
  for (int k = b->ndim - 1; k >= 0; k--) { /* strides NULL: C-contiguous */
    d->bstr[k] = b->strides ? b->strides[k] : s;
    s *= b->shape[k];
  }
  int64_t isz = b->itemsize > 0 ? b->itemsize : 1;
  d->is_c = compact(d->shape, d->bstr, d->nd, isz, 0);
  d->is_f = compact(d->shape, d->bstr, d->nd, isz, 1);
}

/* The shape check: 0, or -1 with BufferError. */
static int check_shape(const gdl_fn* fn, int i, const gdl_req* r, const arg_desc* d) {
  char lab[256], want[512], got[512];
  if (r->ndim < 0) return 0;
  int ok = d->nd == r->ndim;
  for (int k = 0; ok && r->has_shape && k < r->ndim; k++) ok = r->shape[k] == -1 || r->shape[k] == d->shape[k];
  if (ok) return 0;
  put_tuple(got, sizeof got, d->shape, d->nd, 0);
  if (r->has_shape) {
    put_tuple(want, sizeof want, r->shape, r->ndim, 1);
    PyErr_Format(PyExc_BufferError, "%s: want shape %s, got %s", arg_label(fn, i, lab, sizeof lab), want, got);
  } else {
    PyErr_Format(PyExc_BufferError, "%s: want ndim %d, got %d (shape %s)", arg_label(fn, i, lab, sizeof lab),
                 (int)r->ndim, d->nd, got);
  }
  return -1;
}

static const char* device_name(int32_t type) {
  for (int i = 0; i < GDL_NUM_DEVICES; i++) {
    if (gdl_devices[i].type == type) return gdl_devices[i].name;
  }
  return "an unknown device type";
}

static const char* order_name(int order) {
  return order == GDL_ORDER_C ? "C-contiguous" : order == GDL_ORDER_F ? "Fortran-contiguous" : "strided";
}

/* Why a CPU argument does not conform to a typed slice or NDArray (NULL:
 * it does): into why. Sets *same_dtype. */
static const char* nonconforming(const gdl_fn* fn, int i, const gdl_req* r, const arg_desc* d, char* why, size_t len,
                                 int* same_dtype) {
  gdl_elem e = fn->elem[i];
  int64_t isz = e.bits / 8;
  *same_dtype = d->known && d->dt.code == e.code && d->dt.bits == e.bits && d->dt.lanes == 1;
  if (!*same_dtype) {
    PyObject* got = d->known ? gdl_dtype_name(d->dt) : d->np_dtype ? PyObject_Str(d->np_dtype) : NULL; /* >f8, <M8[s] */
    const char* g = got ? PyUnicode_AsUTF8(got) : NULL;
    if (g == NULL) PyErr_Clear();
    if (g == NULL && d->fmt != NULL)
      snprintf(why, len, "want dtype %s, got buffer format '%.100s'", elem_name(e.code, e.bits), d->fmt);
    else
      snprintf(why, len, "want dtype %s, got %s", elem_name(e.code, e.bits), g ? g : "another dtype");
    Py_XDECREF(got);
    return why;
  }
  int layout = r->order == GDL_ORDER_C ? d->is_c : r->order == GDL_ORDER_F ? d->is_f : 1;
  for (int k = 0; layout && k < d->nd; k++) layout = (d->bstr[k] & (isz - 1)) == 0; /* isz: a power of 2 */
  if (!layout) {
    char strides[512], shape[512];
    put_tuple(shape, sizeof shape, d->shape, d->nd, 0);
    int elems = 1;
    int64_t es[GDL_MAX_NDIM];
    for (int k = 0; k < d->nd; k++) {
      elems = elems && d->bstr[k] % isz == 0;
      es[k] = d->bstr[k] / isz;
    }
    put_tuple(strides, sizeof strides, elems ? es : d->bstr, d->nd, 0);
    snprintf(why, len, "want %s, got %sstrides %s for shape %s", order_name(r->order), elems ? "" : "byte ", strides, shape);
    return why;
  }
  if (count(d->shape, d->nd) != 0 && ((uintptr_t)d->data & (uintptr_t)((e.code == kDLComplex ? isz / 2 : isz) - 1)) != 0) {
    snprintf(why, len, "data at %p is not aligned for %s elements", (void*)d->data, elem_name(e.code, e.bits));
    return why;
  }
  return NULL;
}

/* The common case of an exact NumPy array that conforms as it is (the
 * parameter's dtype, shape, layout and alignment, writable when written),
 * decided from its fields in one pass with no arg_desc, no second layout and
 * no message buffers: 1 with its shape and element strides copied (nd of
 * each, at most max), n, lo and hi (put_view's). Anything else (0) takes the
 * general path below, which decides the same way and words the refusal or
 * converts. */
static int conforms(const gdl_fn* fn, int i, const gdl_req* r, const np_array* x, int max, int64_t* shape_out,
                    int64_t* estr, int64_t* n_out, int64_t* lo_out, int64_t* hi_out) {
  gdl_elem e = fn->elem[i];
  const gdl_elem* got = np_elem_ref(x->descr);
  int nd = x->nd;
  if (got->code != e.code || got->bits != e.bits || nd > max || (r->ndim >= 0 && nd != r->ndim)) return 0;
  if (!(x->flags & NP_WRITEABLE) && ((fn->writes >> i) & 1)) return 0;
  if (r->order == GDL_ORDER_C && !(x->flags & NP_C_CONTIGUOUS)) return 0; /* NumPy's own flags: no second pass */
  if (r->order == GDL_ORDER_F && !(x->flags & NP_F_CONTIGUOUS)) return 0;
  const int64_t* shape = (const int64_t*)x->dimensions;
  const int64_t* bstr = (const int64_t*)x->strides;
  int64_t isz = e.bits / 8, rem = 0, n = 1, lo = 0, hi = 0;
  int shift = np_shift(isz);
  /* The shape copied by a loop, not memcpy (a rep movs for a few bytes was
   * half of the fast path). */
  for (int k = 0; k < nd; k++) {
    int64_t d = shape[k], b = bstr[k];
    if (r->has_shape && r->shape[k] != -1 && r->shape[k] != d) return 0;
    rem |= b & (isz - 1); /* whole elements; isz: a power of 2 */
    n *= d;
    if (d != 0) {
      int64_t ext = (d - 1) * b;
      if (ext < 0) lo += ext;
      else hi += ext;
    }
    shape_out[k] = d;
    estr[k] = b >> shift; /* exact, also when negative */
  }
  if (rem != 0) return 0;
  if (n != 0 && ((uintptr_t)x->data & (uintptr_t)((e.code == kDLComplex ? isz / 2 : isz) - 1)) != 0) return 0;
  *n_out = n;
  *lo_out = lo;
  *hi_out = hi;
  return 1;
}

static int take_ndarray(const gdl_fn* fn, int i, const gdl_req* r, PyObject* obj, gdl_value* v, arg_state* st) {
  const np_array* x = NP_ARRAY(obj);
  int64_t n, lo, hi;
  if (!conforms(fn, i, r, x, GDL_MAX_NDIM, st->shape, st->estrides, &n, &lo, &hi)) return 0;
  st->held = Py_NewRef(obj);
  st->isz = (size_t)(fn->elem[i].bits / 8);
  st->nd = x->nd;
  put_view(v, &st->view, st->shape, st->estrides, x->nd, (int64_t)st->isz, r, x->data, n, lo, hi);
  return 1;
}

int gdl_req_view(const gdl_fn* fn, int i, PyObject* obj, gdl_value* v, gdl_stack_view* sv) {
  const gdl_req* r = fn->req[i];
  const np_array* x = NP_ARRAY(obj);
  int64_t n, lo, hi;
  if (r->view == GDL_VIEW_TENSOR || !conforms(fn, i, r, x, GDL_VIEW_NDIM, sv->shape, sv->estrides, &n, &lo, &hi))
    return 0;
  put_view(v, &sv->view, sv->shape, sv->estrides, x->nd, fn->elem[i].bits / 8, r, x->data, n, lo, hi);
  v->st = sv;
  return 1;
}

static int take(const gdl_fn* fn, int i, const gdl_req* r, PyObject* obj, gdl_value* v, arg_state* st,
                int may_convert) {
  char lab[256], why[1200];
  arg_desc d;
  int view = r->view != GDL_VIEW_TENSOR;
  int written = (fn->writes >> i) & 1;
  int buffer = view && !exact_ndarray(obj) ? gdl_buffer_only(obj) : 0;
  if (buffer < 0) return -1;
  if (view && exact_ndarray(obj)) {
    describe_ndarray(obj, &d);
    Py_XSETREF(st->held, Py_NewRef(obj));
  } else if (buffer) {
    /* Held until gdl_req_free: the exporter keeps the memory (a bytearray
     * or array.array refuses to resize meanwhile). Read-only asked for;
     * a written parameter checks the flag below. */
    if (PyObject_GetBuffer(obj, &st->buf, PyBUF_RECORDS_RO) < 0) {
      relabel(fn, i);
      return -1;
    }
    st->has_buf = 1;
    describe_buffer(&st->buf, &d);
  } else {
    int versioned;
    void* m = gdl_managed_from_object_checked(obj, GDL.max_version, &versioned);
    if (m == NULL) {
      if (may_convert && view && PyErr_ExceptionMatches(PyExc_TypeError)) { /* no array: NumPy's turn */
        PyErr_Clear();
        snprintf(why, sizeof why, "not an array");
        if (r->convert == GDL_CONV_WRITE_BACK) {
          PyErr_Format(PyExc_BufferError, "%s: a %.200s is no array that the function's writes could go back to",
                       arg_label(fn, i, lab, sizeof lab), GDL_TP_NAME(Py_TYPE(obj)));
          return -1;
        }
        return convert_numpy(fn, i, r, obj, v, st, why);
      }
      relabel(fn, i); /* say which argument */
      return -1;
    }
    if (st->managed != NULL) gdl_managed_free(st->managed, st->versioned); /* a NumPy subclass's conversion */
    st->managed = m;
    st->versioned = versioned;
    char msg[256];
    int k = versioned ? gdl_check_versioned(m, msg, sizeof msg) : gdl_check_legacy(m, msg, sizeof msg);
    if (k != GDL_OK) {
      PyErr_Format(PyExc_BufferError, "%s: %s", arg_label(fn, i, lab, sizeof lab), msg);
      return -1;
    }
    const DLTensor* t = versioned ? &((DLManagedTensorVersioned*)m)->dl_tensor : &((DLManagedTensor*)m)->dl_tensor;
    describe_dlpack(t, versioned ? ((DLManagedTensorVersioned*)m)->flags : 0, &d);
  }
  /* Device: never converted. */
  int dev = view ? GDL_DEV_CPU : r->device;
  int cpu = gdl_cpu_accessible(d.dev.device_type);
  if ((dev == GDL_DEV_CPU && !cpu) || (dev == GDL_DEV_CUDA && d.dev.device_type != kDLCUDA)) {
    PyErr_Format(PyExc_BufferError, "%s: want %s, got an array on %s (device type %d)%s",
                 arg_label(fn, i, lab, sizeof lab), dev == GDL_DEV_CPU ? "memory the CPU can read" : "a CUDA array",
                 device_name(d.dev.device_type), (int)d.dev.device_type,
                 dev == GDL_DEV_CPU ? " (conversions never move data between devices: copy it to the host first)" : "");
    return -1;
  }
  if (!view && r->bits != 0 && (d.dt.code != r->code || d.dt.bits != r->bits || d.dt.lanes != 1)) {
    PyObject* got = gdl_dtype_name(d.dt);
    if (got != NULL)
      PyErr_Format(PyExc_BufferError, "%s: want dtype %s, got %U", arg_label(fn, i, lab, sizeof lab),
                   elem_name(r->code, r->bits), got);
    Py_XDECREF(got);
    return -1;
  }
  if (d.nd > GDL_MAX_NDIM) d.nd = GDL_MAX_NDIM; /* validated (DLPack) or NumPy's own limit */
  if (check_shape(fn, i, r, &d) < 0) return -1;
  if (written && d.readonly) {
    PyErr_Format(PyExc_BufferError, "%s is read-only, and %s may write to it", arg_label(fn, i, lab, sizeof lab),
                 fn->name);
    return -1;
  }
  /* Managed memory: the host waits for the device before Go reads it. */
  if (st->managed != NULL && cpu && gdl_host_sync(d.dev, 1) < 0) return -1;
  if (!view) {
    if (r->order != GDL_ORDER_ANY && !(r->order == GDL_ORDER_C ? d.is_c : d.is_f)) {
      char shape[512];
      put_tuple(shape, sizeof shape, d.shape, d.nd, 0);
      PyErr_Format(PyExc_BufferError, "%s: want %s, got a strided array of shape %s", arg_label(fn, i, lab, sizeof lab),
                   order_name(r->order), shape);
      return -1;
    }
    v->p = st->managed;
    v->versioned = st->versioned;
    return 0;
  }
  gdl_elem e = fn->elem[i];
  st->isz = e.bits / 8;
  st->nd = d.nd;
  if (d.nd > 0) memcpy(st->shape, d.shape, (size_t)d.nd * sizeof(int64_t)); /* a 0-d shape may be NULL */
  int same_dtype;
  if (nonconforming(fn, i, r, &d, why, sizeof why, &same_dtype) == NULL) {
    fill_view(v, st, r, d.data, d.bstr);
    return 0;
  }
  if (!may_convert || r->convert == GDL_CONV_NONE) {
    PyErr_Format(PyExc_BufferError, "%s: %s; pass a conforming copy%s", arg_label(fn, i, lab, sizeof lab), why,
                 r->convert == GDL_CONV_NONE ? ", or allow a conversion in Go (pyext.Convert)" : "");
    return -1;
  }
  if (!same_dtype) {
    if (r->convert == GDL_CONV_WRITE_BACK) {
      PyErr_Format(PyExc_BufferError, "%s: %s, and a conversion of dtype cannot be written back (it would be lossy); "
                   "pass an array of the parameter's dtype", arg_label(fn, i, lab, sizeof lab), why);
      return -1;
    }
    return convert_numpy(fn, i, r, obj, v, st, why);
  }
  /* The same dtype, in another layout or unaligned: C copies it. */
  if (r->convert == GDL_CONV_WRITE_BACK) {
    for (int k = 0; k < d.nd; k++) {
      if (d.shape[k] > 1 && d.bstr[k] == 0) {
        PyErr_Format(PyExc_BufferError, "%s: %s, and it is broadcast (stride 0 in dimension %d): its elements share "
                     "memory, so writes cannot go back; pass a writable copy", arg_label(fn, i, lab, sizeof lab), why, k);
        return -1;
      }
    }
  }
  int64_t n = count(d.shape, d.nd);
  size_t bytes = (size_t)n * st->isz;
  st->tmp = gdl_aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
  if (st->tmp == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  int64_t s = (int64_t)st->isz;
  for (int j = 0; j < d.nd; j++) {
    int k = r->order == GDL_ORDER_F ? j : d.nd - 1 - j;
    st->tstrides[k] = s;
    s *= d.shape[k];
  }
  strided_copy(st->tmp, st->tstrides, d.data, d.bstr, d.shape, d.nd, st->isz);
  if (r->convert == GDL_CONV_WRITE_BACK) {
    st->back = d.data;
    memcpy(st->bstrides, d.bstr, (size_t)d.nd * sizeof(int64_t));
  }
  fill_view(v, st, r, st->tmp, st->tstrides);
  return 0;
}

/* States kept for reuse: one call with several arrays, or calls in several
 * threads, need more than one. pool_lock guards the stack (threads of a
 * free-threaded CPython push and pop at once). */
#define POOL 16
static gdl_mutex pool_lock;
static arg_state* pool[POOL];
static int npool;

int gdl_buffer_only(PyObject* obj) {
  PyTypeObject* t = Py_TYPE(obj);
#ifdef Py_LIMITED_API
  if (PyType_GetSlot(t, Py_bf_getbuffer) == NULL) return 0;
#else
  if (t->tp_as_buffer == NULL || t->tp_as_buffer->bf_getbuffer == NULL) return 0;
#endif
  if (t == &PyBytes_Type || t == &PyByteArray_Type || t == &PyMemoryView_Type) return 1; /* no __dlpack__: no lookup */
  PyObject* m = PyObject_GetAttr(obj, GDL.s_dlpack);
  if (m != NULL) {
    Py_DECREF(m);
    return 0;
  }
  if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
  PyErr_Clear();
  return 1;
}

/* A plain typed slice's requirements (no Require or Convert): what the
 * DLPack path of ext.c takes, for a buffer-protocol argument. */
static const gdl_req slice_req = {.ndim = -1, .order = GDL_ORDER_C, .device = GDL_DEV_CPU, .view = GDL_VIEW_SLICE};

int gdl_req_arg(const gdl_fn* fn, int i, PyObject* obj, gdl_value* v) {
  gdl_mutex_lock(&pool_lock);
  arg_state* st = npool ? pool[--npool] : NULL;
  gdl_mutex_unlock(&pool_lock);
  if (st == NULL) st = malloc(sizeof *st); /* not cleared: arrays are written first */
  if (st == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  st->managed = NULL;
  st->has_buf = 0;
  st->held = NULL;
  st->tmp = NULL;
  st->back = NULL;
  st->nd = 0;
  st->view.shape_len = 0;
  v->st = st;
  const gdl_req* r = fn->req[i] != NULL ? fn->req[i] : &slice_req;
  if (r->view != GDL_VIEW_TENSOR && exact_ndarray(obj) && take_ndarray(fn, i, r, obj, v, st)) return 0;
  return take(fn, i, r, obj, v, st, r->convert != GDL_CONV_NONE);
}

void gdl_req_write_back(gdl_value* v) {
  arg_state* st = v->st;
  if (st != NULL && st->back != NULL && st->tmp != NULL)
    strided_copy(st->back, st->bstrides, st->tmp, st->tstrides, st->shape, st->nd, st->isz);
}

void gdl_req_free(gdl_value* v) {
  arg_state* st = v->st;
  if (st == NULL) return;
  v->st = NULL;
  /* Only a deleter, or the last reference to NumPy's conversion, can run
   * code that disturbs a pending exception; an argument the caller holds
   * too just loses a reference. Without the GIL another thread may drop the
   * caller's reference meanwhile: the count proves nothing, so always save. */
  int quiet = !GDL_FREE_THREADED && (st->held == NULL || Py_REFCNT(st->held) > 1);
  if (st->managed == NULL && !st->has_buf && quiet) {
    Py_XDECREF(st->held);
  } else { /* a deleter, or an exporter's release, may run Python code */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (st->managed != NULL) gdl_managed_free(st->managed, st->versioned);
    if (st->has_buf) PyBuffer_Release(&st->buf);
    st->has_buf = 0;
    Py_XDECREF(st->held);
    PyErr_Restore(type, value, tb);
  }
  if (st->tmp != NULL) gdl_aligned_free(st->tmp);
  gdl_mutex_lock(&pool_lock);
  int kept = npool < POOL;
  if (kept) pool[npool++] = st;
  gdl_mutex_unlock(&pool_lock);
  if (!kept) free(st);
}

/* The C side of Go extension functions: the call path converts the Python
 * arguments (arrays are imported and validated here, with the GIL), calls the
 * Go function once (optionally without the GIL), releases the arrays, and
 * builds the results. */
#include "exchange.h"
#include "ext.h"
#include "ext_arrays.h"
#include "ext_conv.h"
#include "ext_parts.h"
#include "ext_pyobj.h"

/* How an array argument is held until the call returns. */
enum {
  ARG_NONE,
  ARG_MANAGED,
  ARG_HELD,
  ARG_REQ,       /* ext_arrays.c holds it */
  ARG_CALLABLE,  /* v.i: a reference Go takes (zeroing v.i) or C drops */
  ARG_CONTAINER, /* a list or dict: v.s the values (freed), held[i] the copy of its items */
  ARG_BYTEARRAY, /* the next of call_args' bufs, released in order */
};

/* A godlpack.Tensor argument read from an exact NumPy array's fields: the
 * managed tensor NumPy's __dlpack__ would export, without the capsule and
 * the Python call. Up to NP_TENSORS such arguments a call, of up to
 * GDL_NP_TENSOR_NDIM dimensions (the rest take the DLPack path). */
#define NP_TENSORS 2
typedef struct {
  DLManagedTensorVersioned m;
  int64_t strides[GDL_NP_TENSOR_NDIM];
  gdl_tensor_image img; /* when the block had room (serial calls only) */
} np_tensor;

gdl_shape_block gdl_tensor_block; /* with the GIL; Go refills it */

/* One call's arguments: the values for Go, and what C holds for them. */
typedef struct {
  gdl_value v[GDL_MAX_PARAMS];
  char how[GDL_MAX_PARAMS];
  PyObject* held[GDL_MAX_PARAMS]; /* ARG_HELD's reference */
  int arrays; /* whether any how[i] is set: scalar calls skip the loops over how */
  int reqs;   /* whether any how[i] is ARG_REQ: the others skip the write-back loop */
  int ntensors;
  np_tensor tensors[NP_TENSORS];
  int nviews;
  gdl_stack_view views[NP_TENSORS]; /* arguments with requirements taken as they are (gdl_req_view) */
  int nbufs;
  Py_buffer bufs[NP_TENSORS]; /* exact bytearrays (bytes_arg), held against resizing */
  int ncopies;
  void* copies[GDL_MAX_PARAMS]; /* read arguments copied away from a written one (separate_overlaps) */
} call_args;

/* Lets go of the first n arguments' arrays; a pending exception survives
 * deleters that run Python code. (Dropping a held reference runs none: the
 * caller holds the argument too.) */
static inline __attribute__((always_inline)) void free_arrays(call_args* a, int n) {
  if (!a->arrays) return;
  for (int i = 0, b = 0; i < n; i++) {
    switch (a->how[i]) { /* one test per argument */
      case ARG_NONE:
        break;
      case ARG_HELD:
        Py_DECREF(a->held[i]);
        break;
      case ARG_BYTEARRAY:
        PyBuffer_Release(&a->bufs[b++]); /* taken in the order of the arguments */
        break;
      case ARG_REQ:
        gdl_req_free(&a->v[i]);
        break;
      case ARG_CALLABLE:
        if (a->v[i].i != 0) Py_DECREF((PyObject*)(uintptr_t)a->v[i].i); /* Go did not take it */
        break;
      case ARG_CONTAINER:
        free((void*)a->v[i].s);
        Py_DECREF(a->held[i]);
        break;
      case ARG_MANAGED: {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        gdl_managed_free(a->v[i].p, a->v[i].versioned);
        PyErr_Restore(type, value, tb);
        break;
      }
    }
  }
}

static const char* dtype_name(uint8_t code, uint8_t bits) {
  for (int i = 0; i < GDL_NUM_DTYPES; i++) {
    if (gdl_dtypes[i].code == code && gdl_dtypes[i].bits == bits) return gdl_dtypes[i].name;
  }
  return "unknown dtype"; /* not reached: validated tensors and Go element types are known */
}

/* dims as Go prints an []int64: [2 3]. */
static void put_dims(char* s, size_t len, const int64_t* dims, int32_t nd) {
  size_t k = (size_t)snprintf(s, len, "[");
  for (int32_t i = 0; i < nd && k < len; i++) k += (size_t)snprintf(s + k, len - k, i ? " %lld" : "%lld", (long long)dims[i]);
  if (k < len) snprintf(s + k, len - k, "]");
}

/* The alignment Go gives the element type (a complex is two floats). */
static uintptr_t go_align(gdl_elem e) { return e.code == kDLComplex ? e.bits / 16 : e.bits / 8; }

/* A validated tensor taken by a typed-slice parameter: exactly its element
 * type, compact. Sets v's data, n and i; -1 with BufferError otherwise. */
static int slice_arg(const gdl_fn* fn, int i, const DLTensor* t, gdl_value* v) {
  gdl_elem e = fn->elem[i];
  if (t->dtype.code != e.code || t->dtype.bits != e.bits || t->dtype.lanes != 1) {
    PyObject* got = gdl_dtype_name(t->dtype); /* names vector dtypes too (float32x4) */
    if (got != NULL)
      PyErr_Format(PyExc_BufferError, "%s() argument %d: want dtype %s, got %U; pass a conforming copy, or allow a "
                   "conversion in Go (pyext.Convert)", fn->name, i + 1, dtype_name(e.code, e.bits), got);
    Py_XDECREF(got);
    return -1;
  }
  if (t->strides != NULL && !gdl_is_compact(t->shape, t->strides, t->ndim, 0)) {
    char strides[512], shape[512];
    put_dims(strides, sizeof strides, t->strides, t->ndim);
    put_dims(shape, sizeof shape, t->shape, t->ndim);
    PyErr_Format(PyExc_BufferError, "%s() argument %d: not C-contiguous (strides %s for shape %s); pass a contiguous copy, or "
                 "allow a conversion in Go (pyext.Convert)",
                 fn->name, i + 1, strides, shape);
    return -1;
  }
  int64_t n = gdl_shape_count(t->shape, t->ndim); /* validated: no overflow */
  char* data = n ? (char*)t->data + t->byte_offset : NULL;
  if ((uintptr_t)data % go_align(e) != 0) {
    PyErr_Format(PyExc_BufferError, "%s() argument %d: data at %p is not aligned for %s elements; pass an aligned copy",
                 fn->name, i + 1, (void*)data, dtype_name(e.code, e.bits));
    return -1;
  }
  v->n = v->ncap = n;
  v->i = n * (e.bits / 8);
  v->data = data;
  return 0;
}

#include "ext_np.h"

/* Whether fn may write array argument i (pyext.Writes, ReadOnlyArgs). */
static int writes(const gdl_fn* fn, int i) { return (fn->writes >> i) & 1; }

/* Whether obj's producer treats its arrays as immutable even when its DLPack
 * export does not say so: JAX (before 0.12, JAX exports legacy capsules,
 * which carry no read-only flag). Its type's module is jax or jaxlib
 * (jaxlib._jax.ArrayImpl). 1 yes, 0 no, -1 error set. */
static int immutable_producer(PyObject* obj) {
  PyObject* mod = PyObject_GetAttrString((PyObject*)Py_TYPE(obj), "__module__");
  if (mod == NULL) {
    PyErr_Clear();
    return 0;
  }
  int r = 0;
  if (PyUnicode_Check(mod)) {
    const char* s = PyUnicode_AsUTF8(mod);
    if (s == NULL) {
      Py_DECREF(mod);
      return -1;
    }
    r = (strncmp(s, "jax", 3) == 0 && (s[3] == '\0' || s[3] == '.')) ||
        (strncmp(s, "jaxlib", 6) == 0 && (s[6] == '\0' || s[6] == '.'));
  }
  Py_DECREF(mod);
  return r;
}

/* The fast path for a NumPy array passed to a typed-slice parameter: its
 * fields read directly, with no capsule and no Python call. Taken (1) only
 * when the array is what the DLPack path would accept: exactly the element
 * type, compact, aligned, writable unless read-only arguments are allowed (NumPy
 * memory is on the CPU). Otherwise 0, and the DLPack path takes the argument
 * or words the refusal. The array is held (a reference) until the call
 * returns, as a capsule would hold it. */
static int ndarray_arg(const gdl_fn* fn, int i, PyObject* obj, call_args* a) {
  const np_array* x = NP_ARRAY(obj);
  gdl_elem want = fn->elem[i];
  const gdl_elem* got = np_elem_ref(x->descr);
  if (got->code != want.code || got->bits != want.bits || !(x->flags & NP_C_CONTIGUOUS) || !(x->flags & NP_ALIGNED) ||
      (!(x->flags & NP_WRITEABLE) && writes(fn, i)) || x->nd > GDL_MAX_NDIM)
    return 0;
  int64_t n = 1;
  for (int k = 0; k < x->nd; k++) n *= x->dimensions[k]; /* NumPy's sizes fit */
  gdl_value* v = &a->v[i];
  v->n = v->ncap = n;
  v->i = n * (want.bits / 8);
  v->data = n ? x->data : NULL;
  a->held[i] = Py_NewRef(obj);
  a->how[i] = ARG_HELD;
  a->arrays = 1;
  return 1;
}

/* The fast path for an exact bytes or bytearray passed to a []byte (or
 * []uint8) parameter: the memory read in place, with no format to parse
 * (what the buffer path of ext_arrays.c takes alike: one dimension of
 * format 'B'). bytes is read-only: a written parameter refuses it as that
 * path does. A bytes object is not held: the argument is the caller's until
 * the call returns, and bytes never change. A bytearray is held through
 * its buffer (up to NP_TENSORS a call), which keeps it from resizing while
 * Go reads it, as the general path holds it. 1: taken; 0: the general
 * paths (subclasses, which may export another buffer, too); -1: refused
 * (BufferError) or failed. */
static int bytes_arg(const gdl_fn* fn, int i, PyObject* obj, call_args* a) {
  gdl_value* v = &a->v[i];
  Py_ssize_t n;
  char* data;
  if (PyBytes_CheckExact(obj)) {
    if (writes(fn, i)) {
      PyErr_Format(PyExc_BufferError, "%s() argument %d is read-only, and %s may write to it", fn->name, i + 1,
                   fn->name);
      return -1;
    }
    n = PyBytes_GET_SIZE(obj);
    data = PyBytes_AS_STRING(obj);
  } else if (PyByteArray_CheckExact(obj) && a->nbufs < NP_TENSORS) {
    Py_buffer* b = &a->bufs[a->nbufs];
    if (PyObject_GetBuffer(obj, b, writes(fn, i) ? PyBUF_WRITABLE : PyBUF_SIMPLE) < 0) return -1;
    a->nbufs++;
    a->how[i] = ARG_BYTEARRAY;
    a->arrays = 1;
    n = b->len;
    data = b->buf;
  } else {
    return 0;
  }
  v->n = v->ncap = v->i = n;
  v->data = n ? data : NULL;
  return 1;
}

/* The image of x for Go (gdl_tensor_image), its shape and strides (in
 * elements of 1 << sh bytes) copied into Go's pinned block: only while the
 * GIL serializes conversions (serial), and when the block has room (Go
 * refills it after converting an argument without one). 1: made; 0: none
 * (np_tensor_arg builds the managed tensor); -1: strides in part elements. */
static int np_tensor_image(np_tensor* t, const np_array* x, const gdl_elem* e, int sh, gdl_value* v) {
  gdl_shape_block* b = &gdl_tensor_block;
  int nd = x->nd;
  if (!v->serial || b->base == NULL || b->used + 2 * nd > b->cap) return 0;
  int64_t* d = b->base + b->used;
  int64_t* ds = d + nd;
  /* Read once into locals: the stores into d may alias NumPy's arrays as
   * far as C knows, which had each access reload them. */
  const Py_ssize_t* dims = x->dimensions;
  const Py_ssize_t* strides = x->strides;
  int64_t rem = 0, part = ((int64_t)1 << sh) - 1;
  for (int k = 0; k < nd; k++) {
    int64_t s = strides[k];
    rem |= s & part;
    d[k] = dims[k];
    ds[k] = s >> sh;
  }
  if (rem != 0) return -1;
  b->used += 2 * nd;
  gdl_tensor_image* m = &t->img;
  m->data = (uintptr_t)x->data >= GDL_MIN_DATA_ADDRESS ? x->data : NULL;
  m->shape = nd ? d : b->base; /* 0-d: empty, not nil, and within the block */
  m->shape_len = m->shape_cap = nd;
  m->strides = nd ? d + nd : NULL;
  m->strides_len = m->strides_cap = nd;
  m->code = e->code;
  m->bits = e->bits;
  m->lanes = 1;
  m->device_type = kDLCPU;
  m->device_id = 0;
  m->read_only = 0;
  m->byte_offset = 0;
  v->img = m;
  return 1;
}

/* The fast path for an exact NumPy array passed to a godlpack.Tensor
 * parameter: the tensor NumPy's __dlpack__(max_version=(1, 0)) exports
 * (data, byte offset 0, shape, strides in elements; NULL both for 0-d; no
 * flags), held as the typed path holds it: as Go's image of it (v->img)
 * where C can make one, else as a managed tensor (v->p). Taken (1) only for
 * what that export accepts alike in NumPy 1.x and 2.x: a built-in numeric
 * dtype in native byte order, strides in whole elements, writable (NumPy 2
 * flags read-only arrays, NumPy 1 refuses them). Otherwise 0: the DLPack
 * path. */
static int np_tensor_arg(int i, PyObject* obj, call_args* a) {
  const np_array* x = NP_ARRAY(obj);
  const gdl_elem* e = np_elem_ref(x->descr);
  if (e->bits == 0 || !(x->flags & NP_WRITEABLE) || x->nd > GDL_NP_TENSOR_NDIM || a->ntensors == NP_TENSORS) return 0;
  np_tensor* t = &a->tensors[a->ntensors];
  int sh = np_shift(e->bits / 8);
  gdl_value* v = &a->v[i];
  int img = np_tensor_image(t, x, e, sh, v);
  if (img < 0) return 0;
  if (img == 0) {
    int64_t rem = 0;
    for (int k = 0; k < x->nd; k++) {
      rem |= x->strides[k] & ((1 << sh) - 1); /* whole elements: NumPy's __dlpack__ refuses the rest */
      t->strides[k] = x->strides[k] >> sh;   /* exact (an arithmetic shift of a multiple) */
    }
    if (rem != 0) return 0;
    DLManagedTensorVersioned* m = &t->m; /* field by field: no memset call */
    m->version.major = 1;
    m->version.minor = 0;
    m->manager_ctx = NULL;
    m->deleter = NULL;
    m->flags = 0;
    m->dl_tensor.data = x->data;
    m->dl_tensor.device = (DLDevice){kDLCPU, 0};
    m->dl_tensor.ndim = x->nd;
    m->dl_tensor.dtype = (DLDataType){e->code, e->bits, 1};
    m->dl_tensor.shape = x->nd ? (int64_t*)x->dimensions : NULL;
    m->dl_tensor.strides = x->nd ? t->strides : NULL;
    m->dl_tensor.byte_offset = 0;
    v->p = m;
    v->versioned = 1;
  }
  a->ntensors++;
  a->held[i] = Py_NewRef(obj);
  a->how[i] = ARG_HELD;
  a->arrays = 1;
  return 1;
}

/* Imports obj as an array argument: validated; refused where PyTorch would
 * export wrong values (negative or conjugate bit), as from_dlpack refuses
 * it; when the function writes it (fn->writes), writable and not from a
 * producer that treats its arrays as immutable (JAX); and for a typed slice CPU-accessible, of its
 * element type, compact and aligned. A godlpack.Tensor or *consumer.Tensor
 * takes any device (its typed views refuse memory the CPU cannot read); the
 * data is ready on the legacy default stream, as godlpack asks producers for
 * stream=None. Memory the host reads (managed memory) waits for that stream.
 * A typed slice's argument with a buffer and no __dlpack__ (bytes,
 * array.array...) goes to ext_arrays.c, which holds the buffer for the call. */
static int array_arg(const gdl_fn* fn, int i, PyObject* obj, call_args* a) {
  int typed = fn->elem[i].bits != 0;
  if (typed && fn->req[i] == NULL && is_ndarray(obj) && ndarray_arg(fn, i, obj, a)) return 0;
  if (fn->elem[i].code == kDLUInt && fn->elem[i].bits == 8 && !fn->elem[i].nd && fn->req[i] == NULL) {
    int r = bytes_arg(fn, i, obj, a); /* bytes, bytearray */
    if (r != 0) return r < 0 ? -1 : 0;
  }
  if (fn->elem[i].tensor && fn->req[i] == NULL && is_ndarray(obj) && np_tensor_arg(i, obj, a)) return 0;
  if (fn->req[i] != NULL && a->nviews < NP_TENSORS && is_ndarray(obj) &&
      gdl_req_view(fn, i, obj, &a->v[i], &a->views[a->nviews])) { /* held as the typed path holds it */
    a->nviews++;
    a->held[i] = Py_NewRef(obj);
    a->how[i] = ARG_HELD;
    a->arrays = 1;
    return 0;
  }
  if (writes(fn, i) && !PyCapsule_CheckExact(obj)) {
    int imm = immutable_producer(obj);
    if (imm < 0) return -1;
    if (imm) {
      PyErr_Format(PyExc_BufferError,
                   "%s() argument %d is a %.200s, which its producer (JAX) treats as immutable, and %s may write to "
                   "it (its Go definition declares it written: writes(...), pyext.Writes); pass a mutable copy "
                   "(e.g. numpy.array(x))",
                   fn->name, i + 1, GDL_TP_NAME(Py_TYPE(obj)), fn->name);
      return -1;
    }
  }
  int buffer = fn->req[i] == NULL && typed ? gdl_buffer_only(obj) : 0; /* bytes, array.array... */
  if (buffer < 0) return -1;
  if (fn->req[i] != NULL || buffer) { /* pyext.Require, Convert, NDArray, buffers: ext_arrays.c */
    a->how[i] = ARG_REQ;
    a->arrays = 1;
    a->reqs = 1;
    return gdl_req_arg(fn, i, obj, &a->v[i]);
  }
  int versioned;
  /* from_dlpack's checks first: PyTorch's negative bit (its __dlpack__
   * refuses the conjugate bit itself). */
  void* m = gdl_managed_from_object_checked(obj, GDL.max_version, &versioned);
  if (m == NULL) {
    if (PyErr_ExceptionMatches(PyExc_BufferError)) { /* say which argument */
      PyObject *et, *ev, *etb;
      PyErr_Fetch(&et, &ev, &etb);
      PyErr_NormalizeException(&et, &ev, &etb);
      PyErr_Format(PyExc_BufferError, "%s() argument %d: %S", fn->name, i + 1, ev);
      Py_XDECREF(et);
      Py_XDECREF(ev);
      Py_XDECREF(etb);
    }
    return -1;
  }
  char msg[256];
  int k = versioned ? gdl_check_versioned(m, msg, sizeof msg) : gdl_check_legacy(m, msg, sizeof msg);
  const DLTensor* t = versioned ? &((DLManagedTensorVersioned*)m)->dl_tensor : &((DLManagedTensor*)m)->dl_tensor;
  int cpu = gdl_cpu_accessible(t->device.device_type);
  if (k == GDL_OK && typed && !cpu) {
    snprintf(msg, sizeof msg, "argument %d is on device type %d; a typed slice takes CPU-accessible arrays", i + 1,
             (int)t->device.device_type);
    k = -1;
  }
  if (k == GDL_OK && versioned && writes(fn, i) &&
      (((DLManagedTensorVersioned*)m)->flags & DLPACK_FLAG_BITMASK_READ_ONLY)) {
    snprintf(msg, sizeof msg, "argument %d is read-only, and %s may write to it", i + 1, fn->name);
    k = -1;
  }
  if (k != GDL_OK) {
    gdl_managed_free(m, versioned);
    if (strncmp(msg, "argument ", 9) == 0) /* worded as CPython's "f() argument 1 must be ...", as the buffer path */
      PyErr_Format(PyExc_BufferError, "%s() %s", fn->name, msg);
    else /* the validator's finding */
      PyErr_Format(PyExc_BufferError, "%s() argument %d: %s", fn->name, i + 1, msg);
    return -1;
  }
  gdl_value* v = &a->v[i];
  v->p = m;
  v->versioned = versioned;
  a->how[i] = ARG_MANAGED; /* freed by the caller from here on */
  a->arrays = 1;
  /* Managed memory: the host waits for the device. Device memory is left to
   * the device: Go only sees its address, and nothing on the host waits. */
  if (cpu && gdl_host_sync(t->device, 1) < 0) return -1;
  return typed ? slice_arg(fn, i, t, v) : 0;
}

/* A scalar or string argument that convert does not take inline: ext_pyobj.c
 * converts it or words the refusal. Apart, so that the inline cases build no
 * gdl_where. */
static __attribute__((noinline)) int value_arg(const gdl_fn* fn, int i, PyObject* obj, gdl_value* v) {
  gdl_where w = {fn->name, i + 1, 0, -1, NULL, 0};
  return gdl_value_from(fn->sig[i], fn->elem[i], obj, v, &w);
}

/* An argument that is no array at all (no __dlpack__, no buffer: a str, a
 * list without Convert) is a TypeError naming the function and the argument,
 * saying what the parameter takes, as CPython words a wrong argument type. */
static void not_an_array(const gdl_fn* fn, int i, PyObject* obj) {
  if (!PyErr_ExceptionMatches(PyExc_TypeError)) return;
  /* The lookup runs with the TypeError put aside: CPython 3.13+ reports one
   * made while an error is set as unraisable. */
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  if (PyObject_HasAttrString(obj, "__dlpack__") || PyObject_CheckBuffer(obj) || PyCapsule_CheckExact(obj)) {
    PyErr_Restore(type, value, tb);
    return;
  }
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  if (fn->elem[i].bits != 0) /* a typed slice or N-d view: buffers too */
    PyErr_Format(PyExc_TypeError, "%s() argument %d must be an array or a bytes-like object, not %.200s", fn->name,
                 i + 1, GDL_TP_NAME(Py_TYPE(obj)));
  else
    PyErr_Format(PyExc_TypeError, "%s() argument %d must be an array (an object with __dlpack__), not %.200s",
                 fn->name, i + 1, GDL_TP_NAME(Py_TYPE(obj)));
}

static int convert(const gdl_fn* fn, int i, PyObject* obj, call_args* a) {
  gdl_value* v = &a->v[i];
  if (fn->elem[i].opt) { /* a *T, or a typed slice defaulting to None: None is nil (pointers.go, args.go) */
    v->none = obj == Py_None;
    if (v->none) {
      v->data = NULL; /* a typed slice: ncap -1 is nil, not empty (params.go's sliceOf) */
      v->n = v->i = 0;
      v->ncap = -1;
      return 0;
    }
  }
  switch (fn->sig[i]) { /* exact floats and ints in range inline; the rest, and refusals, in ext_pyobj.c */
    case GDL_V_FLOAT:
      if (PyFloat_CheckExact(obj)) {
        double d = PyFloat_AS_DOUBLE(obj);
        if (fn->elem[i].bits != 32 || !isfinite(d) || !isinf((float)d)) {
          v->f = d;
          return 0;
        }
      }
      return value_arg(fn, i, obj, v);
    case GDL_V_INT:
      if (PyLong_CheckExact(obj)) {
        int overflow, bits = fn->elem[i].bits ? fn->elem[i].bits : 64;
        long long x = PyLong_AsLongLongAndOverflow(obj, &overflow); /* an exact int: no error but overflow */
        if (!overflow && (bits == 64 || (x >= -(1LL << (bits - 1)) && x < (1LL << (bits - 1))))) {
          v->i = x;
          return 0;
        }
      }
      return value_arg(fn, i, obj, v);
    case GDL_V_UINT:
    case GDL_V_BOOL:
    case GDL_V_STR:
      return value_arg(fn, i, obj, v);
    case GDL_V_ARRAY:
      if (array_arg(fn, i, obj, a) == 0) return 0;
      not_an_array(fn, i, obj);
      return -1;
    case GDL_V_OBJ:
      return gdl_obj_arg_fast(fn, i, obj, v);
    case GDL_V_CALLABLE: /* a Go func (callback.go): Go takes the reference */
      if (!PyCallable_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s() argument %d must be callable, not %.200s", fn->name, i + 1,
                     GDL_TP_NAME(Py_TYPE(obj)));
        return -1;
      }
      if (gdl_py_watch_exit() < 0) return -1;
      v->i = (int64_t)(uintptr_t)Py_NewRef(obj);
      v->s = fn->name;
      a->how[i] = ARG_CALLABLE;
      a->arrays = 1;
      return 0;
    case GDL_V_LIST:
    case GDL_V_DICT: {
      gdl_where w = {fn->name, i + 1, 0, -1, NULL, 0};
      int r = fn->sig[i] == GDL_V_LIST ? gdl_list_arg(fn->elem[i], obj, v, &a->held[i], &w)
                                       : gdl_dict_arg(fn->elem[i], obj, v, &a->held[i], &w);
      if (r == 0) {
        a->how[i] = ARG_CONTAINER;
        a->arrays = 1;
      }
      return r;
    }
    default: { /* complex, big int, datetime, timedelta, path (ext_conv.c) */
      a->held[i] = NULL;
      int r = gdl_conv_arg(fn->sig[i], fn->elem[i], obj, v, &a->held[i], fn->name, i + 1);
      if (r == 0 && a->held[i] != NULL) {
        a->how[i] = ARG_HELD;
        a->arrays = 1;
      }
      return r;
    }
  }
}

/* Names the function whose result i could not be made (a string that is not
 * UTF-8) in a note on the exception set. */
static void note_result(const gdl_fn* fn, int i) {
  if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) return; /* no memory, say: nothing to add */
  PyObject *t, *e, *tb;
  PyErr_Fetch(&t, &e, &tb);
  PyErr_NormalizeException(&t, &e, &tb);
  PyObject* msg = PyUnicode_FromFormat("in %s() result %d: a Go string that is not UTF-8 (return []byte for bytes)",
                                       fn->name, i + 1);
  if (e != NULL && msg != NULL) Py_XDECREF(PyObject_CallMethod(e, "add_note", "O", msg));
  Py_XDECREF(msg);
  PyErr_Clear(); /* a failed note leaves the first error */
  PyErr_Restore(t, e, tb);
}

/* Result i as a Python object (consuming v). Inline in go_call: a call of
 * its own was a fifth of the C side of returning a number or bytes. */
static inline __attribute__((always_inline)) PyObject* result(const gdl_fn* fn, int i, gdl_value* v) {
  if (v->none) Py_RETURN_NONE; /* a nil *T (pointers.go) */
  switch (fn->kinds[i]) {
    case GDL_V_FLOAT: return PyFloat_FromDouble(v->f);
    case GDL_V_INT: return PyLong_FromLongLong(v->i);
    case GDL_V_UINT: return PyLong_FromUnsignedLongLong((unsigned long long)v->i);
    case GDL_V_BOOL: return PyBool_FromLong((long)v->i);
    case GDL_V_STR: {
      PyObject* s = PyUnicode_FromStringAndSize(v->s, (Py_ssize_t)v->n);
      free((void*)v->s);
      v->s = NULL;
      if (s == NULL) note_result(fn, i);
      return s;
    }
    case GDL_V_ARRAY: {
      void* m = v->p;
      v->p = NULL;
      return gdl_tensor_from_managed(m, 1);
    }
    case GDL_V_BYTES: {
      PyObject* b = (PyObject*)v->p; /* made by Go under the GIL */
      if (b == NULL) {
        b = PyBytes_FromStringAndSize(v->s, (Py_ssize_t)v->n);
        free((void*)v->s);
        v->s = NULL;
      }
      v->p = NULL;
      return b;
    }
    case GDL_V_OBJ:
      return gdl_obj_new(fn->rcls[i], (uintptr_t)v->i);
    case GDL_V_ITER:
      return gdl_iter_new((uintptr_t)v->i, (const gdl_fn*)v->p, gdl_call_handle, NULL);
    case GDL_V_LIST:
    case GDL_V_DICT: {
      PyObject* c = gdl_container_result(fn->kinds[i], v);
      if (c == NULL) note_result(fn, i);
      return c;
    }
  }
  return gdl_conv_result(fn->kinds[i], v); /* ext_conv.c's kinds */
}

/* Frees results from..n-1 not turned into objects (after an error). */
static void drop_results(const gdl_fn* fn, gdl_value* out, int from, int n) {
  for (int i = from; i < n; i++) {
    char k = fn->kinds[i];
    if (out[i].none) continue; /* a nil *T: nothing made */
    gdl_conv_drop(k, &out[i]);
    if (k == GDL_V_STR) free((void*)out[i].s);
    if (k == GDL_V_ARRAY) gdl_managed_free(out[i].p, 1);
    if (k == GDL_V_BYTES) {
      Py_XDECREF((PyObject*)out[i].p);
      free((void*)out[i].s);
    }
    if ((k == GDL_V_OBJ || k == GDL_V_ITER) && out[i].i != 0) gdlpyDropHandle((uintptr_t)out[i].i);
    if (k == GDL_V_LIST || k == GDL_V_DICT) gdl_container_drop(&out[i]);
  }
}

void gdl_raise_kind(int kind, const char* err, uintptr_t exc) {
  if (kind == GDL_ERR_PANIC) gdl_raise_panic(err);
  else if (kind == GDL_ERR_PYEXC && exc != 0) gdl_py_reraise(exc); /* a Python callable's own exception */
  else gdl_ext_raise(kind == GDL_ERR_PYEXC ? GDL_ERR_RUNTIME : kind, err);
}

/* A Go panic: "Go panic in f(): value" as the RuntimeError's message, the
 * goroutine's stack that follows it as a note shown under the traceback. */
void gdl_raise_panic(const char* err) {
  const char* nl = strchr(err, '\n');
  PyObject* msg = PyUnicode_DecodeUTF8(err, nl ? (Py_ssize_t)(nl - err) : (Py_ssize_t)strlen(err), "replace");
  PyObject* exc = msg ? PyObject_CallOneArg(PyExc_RuntimeError, msg) : NULL;
  Py_XDECREF(msg);
  if (exc == NULL) return;
  if (nl != NULL && nl[1] != '\0') {
    PyObject* note = PyUnicode_DecodeUTF8(nl + 1, (Py_ssize_t)strlen(nl + 1), "replace");
    PyObject* r = note ? PyObject_CallMethod(exc, "add_note", "O", note) : NULL;
    Py_XDECREF(note);
    if (r == NULL) PyErr_Clear(); /* the message alone still says what happened */
    Py_XDECREF(r);
  }
  PyErr_SetObject(PyExc_RuntimeError, exc);
  Py_DECREF(exc);
}

/* Rewrites from as to in the notes of exception ev (one it cannot make
 * again with another message, such as UnicodeEncodeError, names the
 * argument there). */
static void name_in_notes(PyObject* ev, PyObject* from, PyObject* to) {
  PyObject* notes = PyObject_GetAttrString(ev, "__notes__");
  if (notes == NULL || !PyList_Check(notes)) {
    Py_XDECREF(notes);
    PyErr_Clear();
    return;
  }
  for (Py_ssize_t k = 0; k < PyList_GET_SIZE(notes); k++) {
    PyObject* note = PyList_GET_ITEM(notes, k);
    PyObject* named = PyUnicode_Check(note) ? PyUnicode_Replace(note, from, to, 1) : NULL;
    if (named == NULL || PyList_SetItem(notes, k, named) < 0) PyErr_Clear(); /* SetItem steals named */
  }
  Py_DECREF(notes);
}

/* "argument 'x'", or "argument 2" counted as Python counts (after a
 * method's receiver): how a message names argument i. */
static PyObject* argument_words(const gdl_fn* fn, int i) {
  if (fn->named) return PyUnicode_FromFormat("argument '%s'", fn->names[i]);
  return PyUnicode_FromFormat("argument %d", fn->self ? i : i + 1);
}

/* Names argument i in the pending exception's message: "argument 3" (C's
 * count, receiver included) becomes "argument 'hi'" when the function names
 * its parameters, or the count Python sees for a method ("argument 2"). */
static void name_argument(const gdl_fn* fn, int i) {
  if (!fn->named && !fn->self) return;
  PyObject *et, *ev, *etb;
  PyErr_Fetch(&et, &ev, &etb);
  PyErr_NormalizeException(&et, &ev, &etb);
  PyObject* msg = ev ? PyObject_Str(ev) : NULL;
  PyObject* from = msg ? PyUnicode_FromFormat("argument %d", i + 1) : NULL;
  PyObject* to = NULL;
  if (from != NULL) to = argument_words(fn, i);
  PyObject* repl = to ? PyUnicode_Replace(msg, from, to, 1) : NULL;
  if (repl != NULL) name_in_notes(ev, from, to); /* a UnicodeEncodeError's note (ext_pyobj.c's note_at) */
  Py_XDECREF(from);
  Py_XDECREF(to);
  Py_XDECREF(msg);
  if (repl == NULL || !PyObject_TypeCheck(ev, (PyTypeObject*)et) || GDL_SLOT(Py_TYPE(ev), tp_init, initproc) != GDL_SLOT((PyTypeObject*)et, tp_init, initproc)) {
    Py_XDECREF(repl);
    PyErr_Clear();
    PyErr_Restore(et, ev, etb);
    return;
  }
  PyObject* exc = PyObject_CallOneArg(et, repl);
  Py_DECREF(repl);
  if (exc == NULL) {
    PyErr_Clear();
    PyErr_Restore(et, ev, etb);
    return;
  }
  PyObject* cause = PyException_GetCause(ev);
  if (cause != NULL) PyException_SetCause(exc, cause); /* steals */
  PyObject* notes = PyObject_GetAttrString(ev, "__notes__");
  if (notes == NULL || PyObject_SetAttrString(exc, "__notes__", notes) < 0) PyErr_Clear(); /* none: fine */
  Py_XDECREF(notes);
  PyErr_SetObject(et, exc);
  Py_DECREF(exc);
  Py_XDECREF(et);
  Py_XDECREF(ev);
  Py_XDECREF(etb);
}

/* Binds keyword arguments to fn's named parameters: slot[j] (j counts the
 * Python parameters, after the receiver) is the argument or NULL for a
 * default. -1 with TypeError as CPython words it. */
static int bind(const gdl_fn* fn, int off, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                PyObject** slot) {
  int np = fn->nparams - off;
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  int npos = fn->kwonly - off; /* how many may be positional */
  if (nargs > npos) {
    if (npos < np) {
      PyErr_Format(PyExc_TypeError, "%s() takes at most %d positional argument%s (%zd given)", fn->name, npos,
                   npos == 1 ? "" : "s", nargs);
    } else {
      PyErr_Format(PyExc_TypeError, "%s() takes at most %d argument%s (%zd given)", fn->name, np, np == 1 ? "" : "s",
                   nargs + nkw);
    }
    return -1;
  }
  for (int j = 0; j < np; j++) slot[j] = j < nargs ? args[j] : NULL;
  for (Py_ssize_t k = 0; k < nkw; k++) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, k);
    int j = -1;
    for (int t = 0; t < np; t++) { /* interned: usually the same object */
      if ((PyObject*)fn->pynames[t + off] == key) {
        j = t;
        break;
      }
    }
    for (int t = 0; j < 0 && t < np; t++) {
      int eq = PyUnicode_Compare((PyObject*)fn->pynames[t + off], key);
      if (eq == -1 && PyErr_Occurred()) return -1;
      if (eq == 0) j = t;
    }
    if (j >= 0 && j + off < fn->posonly) {
      PyErr_Format(PyExc_TypeError, "%s() got some positional-only arguments passed as keyword arguments: '%S'",
                   fn->name, key);
      return -1;
    }
    if (j < 0) {
      PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%S'", fn->name, key);
      return -1;
    }
    if (slot[j] != NULL) {
      PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", fn->name, fn->names[j + off]);
      return -1;
    }
    slot[j] = args[nargs + k];
  }
  for (int j = 0; j < np; j++) {
    if (slot[j] == NULL && !fn->has_default[j + off]) {
      PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s' (pos %d)", fn->name, fn->names[j + off],
                   j + 1);
      return -1;
    }
  }
  return 0;
}

/* A bytes result made ahead: where result i of fn had the same size in its
 * last two calls, C makes this call's bytes object at that size before Go
 * runs (v->p, its buffer v->data, the size v->ncap), and Go copies its
 * slice into it: the one copy, without a call from Go into C. A result of
 * another size is made as before and the object made ahead dropped. */
static inline __attribute__((always_inline)) PyObject* bytes_ahead(const gdl_fn* fn, int i, gdl_value* v) {
  int64_t seen = __atomic_load_n((int64_t*)&fn->bytes_seen[i], __ATOMIC_RELAXED);
  if (!(seen & 1) || (seen >> 1) == 0) return NULL;
  PyObject* b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(seen >> 1));
  if (b == NULL) {
    PyErr_Clear(); /* Go makes it then, or says there is no memory */
    return NULL;
  }
  v->p = b;
  v->data = PyBytes_AS_STRING(b);
  v->ncap = seen >> 1;
  return b;
}

/* Remembers a bytes result's size n for bytes_ahead. */
static void bytes_seen(const gdl_fn* fn, int i, int64_t n) {
  int64_t* p = (int64_t*)&fn->bytes_seen[i];
  int64_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
  int64_t now = (n << 1) | (old != 0 && (old >> 1) == n);
  if (now != old) __atomic_store_n(p, now, __ATOMIC_RELAXED);
}

/* Calls Go with the converted arguments a, then lets go of them and builds
 * the results. Inline in its two callers: a call of its own cost a tenth of
 * the C side of a scalar call (its frame, and a's fields through a pointer). */
static inline __attribute__((always_inline)) PyObject* go_call(const gdl_fn* fn, call_args* a) {
  gdl_value out[GDL_MAX_RESULTS]; /* Go writes each result's fields before counting it in nout */
  char err[1024];
  int kind;
  if (!gdl_go_ready()) {
    free_arrays(a, fn->nparams);
    return NULL;
  }
  PyObject* ahead[GDL_MAX_RESULTS];
  for (int i = 0; i < fn->nresults; i++) {
    out[i].serial = !fn->release_gil; /* GDL_V_BYTES, GDL_V_BYTEARRAY: Go makes the object, with the GIL */
    out[i].none = 0;                  /* set by Go for a nil *T only */
    out[i].data = NULL;
    ahead[i] = fn->kinds[i] == GDL_V_BYTES ? bytes_ahead(fn, i, &out[i]) : NULL;
  }
  gdl_call c = {
      .id = fn->id, .nin = fn->nparams, .in = a->v, .out = out, .nout = 0, .errlen = sizeof err, .err = err, .exc = 0};
  if (fn->release_gil) {
    Py_BEGIN_ALLOW_THREADS kind = gdlpyCall(&c);
    Py_END_ALLOW_THREADS
  } else {
    kind = gdlpyCall(&c);
  }
  int nout = c.nout;
  for (int i = 0; fn->bytes_results && i < fn->nresults; i++) {
    if (fn->kinds[i] != GDL_V_BYTES) continue;
    int made = i < nout && !out[i].none;
    if (made && kind == GDL_ERR_NONE) bytes_seen(fn, i, out[i].n);
    if (ahead[i] != NULL && !(made && out[i].p == ahead[i])) Py_DECREF(ahead[i]); /* Go made its own, or none */
  }
  for (int i = 0; a->reqs && i < fn->nparams; i++) {
    if (a->how[i] == ARG_REQ) gdl_req_write_back(&a->v[i]); /* pyext.ConvertWriteBack */
  }
  free_arrays(a, fn->nparams); /* arrays stay alive until the call returns */
  if (kind != GDL_ERR_NONE) {
    drop_results(fn, out, 0, nout);
    gdl_raise_kind(kind, err, c.exc);
    return NULL;
  }
  if (nout == 0) Py_RETURN_NONE;
  if (nout == 1) return result(fn, 0, &out[0]);
  PyObject* tuple = PyTuple_New(nout);
  if (tuple == NULL) {
    drop_results(fn, out, 0, nout);
    return NULL;
  }
  for (int i = 0; i < nout; i++) {
    PyObject* o = result(fn, i, &out[i]); /* consumes out[i] either way */
    if (o == NULL) {
      drop_results(fn, out, i + 1, nout);
      Py_DECREF(tuple);
      return NULL;
    }
    PyTuple_SET_ITEM(tuple, i, o);
  }
  return tuple;
}


/* Calls fn with in[0] = h: a Go handle, no Python argument to convert. */
PyObject* gdl_call_handle(const gdl_fn* fn, uintptr_t h) {
  call_args a;
  a.v[0].p = NULL;
  a.v[0].data = NULL;
  a.v[0].versioned = 0;
  a.v[0].serial = 0;
  a.v[0].img = NULL;
  a.v[0].i = (int64_t)h;
  a.how[0] = ARG_NONE;
  a.arrays = 0;
  a.reqs = 0;
  a.ntensors = 0;
  a.nviews = 0;
  a.nbufs = 0;
  return go_call(fn, &a);
}

/* Whether argument i is memory C knows the bytes of: a typed slice, an N-d
 * view or a bytes-like object ([data, data + i)); a godlpack.Tensor
 * argument's are not looked at. */
static int spans(const gdl_fn* fn, const call_args* a, int i) {
  return fn->sig[i] == GDL_V_ARRAY && !fn->elem[i].tensor && a->v[i].data != NULL && a->v[i].i > 0;
}

/* Arguments whose memory overlaps one the function writes: a read one is
 * copied first, so that the function reads the values it was passed, as if
 * the caller had passed a copy (NumPy's ufuncs do the same); two written
 * ones are a BufferError naming both (which write would win is unknowable).
 * Go may assume its slices do not alias (a codec's src and dst). */
static __attribute__((noinline)) int separate_overlaps(const gdl_fn* fn, call_args* a) {
  for (int w = 0; w < fn->nparams; w++) {
    if (!(fn->writes >> w & 1) || !spans(fn, a, w)) continue;
    uintptr_t wlo = (uintptr_t)a->v[w].data, whi = wlo + (uintptr_t)a->v[w].i;
    for (int j = 0; j < fn->nparams; j++) {
      if (j == w || !spans(fn, a, j)) continue;
      uintptr_t lo = (uintptr_t)a->v[j].data, hi = lo + (uintptr_t)a->v[j].i;
      if (lo >= whi || wlo >= hi) continue;
      if (fn->writes >> j & 1) {
        PyObject* x = argument_words(fn, w < j ? w : j);
        PyObject* y = x ? argument_words(fn, w < j ? j : w) : NULL;
        if (y != NULL)
          PyErr_Format(PyExc_BufferError, "%s() %U and %U share memory, and %s writes both; pass arrays that do not "
                       "overlap", fn->name, x, y, fn->name);
        Py_XDECREF(x);
        Py_XDECREF(y);
        return -1;
      }
      void* copy = malloc((size_t)a->v[j].i);
      if (copy == NULL) {
        PyErr_NoMemory();
        return -1;
      }
      memcpy(copy, a->v[j].data, (size_t)a->v[j].i);
      if (a->how[j] == ARG_REQ && a->v[j].st != NULL && ((gdl_view*)a->v[j].st)->buf == a->v[j].data)
        ((gdl_view*)a->v[j].st)->buf = copy; /* an N-d view reads through buf */
      a->v[j].data = copy;
      a->copies[a->ncopies++] = copy;
    }
  }
  return 0;
}

/* go_call for a function that writes an array argument, after
 * separate_overlaps; the copies it made are freed when Go has returned.
 * Apart from go_call's other caller: calls that write nothing pay nothing. */
static __attribute__((noinline)) PyObject* call_separated(const gdl_fn* fn, call_args* a) {
  a->ncopies = 0;
  PyObject* r = NULL;
  if (separate_overlaps(fn, a) < 0) free_arrays(a, fn->nparams);
  else r = go_call(fn, a);
  for (int k = 0; k < a->ncopies; k++) free(a->copies[k]);
  return r;
}

/* Calls fn: self is the receiver of a method (NULL for a function), args
 * the Python arguments, vectorcall's way (nargs positional, then one per
 * name in kwnames). */
PyObject* gdl_call_fn(const gdl_fn* fn, PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                        PyObject* kwnames) {
  int off = self != NULL;
  int np = fn->nparams - off;
  PyObject* slot[GDL_MAX_PARAMS];
  PyObject* const* argv = args;
  if ((kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) || nargs != np || fn->kwonly != fn->nparams) {
    if (!fn->named) {
      if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
        PyErr_Format(PyExc_TypeError, "%s() takes no keyword arguments", fn->name);
        return NULL;
      }
      PyErr_Format(PyExc_TypeError, "%s() takes %d positional arguments but %zd were given", fn->name, np, nargs);
      return NULL;
    }
    if (bind(fn, off, args, nargs, kwnames, slot) < 0) return NULL;
    argv = slot;
  }
  call_args a; /* only the first nparams entries are used: no more is cleared */
  int serial = !fn->release_gil && !GDL_FREE_THREADED; /* a constant but under abi3t */
  memset(a.how, ARG_NONE, sizeof a.how); /* a constant size: one store (per parameter, gcc made it a memset call) */
  for (int i = 0; !fn->scalar && i < fn->nparams; i++) { /* what Go reads of any argument (arraySpans): no memset call */
    a.v[i].p = NULL;
    a.v[i].data = NULL;
    a.v[i].versioned = 0;
    a.v[i].serial = serial;
    a.v[i].img = NULL;
  }
  a.arrays = 0;
  a.reqs = 0;
  a.ntensors = 0;
  a.nviews = 0;
  a.nbufs = 0;
  if (off && gdl_obj_arg_fast(fn, 0, self, &a.v[0]) < 0) {
    if (gdl_is_obj(fn->cls[0], self)) return NULL; /* of the class, but holding no Go value */
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "descriptor '%s' for '%s' objects doesn't apply to a '%.200s' object",
                 gdl_short_name(fn->name), gdl_class_name(fn->cls[0]), GDL_TP_NAME(Py_TYPE(self)));
    return NULL;
  }
  for (int j = 0; j < np; j++) {
    int i = j + off;
    if (argv[j] == NULL) {
      a.v[i] = fn->defaults[i];
    } else if (convert(fn, i, argv[j], &a) < 0) {
      /* An operator's operand its parameter refuses: the other operand's turn. */
      int other = fn->req[i] != NULL && fn->req[i]->operand && PyErr_ExceptionMatches(PyExc_BufferError);
      name_argument(fn, i);
      free_arrays(&a, i + 1);
      if (other) {
        PyErr_Clear();
        Py_RETURN_NOTIMPLEMENTED;
      }
      return NULL;
    }
  }
  if (fn->writes && a.arrays) return call_separated(fn, &a);
  return go_call(fn, &a);
}

/* Whether Go reads nothing of fn's arguments but their own values: numbers,
 * bools and objects of Go classes in, no array out (arraySpans reads every
 * argument's array fields then). */
static int scalar_only(const gdl_fn* fn) {
  for (int i = 0; i < fn->nparams; i++) {
    char k = fn->sig[i];
    if (k != GDL_V_FLOAT && k != GDL_V_INT && k != GDL_V_UINT && k != GDL_V_BOOL && k != GDL_V_OBJ) return 0;
  }
  for (int i = 0; i < fn->nresults; i++) {
    if (fn->kinds[i] == GDL_V_ARRAY) return 0;
  }
  return 1;
}

/* Interns fn's parameter names (once: the descriptor is shared by modules),
 * and notes whether its arguments are all scalars (gdl_fn's scalar). */
int gdl_fn_intern_names(gdl_fn* fn) {
  fn->scalar = scalar_only(fn);
  for (int i = 0; fn->named && i < fn->nparams; i++) {
    if (fn->pynames[i] != NULL || fn->names[i] == NULL) continue;
    PyObject* s = PyUnicode_InternFromString(fn->names[i]);
    if (s == NULL) return -1;
    fn->pynames[i] = s; /* kept for the process */
  }
  return 0;
}

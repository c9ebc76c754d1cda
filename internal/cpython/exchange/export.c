/* The producer side of the Python protocol: Tensor.__dlpack__ and
 * Tensor.__dlpack_device__. Every call makes a fresh managed tensor and a
 * fresh capsule that share the tensor's owner. */
#include <string.h>
#include "exchange.h"

/* Matches a keyword name: interned pointer first, then by value. */
static int kw_is(PyObject* name, PyObject* interned) {
  return name == interned || PyUnicode_Compare(name, interned) == 0;
}

typedef struct {
  PyObject *stream, *max_version, *dl_device, *copy;
} dlpack_args;

enum { KW_MAX_VERSION, KW_STREAM, KW_DL_DEVICE, KW_COPY, KW_COUNT };

/* The slot of keyword k, or -1. */
static int kw_slot(PyObject* k) {
  if (kw_is(k, GDL.s_max_version)) return KW_MAX_VERSION;
  if (kw_is(k, GDL.s_stream)) return KW_STREAM;
  if (kw_is(k, GDL.s_dl_device)) return KW_DL_DEVICE;
  if (kw_is(k, GDL.s_copy)) return KW_COPY;
  return -1;
}

/* Consumers pass the same keyword-names tuple on every call (NumPy builds
 * its, not interned, once): the slots of the last tuple seen are kept, and
 * a reference to it keeps its address from being reused. kw_lock makes the
 * tuple and its slots one value: a thread never pairs one with the other's
 * predecessor. */
static gdl_mutex kw_lock;
static PyObject* last_kwnames;
static signed char last_slots[KW_COUNT];

/* The cached slots of kwnames into slots: 1 when kwnames is the cached tuple. */
static int kw_cached(PyObject* kwnames, signed char* slots) {
  gdl_mutex_lock(&kw_lock);
  int hit = kwnames == last_kwnames;
  if (hit) memcpy(slots, last_slots, sizeof last_slots);
  gdl_mutex_unlock(&kw_lock);
  return hit;
}

/* Caches kwnames (nk names, all distinct) with its slots. */
static void kw_remember(PyObject* kwnames, const signed char* slots, Py_ssize_t nk) {
  Py_INCREF(kwnames);
  gdl_mutex_lock(&kw_lock);
  PyObject* old = last_kwnames;
  last_kwnames = kwnames;
  memcpy(last_slots, slots, (size_t)nk);
  gdl_mutex_unlock(&kw_lock);
  Py_XDECREF(old); /* after unlocking: the rule of ftlock.h */
}

static int parse_args(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, dlpack_args* a) {
  a->stream = a->max_version = a->dl_device = a->copy = Py_None;
  if (nargs != 0) {
    PyErr_SetString(PyExc_TypeError, "__dlpack__() takes keyword arguments only");
    return -1;
  }
  if (kwnames == NULL) return 0;
  PyObject** slot[KW_COUNT] = {&a->max_version, &a->stream, &a->dl_device, &a->copy};
  Py_ssize_t nk = PyTuple_GET_SIZE(kwnames);
  signed char slots[KW_COUNT];
  if (kw_cached(kwnames, slots)) {
    for (Py_ssize_t i = 0; i < nk; i++) *slot[(int)slots[i]] = args[i];
    return 0;
  }
  int seen = 0;
  for (Py_ssize_t i = 0; i < nk; i++) {
    PyObject* k = PyTuple_GET_ITEM(kwnames, i);
    int s = kw_slot(k);
    if (s < 0) {
      PyErr_Format(PyExc_TypeError, "__dlpack__() got an unexpected keyword argument '%U'", k);
      return -1;
    }
    if (seen & (1 << s)) { /* only a C caller can repeat a name */
      PyErr_Format(PyExc_TypeError, "__dlpack__() got multiple values for argument '%U'", k);
      return -1;
    }
    seen |= 1 << s;
    slots[i] = (signed char)s;
    *slot[s] = args[i];
  }
  kw_remember(kwnames, slots, nk); /* nk <= KW_COUNT: the names are distinct */
  return 0;
}

/* Reads max_version: 1 for versioned, 0 for legacy, -1 on error. */
static int wants_versioned(PyObject* mv) {
  if (mv == Py_None) return 0;
  if (!PyTuple_Check(mv) || PyTuple_GET_SIZE(mv) != 2 || !PyLong_Check(PyTuple_GET_ITEM(mv, 0)) ||
      !PyLong_Check(PyTuple_GET_ITEM(mv, 1))) {
    PyErr_Format(PyExc_TypeError, "max_version must be None or a (major, minor) tuple of ints, got %.200R", mv);
    return -1;
  }
  int overflow;
  long long major = PyLong_AsLongLongAndOverflow(PyTuple_GET_ITEM(mv, 0), &overflow);
  if (major == -1 && PyErr_Occurred()) return -1;
  return overflow > 0 || major >= 1;
}

/* Reads the stream argument for a consumer on device dev (array API rules):
 * on CPU only None (and -1, "no sync") make sense; on GPUs None means the
 * legacy default stream (1), 0 is ambiguous and refused. */
static int parse_stream(PyObject* stream, DLDevice dev, intptr_t* out) {
  *out = 1;
  if (stream == Py_None) return 0;
  long long s;
  int r = gdl_stream_arg(stream, &s);
  if (r < 0) return -1;
  if (r > 0) {
    PyErr_Format(PyExc_BufferError, "stream=%R is not a valid stream", stream);
    return -1;
  }
  if (!gdl_cuda_stream_device(dev.device_type)) {
    if (s == -1) {
      *out = -1;
      return 0;
    }
    PyErr_Format(PyExc_BufferError, "stream=%R is invalid for a tensor on device type %d: use None or -1", stream,
                 (int)dev.device_type);
    return -1;
  }
  if (s == 0) {
    PyErr_SetString(PyExc_BufferError, "stream=0 is ambiguous and disallowed by the array API; use 1 or 2");
    return -1;
  }
  *out = (intptr_t)s;
  return 0;
}

void* gdl_tensor_export(GdlTensor* t, const DLTensor* view, int versioned, uint64_t flags) {
  void* m;
  if (versioned) {
    m = gdl_export_versioned(view, flags, t->owner);
  } else if (flags & DLPACK_FLAG_BITMASK_READ_ONLY) {
    PyErr_SetString(PyExc_BufferError,
                    "a read-only tensor cannot be exported as a legacy (unversioned) DLPack capsule; "
                    "ask for max_version=(1, 0) or copy=True");
    return NULL;
  } else {
    m = gdl_export_legacy(view, t->owner);
  }
  return m ? m : PyErr_NoMemory();
}

static PyObject* capsule_for(GdlTensor* t, const DLTensor* view, int versioned, uint64_t flags) {
  void* m = gdl_tensor_export(t, view, versioned, flags);
  if (m == NULL) return NULL;
  return versioned ? gdl_capsule_versioned(m) : gdl_capsule_legacy(m);
}

/* Exports a fresh copy (made by the caller), ready on the consumer's stream,
 * and drops the caller's reference. */
static PyObject* export_copy(PyObject* copy, int versioned, intptr_t stream) {
  if (copy == NULL) return NULL;
  GdlTensor* c = GDL_AS(GdlTensor, copy);
  if (gdl_stream_sync(c->view.device, c->stream, stream) != 0) {
    Py_DECREF(copy);
    return NULL;
  }
  PyObject* cap = capsule_for(c, &c->view, versioned, versioned ? DLPACK_FLAG_BITMASK_IS_COPIED : 0);
  Py_DECREF(copy);
  return cap;
}

PyObject* gdl_dlpack(PyObject* obj, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  GdlTensor* self = GDL_AS(GdlTensor, obj);
  dlpack_args a;
  if (parse_args(args, nargs, kwnames, &a) != 0) return NULL;
  int versioned = wants_versioned(a.max_version);
  if (versioned < 0) return NULL;
  if (a.copy != Py_None && !PyBool_Check(a.copy)) {
    PyErr_Format(PyExc_TypeError, "copy must be None, True or False, got %.200s", GDL_TP_NAME(Py_TYPE(a.copy)));
    return NULL;
  }
  DLDevice dev = self->view.device, want = dev;
  if (a.dl_device != Py_None && gdl_parse_device(a.dl_device, &want) != 0) return NULL;
  intptr_t stream;
  if (parse_stream(a.stream, want, &stream) != 0) return NULL;

  gdl_place how = GDL_PLACE_SHARE; /* no dl_device: the hot path asks no policy */
  if (a.dl_device != Py_None && gdl_placement(dev, want, a.copy, &how) != 0) return NULL;
  if (how == GDL_PLACE_COPY) return export_copy(gdl_cuda_copy(self, want, self->stream), versioned, stream);
  int relabel = how == GDL_PLACE_RELABEL;
  if (a.copy == Py_True) /* the copy is ordered after the data's stream, then handed to the consumer's */
    return export_copy(relabel ? gdl_tensor_on(self, want, a.copy) : gdl_device_copy(self, 0), versioned, stream);
  /* A consumer on the device waits on its stream; one on the host waits here. */
  if (relabel ? gdl_host_sync(dev, stream == -1 ? -1 : self->stream) : gdl_stream_sync(dev, self->stream, stream))
    return NULL;
  DLTensor view = self->view;
  view.device = want;
  return capsule_for(self, &view, versioned, self->flags & DLPACK_FLAG_BITMASK_READ_ONLY);
}

PyObject* gdl_dlpack_device(PyObject* self, PyObject* unused) {
  (void)unused;
  return gdl_device_tuple(GDL_AS(GdlTensor, self)->view.device);
}

/* godlpack._probe: the conformance checker's counting probes, built as their own
 * small extension so the production module carries no test scaffolding.
 *
 * A record counts the deleter calls of one managed tensor: one we made (make) or
 * another producer's whose deleter field we redirected (intercept). A record lives
 * while a Token refers to it or while its deleter has not run, and is then freed;
 * our own tensors' memory goes with it, so their addresses are not reused while a
 * Token can still count a second deleter call.
 *
 * The tests' counting producer (tests/support/ctypes_producer.py) is make() too, with
 * destructor=False: then every deleter call a record counts came from a consumer.
 *
 * Memory safety, also when misused from Python: a managed tensor is read only
 * while its capsule is unused (its producer keeps it alive; ours: while its record
 * lives) or while a live record says its deleter has not run. Deleters run on any
 * thread without the GIL: records are guarded by a mutex and touch no Python. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <stdlib.h>
#ifdef _WIN32
#include <windows.h>
#endif
#include <string.h>

#include "godlpack/godlpack.h" /* dlpack.h and the exchange API capsule name */

static const char NAME_V[] = "dltensor_versioned", NAME_L[] = "dltensor";
static const char USED_V[] = "used_dltensor_versioned", USED_L[] = "used_dltensor";

#define NTHREADS 4

typedef struct rec {
  struct rec *prev, *next;
  void* managed;
  void (*orig)(void*); /* intercepted: the producer's deleter; NULL: a tensor we made */
  void* data;          /* ours: the data buffer we copied (NULL for a caller's address) */
  int versioned;
  int pending; /* 1 until the first deleter call */
  int owned;   /* take() renamed its capsule: the probe is its consumer */
  int raising; /* make(raising=True): its deleter leaves a Python error set */
  long tokens;
  int64_t calls;
  unsigned long threads[NTHREADS]; /* the thread of each of the first calls */
} rec;

static rec* head; /* newest first */
static Py_ssize_t nlive;
static int64_t orphans; /* deleter calls with a pointer no record knows */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* Under mu: the record of m, the pending one if any, else the newest. */
static rec* rec_find(void* m) {
  rec* any = NULL;
  for (rec* r = head; r != NULL; r = r->next) {
    if (r->managed != m) continue;
    if (r->pending) return r;
    if (any == NULL) any = r;
  }
  return any;
}

/* Under mu: frees r once nothing refers to it. */
static void rec_release(rec* r) {
  if (r->tokens > 0 || r->pending) return;
  if (r->prev) r->prev->next = r->next;
  else head = r->next;
  if (r->next) r->next->prev = r->prev;
  nlive--;
  if (r->orig == NULL) {
    free(r->data);
    free(r->managed);
  }
  free(r);
}

/* Under mu: a pending record of m's address belongs to an earlier tensor that was
 * freed without its deleter (its producer bypassed it): it can no longer count. */
static void drop_stale(void* m) {
  rec* r = head;
  while (r != NULL) {
    rec* next = r->next;
    if (r->managed == m && r->pending) {
      r->pending = 0;
      rec_release(r);
    }
    r = next;
  }
}

/* Under mu: a new pending record (the caller adds its Token). */
static rec* rec_new(void* m, void (*orig)(void*), void* data, int versioned) {
  rec* r = calloc(1, sizeof(rec));
  if (r == NULL) return NULL;
  *r = (rec){.next = head, .managed = m, .orig = orig, .data = data, .versioned = versioned, .pending = 1};
  if (head) head->prev = r;
  head = r;
  nlive++;
  return r;
}

/* The deleter of our tensors and the trampoline of intercepted ones: counts every
 * call, frees or forwards on the first only (a second call is counted, not run). */
/* The calling thread as threading.get_ident() names it: pthread_self() on
 * POSIX; on Windows winpthreads' handle is not the OS thread id Python uses. */
static unsigned long this_thread(void) {
#ifdef _WIN32
  return (unsigned long)GetCurrentThreadId();
#else
  return (unsigned long)pthread_self();
#endif
}

static void delete_any(void* m) {
  void (*forward)(void*) = NULL;
  int raising = 0;
  pthread_mutex_lock(&mu);
  rec* r = rec_find(m);
  if (r == NULL) orphans++;
  else {
    if (r->calls < NTHREADS) r->threads[r->calls] = this_thread();
    r->calls++;
    raising = r->raising;
    if (r->pending) {
      r->pending = 0;
      forward = r->orig;
      rec_release(r);
    }
  }
  pthread_mutex_unlock(&mu);
  if (forward) forward(m); /* outside mu: the producer's deleter may take the GIL */
  if (raising) { /* a hostile deleter: DLPack deleters must not raise */
    PyGILState_STATE g = PyGILState_Ensure();
    PyErr_SetString(PyExc_RuntimeError, "the probe's deleter left this error set");
    PyGILState_Release(g);
  }
}

static void deleter_v(DLManagedTensorVersioned* m) { delete_any(m); }
static void deleter_l(DLManagedTensor* m) { delete_any(m); }

/* --- Token: a handle on a record ------------------------------------------------ */

typedef struct {
  PyObject_HEAD rec* r;
} Token;

static void token_dealloc(PyObject* self) {
  rec* r = ((Token*)self)->r;
  if (r != NULL) {
    pthread_mutex_lock(&mu);
    r->tokens--;
    rec_release(r);
    pthread_mutex_unlock(&mu);
  }
  Py_TYPE(self)->tp_free(self);
}

static PyObject* token_calls(PyObject* self, void* closure) {
  pthread_mutex_lock(&mu);
  int64_t c = ((Token*)self)->r->calls;
  pthread_mutex_unlock(&mu);
  return PyLong_FromLongLong(c);
}

/* Thread idents as threading.get_ident() gives them (pthread_self on Linux). */
static PyObject* token_threads(PyObject* self, void* closure) {
  rec* r = ((Token*)self)->r;
  unsigned long th[NTHREADS];
  pthread_mutex_lock(&mu);
  int n = r->calls < NTHREADS ? (int)r->calls : NTHREADS;
  memcpy(th, r->threads, sizeof th);
  pthread_mutex_unlock(&mu);
  PyObject* t = PyTuple_New(n);
  for (int i = 0; t != NULL && i < n; i++) {
    PyObject* v = PyLong_FromUnsignedLong(th[i]);
    if (v == NULL) Py_CLEAR(t);
    else PyTuple_SET_ITEM(t, i, v);
  }
  return t;
}

static PyObject* token_versioned(PyObject* self, void* closure) { return PyBool_FromLong(((Token*)self)->r->versioned); }

static PyObject* token_intercepted(PyObject* self, void* closure) {
  return PyBool_FromLong(((Token*)self)->r->orig != NULL);
}

static PyGetSetDef token_getset[] = {
    {"calls", token_calls, NULL, "Deleter calls counted so far.", NULL},
    {"threads", token_threads, NULL, "Thread idents of the first four deleter calls.", NULL},
    {"versioned", token_versioned, NULL, "Whether the tensor is a DLManagedTensorVersioned.", NULL},
    {"intercepted", token_intercepted, NULL, "Another producer's tensor (else one the probe made).", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject Token_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "godlpack._probe.Token",
    .tp_basicsize = sizeof(Token),
    .tp_dealloc = token_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Counts the deleter calls of one probed managed tensor.",
    .tp_getset = token_getset,
};

static PyObject* token_new(void) { return (PyObject*)PyObject_New(Token, &Token_Type); }

/* --- capsules ---------------------------------------------------------------------- */

/* Our capsules' destructor: the tensor is ours, so it is released through its record
 * without reading it, unless a consumer took it (renamed it used_*). */
static void own_capsule_destructor(PyObject* cap) {
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  const char* name = PyCapsule_GetName(cap);
  if (name != NULL && strncmp(name, "used_", 5) != 0) {
    void* m = PyCapsule_GetPointer(cap, name);
    if (m != NULL) delete_any(m);
  }
  PyErr_Restore(t, v, tb);
}

/* A foreign managed tensor handed out as a capsule (exchange-table exports). */
static void foreign_capsule_destructor(PyObject* cap) {
  if (!PyCapsule_IsValid(cap, NAME_V)) return;
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  DLManagedTensorVersioned* m = PyCapsule_GetPointer(cap, NAME_V);
  if (m != NULL && m->deleter != NULL) m->deleter(m);
  PyErr_Restore(t, v, tb);
}

/* Our capsules' context, with or without a destructor. */
static const char own_marker = 0;

static int is_own(PyObject* cap) { return PyCapsule_GetContext(cap) == &own_marker; }

/* The managed tensor of an unused DLPack capsule; anything else is refused. */
static void* unused_managed(PyObject* cap, int* versioned) {
  if (PyCapsule_CheckExact(cap)) {
    const char* name = PyCapsule_GetName(cap);
    if (name != NULL && (strcmp(name, NAME_V) == 0 || strcmp(name, NAME_L) == 0)) {
      *versioned = strcmp(name, NAME_V) == 0;
      return PyCapsule_GetPointer(cap, name);
    }
  }
  PyErr_Clear();
  PyErr_SetString(PyExc_ValueError,
                  "expected an unused DLPack capsule ('dltensor' or 'dltensor_versioned'): "
                  "a used capsule's tensor belongs to its consumer and may be gone");
  return NULL;
}

static int64_t* int64s(PyObject* seq, int32_t* n) {
  PyObject* fast = PySequence_Fast(seq, "expected a sequence of ints");
  if (fast == NULL) return NULL;
  Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
  int64_t* out = calloc((size_t)len + 1, sizeof(int64_t));
  if (out == NULL) PyErr_NoMemory();
  for (Py_ssize_t i = 0; out != NULL && i < len && !PyErr_Occurred(); i++) {
    out[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i));
  }
  Py_DECREF(fast);
  if (PyErr_Occurred()) {
    free(out);
    return NULL;
  }
  *n = (int32_t)(len < 64 ? len : 64);
  return out;
}

/* Capsule names outlive any one capsule: keep each distinct one for the process. */
static PyObject* names;

static const char* kept_name(PyObject* name_obj) {
  PyObject* b = PyUnicode_AsUTF8String(name_obj);
  if (b == NULL) return NULL;
  PyObject* kept = PyDict_SetDefault(names, b, b);
  Py_DECREF(b);
  return kept ? PyBytes_AS_STRING(kept) : NULL;
}

/* make(versioned, *, shape=None, strides=None, ndim=len(shape), version=(1, 3),
 *      dtype=(2, 64, 1), device=(1, 0), data=None, byte_offset=0, flags=0, name=None,
 *      destructor=True, deleter=True) -> (capsule, Token)
 * shape/strides None: NULL pointers. ndim may disagree with len(shape) on purpose: the
 * dims arrays hold 65 entries each, so a consumer trusting ndim up to 64 reads valid
 * memory. data: None (NULL), bytes (copied into memory the record owns) or an int, an
 * address used as is (its owner keeps it alive). destructor=False: a capsule without
 * one, so every deleter call is a consumer's (an unconsumed tensor stays pending).
 * deleter=False: a NULL deleter field (needs destructor=False). raising=True: the
 * deleter leaves a RuntimeError set, as a broken producer's may. */
static PyObject* probe_make(PyObject* mod, PyObject* args, PyObject* kw) {
  static char* kwlist[] = {"versioned", "shape", "strides", "ndim", "version", "dtype", "device", "data",
                           "byte_offset", "flags", "name", "destructor", "deleter", "raising", NULL};
  int versioned, code = kDLFloat, bits = 64, lanes = 1, dev_type = kDLCPU, dev_id = 0, destructor = 1, deleter = 1,
      raising = 0;
  unsigned major = 1, minor = 3;
  PyObject *shape = Py_None, *strides = Py_None, *ndim_obj = Py_None, *data = Py_None, *name_obj = Py_None;
  unsigned long long byte_offset = 0, flags = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "p|$OOO(II)(iii)(ii)OKKOppp", kwlist, &versioned, &shape, &strides,
                                   &ndim_obj, &major, &minor, &code, &bits, &lanes, &dev_type, &dev_id, &data,
                                   &byte_offset, &flags, &name_obj, &destructor, &deleter, &raising))
    return NULL;
  if (!deleter && destructor) {
    PyErr_SetString(PyExc_ValueError, "deleter=False needs destructor=False");
    return NULL;
  }
  const char* name = versioned ? NAME_V : NAME_L;
  if (name_obj != Py_None && (name = kept_name(name_obj)) == NULL) return NULL;
  char* bytes = NULL;
  Py_ssize_t len = 0;
  void* addr = NULL;
  if (PyLong_Check(data)) {
    if ((addr = PyLong_AsVoidPtr(data)) == NULL && PyErr_Occurred()) return NULL;
  } else if (data != Py_None && PyBytes_AsStringAndSize(data, &bytes, &len) != 0) {
    return NULL;
  }
  int32_t ns = 0, nt = 0;
  int64_t *sh = NULL, *st = NULL;
  if (shape != Py_None && (sh = int64s(shape, &ns)) == NULL) return NULL;
  long ndim = ndim_obj == Py_None ? ns : PyLong_AsLong(ndim_obj);
  if ((ndim == -1 && PyErr_Occurred()) || (strides != Py_None && (st = int64s(strides, &nt)) == NULL)) {
    free(sh);
    return NULL;
  }
  size_t head_size = versioned ? sizeof(DLManagedTensorVersioned) : sizeof(DLManagedTensor);
  void* m = calloc(1, head_size + 2 * 65 * sizeof(int64_t));
  void* buf = bytes == NULL ? NULL : malloc(len > 0 ? (size_t)len : 1);
  PyObject* tok = token_new();
  if (m == NULL || (bytes != NULL && buf == NULL) || tok == NULL) {
    free(sh), free(st), free(m), free(buf);
    Py_XDECREF(tok);
    return tok ? PyErr_NoMemory() : NULL;
  }
  ((Token*)tok)->r = NULL;
  if (buf) memcpy(buf, bytes, (size_t)len);
  int64_t* dims = (int64_t*)((char*)m + head_size);
  if (sh) memcpy(dims, sh, (size_t)ns * sizeof(int64_t));
  if (st) memcpy(dims + 65, st, (size_t)nt * sizeof(int64_t));
  free(sh);
  free(st);
  DLTensor* t;
  if (versioned) {
    DLManagedTensorVersioned* v = m;
    v->version = (DLPackVersion){major, minor};
    v->deleter = deleter ? deleter_v : NULL;
    v->flags = flags;
    t = &v->dl_tensor;
  } else {
    DLManagedTensor* l = m;
    l->deleter = deleter ? deleter_l : NULL;
    t = &l->dl_tensor;
  }
  t->data = buf ? buf : addr;
  t->device.device_type = (DLDeviceType)dev_type;
  t->device.device_id = dev_id;
  t->ndim = (int32_t)ndim;
  t->dtype.code = (uint8_t)code;
  t->dtype.bits = (uint8_t)bits;
  t->dtype.lanes = (uint16_t)lanes;
  t->shape = shape == Py_None ? NULL : dims;
  t->strides = strides == Py_None ? NULL : dims + 65;
  t->byte_offset = byte_offset;
  pthread_mutex_lock(&mu);
  drop_stale(m);
  rec* r = rec_new(m, NULL, buf, versioned);
  if (r != NULL) {
    r->tokens++;
    r->raising = raising;
  }
  pthread_mutex_unlock(&mu);
  if (r == NULL) {
    free(buf), free(m);
    Py_DECREF(tok);
    return PyErr_NoMemory();
  }
  ((Token*)tok)->r = r;
  PyObject* cap = PyCapsule_New(m, name, destructor ? own_capsule_destructor : NULL);
  if (cap == NULL) { /* nobody owns it: release it through its record (counted) */
    delete_any(m);
    Py_DECREF(tok);
    return NULL;
  }
  PyCapsule_SetContext(cap, (void*)&own_marker); /* cannot fail on a new capsule */
  return Py_BuildValue("(NN)", cap, tok);
}

/* intercept(capsule) -> Token: counts calls of an unused capsule's deleter from now
 * on. A tensor already probed gives a Token on its existing record. */
static PyObject* probe_intercept(PyObject* mod, PyObject* cap) {
  int versioned;
  void* m = unused_managed(cap, &versioned);
  if (m == NULL) return NULL;
  PyObject* tok = token_new();
  if (tok == NULL) return NULL;
  ((Token*)tok)->r = NULL;
  const char* err = NULL;
  pthread_mutex_lock(&mu);
  rec* r = rec_find(m);
  if (is_own(cap)) {
    if (r == NULL || !r->pending) err = "the probed tensor was already deleted";
  } else {
    void** slot = versioned ? (void**)&((DLManagedTensorVersioned*)m)->deleter : (void**)&((DLManagedTensor*)m)->deleter;
    if (*slot == (void*)deleter_v || *slot == (void*)deleter_l) {
      if (r == NULL || !r->pending) err = "the probed tensor was already deleted";
    } else if (*slot == NULL) {
      err = "the managed tensor has no deleter to intercept";
    } else {
      drop_stale(m);
      r = rec_new(m, (void (*)(void*))*slot, NULL, versioned);
      if (r == NULL) err = "out of memory";
      else *slot = versioned ? (void*)deleter_v : (void*)deleter_l;
    }
  }
  if (err == NULL) {
    r->tokens++;
    ((Token*)tok)->r = r;
  }
  pthread_mutex_unlock(&mu);
  if (err != NULL) {
    Py_DECREF(tok);
    PyErr_SetString(PyExc_ValueError, err);
    return NULL;
  }
  return tok;
}

/* take(capsule): renames an unused probed capsule used_*, as a consumer does: the
 * probe owns the tensor now, and delete(token) may release it. */
static PyObject* probe_take(PyObject* mod, PyObject* cap) {
  int versioned;
  void* m = unused_managed(cap, &versioned);
  if (m == NULL) return NULL;
  pthread_mutex_lock(&mu);
  rec* r = rec_find(m);
  int ok = r != NULL && r->pending;
  pthread_mutex_unlock(&mu);
  if (!ok) {
    PyErr_SetString(PyExc_ValueError, "not a probed tensor whose deleter is still to run");
    return NULL;
  }
  if (PyCapsule_SetName(cap, versioned ? USED_V : USED_L) != 0) return NULL;
  pthread_mutex_lock(&mu);
  r->owned = 1; /* r is still alive: pending until its deleter runs */
  pthread_mutex_unlock(&mu);
  Py_RETURN_NONE;
}

/* delete(token): calls the deleter of a tensor take() took, as its consumer must.
 * Refused unless the probe owns it and its deleter has not run, so a released
 * tensor, or one a capsule or another consumer still holds, is never touched. */
static PyObject* probe_delete(PyObject* mod, PyObject* tok) {
  if (!PyObject_TypeCheck(tok, &Token_Type)) {
    PyErr_SetString(PyExc_TypeError, "expected a godlpack._probe.Token");
    return NULL;
  }
  rec* r = ((Token*)tok)->r;
  pthread_mutex_lock(&mu);
  const char* err = !r->owned ? "the probe does not own this tensor (take() its capsule first)"
                    : !r->pending ? "the probed tensor was already deleted"
                                  : NULL;
  void* m = r->managed;
  pthread_mutex_unlock(&mu);
  if (err != NULL) {
    PyErr_SetString(PyExc_ValueError, err);
    return NULL;
  }
  delete_any(m); /* r stays alive: tok holds it */
  Py_RETURN_NONE;
}

/* Sets d[key] = value, stealing value; remembers a failure in *ok. */
static void put(PyObject* d, const char* key, PyObject* value, int* ok) {
  if (value == NULL || PyDict_SetItemString(d, key, value) != 0) *ok = 0;
  Py_XDECREF(value);
}

/* A copy of a managed tensor's fields, taken while it is known to be alive. */
typedef struct {
  int versioned, known_layout;
  DLPackVersion version;
  uint64_t flags;
  void* pointer;
  DLTensor t;
  int64_t shape[64];
  int have_shape;
} snapshot;

static void take_snapshot(void* m, int versioned, snapshot* s) {
  memset(s, 0, sizeof *s);
  s->versioned = versioned;
  s->pointer = m;
  if (versioned) {
    DLManagedTensorVersioned* v = m;
    s->version = v->version;
    s->flags = v->flags;
    if (v->version.major != 1) return; /* unknown layout past the header */
    s->t = v->dl_tensor;
  } else {
    s->t = ((DLManagedTensor*)m)->dl_tensor;
  }
  s->known_layout = 1;
  if (s->t.ndim >= 0 && s->t.ndim <= 64 && s->t.shape != NULL) {
    memcpy(s->shape, s->t.shape, (size_t)s->t.ndim * sizeof(int64_t));
    s->have_shape = 1;
  }
}

static PyObject* snapshot_dict(const snapshot* s) {
  int ok = 1;
  PyObject* d = PyDict_New();
  if (d == NULL) return NULL;
  put(d, "pointer", PyLong_FromVoidPtr(s->pointer), &ok);
  put(d, "versioned", PyBool_FromLong(s->versioned), &ok);
  if (s->versioned) {
    put(d, "version", Py_BuildValue("(II)", s->version.major, s->version.minor), &ok);
    put(d, "flags", PyLong_FromUnsignedLongLong(s->flags), &ok);
  }
  if (s->known_layout) {
    const DLTensor* t = &s->t;
    put(d, "data", PyLong_FromVoidPtr(t->data), &ok);
    put(d, "ndim", PyLong_FromLong(t->ndim), &ok);
    put(d, "byte_offset", PyLong_FromUnsignedLongLong(t->byte_offset), &ok);
    put(d, "device", Py_BuildValue("(ii)", (int)t->device.device_type, t->device.device_id), &ok);
    put(d, "dtype", Py_BuildValue("(iii)", t->dtype.code, t->dtype.bits, t->dtype.lanes), &ok);
    put(d, "strides_null", PyBool_FromLong(t->strides == NULL), &ok);
    if (s->have_shape) {
      PyObject* sh = PyTuple_New(t->ndim);
      for (int i = 0; sh != NULL && i < t->ndim; i++) {
        PyObject* v = PyLong_FromLongLong(s->shape[i]);
        if (v == NULL) Py_CLEAR(sh);
        else PyTuple_SET_ITEM(sh, i, v);
      }
      put(d, "shape", sh, &ok);
    }
  }
  if (!ok) Py_CLEAR(d);
  return d;
}

/* inspect(capsule) -> dict of an unused capsule's managed tensor fields. */
static PyObject* probe_inspect(PyObject* mod, PyObject* cap) {
  int versioned;
  void* m = unused_managed(cap, &versioned);
  if (m == NULL) return NULL;
  snapshot s;
  int alive = 1;
  pthread_mutex_lock(&mu);
  if (is_own(cap)) alive = rec_find(m) != NULL; /* our memory lives as long as its record */
  if (alive) take_snapshot(m, versioned, &s);
  pthread_mutex_unlock(&mu);
  if (!alive) {
    PyErr_SetString(PyExc_ValueError, "the probed tensor was already deleted");
    return NULL;
  }
  return snapshot_dict(&s);
}

typedef struct {
  void* m;
  void (*deleter)(void*);
} nogil_job;

static void* run_deleter(void* arg) {
  nogil_job* j = arg;
  if (j->deleter) j->deleter(j->m);
  return NULL;
}

/* free_nogil(capsule): takes an unused capsule (renames it used_*) and calls its
 * deleter on a new native thread that never held the GIL, while ours is released. */
static PyObject* probe_free_nogil(PyObject* mod, PyObject* cap) {
  int versioned;
  void* m = unused_managed(cap, &versioned);
  if (m == NULL) return NULL;
  nogil_job j = {m, NULL};
  pthread_mutex_lock(&mu);
  if (is_own(cap)) {
    rec* r = rec_find(m);
    if (r != NULL && r->pending) j.deleter = delete_any;
  } else {
    j.deleter = versioned ? (void (*)(void*))((DLManagedTensorVersioned*)m)->deleter
                          : (void (*)(void*))((DLManagedTensor*)m)->deleter;
  }
  pthread_mutex_unlock(&mu);
  if (is_own(cap) && j.deleter == NULL) {
    PyErr_SetString(PyExc_ValueError, "the probed tensor was already deleted");
    return NULL;
  }
  if (PyCapsule_SetName(cap, versioned ? USED_V : USED_L) != 0) return NULL;
  pthread_t th;
  int rc;
  Py_BEGIN_ALLOW_THREADS;
  rc = pthread_create(&th, NULL, run_deleter, &j);
  if (rc == 0) pthread_join(th, NULL);
  Py_END_ALLOW_THREADS;
  if (rc != 0) run_deleter(&j);
  Py_RETURN_NONE;
}

static PyObject* probe_live(PyObject* mod, PyObject* unused) {
  pthread_mutex_lock(&mu);
  Py_ssize_t n = nlive;
  pthread_mutex_unlock(&mu);
  return PyLong_FromSsize_t(n);
}

static PyObject* probe_orphans(PyObject* mod, PyObject* unused) {
  pthread_mutex_lock(&mu);
  int64_t n = orphans;
  pthread_mutex_unlock(&mu);
  return PyLong_FromLongLong(n);
}

/* --- a peer's C exchange table (DLPack 1.3) ------------------------------------- */

static const DLPackExchangeAPI* exchange_table(PyObject* api) {
  const DLPackExchangeAPI* t = PyCapsule_GetPointer(api, DLPACK_EXCHANGE_API_CAPSULE_NAME);
  if (t == NULL) return NULL;
  if (t->header.version.major != 1) {
    PyErr_Format(PyExc_BufferError, "exchange table version %u.%u: not 1.x", t->header.version.major,
                 t->header.version.minor);
    return NULL;
  }
  return t;
}

/* exchange_version(api) -> (major, minor) of a "dlpack_exchange_api" capsule. */
static PyObject* probe_exchange_version(PyObject* mod, PyObject* api) {
  const DLPackExchangeAPI* t = PyCapsule_GetPointer(api, DLPACK_EXCHANGE_API_CAPSULE_NAME);
  if (t == NULL) return NULL;
  return Py_BuildValue("(II)", t->header.version.major, t->header.version.minor);
}

/* exchange_export(api, obj) -> capsule: the table's managed_tensor_from_py_object_no_sync
 * on obj, as an unused "dltensor_versioned" capsule (its destructor calls the deleter). */
static PyObject* probe_exchange_export(PyObject* mod, PyObject* args) {
  PyObject *api, *obj;
  if (!PyArg_ParseTuple(args, "OO", &api, &obj)) return NULL;
  const DLPackExchangeAPI* t = exchange_table(api);
  if (t == NULL) return NULL;
  if (t->managed_tensor_from_py_object_no_sync == NULL) {
    PyErr_SetString(PyExc_ValueError, "the table has no managed_tensor_from_py_object_no_sync");
    return NULL;
  }
  DLManagedTensorVersioned* m = NULL;
  if (t->managed_tensor_from_py_object_no_sync(obj, &m) != 0) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "the table returned -1 without an exception");
    return NULL;
  }
  if (m == NULL) {
    PyErr_SetString(PyExc_SystemError, "the table returned 0 and a NULL tensor");
    return NULL;
  }
  PyObject* cap = PyCapsule_New(m, NAME_V, foreign_capsule_destructor);
  if (cap == NULL && m->deleter) m->deleter(m);
  return cap;
}

/* exchange_import(api, capsule) -> object: takes an unused versioned capsule (renames
 * it used_*) and hands its tensor to the table's managed_tensor_to_py_object_no_sync,
 * which steals it whether it succeeds or not. */
static PyObject* probe_exchange_import(PyObject* mod, PyObject* args) {
  PyObject *api, *cap;
  if (!PyArg_ParseTuple(args, "OO", &api, &cap)) return NULL;
  const DLPackExchangeAPI* t = exchange_table(api);
  if (t == NULL) return NULL;
  int versioned;
  void* m = unused_managed(cap, &versioned);
  if (m == NULL) return NULL;
  if (!versioned) {
    PyErr_SetString(PyExc_ValueError, "the exchange API takes versioned tensors only");
    return NULL;
  }
  if (t->managed_tensor_to_py_object_no_sync == NULL) {
    PyErr_SetString(PyExc_ValueError, "the table has no managed_tensor_to_py_object_no_sync");
    return NULL;
  }
  if (PyCapsule_SetName(cap, USED_V) != 0) return NULL;
  void* out = NULL;
  if (t->managed_tensor_to_py_object_no_sync(m, &out) != 0) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "the table returned -1 without an exception");
    return NULL;
  }
  if (out == NULL) {
    PyErr_SetString(PyExc_SystemError, "the table returned 0 and a NULL object");
    return NULL;
  }
  return out;
}

static PyMethodDef methods[] = {
    {"make", (PyCFunction)(void (*)(void))probe_make, METH_VARARGS | METH_KEYWORDS, "Counting producer of arbitrary managed tensors: (capsule, Token)."},
    {"intercept", probe_intercept, METH_O, "Count calls of an unused capsule's deleter: Token."},
    {"take", probe_take, METH_O, "Rename an unused probed capsule used_*: the probe owns its tensor."},
    {"delete", probe_delete, METH_O, "Call the deleter of a tensor take() took (by its Token)."},
    {"inspect", probe_inspect, METH_O, "Fields of an unused capsule's managed tensor."},
    {"free_nogil", probe_free_nogil, METH_O, "Take an unused capsule; call its deleter off the GIL."},
    {"live", probe_live, METH_NOARGS, "Number of probe records alive."},
    {"orphans", probe_orphans, METH_NOARGS, "Deleter calls with a pointer no record knows."},
    {"exchange_version", probe_exchange_version, METH_O, "Version of a DLPack C exchange table capsule."},
    {"exchange_export", probe_exchange_export, METH_VARARGS, "A table's export of an object, as a capsule."},
    {"exchange_import", probe_exchange_import, METH_VARARGS, "A table's import of a probe capsule."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "godlpack._probe",
    .m_doc = "Counting DLPack probes for godlpack.conformance (test scaffolding).",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__probe(void) {
  if (PyType_Ready(&Token_Type) < 0) return NULL;
  if (names == NULL && (names = PyDict_New()) == NULL) return NULL;
  PyObject* m = PyModule_Create(&module_def);
  if (m == NULL) return NULL;
  Py_INCREF(&Token_Type);
  if (PyModule_AddObject(m, "Token", (PyObject*)&Token_Type) < 0) {
    Py_DECREF(&Token_Type);
    Py_DECREF(m);
    return NULL;
  }
  return m;
}

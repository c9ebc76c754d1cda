/* Python iterators over Go sequences (iter.Seq, iter.Seq2: a class's Iter,
 * a function's result): the Go pull state's handle and its next function,
 * called through the call path the creator passes (ext.c's
 * gdl_call_handle), so that this file calls nothing above it. */
#include "exchange.h"
#include "ext.h"
#include "ext_iter.h"
#include "ext_parts.h"

typedef struct {
  GDL_HEAD
  /* The pull state's handle, from creation to dealloc (never freed at the
   * end: another thread may be pulling with it, and handles are reused). */
  uintptr_t handle;
  int ended; /* the sequence said its end: later calls skip Go */
  const gdl_fn* next;
  gdl_next_call call;
  PyObject* owner; /* the object iterated (kept alive), or NULL */
} gdl_iter;

/* Stops the Go sequence of handle h (its deferred calls run) and waits for
 * it, without the GIL: they may call Python (a func parameter). What it
 * raised while stopping has no caller: it is reported as unraisable, as a
 * generator's exception at close() from its finalizer is. */
static void drop_sequence(uintptr_t h) {
  if (h == 0 || gdl_forked()) return; /* a forked child has no Go to ask */
  char err[1024] = "";
  uintptr_t exc = 0;
  int kind;
  Py_BEGIN_ALLOW_THREADS
  kind = gdlpyDropSeq(h, err, (int)sizeof err, &exc);
  Py_END_ALLOW_THREADS
  if (kind == GDL_ERR_NONE) return;
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb); /* a dealloc may run while an exception is pending */
  if (kind == GDL_ERR_PYEXC && exc != 0) {
    PyObject* e = (PyObject*)exc;
    PyErr_Restore(Py_NewRef((PyObject*)Py_TYPE(e)), e, PyException_GetTraceback(e));
  } else {
    const char* nl = strchr(err, '\n'); /* a panic's message, its stack left out */
    PyErr_Format(PyExc_RuntimeError, "%.*s", nl ? (int)(nl - err) : (int)strlen(err), err);
  }
  PyObject* where = PyUnicode_FromString("stopping a Go sequence whose iterator was freed");
  PyErr_WriteUnraisable(where);
  Py_XDECREF(where);
  PyErr_Restore(type, value, tb);
}

static PyObject* iter_next(PyObject* self) {
  gdl_iter* it = GDL_AS(gdl_iter, self);
  if (__atomic_load_n(&it->ended, __ATOMIC_ACQUIRE)) return NULL;
  PyObject* r = it->call(it->next, it->handle); /* Go takes turns among threads (pull.mu) */
  if (r == NULL && PyErr_ExceptionMatches(PyExc_StopIteration)) {
    PyErr_Clear(); /* done: no exception, as tp_iternext's protocol has it */
    __atomic_store_n(&it->ended, 1, __ATOMIC_RELEASE); /* its goroutine has ended; Go let go of the sequence */
  }
  return r;
}

static int iter_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(GDL_AS(gdl_iter, self)->owner);
#ifdef Py_LIMITED_API
  Py_VISIT(Py_TYPE(self)); /* a heap type's instances hold it */
#endif
  return 0;
}

static int iter_clear(PyObject* self) {
  Py_CLEAR(GDL_AS(gdl_iter, self)->owner);
  return 0;
}

#ifdef Py_LIMITED_API
static PyTypeObject* iter_type; /* a heap type, made once by gdl_iter_ready */
#define ITER_TYPE iter_type
#else
#define ITER_TYPE (&iter_type)
#endif

static void iter_dealloc(PyObject* self) {
  gdl_iter* it = GDL_AS(gdl_iter, self);
  PyObject_GC_UnTrack(self);
  drop_sequence(it->handle); /* no thread pulls any more: each held a reference */
  Py_XDECREF(it->owner);
  PyObject_GC_Del(self);
#ifdef Py_LIMITED_API
  Py_DECREF(iter_type);
#endif
}

/* GC-tracked: an iterator kept by the object it iterates (obj.it = iter(obj)) is a cycle. */
#ifdef Py_LIMITED_API
int gdl_iter_ready(void) {
  if (iter_type != NULL) return 0;
  PyType_Slot slots[] = {{Py_tp_dealloc, (void*)iter_dealloc},  {Py_tp_traverse, (void*)iter_traverse},
                         {Py_tp_clear, (void*)iter_clear},      {Py_tp_iter, (void*)PyObject_SelfIter},
                         {Py_tp_iternext, (void*)iter_next},    {0, NULL}};
  PyType_Spec spec = {"godlpack.go_iterator", GDL_BASICSIZE(gdl_iter), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, slots};
  iter_type = (PyTypeObject*)PyType_FromSpec(&spec);
  return iter_type ? 0 : -1;
}
#else
static PyTypeObject iter_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "godlpack.go_iterator",
    .tp_basicsize = sizeof(gdl_iter),
    .tp_dealloc = iter_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = iter_traverse,
    .tp_clear = iter_clear,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = iter_next,
};

int gdl_iter_ready(void) { return PyType_Ready(&iter_type); }
#endif

PyObject* gdl_iter_new(uintptr_t handle, const gdl_fn* next, gdl_next_call call, PyObject* owner) {
  gdl_iter* it = GDL_GC_NEW(gdl_iter, ITER_TYPE); /* ready since the module's exec */
  if (it == NULL) {
    gdlpyDropHandle(handle);
    return NULL;
  }
  it->handle = handle;
  it->ended = 0;
  it->next = next;
  it->call = call;
  it->owner = Py_XNewRef(owner);
  PyObject_GC_Track(GDL_OBJ(it));
  return GDL_OBJ(it);
}

/* Guards for the runtime's mutable state on free-threaded CPython
 * (docs/free-threading.md), with one spelling for every CPython it builds on.
 *
 * From 3.13 they are CPython's own: PyMutex (parks a waiting thread with its
 * thread state detached, so a holder that blocks on the GIL cannot deadlock
 * a waiter) and per-object critical sections (no-ops on GIL builds). 3.11 and
 * 3.12 always run with the GIL, which already makes each guarded region
 * atomic (none of them runs Python code or releases the GIL), so there they
 * compile to nothing.
 *
 * Rule for every gdl_mutex region: plain memory and reference-count work only,
 * never a call that can run Python code or release the GIL (a deallocation
 * included: drop references after unlocking). */
#ifndef GODLPACK_FTLOCK_H_
#define GODLPACK_FTLOCK_H_

#include <Python.h>

#if defined(_Py_OPAQUE_PYOBJECT)
/* abi3t (PEP 803): PyMutex is outside the stable ABI. A spinning lock: the
 * regions are a few plain stores (the rule below), and a waiter that
 * spins attached cannot block a holder that runs no Python code. */
#include <sched.h>
typedef struct {
  int held;
} gdl_mutex; /* zero-initialised: unlocked */
static inline void gdl_mutex_lock(gdl_mutex* m) {
  while (__atomic_exchange_n(&m->held, 1, __ATOMIC_ACQUIRE)) sched_yield();
}
static inline void gdl_mutex_unlock(gdl_mutex* m) { __atomic_store_n(&m->held, 0, __ATOMIC_RELEASE); }
#define GDL_BEGIN_CRITICAL_SECTION(obj) Py_BEGIN_CRITICAL_SECTION(obj)
#define GDL_END_CRITICAL_SECTION() Py_END_CRITICAL_SECTION()
#elif PY_VERSION_HEX >= 0x030D0000 && !defined(Py_LIMITED_API) /* abi3 loads only with the GIL: as 3.12 */
typedef PyMutex gdl_mutex; /* zero-initialised: unlocked */
#define gdl_mutex_lock(m) PyMutex_Lock(m)
#define gdl_mutex_unlock(m) PyMutex_Unlock(m)
#define GDL_BEGIN_CRITICAL_SECTION(obj) Py_BEGIN_CRITICAL_SECTION(obj)
#define GDL_END_CRITICAL_SECTION() Py_END_CRITICAL_SECTION()
#else
typedef struct {
  char unused;
} gdl_mutex;
#define gdl_mutex_lock(m) ((void)(m))
#define gdl_mutex_unlock(m) ((void)(m))
#define GDL_BEGIN_CRITICAL_SECTION(obj) { (void)(obj);
#define GDL_END_CRITICAL_SECTION() }
#endif

/* A process-wide strong reference that any thread may read while another
 * replaces it: a reader gets its own reference under the lock, so a swap
 * cannot free the object between the read and the incref. */
typedef struct {
  gdl_mutex lock;
  PyObject* obj;
} gdl_ref_slot;

/* A new reference to the slot's object, or NULL when it is empty (no exception set). */
static inline PyObject* gdl_ref_slot_get(gdl_ref_slot* s) {
  gdl_mutex_lock(&s->lock);
  PyObject* o = Py_XNewRef(s->obj);
  gdl_mutex_unlock(&s->lock);
  return o;
}

/* Stores a new reference to o (may be NULL); the old one is dropped after unlocking. */
static inline void gdl_ref_slot_set(gdl_ref_slot* s, PyObject* o) {
  Py_XINCREF(o);
  gdl_mutex_lock(&s->lock);
  PyObject* old = s->obj;
  s->obj = o;
  gdl_mutex_unlock(&s->lock);
  Py_XDECREF(old);
}

/* Strong-reference lookups of CPython 3.13 (a borrowed item of a container
 * another thread mutates may be freed under its reader), for 3.11 and 3.12,
 * where the GIL makes the borrowed lookup plus an incref equivalent, and for
 * abi3 (limited to 3.12, GIL only) whatever headers it is built with. */
#if PY_VERSION_HEX < 0x030D0000 || (defined(Py_LIMITED_API) && Py_LIMITED_API + 0 < 0x030D0000)
static inline int PyDict_GetItemRef(PyObject* d, PyObject* key, PyObject** out) {
  *out = Py_XNewRef(PyDict_GetItemWithError(d, key));
  return *out != NULL ? 1 : PyErr_Occurred() ? -1 : 0;
}

static inline int PyDict_GetItemStringRef(PyObject* d, const char* key, PyObject** out) {
  PyObject* k = PyUnicode_FromString(key);
  if (k == NULL) {
    *out = NULL;
    return -1;
  }
  int r = PyDict_GetItemRef(d, k, out);
  Py_DECREF(k);
  return r;
}

static inline PyObject* PyList_GetItemRef(PyObject* list, Py_ssize_t i) {
  return Py_XNewRef(PyList_GetItem(list, i));
}
#endif

#endif

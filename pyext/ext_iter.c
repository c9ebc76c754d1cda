/* Python iterators over Go sequences (iter.Seq, iter.Seq2: a class's Iter,
 * a function's result): the Go pull state's handle and its next function,
 * called through the call path the creator passes (ext.c's
 * gdl_call_handle), so that this file calls nothing above it. */
#include "exchange.h"
#include "ext.h"
#include "ext_parts.h"

typedef struct {
  PyObject_HEAD
  uintptr_t handle;
  const gdl_fn* next;
  gdl_next_call call;
  PyObject* owner; /* the object iterated (kept alive), or NULL */
} gdl_iter;

static PyObject* iter_next(PyObject* self) {
  gdl_iter* it = (gdl_iter*)self;
  if (it->handle == 0) return NULL;
  PyObject* r = it->call(it->next, it->handle);
  if (r == NULL && PyErr_ExceptionMatches(PyExc_StopIteration)) {
    PyErr_Clear(); /* done: no exception, as tp_iternext's protocol has it */
    uintptr_t h = it->handle;
    it->handle = 0; /* the Go sequence stops now, not when the iterator dies */
    if (!gdl_forked()) gdlpyDropHandle(h);
  }
  return r;
}

static void iter_dealloc(PyObject* self) {
  gdl_iter* it = (gdl_iter*)self;
  if (it->handle != 0 && !gdl_forked()) gdlpyDropHandle(it->handle);
  Py_XDECREF(it->owner);
  PyObject_Free(self);
}

static PyTypeObject iter_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "godlpack.go_iterator",
    .tp_basicsize = sizeof(gdl_iter),
    .tp_dealloc = iter_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = iter_next,
};

PyObject* gdl_iter_new(uintptr_t handle, const gdl_fn* next, gdl_next_call call, PyObject* owner) {
  if (PyType_Ready(&iter_type) < 0) {
    gdlpyDropHandle(handle);
    return NULL;
  }
  gdl_iter* it = PyObject_New(gdl_iter, &iter_type);
  if (it == NULL) {
    gdlpyDropHandle(handle);
    return NULL;
  }
  it->handle = handle;
  it->next = next;
  it->call = call;
  it->owner = Py_XNewRef(owner);
  return (PyObject*)it;
}

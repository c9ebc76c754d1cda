/* The buffer protocol of Go classes with pyext's Buffer: a view of the Go
 * slice the class's function returns, pinned by Go until the view is
 * released (buffer.go). */
#include <stdlib.h>
#include <string.h>
#include "exchange.h"
#include "ext.h"
#include "ext_parts.h"

/* What a view keeps: Go's pin, and the shape, strides and format it points at. */
typedef struct {
  uintptr_t pin;
  char format[4];
  Py_ssize_t shape[GDL_BUF_MAXDIM], strides[GDL_BUF_MAXDIM];
} view_state;

int gdl_obj_getbuffer(PyObject* self, Py_buffer* view, int flags) {
  gdl_obj* o = GDL_AS(gdl_obj, self);
  if (o->handle == 0) {
    PyErr_Format(PyExc_BufferError, "%.200s object holds no Go value (its __init__ did not run)", GDL_TP_NAME(Py_TYPE(self)));
    return -1;
  }
  if (!gdl_go_ready()) return -1;
  gdl_buffer b = {0};
  char err[1024];
  uintptr_t exc = 0;
  int kind = gdlpyGetBuffer(o->cls, o->handle, &b, err, sizeof err, &exc);
  if (kind != GDL_ERR_NONE) {
    gdl_raise_kind(kind, err, exc);
    return -1;
  }
  const char* refusal = NULL;
  int big = 0; /* C order is also Fortran order when at most one dimension exceeds 1 */
  for (int i = 0; i < b.ndim; i++) big += b.shape[i] > 1;
  if ((flags & PyBUF_WRITABLE) == PyBUF_WRITABLE && b.readonly) refusal = "is read-only";
  else if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS && big > 1 && b.nitems > 0) /* empty: both orders */
    refusal = "is C-contiguous, not Fortran-contiguous";
  view_state* st = refusal ? NULL : malloc(sizeof *st);
  if (st == NULL) {
    if (!gdl_forked()) gdlpyReleaseBuffer(b.pin);
    if (refusal) PyErr_Format(PyExc_BufferError, "the buffer of %.200s %s", GDL_TP_NAME(Py_TYPE(self)), refusal);
    else PyErr_NoMemory();
    return -1;
  }
  st->pin = b.pin;
  memcpy(st->format, b.format, sizeof st->format);
  Py_ssize_t stride = (Py_ssize_t)b.itemsize;
  for (int i = b.ndim - 1; i >= 0; i--) {
    st->shape[i] = (Py_ssize_t)b.shape[i];
    st->strides[i] = stride;
    stride *= st->shape[i];
  }
  view->buf = b.buf ? b.buf : (void*)st; /* an empty view still points somewhere */
  view->obj = Py_NewRef(self);
  view->len = (Py_ssize_t)(b.nitems * b.itemsize);
  view->itemsize = (Py_ssize_t)b.itemsize;
  view->readonly = b.readonly;
  view->ndim = b.ndim;
  view->format = (flags & PyBUF_FORMAT) ? st->format : NULL;
  view->shape = (flags & PyBUF_ND) == PyBUF_ND ? st->shape : NULL; /* NULL: bytes, contiguous */
  view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? st->strides : NULL;
  view->suboffsets = NULL;
  view->internal = st;
  return 0;
}

void gdl_obj_releasebuffer(PyObject* self, Py_buffer* view) {
  view_state* st = view->internal;
  if (st == NULL) return;
  if (!gdl_forked()) gdlpyReleaseBuffer(st->pin); /* a forked child has no Go: the pin is the parent's */
  free(st);
  view->internal = NULL;
}

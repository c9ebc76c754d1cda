/* The Python exception for a Go error kind (errkind.h; the Go half is
 * errkind.go), for every layer that calls Go. */
#include "base.h"

void gdl_raise_go(int kind, const char* msg) {
  PyObject* cls = PyExc_ValueError;
  switch (kind) {
    case GDL_ERR_BUFFER: cls = PyExc_BufferError; break;
    case GDL_ERR_MEMORY: cls = PyExc_MemoryError; break;
    case GDL_ERR_OVERFLOW: cls = PyExc_OverflowError; break;
    case GDL_ERR_TYPE: cls = PyExc_TypeError; break;
    case GDL_ERR_PANIC:
    case GDL_ERR_RUNTIME: cls = PyExc_RuntimeError; break;
  }
  PyErr_SetString(cls, msg);
}

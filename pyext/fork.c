/* fork() safety. The Go runtime does not survive fork(): in the child only
 * the forking thread exists, and the first garbage collection hangs. So after
 * a fork nothing crosses into Go any more: paths that need Go (allocation by
 * the producer, copies, Go statistics) raise a RuntimeError instead of
 * hanging, and everything in C keeps working: imports (validated in C),
 * exports, tensors inherited from the parent, the dtype names cached at
 * import time. */
#include <pthread.h>
#include <string.h>
#include "gdl.h"

static volatile int forked;

static void on_fork_child(void) {
  forked = 1;
  gdl_owner_forked(); /* Go-memory owners then leak instead of calling Go */
}

int gdl_fork_init(void) { return pthread_atfork(NULL, NULL, on_fork_child) == 0 ? 0 : -1; }

int gdl_go_ready(void) {
  if (!forked) return 1;
  PyErr_SetString(PyExc_RuntimeError,
                  "godlpack cannot call into Go in a process forked after godlpack was imported "
                  "(the Go runtime does not survive fork); use the 'spawn' or 'forkserver' "
                  "multiprocessing start method");
  return 0;
}

/* dtype names, cached at import so that .dtype and repr need no Go call. */
static PyObject* names[18][8];
static const int widths[8] = {4, 6, 8, 16, 32, 64, 128, 0};

int gdl_dtype_names_init(void) {
  char buf[64];
  for (int code = 0; code < 18; code++) {
    for (int w = 0; widths[w]; w++) {
      gdlDTypeName(code, widths[w], 1, buf, sizeof buf);
      if (strncmp(buf, "dtype(", 6) == 0) continue; /* not a known type */
      names[code][w] = PyUnicode_InternFromString(buf);
      if (names[code][w] == NULL) return -1;
    }
  }
  return 0;
}

PyObject* gdl_dtype_name(DLDataType dt) {
  if (dt.code < 18 && dt.lanes == 1) {
    for (int w = 0; widths[w]; w++) {
      if (widths[w] == dt.bits && names[dt.code][w] != NULL) return Py_NewRef(names[dt.code][w]);
    }
  }
  return PyUnicode_FromFormat("dtype(code=%d, bits=%d, lanes=%d)", dt.code, dt.bits, dt.lanes);
}

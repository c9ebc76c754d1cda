/* fork() safety. The Go runtime does not survive fork(): in the child only
 * the forking thread exists, and the first garbage collection hangs. So after
 * a fork nothing crosses into Go any more: paths that need Go (allocation by
 * the producer, copies, Go statistics) raise a RuntimeError instead of
 * hanging, and everything in C keeps working: imports (validated in C),
 * exports, tensors inherited from the parent, dtype names and dlpack_info. */
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

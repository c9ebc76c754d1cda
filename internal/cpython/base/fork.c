/* fork() safety. The Go runtime does not survive fork(): in the child only
 * the forking thread exists, and the first garbage collection hangs. So after
 * a fork nothing crosses into Go any more: paths that need Go (allocation by
 * the producer, copies, Go statistics) raise a RuntimeError instead of
 * hanging, and everything in C keeps working: imports (validated in C),
 * exports, tensors inherited from the parent, dtype names and dlpack_info. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "base.h"

static volatile int forked;
static char module[128] = "godlpack"; /* the module that linked this layer, named in the refusal */

/* unused on Windows, where MinGW's pthread_atfork is a macro that drops it (no fork there) */
__attribute__((unused)) static void on_fork_child(void) {
  forked = 1;
  gdl_owner_forked(); /* Go-memory owners then leak instead of calling Go */
}

int gdl_fork_init(const char* module_name) {
  snprintf(module, sizeof module, "%s", module_name);
  return pthread_atfork(NULL, NULL, on_fork_child) == 0 ? 0 : -1;
}

int gdl_forked(void) { return forked; }

int gdl_go_ready(void) {
  if (!forked) return 1;
  PyErr_Format(PyExc_RuntimeError,
               "%s cannot call into Go in a process forked after %s was imported "
               "(the Go runtime does not survive fork); use the 'spawn' or 'forkserver' "
               "multiprocessing start method, and with 'forkserver' on Python 3.14+ call "
               "multiprocessing.set_forkserver_preload([]) first (its server imports __main__, "
               "and so %s, before it forks the workers)", module, module, module);
  return 0;
}

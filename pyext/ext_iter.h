/* ext_iter.h: what ext_iter.c (Python iterators over Go sequences) asks of
 * Go (pull.go). */
#ifndef GODLPACK_EXT_ITER_H_
#define GODLPACK_EXT_ITER_H_

#include <stdint.h>

/* Stops the Go sequence of iterator handle h (its deferred calls run),
 * waits for it and frees h: GDL_ERR_NONE, or what the sequence raised or
 * panicked with while it stopped (errkind.h's code; GDL_ERR_PYEXC with *exc
 * a new reference to a Python callable's exception), which has no caller
 * to go to. Without the GIL. */
extern int gdlpyDropSeq(uintptr_t h, char* err, int errlen, uintptr_t* exc);

#endif

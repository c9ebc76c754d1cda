/* ext_module.c: what module.go asks of it, without Python.h (cgo compiles a
 * Go file's preamble dozens of times; the objects are void* here). */
#ifndef GODLPACK_EXT_MODULE_H_
#define GODLPACK_EXT_MODULE_H_

#include "ext_class.h"

/* The PyInit result of a Go extension module (a PyObject*; abi3t: its
 * slots, which PyModExport_<name> returns): fns (nfns of them) and the
 * strings must live as long as the process. NULL with MemoryError. */
void* gdl_ext_module(const char* name, const char* doc, gdl_fn** fns, int nfns, gdl_class** classes, int nclasses,
                     int module_id, gdl_exc** excs, int nexcs, int free_threaded);
/* Raises ImportError(msg), for a PyInit whose module definition failed. */
void gdl_ext_import_error(const char* msg);

#endif

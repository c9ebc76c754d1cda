/* godlpack._godlpack itself: a user of the runtime's layers, like any Go
 * extension, and the only module that offers the helper C API. Without
 * Python.h, which main.go's preamble would make cgo compile for each of its
 * probes: the C files include exchange.h first. */
#ifndef GODLPACK_MODULE_H_
#define GODLPACK_MODULE_H_

#include <stdint.h>

/* Hidden from the library's symbol table: package main's C flags cannot say
 * -fvisibility=hidden, which would hide PyInit__godlpack (cgo compiles its
 * export with the same flags). */
#pragma GCC visibility push(hidden)

/* module.c: the module object (a PyObject*), for PyInit__godlpack (main.go). */
void* gdl_godlpack_module(void);

#ifdef Py_PYTHON_H /* the C files */
/* capi.c: the _C_API capsule (include/godlpack/godlpack.h). */
PyObject* gdl_capi_capsule(void);
#endif

/* Go (create.go): allocations by package producer. Each returns an
 * errkind.h code with a message in err. */
extern int gdlEmpty(char* dtype, int ndim, int64_t* shape, int zeroed, void** out, char* err, int errlen);
extern int gdlFull(char* dtype, int ndim, int64_t* shape, double re, double im, void** out, char* err, int errlen);
extern int gdlFullInt(char* dtype, int ndim, int64_t* shape, int64_t v, void** out, char* err, int errlen);
extern int gdlArange(char* dtype, double start, double stop, double step, void** out, char* err, int errlen);
extern int gdlArangeInt(char* dtype, int64_t start, int64_t stop, int64_t step, void** out, char* err, int errlen);
extern void gdlGoStats(uint64_t* heap_bytes, uint64_t* heap_objects, uint64_t* num_gc);

#pragma GCC visibility pop

#endif

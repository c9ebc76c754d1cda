/* Layer base: process-wide services of the CPython runtime, with no Tensor
 * in them (interned strings, the Go error mapping, the fork guard, the Go
 * runtime scan, dtype names, devices). Every layer above includes this.
 * Layers and their directions: docs/architecture.md. */
#ifndef GODLPACK_BASE_H_
#define GODLPACK_BASE_H_

#define PY_SSIZE_T_CLEAN
#include "need_python.h" /* capsule/ */
#include <Python.h>
#include "ftlock.h"
#include "godlpack/godlpack.h"
#include "owner.h"
#include "tables_gen.h"
#include "capsule.h"
#include "validate.h"
#include "shape.h"
#include "errkind.h"

/* strings.c: interned strings and cached objects, made once by
 * gdl_strings_init (idempotent). */
typedef struct {
  PyObject *s_dlpack, *s_dlpack_device, *s_max_version, *s_dl_device, *s_copy, *s_stream;
  PyObject *kw_max_version;               /* ("max_version",) */
  PyObject *kw_max_version_stream;        /* ("max_version", "stream") */
  PyObject *max_version;                  /* (1, 3) */
} gdl_strings;
extern gdl_strings GDL;
int gdl_strings_init(void);

/* tp.__mro__ as a new reference (CPython's own read, which takes it under
 * the type lock of a free-threaded build, where another thread may give tp
 * new bases), NULL when tp has none (no exception set) or with an exception. */
PyObject* gdl_type_mro(PyTypeObject* tp);

/* errors.c: raises the Python exception for a Go error kind (errkind.h). */
void gdl_raise_go(int kind, const char* msg);

/* fork.c: whether Go may be called (1), else RuntimeError set (0) naming
 * module_name, the module that linked this layer. */
int gdl_fork_init(const char* module_name);
int gdl_go_ready(void);
int gdl_forked(void); /* 1 in a child forked after the import: nothing may call Go (no exception set) */

/* dtype.c: names from the generated table; dlpack_info(). */
int gdl_dtype_init(void);
PyObject* gdl_dtype_name(DLDataType dt); /* new ref */
/* Refuses an operation that reads elements of a vector dtype (lanes > 1):
 * sets exc ("<what>: vector dtype float32x4 ...") and returns -1. */
int gdl_refuse_vector(PyObject* exc, DLDataType dt, const char* what);
PyObject* gdl_dlpack_info(PyObject* mod, PyObject* unused);

/* sigchain.c: one SIGURG handler that calls every Go runtime's own
 * (docs/runtimes.md). join: this library's runtime joins the chain, 1, or
 * 0 when it could not (its handler was already replaced), -1 with OSError.
 * repair: adopts a Go runtime loaded since (ctypes). leader: the chain's
 * leading table now (one scan of the loaded objects; NULL when out of
 * memory). state: given the leader, whether the Go runtime of the loaded
 * object at base gets SIGURG, its Go version when it joined (else NULL),
 * and whether it is built on pyext. */
struct dl_phdr_info;
int gdl_has_go_note(struct dl_phdr_info* info);
int gdl_sigchain_join(void);
void gdl_sigchain_repair(void);
const void* gdl_sigchain_leader(void);
int gdl_sigchain_state(const void* leader, const char* path, uintptr_t base, const char** go_version,
                       int* built_on_pyext);
extern const char* gdl_go_version; /* runtime.Version() of this library's runtime */

/* runtimes.c: the Go runtimes loaded in the process, as
 * [(path, is_self, go_version, chained)]; join_runtimes at a module's init:
 * joins the chain, then a RuntimeWarning (0, or -1 when warnings are
 * errors) for each runtime still without SIGURG. */
PyObject* gdl_go_runtimes(PyObject* mod, PyObject* unused);
int gdl_join_runtimes(const char* module_name);

/* device.c (gdl_cpu_accessible is in tables_gen.h). */
int gdl_device_init(const char* module_name);
PyObject* gdl_device_class(void);                   /* borrowed */
int gdl_parse_device(PyObject* obj, DLDevice* out); /* (type, id); -1 + TypeError */
PyObject* gdl_device_tuple(DLDevice d);
PyObject* gdl_device_obj(DLDevice d); /* Device named tuple */
/* A stream argument (not None) as an int: 0 with *s, 1 for an int that is
 * no stream at all (beyond int64 or below -1; no exception set: the caller
 * says why in its own terms), -1 with TypeError for a non-int. */
int gdl_stream_arg(PyObject* obj, long long* s);

#endif

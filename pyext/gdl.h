/* Internal declarations of the CPython layer (package pyext). The
 * Python-facing hot paths (__dlpack__, from_dlpack, capsules, deleters) are C
 * and never cross into Go; validation and owners are the C core (core/);
 * allocation and strided copies are Go (create.go). */
#ifndef GODLPACK_PYEXT_H_
#define GODLPACK_PYEXT_H_

#define PY_SSIZE_T_CLEAN
#include "need_python.h" /* capsule/ */
#include <Python.h>
#include "godlpack/godlpack.h"
#include "owner.h"
#include "tables_gen.h"
#include "capsule.h"
#include "validate.h"
#include "shape.h"

#define GDL_INLINE_DIMS 8

/* godlpack.Tensor: a view into memory kept alive by a refcounted owner. */
typedef struct {
  PyObject_HEAD
  gdl_owner* owner;  /* one reference, dropped in dealloc */
  DLTensor view;     /* shape/strides point at dims (never NULL strides) */
  uint64_t flags;    /* DLPACK_FLAG_BITMASK_* as imported or created */
  int64_t* dims;     /* 2*ndim: shape then strides (elements) */
  Py_ssize_t* bufdims; /* buffer protocol: shape then byte strides, lazily */
  PyObject* weakrefs;
  intptr_t stream;   /* GPU: the stream the data is ready on (1 = legacy default) */
  int64_t inline_dims[2 * GDL_INLINE_DIMS];
} GdlTensor;

extern PyTypeObject GdlTensor_Type;
#define GdlTensor_Check(o) PyObject_TypeCheck((o), &GdlTensor_Type)

/* Interned strings and cached objects, made once at module init. */
typedef struct {
  PyObject *s_dlpack, *s_dlpack_device, *s_max_version, *s_dl_device, *s_copy, *s_stream;
  PyObject *kw_max_version;               /* ("max_version",) */
  PyObject *kw_max_version_stream;        /* ("max_version", "stream") */
  PyObject *max_version;                  /* (1, 3) */
} gdl_strings;
extern gdl_strings GDL;

/* Wraps a managed tensor (taking ownership of it) in a new Tensor after Go
 * validated it. On failure the deleter has run and NULL is returned with
 * BufferError set. */
PyObject* gdl_tensor_from_managed(void* managed, int versioned);

/* gdl_owner_decref for callers holding the GIL: the release may run a foreign
 * deleter that runs Python code, so the pending exception (if any) is saved
 * around it. Every pyext path that may drop a foreign owner uses this. */
void gdl_owner_decref_keep_error(gdl_owner* owner);

/* Wraps a view of memory kept alive by owner (steals one reference). The view
 * must be valid; shape/strides are copied. */
PyObject* gdl_tensor_new(gdl_owner* owner, const DLTensor* view, uint64_t flags);

/* A fresh managed tensor (versioned or legacy) describing view, holding a
 * reference to t's owner; NULL with BufferError (read-only as legacy) or
 * MemoryError. flags go on versioned exports. */
void* gdl_tensor_export(GdlTensor* t, const DLTensor* view, int versioned, uint64_t flags);

/* A compact copy of self's data in new 64-byte-aligned C memory. */
PyObject* gdl_tensor_copy(GdlTensor* self, uint64_t extra_flags);

/* init.c: start-up shared by every module linking this layer (idempotent;
 * refuses subinterpreters), and the Tensor and Device types for a module. */
int gdl_layer_init(const char* module_name);
int gdl_layer_add_types(PyObject* module);

/* pickle.c: Tensor.__reduce_ex__, __copy__/__deepcopy__ (both copy), and
 * the module's _rebuild_tensor (gdl_pickle_add, by gdl_layer_add_types). */
int gdl_pickle_init(const char* module_name);
int gdl_pickle_add(PyObject* module);
PyObject* gdl_tensor_reduce_ex(PyObject* self, PyObject* protocol);
PyObject* gdl_tensor_copy_dunder(PyObject* self, PyObject* unused);

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

/* runtimes.c: the Go runtimes loaded in the process; a RuntimeWarning
 * (0, or -1 when warnings are errors) when another one than ours is. */
PyObject* gdl_go_runtimes(PyObject* mod, PyObject* unused);
int gdl_warn_other_runtimes(const char* module_name);

/* godlpack_module.c: raise the exception for a Go error kind (errkind.h). */
void gdl_raise_go(int kind, const char* msg);

/* cuda.c: the CUDA driver, dlopen-ed on first use. Streams use the array API
 * numbering: 1 legacy default, 2 per-thread default, -1 no sync, else a handle. */
int gdl_cuda_stream_device(int32_t device_type); /* device types with streams */
int gdl_stream_sync(DLDevice dev, intptr_t from, intptr_t to); /* 0, or -1 + BufferError */
int gdl_host_sync(DLDevice dev, intptr_t stream); /* host waits for stream (CUDA only) */
PyObject* gdl_cuda_copy(GdlTensor* t, DLDevice to, intptr_t stream); /* IS_COPIED copy */
/* A copy on t's own device (CUDA, CUDAHost and CUDAManaged stay what they are). */
PyObject* gdl_device_copy(GdlTensor* t, uint64_t flags);
PyObject* gdl_cuda_status(PyObject* mod, PyObject* unused);
void gdl_cuda_trim(void); /* cudamem.c: frees the pinned and device blocks kept for reuse */
void gdl_par_memcpy(void* dst, const void* src, size_t n); /* parcopy.c: memcpy on several threads */

/* placement.c: where data goes when a consumer asks for device want. */
typedef enum { GDL_PLACE_SHARE, GDL_PLACE_RELABEL, GDL_PLACE_COPY } gdl_place;
/* 0 with *how, or -1 with BufferError: a move godlpack cannot make, or one
 * that needs a copy under copy=False. */
int gdl_placement(DLDevice have, DLDevice want, PyObject* copy, gdl_place* how);
/* t as a new Tensor on want (shared, relabelled or copied; copy=True always
 * copies); NULL with the exception set. */
PyObject* gdl_tensor_on(GdlTensor* t, DLDevice want, PyObject* copy);

/* device.c (gdl_cpu_accessible is in tables_gen.h). */
int gdl_device_init(const char* module_name);
PyObject* gdl_device_class(void);                   /* borrowed */
int gdl_parse_device(PyObject* obj, DLDevice* out); /* (type, id); -1 + TypeError */
PyObject* gdl_device_tuple(DLDevice d);
PyObject* gdl_device_obj(DLDevice d); /* Device named tuple */

/* Go (create.go), declared here to keep C self-contained. Each returns an
 * errkind.h code with a message in err. */
extern int gdlCopyCompact(DLTensor* view, void* dst, char* err, int errlen);
extern int gdlEmpty(char* dtype, int ndim, int64_t* shape, int zeroed, void** out, char* err, int errlen);
extern int gdlFull(char* dtype, int ndim, int64_t* shape, double re, double im, void** out, char* err, int errlen);
extern int gdlFullInt(char* dtype, int ndim, int64_t* shape, int64_t v, void** out, char* err, int errlen);
extern int gdlArange(char* dtype, double start, double stop, double step, void** out, char* err, int errlen);
extern int gdlArangeInt(char* dtype, int64_t start, int64_t stop, int64_t step, void** out, char* err, int errlen);
extern void gdlGoStats(uint64_t* heap_bytes, uint64_t* heap_objects, uint64_t* num_gc);

/* A capsule (obj itself, or what obj.__dlpack__ returns) taken: the managed
 * tensor is the caller's. NULL with TypeError/BufferError set. A NULL stream
 * is passed as stream=None: the array API's legacy default stream (PyTorch
 * reads a missing stream as -1, "no synchronisation"). */
void* gdl_managed_from_object(PyObject* obj, PyObject* stream, PyObject* max_version, PyObject* dl_device,
                              PyObject* copy, int* versioned);
/* gdl_managed_from_object(obj, NULL, max_version, NULL, NULL, versioned) with
 * from_dlpack's checks of the producer first (PyTorch's negative bit): for
 * the arguments of Go extension functions. */
void* gdl_managed_from_object_checked(PyObject* obj, PyObject* max_version, int* versioned);
/* Through type(obj).__dlpack_c_exchange_api__ if it has one: 1 with *out set
 * and *stream the stream its data is ready on (the table's current work
 * stream, for devices with streams), 0 when the type has none (or it does not
 * apply), -1 with an exception. On 0, *dlpack is gdl_dlpack_method(obj) from
 * the same type lookup. */
int gdl_exchange_managed_from_object(PyObject* obj, DLManagedTensorVersioned** out, PyObject** dlpack,
                                     intptr_t* stream);
/* obj's type's __dlpack__ when it can be called directly (a new reference),
 * else NULL (no error): call it by name. */
PyObject* gdl_dlpack_method(PyObject* obj);
/* Sets Tensor.__dlpack_c_exchange_api__ and makes the module's _C_API. */
int gdl_exchange_init(PyTypeObject* type);
PyObject* gdl_capi_capsule(void);

PyObject* gdl_dlpack(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames);
PyObject* gdl_dlpack_device(PyObject* self, PyObject* unused);
PyObject* gdl_from_dlpack(PyObject* mod, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames);
PyObject* gdl_tolist(PyObject* self, PyObject* unused);
PyObject* gdl_tensor_array(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames);
extern PyBufferProcs gdl_buffer_procs;
extern PyNumberMethods gdl_number_methods; /* number.c: float/int/index of 0-d tensors, bool */
PyObject* gdl_number_complex(PyObject* self, PyObject* unused); /* number.c: Tensor.__complex__ */

#endif

/* Internal declarations of the CPython module. The Python-facing hot paths
 * (__dlpack__, from_dlpack, capsules, deleters) live in C and cross into Go
 * at most once per call; validation, allocation and copying are Go. */
#ifndef GODLPACK_PYEXT_H_
#define GODLPACK_PYEXT_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include "godlpack/dlpack.h"
#include "owner.h"
#include "capsule.h"
#include "validate.h"

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
  PyObject *max_version;                  /* (1, 3) */
} gdl_strings;
extern gdl_strings GDL;

/* Wraps a managed tensor (taking ownership of it) in a new Tensor after Go
 * validated it. On failure the deleter has run and NULL is returned with
 * BufferError set. */
PyObject* gdl_tensor_from_managed(void* managed, int versioned);

/* Wraps a view of memory kept alive by owner (steals one reference). The view
 * must be valid; shape/strides are copied. */
PyObject* gdl_tensor_new(gdl_owner* owner, const DLTensor* view, uint64_t flags);

/* A fresh managed tensor (versioned or legacy) describing view, holding a
 * reference to t's owner; NULL with BufferError (read-only as legacy) or
 * MemoryError. flags go on versioned exports. */
void* gdl_tensor_export(GdlTensor* t, const DLTensor* view, int versioned, uint64_t flags);

/* A compact copy of self's data in new 64-byte-aligned C memory. */
PyObject* gdl_tensor_copy(GdlTensor* self, uint64_t extra_flags);

/* fork.c: whether Go may be called (1), else RuntimeError set (0); dtype names. */
int gdl_fork_init(void);
int gdl_go_ready(void);
int gdl_dtype_names_init(void);
PyObject* gdl_dtype_name(DLDataType dt); /* new ref */

/* cuda.c: the CUDA driver, dlopen-ed on first use. Streams use the array API
 * numbering: 1 legacy default, 2 per-thread default, -1 no sync, else a handle. */
int gdl_cuda_stream_device(int32_t device_type); /* device types with streams */
int gdl_stream_sync(DLDevice dev, intptr_t from, intptr_t to); /* 0, or -1 + BufferError */
int gdl_host_sync(DLDevice dev, intptr_t stream); /* host waits for stream (CUDA only) */
PyObject* gdl_cuda_copy(GdlTensor* t, DLDevice to, intptr_t stream); /* IS_COPIED copy */
/* A copy on t's own device (CUDA, CUDAHost and CUDAManaged stay what they are). */
PyObject* gdl_device_copy(GdlTensor* t, uint64_t flags);
PyObject* gdl_cuda_status(PyObject* mod, PyObject* unused);

/* Device helpers. */
int gdl_parse_device(PyObject* obj, DLDevice* out); /* (type, id); -1 + TypeError */
PyObject* gdl_device_tuple(DLDevice d);
PyObject* gdl_device_obj(DLDevice d); /* godlpack.Device named tuple */
int gdl_cpu_accessible(int32_t device_type);

/* Go bridge (bridge.go), declared here to keep C self-contained. */
extern int gdlCopyCompact(DLTensor* view, void* dst, char* err, int errlen);
extern void* gdlCreate(int kind, char* dtype, int ndim, int64_t* shape, double re, double im,
                       double start, double stop, double step, int64_t i0, int64_t i1, int64_t i2, char* err,
                       int errlen);
extern int gdlDTypeName(int code, int bits, int lanes, char* out, int outlen);

/* obj.__dlpack__(...) with NULL keywords left out, legacy fallback on TypeError. */
PyObject* gdl_call_dlpack(PyObject* obj, PyObject* stream, PyObject* max_version, PyObject* dl_device,
                          PyObject* copy);
/* A capsule (obj itself, or what obj.__dlpack__ returns) taken: the managed
 * tensor is the caller's. NULL with TypeError/BufferError set. */
void* gdl_managed_from_object(PyObject* obj, PyObject* stream, PyObject* max_version, PyObject* dl_device,
                              PyObject* copy, int* versioned);
/* Through type(obj).__dlpack_c_exchange_api__ if it has one: 1 with *out set,
 * 0 when the type has none (or it does not apply), -1 with an exception. */
int gdl_exchange_managed_from_object(PyObject* obj, DLManagedTensorVersioned** out);
/* Sets Tensor.__dlpack_c_exchange_api__ and makes the module's _C_API. */
int gdl_exchange_init(PyTypeObject* type);
PyObject* gdl_capi_capsule(void);

PyObject* gdl_dlpack(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames);
PyObject* gdl_dlpack_device(PyObject* self, PyObject* unused);
PyObject* gdl_from_dlpack(PyObject* mod, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames);
PyObject* gdl_tolist(PyObject* self, PyObject* unused);
extern PyBufferProcs gdl_buffer_procs;

#endif

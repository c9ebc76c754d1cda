/* Layer tensor: the godlpack.Tensor object (a view kept alive by a
 * refcounted owner), its properties and readers, compact copies and copies
 * across the bus (copy.c), and where data goes for a consumer's device
 * (placement.c). The type's exchange methods are wired in above, by
 * exchange/tensor_type.c: nothing here calls up. */
#ifndef GODLPACK_TENSOR_H_
#define GODLPACK_TENSOR_H_

#include "base.h"
#include "cuda.h"

#define GDL_INLINE_DIMS 8

/* godlpack.Tensor: a view into memory kept alive by a refcounted owner. */
typedef struct {
  GDL_HEAD
  gdl_owner* owner;  /* one reference, dropped in dealloc */
  DLTensor view;     /* shape/strides point at dims (never NULL strides) */
  uint64_t flags;    /* DLPACK_FLAG_BITMASK_* as imported or created */
  int64_t* dims;     /* 2*ndim: shape then strides (elements) */
  Py_ssize_t* bufdims; /* buffer protocol: shape then byte strides, lazily */
  PyObject* weakrefs;
  intptr_t stream;   /* GPU: the stream the data is ready on (1 = legacy default) */
  int64_t inline_dims[2 * GDL_INLINE_DIMS];
} GdlTensor;

/* tensor.c. The type's slots of this layer are static; exchange/tensor_type.c
 * adds the methods, tp_new and the name, then readies it. */
#ifdef Py_LIMITED_API
/* A heap type (PyType_FromSpec), made by the exchange layer's init from
 * gdl_tensor_slots plus its own (tensor_type.c). */
extern PyTypeObject* gdl_tensor_type;
extern PyType_Slot gdl_tensor_slots[];
#define GDL_TENSOR_TYPE gdl_tensor_type
#else
extern PyTypeObject GdlTensor_Type;
#define GDL_TENSOR_TYPE (&GdlTensor_Type)
#endif
#define GdlTensor_Check(o) PyObject_TypeCheck((o), GDL_TENSOR_TYPE)

/* Wraps a managed tensor (taking ownership of it) in a new Tensor once the
 * C validator (core/validate.c) accepted it. On failure the deleter has run
 * and NULL is returned with BufferError (a refused tensor) or MemoryError. */
PyObject* gdl_tensor_from_managed(void* managed, int versioned);

/* Wraps a view of memory kept alive by owner (steals one reference). The view
 * must be valid; shape/strides are copied. */
PyObject* gdl_tensor_new(gdl_owner* owner, const DLTensor* view, uint64_t flags);

/* copy.c */
/* A compact copy of self's data in new 64-byte-aligned C memory. */
PyObject* gdl_tensor_copy(GdlTensor* self, uint64_t extra_flags);
PyObject* gdl_tensor_copy_method(PyObject* self, PyObject* unused); /* Tensor.copy() */
/* An IS_COPIED copy of t on to (CUDA and host memory), strides kept; a
 * device copy is ready on stream (t's data must be ready there). */
PyObject* gdl_cuda_copy(GdlTensor* t, DLDevice to, intptr_t stream);
/* A copy on t's own device (CUDA, CUDAHost and CUDAManaged stay what they are). */
PyObject* gdl_device_copy(GdlTensor* t, uint64_t flags);
/* Go (copy.go): copies a view into dst, compact row-major; an errkind.h
 * code with a message in err. Callable without the GIL. */
extern int gdlCopyCompact(DLTensor* view, void* dst, char* err, int errlen);

/* placement.c: where data goes when a consumer asks for device want. */
typedef enum { GDL_PLACE_SHARE, GDL_PLACE_RELABEL, GDL_PLACE_COPY } gdl_place;
/* 0 with *how, or -1 with BufferError: a move godlpack cannot make, or one
 * that needs a copy under copy=False. */
int gdl_placement(DLDevice have, DLDevice want, PyObject* copy, gdl_place* how);
/* t as a new Tensor on want (shared, relabelled or copied; copy=True always
 * copies); NULL with the exception set. */
PyObject* gdl_tensor_on(GdlTensor* t, DLDevice want, PyObject* copy);

/* Readers: tolist.c, number.c (float/int/index/bool of 0-d tensors,
 * __complex__), buffer.c (the buffer protocol), array.c (__array__). */
PyObject* gdl_tolist(PyObject* self, PyObject* unused);
#ifdef Py_LIMITED_API /* the functions, for gdl_tensor_slots */
PyObject* gdl_number_int(PyObject* self);
PyObject* gdl_number_float(PyObject* self);
PyObject* gdl_number_index(PyObject* self);
int gdl_number_bool(PyObject* self);
int gdl_tensor_getbuffer(PyObject* obj, Py_buffer* view, int flags);
#else
extern PyNumberMethods gdl_number_methods;
#endif
PyObject* gdl_number_complex(PyObject* self, PyObject* unused);
#ifndef Py_LIMITED_API
extern PyBufferProcs gdl_buffer_procs;
#endif
PyObject* gdl_tensor_array(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames);

#endif

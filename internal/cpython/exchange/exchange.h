/* Layer exchange: DLPack between a Tensor and other objects. export.c is the
 * producer (__dlpack__) and export_table.c its C exchange table;
 * import_table.c uses other types' tables (with torch_quirks.c, private) and
 * import.c is the consumer (from_dlpack); pickle.c pickling and copy.copy;
 * tensor_type.c the Tensor type's assembly and the start-up every module
 * linking the runtime calls, on top of all of them. */
#ifndef GODLPACK_EXCHANGE_H_
#define GODLPACK_EXCHANGE_H_

#include "tensor.h"

/* export.c */
/* A fresh managed tensor (versioned or legacy) describing view, holding a
 * reference to t's owner; NULL with BufferError (read-only as legacy) or
 * MemoryError. flags go on versioned exports. */
void* gdl_tensor_export(GdlTensor* t, const DLTensor* view, int versioned, uint64_t flags);
PyObject* gdl_dlpack(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames);
PyObject* gdl_dlpack_device(PyObject* self, PyObject* unused);

/* export_table.c: sets type.__dlpack_c_exchange_api__ (the table other
 * consumers use). */
int gdl_export_table_add(PyTypeObject* type);

/* import_table.c */
int gdl_import_table_init(void); /* idempotent */
/* Through type(obj).__dlpack_c_exchange_api__ if it has one: 1 with *out set
 * and *stream the stream its data is ready on (the table's current work
 * stream, for devices with streams), 0 when the type has none (or it does not
 * apply), -1 with an exception. On 0, *dlpack is gdl_dlpack_method(obj) from
 * the same type lookup. */
int gdl_exchange_managed_from_object(PyObject* obj, DLManagedTensorVersioned** out, PyObject** dlpack,
                                     intptr_t* stream);
/* Before from_dlpack calls obj.__dlpack__ (device, copy or stream given, or
 * the table declined): 0 go on, with *dlpack set as by gdl_dlpack_method; -1
 * error set. */
int gdl_exchange_check_dlpack(PyObject* obj, PyObject** dlpack);
/* obj's type's __dlpack__ when it can be called directly (a new reference),
 * else NULL (no error): call it by name. */
PyObject* gdl_dlpack_method(PyObject* obj);
/* torch_quirks.c: godlpack._torch_keyset() (internal). */
PyObject* gdl_torch_keyset_py(PyObject* m, PyObject* unused);

/* import.c */
/* godlpack.from_dlpack(obj, /, *, device=None, copy=None, stream=None). */
PyObject* gdl_from_dlpack(PyObject* mod, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames);
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

/* pickle.c: Tensor.__reduce_ex__, __copy__/__deepcopy__ (both copy), and
 * the module's _rebuild_tensor (gdl_pickle_add, by gdl_layer_add_types). */
int gdl_pickle_init(const char* module_name);
int gdl_pickle_add(PyObject* module);
PyObject* gdl_tensor_reduce_ex(PyObject* self, PyObject* protocol);
PyObject* gdl_tensor_copy_dunder(PyObject* self, PyObject* unused);

/* tensor_type.c: start-up shared by every module linking the runtime
 * (idempotent; refuses subinterpreters), and the Tensor and Device types for
 * a module. */
int gdl_layer_init(const char* module_name);
int gdl_layer_add_types(PyObject* module);

#endif

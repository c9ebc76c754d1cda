/*
 * godlpack helper C API: the DLPack helpers every library keeps rewriting,
 * callable from C, C++, Cython or Go extensions without linking to godlpack.
 *
 *   #include <godlpack/godlpack.h>      // cc -I$(python -c 'import godlpack; print(godlpack.get_include())')
 *   const GodlpackCAPI* api = godlpack_import_capi();   // NULL + ImportError if unavailable
 *
 * The table lives as long as the process. Fields are only ever appended;
 * check abi_version and size before using a field newer than your header.
 *
 * Ownership words used below:
 *   "steals m"  the function owns m from the call on, also when it fails (it
 *               then calls m's deleter itself). Do not touch m afterwards.
 *   "new ref"   a new Python reference the caller must release.
 *   "GIL"       the caller must hold the GIL; errors are Python exceptions.
 */
#ifndef GODLPACK_GODLPACK_H_
#define GODLPACK_GODLPACK_H_

#include <Python.h>
#include "dlpack.h" /* upstream DLPack 1.3, verbatim: guard DLPACK_DLPACK_H_ */

#ifdef __cplusplus
extern "C" {
#endif

#define GODLPACK_CAPI_ABI_VERSION 1
#define GODLPACK_CAPI_CAPSULE "godlpack._C_API"

/* The name of the capsule in a type's __dlpack_c_exchange_api__ attribute:
 * DLPack 1.3 gives it in prose only, its header has no macro for it. */
#ifndef DLPACK_EXCHANGE_API_CAPSULE_NAME
#define DLPACK_EXCHANGE_API_CAPSULE_NAME "dlpack_exchange_api"
#endif

typedef struct GodlpackCAPI {
  /* GODLPACK_CAPI_ABI_VERSION of the godlpack that made the table, and
   * sizeof(GodlpackCAPI) there: a field exists if its offset < size. */
  uint32_t abi_version;
  uint32_t size;
  /* The DLPack version godlpack implements (what it stamps on exports). */
  DLPackVersion api_version;
  /* Newest DLPack major version godlpack imports. */
  uint32_t max_import_major;

  /* Calls m's deleter if m and its deleter are non-NULL. Any thread, no GIL
   * needed by godlpack (the producer's deleter may want it). Never fails. */
  void (*free_managed)(DLManagedTensor* m);
  void (*free_managed_versioned)(DLManagedTensorVersioned* m);

  /* 1 if the host CPU may dereference memory of this device type (CPU,
   * CUDAHost, ROCMHost, CUDAManaged), else 0. Any thread, no GIL. */
  int (*is_cpu_accessible)(DLDevice device);

  /* The C form of obj.__dlpack__(stream=stream, max_version=max_version):
   * obj is any DLPack producer or an unused DLPack capsule. GIL.
   *   stream:      NULL for None, else the stream object passed through.
   *   max_version: the newest version the caller understands; major 0 asks
   *                for a legacy DLManagedTensor.
   *   *out:        the managed tensor, owned by the caller from now on (it
   *                must call the deleter exactly once);
   *   *versioned:  1 if *out is a DLManagedTensorVersioned, 0 if legacy
   *                (old producers answer legacy even when asked for 1.x).
   * Returns 0, or -1 with TypeError (no DLPack) or BufferError set; on error
   * nothing is owned by the caller. */
  int (*managed_from_object)(PyObject* obj, PyObject* stream, DLPackVersion max_version, void** out,
                             int* versioned);

  /* The C form of obj.__dlpack_device__(): 0, or -1 with an exception. GIL. */
  int (*device_of)(PyObject* obj, DLDevice* out);

  /* A new capsule ("dltensor_versioned" / "dltensor") owning m, whose
   * destructor calls the deleter only while the name is unused. Steals m.
   * New ref, or NULL with an exception. GIL. */
  PyObject* (*capsule_from_managed_versioned)(DLManagedTensorVersioned* m);
  PyObject* (*capsule_from_managed)(DLManagedTensor* m);

  /* Takes ownership out of an unused DLPack capsule: renames it to "used_..."
   * and returns the managed tensor (*versioned says which kind); the caller
   * must call its deleter exactly once. NULL with BufferError (used or
   * foreign name) or TypeError (not a capsule) set, capsule untouched. GIL. */
  void* (*capsule_take)(PyObject* capsule, int* versioned);

  /* Wraps a managed tensor as a godlpack.Tensor after validating it. Steals
   * m. New ref, or NULL with BufferError (m's deleter has then run). GIL. */
  PyObject* (*tensor_from_managed)(void* m, int versioned);
} GodlpackCAPI;

/* Imports the table from the godlpack module (GIL held). A table from a
 * newer godlpack (higher abi_version, larger size) is accepted: it has every
 * field this header knows. An older one is refused with ImportError. */
static inline const GodlpackCAPI* godlpack_import_capi(void) {
  const GodlpackCAPI* api = (const GodlpackCAPI*)PyCapsule_Import(GODLPACK_CAPI_CAPSULE, 0);
  if (api != NULL && (api->abi_version < GODLPACK_CAPI_ABI_VERSION || api->size < sizeof(GodlpackCAPI))) {
    PyErr_Format(PyExc_ImportError, "godlpack C API ABI %u (table of %u bytes) is older than this header's %d "
                 "(%u bytes): upgrade godlpack", (unsigned)api->abi_version, (unsigned)api->size,
                 GODLPACK_CAPI_ABI_VERSION, (unsigned)sizeof(GodlpackCAPI));
    return NULL;
  }
  return api;
}

#ifdef __cplusplus
}
#endif
#endif /* GODLPACK_GODLPACK_H_ */

/* The PyCapsule side of DLPack ownership. A producer's capsule owns its
 * managed tensor while its name is "dltensor"/"dltensor_versioned"; a consumer
 * takes ownership by renaming it to "used_..."; the destructor calls the
 * deleter only while the name is still the unused one. */
#ifndef GODLPACK_CAPSULE_H_
#define GODLPACK_CAPSULE_H_

#define PY_SSIZE_T_CLEAN
#include "need_python.h"
#include <Python.h>
#include "limited.h"
#include "godlpack/dlpack.h"

extern const char GDL_NAME_LEGACY[];         /* "dltensor" */
extern const char GDL_NAME_VERSIONED[];      /* "dltensor_versioned" */
extern const char GDL_NAME_USED_LEGACY[];    /* "used_dltensor" */
extern const char GDL_NAME_USED_VERSIONED[]; /* "used_dltensor_versioned" */

/* New capsule owning m. On failure m's deleter is called and NULL is
 * returned with an exception set, so m is consumed either way. GIL held. */
PyObject* gdl_capsule_versioned(DLManagedTensorVersioned* m);
PyObject* gdl_capsule_legacy(DLManagedTensor* m);

/* Takes ownership out of an unused DLPack capsule: renames it to its used name
 * and returns the managed tensor pointer; *versioned says which kind. On
 * failure returns NULL with TypeError (not a capsule) or BufferError (used or
 * foreign name) set, and the capsule is left untouched. GIL held. */
void* gdl_capsule_take(PyObject* capsule, int* versioned);

/* The destructor we install (exposed so others can recognise our capsules). */
void gdl_capsule_destructor(PyObject* capsule);

#endif

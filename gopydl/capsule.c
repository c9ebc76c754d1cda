#include <stddef.h>
#include "capsule.h"
#include "godlpack/dlpack.h"

/* Weak: resolved from the Python process that loads the module, NULL in a
 * plain Go program (then the destructor does nothing). No Python.h needed. */
extern int PyCapsule_IsValid(void* capsule, const char* name) __attribute__((weak));
extern void* PyCapsule_GetPointer(void* capsule, const char* name) __attribute__((weak));

static const char versioned_name[] = "dltensor_versioned";

void gopydl_capsule_destructor(void* capsule) {
	if (PyCapsule_IsValid == NULL || PyCapsule_GetPointer == NULL) {
		return;
	}
	/* Neither call sets an error for a valid capsule of this name. */
	if (!PyCapsule_IsValid(capsule, versioned_name)) {
		return; /* renamed "used_…": the consumer owns the tensor */
	}
	DLManagedTensorVersioned* m = PyCapsule_GetPointer(capsule, versioned_name);
	if (m != NULL && m->deleter != NULL) {
		m->deleter(m);
	}
}

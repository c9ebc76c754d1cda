#include <stddef.h>
#include "capsule.h"
#include "godlpack/dlpack.h"

const char gopydl_versioned_name[] = "dltensor_versioned";
const char gopydl_used_versioned_name[] = "used_dltensor_versioned";
const char gopydl_used_legacy_name[] = "used_dltensor";

/* Weak: resolved from the Python process that loads the module, NULL in a
 * plain Go program (then the destructor does nothing). */
extern int PyCapsule_IsValid(void* capsule, const char* name) __attribute__((weak));
extern void* PyCapsule_GetPointer(void* capsule, const char* name) __attribute__((weak));

void gopydl_capsule_destructor(void* capsule) {
	if (PyCapsule_IsValid == NULL || PyCapsule_GetPointer == NULL) {
		return;
	}
	/* Neither call sets an error for a valid capsule with this name. */
	if (!PyCapsule_IsValid(capsule, gopydl_versioned_name)) {
		return; /* renamed "used_…": the consumer owns the tensor */
	}
	DLManagedTensorVersioned* m = PyCapsule_GetPointer(capsule, gopydl_versioned_name);
	if (m != NULL && m->deleter != NULL) {
		m->deleter(m);
	}
}

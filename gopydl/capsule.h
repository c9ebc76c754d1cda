#ifndef GOPYDL_CAPSULE_H
#define GOPYDL_CAPSULE_H

/* Destructor for the capsules gopydl.py's from_go makes: calls the deleter of
 * the DLManagedTensorVersioned inside only while the capsule is still named
 * "dltensor_versioned" (unused). It neither sets nor reads a Python error, so
 * a pending exception survives it; it is C because a ctypes callback would
 * not. The Python helper finds it by name (dlsym) in the gopy module. */
void gopydl_capsule_destructor(void* capsule);

#endif

#ifndef GOPYDL_CAPSULE_H
#define GOPYDL_CAPSULE_H

/* Capsule names with static storage: a capsule keeps a pointer to its name. */
extern const char gopydl_versioned_name[];
extern const char gopydl_used_versioned_name[];
extern const char gopydl_used_legacy_name[];

/* Destructor for capsules made by gopydl.py's from_go: calls the deleter of
 * the DLManagedTensorVersioned inside only while the capsule is still named
 * "dltensor_versioned" (unused). It sets no Python error and reads none, so a
 * pending exception survives it. */
void gopydl_capsule_destructor(void* capsule);

#endif

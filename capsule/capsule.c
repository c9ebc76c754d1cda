#include <string.h>
#include "capsule.h"

/* Capsules keep the name pointer, not a copy: these must be static storage. */
const char GDL_NAME_LEGACY[] = "dltensor";
const char GDL_NAME_VERSIONED[] = "dltensor_versioned";
const char GDL_NAME_USED_LEGACY[] = "used_dltensor";
const char GDL_NAME_USED_VERSIONED[] = "used_dltensor_versioned";

/* 1 for an unused versioned name, 0 for an unused legacy one, -1 otherwise
 * (used_*, foreign, NULL). Our capsules carry our own static pointers, so the
 * common case needs no string compare; a renamed-back copy still matches. */
static int unused_kind(const char* name) {
  if (name == GDL_NAME_VERSIONED) return 1;
  if (name == GDL_NAME_LEGACY) return 0;
  if (name == NULL || name[0] != 'd') return -1; /* "used_...": consumed */
  if (strcmp(name, GDL_NAME_VERSIONED) == 0) return 1;
  if (strcmp(name, GDL_NAME_LEGACY) == 0) return 0;
  return -1;
}

static void run_deleter(void* p, int versioned) {
  if (versioned) {
    DLManagedTensorVersioned* m = p;
    if (m->deleter != NULL) m->deleter(m);
  } else {
    DLManagedTensor* m = p;
    if (m->deleter != NULL) m->deleter(m);
  }
}

void gdl_capsule_destructor(PyObject* capsule) {
  /* Only an unused capsule still owns its tensor. A capsule always has a
   * non-NULL pointer, so neither call below can fail or set an error. */
  const char* name = PyCapsule_GetName(capsule);
  int versioned = unused_kind(name);
  if (versioned < 0) return;
  void* p = PyCapsule_GetPointer(capsule, name);
  /* A deleter may run Python code: an exception in flight is kept, and one
   * the deleter raises (it must not) is reported, as for __del__. Not with
   * the capsule as its object: at refcount 0, the hook would revive it. */
  if (!PyErr_Occurred()) { /* the common case: nothing to keep */
    run_deleter(p, versioned);
    if (PyErr_Occurred()) PyErr_WriteUnraisable(NULL);
    return;
  }
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  run_deleter(p, versioned);
  if (PyErr_Occurred()) PyErr_WriteUnraisable(NULL);
  PyErr_Restore(type, value, tb);
}

PyObject* gdl_capsule_versioned(DLManagedTensorVersioned* m) {
  PyObject* c = PyCapsule_New(m, GDL_NAME_VERSIONED, gdl_capsule_destructor);
  if (c == NULL && m->deleter != NULL) m->deleter(m);
  return c;
}

PyObject* gdl_capsule_legacy(DLManagedTensor* m) {
  PyObject* c = PyCapsule_New(m, GDL_NAME_LEGACY, gdl_capsule_destructor);
  if (c == NULL && m->deleter != NULL) m->deleter(m);
  return c;
}

void* gdl_capsule_take(PyObject* capsule, int* versioned) {
  if (!PyCapsule_CheckExact(capsule)) {
    PyErr_Format(PyExc_TypeError, "expected a DLPack PyCapsule, got %.200s",
                 GDL_TP_NAME(Py_TYPE(capsule)));
    return NULL;
  }
  const char* name = PyCapsule_GetName(capsule);
  if (name == NULL && PyErr_Occurred()) return NULL;
  const char* used;
  if (name != NULL && strcmp(name, GDL_NAME_VERSIONED) == 0) {
    *versioned = 1;
    used = GDL_NAME_USED_VERSIONED;
  } else if (name != NULL && strcmp(name, GDL_NAME_LEGACY) == 0) {
    *versioned = 0;
    used = GDL_NAME_USED_LEGACY;
  } else if (name != NULL && (strcmp(name, GDL_NAME_USED_VERSIONED) == 0 ||
                              strcmp(name, GDL_NAME_USED_LEGACY) == 0)) {
    PyErr_SetString(PyExc_BufferError,
                    "DLPack capsule was already consumed (its name is \"used_...\")");
    return NULL;
  } else {
    PyErr_Format(PyExc_BufferError, "PyCapsule named %s%.100s%s is not a DLPack tensor",
                 name ? "\"" : "", name ? name : "NULL", name ? "\"" : "");
    return NULL;
  }
  void* p = PyCapsule_GetPointer(capsule, name);
  if (p == NULL) return NULL;
  if (PyCapsule_SetName(capsule, used) != 0) return NULL;
  return p;
}

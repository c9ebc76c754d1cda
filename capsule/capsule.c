#include <string.h>
#include "capsule.h"

/* Capsules keep the name pointer, not a copy: these must be static storage. */
const char GDL_NAME_LEGACY[] = "dltensor";
const char GDL_NAME_VERSIONED[] = "dltensor_versioned";
const char GDL_NAME_USED_LEGACY[] = "used_dltensor";
const char GDL_NAME_USED_VERSIONED[] = "used_dltensor_versioned";

void gdl_capsule_destructor(PyObject* capsule) {
  /* Only an unused capsule still owns its tensor. IsValid sets no error. */
  int versioned;
  if (PyCapsule_IsValid(capsule, GDL_NAME_VERSIONED)) {
    versioned = 1;
  } else if (PyCapsule_IsValid(capsule, GDL_NAME_LEGACY)) {
    versioned = 0;
  } else {
    return;
  }
  /* A deleter may run Python code; keep any exception in flight intact. */
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  if (versioned) {
    DLManagedTensorVersioned* m = PyCapsule_GetPointer(capsule, GDL_NAME_VERSIONED);
    if (m != NULL && m->deleter != NULL) m->deleter(m);
  } else {
    DLManagedTensor* m = PyCapsule_GetPointer(capsule, GDL_NAME_LEGACY);
    if (m != NULL && m->deleter != NULL) m->deleter(m);
  }
  PyErr_Clear();
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
                 Py_TYPE(capsule)->tp_name);
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

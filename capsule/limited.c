/* limited.h's functions for a limited-API (abi3) build: a type's name from
 * its attributes, and the interpreter's functions outside the stable ABI,
 * found at run time. Empty in the default build. */
#if defined(Py_LIMITED_API) || defined(Py_TARGET_ABI3T) /* abi3t: Python.h defines Py_LIMITED_API */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEFAULT */
#endif
#include "capsule.h"

#ifdef GDL_OPAQUE
/* CPython's own, under limited.h's macro of the same name. */
static PyObject* gdl_type_from_spec_raw(PyObject* module, PyType_Spec* spec, PyObject* bases) {
#undef PyType_FromModuleAndSpec
  return PyType_FromModuleAndSpec(module, spec, bases);
}
#endif

#ifdef _WIN32
#include <windows.h>
#else
#include <dlfcn.h>
#endif

/* The tp_dealloc of classes made by a class statement (CPython's
 * subtype_dealloc), whose tp_name is their bare name; NULL on failure. */
static void* class_statement_dealloc(void) {
  static void* dealloc;
  if (dealloc == NULL) {
    PyObject* t = PyObject_CallFunction((PyObject*)&PyType_Type, "s()N", "_gdl_probe", PyDict_New());
    if (t != NULL) dealloc = PyType_GetSlot((PyTypeObject*)t, Py_tp_dealloc);
    Py_XDECREF(t);
  }
  return dealloc;
}

const char* gdl_tp_name(PyTypeObject* tp) {
  PyObject* exc = PyErr_GetRaisedException(); /* callers format an error: keep the one in flight */
  const char* r = "?";
  PyObject* qual = PyType_GetName(tp);
  /* tp_name is "module.name" for static types and those made from a spec,
   * the bare name for a class statement's, "name" for builtins */
  int bare = PyType_HasFeature(tp, Py_TPFLAGS_HEAPTYPE) && PyType_GetSlot(tp, Py_tp_dealloc) == class_statement_dealloc();
  PyObject* mod = qual && !bare ? PyObject_GetAttrString((PyObject*)tp, "__module__") : NULL;
  PyObject* full = NULL;
  if (mod && PyUnicode_Check(mod) && PyUnicode_CompareWithASCIIString(mod, "builtins") != 0)
    full = PyUnicode_FromFormat("%U.%U", mod, qual);
  else if (qual)
    full = Py_NewRef(qual);
  static PyObject* names; /* every name given out, kept: its UTF-8 outlives this call */
  if (names == NULL) names = PyDict_New();
  if (full && names) {
    PyObject* kept = PyDict_GetItemWithError(names, full); /* borrowed */
    if (kept == NULL && !PyErr_Occurred() && PyDict_SetItem(names, full, full) == 0) kept = full;
    const char* s = kept ? PyUnicode_AsUTF8AndSize(kept, NULL) : NULL;
    if (s) r = s;
  }
  Py_XDECREF(full);
  Py_XDECREF(mod);
  Py_XDECREF(qual);
  PyErr_Clear();
  PyErr_SetRaisedException(exc);
  return r;
}

PyObject* gdl_run_string(const char* src, int start, PyObject* globals, PyObject* locals) {
  PyObject* code = Py_CompileString(src, "<godlpack>", start);
  if (code == NULL) return NULL;
  PyObject* r = PyEval_EvalCode(code, globals, locals);
  Py_DECREF(code);
  return r;
}

int gdl_type_own_attr(PyTypeObject* tp, PyObject* name, PyObject** v) {
  *v = NULL;
  PyObject* d = PyObject_GetAttrString((PyObject*)tp, "__dict__");
  if (d == NULL) return -1;
  *v = PyObject_GetItem(d, name);
  Py_DECREF(d);
  if (*v != NULL) return 1;
  if (!PyErr_ExceptionMatches(PyExc_KeyError)) return -1;
  PyErr_Clear();
  return 0;
}

/* The address of the interpreter's function name (NULL when it has none). */
#ifdef _WIN32
/* The extension imports python3.dll, which forwards the stable ABI to
 * python3XY.dll: the module holding Py_IsInitialized's code (the import's
 * resolved address) is python3XY.dll, which exports the rest. */
static void* interp_fn(const char* name) {
  HMODULE m = NULL;
  if (!GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                          (LPCWSTR)(void*)&Py_IsInitialized, &m))
    return NULL;
  return (void*)GetProcAddress(m, name);
}
#else
static void* interp_fn(const char* name) { return dlsym(RTLD_DEFAULT, name); }
#endif

int gdl_gilstate_check(void) {
  static int (*fn)(void);
  if (fn == NULL) fn = (int (*)(void))interp_fn("PyGILState_Check");
  return fn ? fn() : 1;
}

int gdl_is_finalizing(void) {
  static int (*fn)(void);
  if (fn == NULL) fn = (int (*)(void))interp_fn("Py_IsFinalizing");
  if (fn == NULL) fn = (int (*)(void))interp_fn("_Py_IsFinalizing");
  return fn ? fn() : 0;
}

PyObject* gdl_type_dict(PyTypeObject* tp) {
  static PyObject* (*fn)(PyTypeObject*);
  if (fn == NULL) fn = (PyObject * (*)(PyTypeObject*)) interp_fn("PyType_GetDict");
  if (fn == NULL) {
    PyErr_SetString(PyExc_SystemError, "godlpack: this Python has no PyType_GetDict");
    return NULL;
  }
  return fn(tp);
}

PyObject* gdl_module_attr(const char* module, const char* name) {
  PyObject* m = PyImport_ImportModule(module);
  PyObject* attr = m ? PyObject_GetAttrString(m, name) : NULL;
  Py_XDECREF(m);
  return attr;
}

int gdl_is_main_interpreter(void) {
  static PyInterpreterState* (*fn)(void);
  if (fn == NULL) fn = (PyInterpreterState * (*)(void)) interp_fn("PyInterpreterState_Main");
  return fn ? PyInterpreterState_Get() == fn() : 1;
}

#ifdef GDL_OPAQUE
Py_ssize_t gdl_data_offset;
Py_ssize_t gdl_head_size;
int gdl_free_threaded = 1; /* until known: the safe assumption */

int gdl_opaque_init(void) {
  if (gdl_data_offset != 0) return 0;
  /* A type of one long of its own data, its base object, as all of ours. */
  PyType_Slot none[] = {{0, NULL}};
  PyType_Spec spec = {"godlpack._offset_probe", -(int)sizeof(long), 0, Py_TPFLAGS_DEFAULT, none};
  PyObject* tp = gdl_type_from_spec_raw(NULL, &spec, NULL);
  PyObject* o = tp ? PyType_GenericAlloc((PyTypeObject*)tp, 0) : NULL;
  Py_ssize_t off = o ? (char*)PyObject_GetTypeData(o, (PyTypeObject*)tp) - (char*)o : 0;
  Py_XDECREF(o);
  Py_XDECREF(tp);
  PyObject* size = off ? PyObject_GetAttrString((PyObject*)&PyBaseObject_Type, "__basicsize__") : NULL;
  Py_ssize_t head = size ? PyLong_AsSsize_t(size) : -1;
  Py_XDECREF(size);
  if (off <= 0 || head <= 0) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "godlpack: no offset of a type's data found");
    return -1;
  }
  PyObject* flags = gdl_module_attr("sys", "abiflags"); /* "t" in it: a free-threaded build */
  if (flags != NULL && !PyUnicode_Check(flags)) {
    Py_DECREF(flags);
    PyErr_SetString(PyExc_SystemError, "godlpack: sys.abiflags is not a str");
    return -1;
  }
  const char* f = flags ? PyUnicode_AsUTF8AndSize(flags, NULL) : NULL; /* lives as long as flags */
  if (f != NULL) gdl_free_threaded = strchr(f, 't') != NULL;
  Py_XDECREF(flags);
  if (f == NULL) return -1;
  gdl_head_size = head;
  gdl_data_offset = off;
  return 0;
}

/* spec with its members' __weaklistoffset__ made absolute (CPython asserts
 * it is not relative, in a debug build): from the object, now known. The
 * type keeps copies of its members; the copies made here are freed. */
PyObject* gdl_type_from_spec(PyObject* module, PyType_Spec* spec, PyObject* bases) {
  if (gdl_opaque_init() < 0) return NULL;
  int nslots = 0;
  while (spec->slots[nslots].slot != 0) nslots++;
  PyType_Slot* slots = calloc((size_t)nslots + 1, sizeof *slots);
  PyMemberDef* members = NULL;
  if (slots == NULL) return PyErr_NoMemory();
  for (int i = 0; i < nslots; i++) {
    slots[i] = spec->slots[i];
    if (slots[i].slot != Py_tp_members || members != NULL) continue;
    const PyMemberDef* m = slots[i].pfunc;
    size_t n = 0;
    while (m[n].name != NULL) n++;
    members = calloc(n + 1, sizeof *members);
    if (members == NULL) {
      free(slots);
      return PyErr_NoMemory();
    }
    memcpy(members, m, n * sizeof *members);
    for (size_t j = 0; j < n; j++) {
      if (strcmp(members[j].name, "__weaklistoffset__") == 0 && (members[j].flags & Py_RELATIVE_OFFSET)) {
        members[j].flags &= ~Py_RELATIVE_OFFSET;
        members[j].offset += gdl_data_offset;
      }
    }
    slots[i].pfunc = members;
  }
  PyType_Spec copy = *spec;
  copy.slots = slots;
  PyObject* t = gdl_type_from_spec_raw(module, &copy, bases);
  free(members);
  free(slots);
  return t;
}
#endif
#else
typedef int gdl_limited_unused; /* ISO C: a translation unit declares something */
#endif

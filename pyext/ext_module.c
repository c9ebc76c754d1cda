/* A Go extension module: its definition for CPython's multi-phase init, and
 * its exec step, which adds the functions (builtin functions calling ext.c's
 * call path) and classes (ext_class.c) and runs the Go exec hooks. */
#include <stdlib.h>
#include <string.h>
#include "exchange.h"
#include "ext.h"
#include "ext_module.h"
#include "ext_parts.h"

/* Functions every Go extension module has (CPython keeps pointers to these). */
static PyMethodDef ext_methods[] = {
    {"go_runtimes", gdl_go_runtimes, METH_NOARGS,
     "go_runtimes() -> [(path, is_this_module, go_version, chained), ...]: the Go runtimes loaded in this "
     "process; chained: it gets its preemption signal (docs/runtimes.md). Chains any loaded since."},
    {"_rebuild_object", (PyCFunction)(void (*)(void))gdl_rebuild_object, METH_FASTCALL,
     "_rebuild_object(cls, data): unpickles an object of a Go class (its UnmarshalBinary)."},
    {NULL, NULL, 0, NULL}};

/* A Go extension module's definition: CPython keeps it for the process.
 * abi3t (PEP 803) has no PyModuleDef: the module is its slots (PEP 793),
 * and this struct its token. */
typedef struct {
#ifdef GDL_OPAQUE
  PySlot slots[8]; /* abi, name, doc, methods, token, exec, gil, end */
#else
  PyModuleDef def; /* first: PyModule_GetDef gives back this struct */
  PyModuleDef_Slot slots[3]; /* exec, gil (3.13+), end */
#endif
  const char* name;
  gdl_fn** fns;
  int nfns;
  gdl_class** classes;
  int nclasses;
  int module_id; /* for the Go exec hooks (Module.OnExec) */
  gdl_exc** excs;
  int nexcs;
} ext_def;

/* ---- functions ---------------------------------------------------------------- */

/* A Go function is a builtin function (PyCFunction) whose __self__ is its
 * module, as math.sqrt's: it pickles by reference (its __reduce__ is its
 * name, found in its __module__), and CPython's call specialisation calls
 * its C function directly. Which Go function a call is for cannot come
 * from self (the module, shared), so each Go function gets a C function of
 * its own: trampoline k calls fn_slots[k] (one load, no lookup). A slot is
 * taken once per gdl_fn, for the process (a module imported again reuses
 * its functions' slots). */
#define GDL_MAX_FUNCS 1024
static const gdl_fn* fn_slots[GDL_MAX_FUNCS];
static int nfn_slots;
static gdl_mutex fn_slots_lock;

/* trampoline_<octal k> for k in 0..1023, and their table in that order */
#define T1(k)                                                                                                  \
  static PyObject* trampoline_##k(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) { \
    return gdl_call_fn(fn_slots[0##k], NULL, args, nargs, kwnames);                                            \
  }
#define T8(k) T1(k##0) T1(k##1) T1(k##2) T1(k##3) T1(k##4) T1(k##5) T1(k##6) T1(k##7)
#define T64(k) T8(k##0) T8(k##1) T8(k##2) T8(k##3) T8(k##4) T8(k##5) T8(k##6) T8(k##7)
#define T512(k) T64(k##0) T64(k##1) T64(k##2) T64(k##3) T64(k##4) T64(k##5) T64(k##6) T64(k##7)
T512(0)
T512(1)
#define P1(k) (PyCFunction)(void (*)(void))trampoline_##k,
#define P8(k) P1(k##0) P1(k##1) P1(k##2) P1(k##3) P1(k##4) P1(k##5) P1(k##6) P1(k##7)
#define P64(k) P8(k##0) P8(k##1) P8(k##2) P8(k##3) P8(k##4) P8(k##5) P8(k##6) P8(k##7)
#define P512(k) P64(k##0) P64(k##1) P64(k##2) P64(k##3) P64(k##4) P64(k##5) P64(k##6) P64(k##7)
static const PyCFunction trampolines[GDL_MAX_FUNCS] = {P512(0) P512(1)};

/* fn's trampoline (its slot taken on first use); NULL with ImportError when all are taken. */
static PyCFunction trampoline_of(PyObject* m, const gdl_fn* fn) {
  gdl_mutex_lock(&fn_slots_lock); /* two modules' execs may run at once on a free-threaded build */
  int k = 0;
  while (k < nfn_slots && fn_slots[k] != fn) k++;
  if (k == nfn_slots && k < GDL_MAX_FUNCS) fn_slots[nfn_slots++] = fn;
  gdl_mutex_unlock(&fn_slots_lock);
  if (k < GDL_MAX_FUNCS) return trampolines[k];
  PyErr_Format(PyExc_ImportError, "%s.%s: more than %d Go functions in one extension (pyext's limit)",
               PyModule_GetName(m), fn->name, GDL_MAX_FUNCS);
  return NULL;
}

/* Adds fn to module m as a function m.<name>. */
static int add_func(PyObject* m, gdl_fn* fn) {
  if (gdl_fn_intern_names(fn) < 0) return -1;
  PyCFunction meth = trampoline_of(m, fn);
  if (meth == NULL) return -1;
  PyMethodDef* def = calloc(1, sizeof *def); /* lives as long as the process */
  if (def == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  def->ml_name = fn->name;
  def->ml_meth = meth;
  def->ml_flags = METH_FASTCALL | METH_KEYWORDS;
  def->ml_doc = fn->doc;
  PyObject* modname = PyModule_GetNameObject(m);
  PyObject* f = modname ? PyCFunction_NewEx(def, m, modname) : NULL;
  Py_XDECREF(modname);
  if (f == NULL) return -1;
  int r = PyModule_AddObject(m, fn->name, f);
  if (r < 0) Py_DECREF(f);
  return r;
}

/* Makes the custom exception e in module m, as m.<name>: a subclass of the
 * builtin exception named e->base. */
static int add_exception(PyObject* m, const gdl_exc* e) {
  PyObject* base = NULL; /* strong: builtins is a dict any thread may change */
  if (PyDict_GetItemStringRef(PyEval_GetBuiltins(), e->base, &base) < 0) return -1;
  if (base == NULL || !PyExceptionClass_Check(base)) {
    Py_XDECREF(base);
    PyErr_Format(PyExc_ImportError, "%s.%s: base %s is no builtin exception", PyModule_GetName(m), e->name, e->base);
    return -1;
  }
  PyObject* qual = PyUnicode_FromFormat("%s.%s", PyModule_GetName(m), e->name);
  const char* q = qual ? PyUnicode_AsUTF8(qual) : NULL;
  PyObject* type = q ? PyErr_NewExceptionWithDoc(q, e->doc[0] ? e->doc : NULL, base, NULL) : NULL;
  Py_XDECREF(qual);
  Py_DECREF(base);
  if (type == NULL) return -1;
  gdl_set_exc_type(e->id, type); /* the newest module's type */
  int r = PyModule_AddObjectRef(m, e->name, type);
  Py_DECREF(type);
  return r;
}

/* Multi-phase init: runs in each interpreter importing the module, so a
 * subinterpreter is refused (gdl_layer_init). */
static int ext_exec(PyObject* m) {
#ifdef GDL_OPAQUE
  void* token = NULL;
  if (PyModule_GetToken(m, &token) < 0) return -1;
  ext_def* d = token;
#else
  ext_def* d = (ext_def*)PyModule_GetDef(m);
#endif
  if (d == NULL || gdl_layer_init(d->name) < 0 || gdl_layer_add_types(m) < 0 || gdl_iter_ready() < 0) return -1;
  for (int i = 0; i < d->nfns; i++) {
    if (add_func(m, d->fns[i]) < 0) return -1;
  }
  for (int i = 0; i < d->nclasses; i++) {
    if (gdl_add_class(m, d->classes[i]) < 0) return -1;
  }
  for (int i = 0; i < d->nexcs; i++) {
    if (add_exception(m, d->excs[i]) < 0) return -1;
  }
  char err[1024];
  int kind = gdlpyExec(d->module_id, m, err, sizeof err);
  if (kind == GDL_ERR_PYTHON) return -1; /* the hook left a Python exception */
  if (kind != GDL_ERR_NONE) {
    gdl_ext_raise(kind, err);
    return -1;
  }
  return gdl_join_runtimes(d->name);
}

#ifdef GDL_OPAQUE
PyABIInfo_VAR(abi_info); /* abi3t, free-threading agnostic */
#endif

void* gdl_ext_module(const char* name, const char* doc, gdl_fn** fns, int nfns, gdl_class** classes, int nclasses,
                     int module_id, gdl_exc** excs, int nexcs, int free_threaded) {
  ext_def* d = calloc(1, sizeof *d);
  if (d == NULL) return PyErr_NoMemory();
  d->name = name;
  d->fns = fns;
  d->nfns = nfns;
  d->classes = classes;
  d->nclasses = nclasses;
  d->module_id = module_id;
  d->excs = excs;
  d->nexcs = nexcs;
#ifdef GDL_OPAQUE
  PySlot slots[8] = {PySlot_DATA(Py_mod_abi, &abi_info),
                     PySlot_DATA(Py_mod_name, name),
                     PySlot_DATA(Py_mod_doc, doc),
                     PySlot_STATIC_DATA(Py_mod_methods, ext_methods), /* CPython keeps the pointer */
                     PySlot_DATA(Py_mod_token, d),
                     PySlot_FUNC(Py_mod_exec, ext_exec),
                     PySlot_DATA(Py_mod_gil, free_threaded ? Py_MOD_GIL_NOT_USED : Py_MOD_GIL_USED), /* as below */
                     PySlot_END};
  memcpy(d->slots, slots, sizeof slots);
  return (PyObject*)(void*)d->slots;
#else
  PyModuleDef init = {PyModuleDef_HEAD_INIT, name, doc, 0, ext_methods, d->slots, NULL, NULL, NULL};
  d->def = init;
  d->slots[0].slot = Py_mod_exec;
  d->slots[0].value = (void*)ext_exec;
#if defined(Py_mod_gil) && defined(Py_MOD_GIL_USED) /* not under abi3's 3.12 limited API */
  /* By default the author's Go code is assumed to rely on the GIL, and a
   * free-threaded CPython keeps it enabled while this module is loaded;
   * Module.FreeThreaded asserts the author guards their own state (pyext's
   * runtime guards its own: docs/free-threading.md). */
  d->slots[1].slot = Py_mod_gil;
  d->slots[1].value = free_threaded ? Py_MOD_GIL_NOT_USED : Py_MOD_GIL_USED;
#else
  (void)free_threaded;
#endif
  return PyModuleDef_Init(&d->def);
#endif
}

void gdl_ext_import_error(const char* msg) { PyErr_SetString(PyExc_ImportError, msg); }

#if defined(GDL_OPAQUE) && defined(GDL_MODULES)
/* abi3t: CPython 3.15 finds a module by PyModExport_<name> (PEP 793), which
 * returns the slots that the author's PyInit_<name> (a Go export: it waits
 * for the Go runtime) makes. The build names the modules the package exports
 * (-DGDL_MODULES(X)=X(a)X(b): tools/godlpack_build.py). */
#define GDL_MODEXPORT(gdl_mod)                \
  PyMODEXPORT_FUNC PyModExport_##gdl_mod(void) { \
    extern void* PyInit_##gdl_mod(void);       \
    return (PySlot*)PyInit_##gdl_mod();          \
  }
GDL_MODULES(GDL_MODEXPORT)
#endif

/* A Go extension module: its definition for CPython's multi-phase init, and
 * its exec step, which adds the functions (ext.c) and classes (ext_class.c)
 * and runs the Go exec hooks. */
#include <stdlib.h>
#include "exchange.h"
#include "ext.h"
#include "ext_parts.h"

/* Functions every Go extension module has (CPython keeps pointers to these). */
static PyMethodDef ext_methods[] = {
    {"go_runtimes", gdl_go_runtimes, METH_NOARGS,
     "go_runtimes() -> [(path, is_this_module, go_version, chained), ...]: the Go runtimes loaded in this "
     "process; chained: it gets its preemption signal (docs/runtimes.md). Chains any loaded since."},
    {"_rebuild_object", (PyCFunction)(void (*)(void))gdl_rebuild_object, METH_FASTCALL,
     "_rebuild_object(cls, data): unpickles an object of a Go class (its UnmarshalBinary)."},
    {NULL, NULL, 0, NULL}};

/* A Go extension module's definition: CPython keeps it for the process. */
typedef struct {
  PyModuleDef def; /* first: PyModule_GetDef gives back this struct */
  PyModuleDef_Slot slots[3]; /* exec, gil (3.13+), end */
  gdl_fn** fns;
  int nfns;
  gdl_class** classes;
  int nclasses;
  int module_id; /* for the Go exec hooks (Module.OnExec) */
  gdl_exc** excs;
  int nexcs;
} ext_def;

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
  ext_def* d = (ext_def*)PyModule_GetDef(m);
  if (d == NULL || gdl_layer_init(d->def.m_name) < 0 || gdl_layer_add_types(m) < 0 || gdl_iter_ready() < 0) return -1;
  for (int i = 0; i < d->nfns; i++) {
    if (gdl_add_func(m, d->fns[i]) < 0) return -1;
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
  return gdl_join_runtimes(d->def.m_name);
}

/* The PyInit result of a Go extension module: fns (nfns of them) and the
 * strings must live as long as the process. NULL with MemoryError. */
PyObject* gdl_ext_module(const char* name, const char* doc, gdl_fn** fns, int nfns, gdl_class** classes, int nclasses,
                         int module_id, gdl_exc** excs, int nexcs, int free_threaded) {
  ext_def* d = calloc(1, sizeof *d);
  if (d == NULL) return PyErr_NoMemory();
  PyModuleDef init = {PyModuleDef_HEAD_INIT, name, doc, 0, ext_methods, d->slots, NULL, NULL, NULL};
  d->def = init;
  d->slots[0].slot = Py_mod_exec;
  d->slots[0].value = (void*)ext_exec;
#ifdef Py_mod_gil
  /* By default the author's Go code is assumed to rely on the GIL, and a
   * free-threaded CPython keeps it enabled while this module is loaded;
   * Module.FreeThreaded asserts the author guards their own state (pyext's
   * runtime guards its own: docs/free-threading.md). */
  d->slots[1].slot = Py_mod_gil;
  d->slots[1].value = free_threaded ? Py_MOD_GIL_NOT_USED : Py_MOD_GIL_USED;
#else
  (void)free_threaded;
#endif
  d->fns = fns;
  d->nfns = nfns;
  d->classes = classes;
  d->nclasses = nclasses;
  d->module_id = module_id;
  d->excs = excs;
  d->nexcs = nexcs;
  return PyModuleDef_Init(&d->def);
}

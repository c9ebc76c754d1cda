/* The C side of Go extension functions: one trampoline converts the Python
 * arguments (arrays are imported and validated here, with the GIL), calls the
 * Go function once (optionally without the GIL), releases the arrays, and
 * builds the results. */
#include "gdl.h"
#include "errkind.h"
#include "ext.h"

extern int gdlpyCall(int id, gdl_value* in, int nin, gdl_value* out, int* nout, char* err, int errlen);

static const char FN_CAPSULE[] = "godlpack.gofunc";

/* Calls the arrays' deleters; a pending exception survives deleters that
 * run Python code. */
static void free_arrays(const gdl_fn* fn, gdl_value* in, int n) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  for (int i = 0; i < n; i++) {
    if (fn->sig[i] == GDL_V_ARRAY && in[i].p != NULL) {
      gdl_managed_free(in[i].p, in[i].versioned);
      in[i].p = NULL;
    }
  }
  PyErr_Restore(type, value, tb);
}

/* Imports obj as an array argument: validated, CPU-accessible, and writable
 * unless the function accepts read-only arrays. */
static int array_arg(const gdl_fn* fn, int i, PyObject* obj, gdl_value* v) {
  int versioned;
  void* m = gdl_managed_from_object(obj, NULL, GDL.max_version, NULL, NULL, &versioned);
  if (m == NULL) return -1;
  char msg[256];
  int k = versioned ? gdl_check_versioned(m, msg, sizeof msg) : gdl_check_legacy(m, msg, sizeof msg);
  const DLTensor* t = versioned ? &((DLManagedTensorVersioned*)m)->dl_tensor : &((DLManagedTensor*)m)->dl_tensor;
  if (k == GDL_OK && !gdl_cpu_accessible(t->device.device_type)) {
    snprintf(msg, sizeof msg, "argument %d is on device type %d; Go functions take CPU-accessible arrays", i + 1,
             (int)t->device.device_type);
    k = -1;
  }
  if (k == GDL_OK && versioned && !fn->readonly_ok &&
      (((DLManagedTensorVersioned*)m)->flags & DLPACK_FLAG_BITMASK_READ_ONLY)) {
    snprintf(msg, sizeof msg, "argument %d is read-only, and %s may write to it", i + 1, fn->name);
    k = -1;
  }
  if (k != GDL_OK) {
    gdl_managed_free(m, versioned);
    PyErr_Format(PyExc_BufferError, "%s(): %s", fn->name, msg);
    return -1;
  }
  if (gdl_host_sync(t->device, 1) < 0) { /* managed memory: the host waits for the device */
    gdl_managed_free(m, versioned);
    return -1;
  }
  v->p = m;
  v->versioned = versioned;
  return 0;
}

static int convert(const gdl_fn* fn, int i, PyObject* obj, gdl_value* v) {
  switch (fn->sig[i]) {
    case GDL_V_FLOAT:
      v->f = PyFloat_AsDouble(obj);
      return v->f == -1.0 && PyErr_Occurred() ? -1 : 0;
    case GDL_V_INT:
    case GDL_V_UINT: {
      if (!PyLong_Check(obj) || PyBool_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s() argument %d must be int, not %.200s", fn->name, i + 1,
                     Py_TYPE(obj)->tp_name);
        return -1;
      }
      if (fn->sig[i] == GDL_V_UINT) {
        unsigned long long u = PyLong_AsUnsignedLongLong(obj);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) return -1;
        v->i = (int64_t)u;
      } else {
        v->i = PyLong_AsLongLong(obj);
        if (v->i == -1 && PyErr_Occurred()) return -1;
      }
      return 0;
    }
    case GDL_V_BOOL:
      if (!PyBool_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s() argument %d must be bool, not %.200s", fn->name, i + 1,
                     Py_TYPE(obj)->tp_name);
        return -1;
      }
      v->i = obj == Py_True;
      return 0;
    case GDL_V_STR: {
      Py_ssize_t n;
      if (!PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s() argument %d must be str, not %.200s", fn->name, i + 1,
                     Py_TYPE(obj)->tp_name);
        return -1;
      }
      v->s = PyUnicode_AsUTF8AndSize(obj, &n); /* borrowed: the caller holds obj */
      v->n = n;
      return v->s == NULL ? -1 : 0;
    }
    case GDL_V_ARRAY:
      return array_arg(fn, i, obj, v);
  }
  PyErr_SetString(PyExc_SystemError, "godlpack: unknown parameter kind");
  return -1;
}

static PyObject* result(char kind, gdl_value* v) {
  switch (kind) {
    case GDL_V_FLOAT: return PyFloat_FromDouble(v->f);
    case GDL_V_INT: return PyLong_FromLongLong(v->i);
    case GDL_V_UINT: return PyLong_FromUnsignedLongLong((unsigned long long)v->i);
    case GDL_V_BOOL: return PyBool_FromLong((long)v->i);
    case GDL_V_STR: {
      PyObject* s = PyUnicode_FromStringAndSize(v->s, (Py_ssize_t)v->n);
      free((void*)v->s);
      v->s = NULL;
      return s;
    }
    case GDL_V_ARRAY: {
      void* m = v->p;
      v->p = NULL;
      return gdl_tensor_from_managed(m, 1);
    }
  }
  PyErr_SetString(PyExc_SystemError, "godlpack: unknown result kind");
  return NULL;
}

/* Frees results not turned into objects (after an error). */
static void drop_results(const char* kinds, gdl_value* out, int n) {
  for (int i = 0; i < n; i++) {
    if (kinds[i] == GDL_V_STR) free((void*)out[i].s);
    if (kinds[i] == GDL_V_ARRAY) gdl_managed_free(out[i].p, 1);
  }
}

static PyObject* trampoline(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  const gdl_fn* fn = PyCapsule_GetPointer(self, FN_CAPSULE);
  if (fn == NULL) return NULL;
  if (nargs != fn->nparams) {
    PyErr_Format(PyExc_TypeError, "%s() takes %d positional arguments but %zd were given", fn->name, fn->nparams,
                 nargs);
    return NULL;
  }
  gdl_value in[GDL_MAX_PARAMS] = {{0}}, out[GDL_MAX_RESULTS] = {{0}};
  for (int i = 0; i < fn->nparams; i++) {
    if (convert(fn, i, args[i], &in[i]) < 0) {
      free_arrays(fn, in, i);
      return NULL;
    }
  }
  char err[1024];
  int nout = 0, kind;
  if (!gdl_go_ready()) {
    free_arrays(fn, in, fn->nparams);
    return NULL;
  }
  if (fn->release_gil) {
    Py_BEGIN_ALLOW_THREADS kind = gdlpyCall(fn->id, in, fn->nparams, out, &nout, err, sizeof err);
    Py_END_ALLOW_THREADS
  } else {
    kind = gdlpyCall(fn->id, in, fn->nparams, out, &nout, err, sizeof err);
  }
  free_arrays(fn, in, fn->nparams); /* arrays stay alive until the call returns */
  const char* kinds = fn->kinds;
  if (kind != GDL_ERR_NONE) {
    drop_results(kinds, out, nout);
    if (kind == GDL_ERR_PANIC) PyErr_SetString(PyExc_RuntimeError, err);
    else gdl_raise_go(kind, err);
    return NULL;
  }
  if (nout == 0) Py_RETURN_NONE;
  if (nout == 1) return result(kinds[0], &out[0]);
  PyObject* tuple = PyTuple_New(nout);
  if (tuple == NULL) {
    drop_results(kinds, out, nout);
    return NULL;
  }
  for (int i = 0; i < nout; i++) {
    PyObject* o = result(kinds[i], &out[i]); /* consumes out[i] either way */
    if (o == NULL) {
      drop_results(kinds + i + 1, out + i + 1, nout - i - 1);
      Py_DECREF(tuple);
      return NULL;
    }
    PyTuple_SET_ITEM(tuple, i, o);
  }
  return tuple;
}

/* Functions every Go extension module has (CPython keeps pointers to these). */
static PyMethodDef ext_methods[] = {
    {"go_runtimes", gdl_go_runtimes, METH_NOARGS,
     "go_runtimes() -> [(path, is_this_module), ...]: the Go runtimes loaded in this process."},
    {NULL, NULL, 0, NULL}};

/* A Go extension module's definition: CPython keeps it for the process. */
typedef struct {
  PyModuleDef def; /* first: PyModule_GetDef gives back this struct */
  PyModuleDef_Slot slots[2];
  gdl_fn** fns;
  int nfns;
  int module_id; /* for the Go exec hooks (Module.OnExec) */
} ext_def;

extern int gdlpyExec(int module_id, PyObject* m, char* err, int errlen);

static int add_func(PyObject* m, gdl_fn* fn) {
  PyMethodDef* def = calloc(1, sizeof *def); /* lives as long as the process */
  if (def == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  def->ml_name = fn->name;
  def->ml_meth = (PyCFunction)(void (*)(void))trampoline;
  def->ml_flags = METH_FASTCALL;
  def->ml_doc = fn->doc;
  PyObject* self = PyCapsule_New(fn, FN_CAPSULE, NULL);
  if (self == NULL) return -1;
  PyObject* modname = PyModule_GetNameObject(m);
  PyObject* f = modname ? PyCFunction_NewEx(def, self, modname) : NULL;
  Py_DECREF(self);
  Py_XDECREF(modname);
  if (f == NULL) return -1;
  int r = PyModule_AddObject(m, fn->name, f);
  if (r < 0) Py_DECREF(f);
  return r;
}

/* Multi-phase init: runs in each interpreter importing the module, so a
 * subinterpreter is refused (gdl_layer_init). */
static int ext_exec(PyObject* m) {
  ext_def* d = (ext_def*)PyModule_GetDef(m);
  if (d == NULL || gdl_layer_init(d->def.m_name) < 0 || gdl_layer_add_types(m) < 0) return -1;
  for (int i = 0; i < d->nfns; i++) {
    if (add_func(m, d->fns[i]) < 0) return -1;
  }
  char err[1024];
  int kind = gdlpyExec(d->module_id, m, err, sizeof err);
  if (kind == GDL_ERR_PYTHON) return -1; /* the hook left a Python exception */
  if (kind != GDL_ERR_NONE) {
    gdl_raise_go(kind, err);
    return -1;
  }
  return gdl_warn_other_runtimes(d->def.m_name);
}

/* The PyInit result of a Go extension module: fns (nfns of them) and the
 * strings must live as long as the process. NULL with MemoryError. */
PyObject* gdl_ext_module(const char* name, const char* doc, gdl_fn** fns, int nfns, int module_id) {
  ext_def* d = calloc(1, sizeof *d);
  if (d == NULL) return PyErr_NoMemory();
  PyModuleDef init = {PyModuleDef_HEAD_INIT, name, doc, 0, ext_methods, d->slots, NULL, NULL, NULL};
  d->def = init;
  d->slots[0].slot = Py_mod_exec;
  d->slots[0].value = (void*)ext_exec;
  d->fns = fns;
  d->nfns = nfns;
  d->module_id = module_id;
  return PyModuleDef_Init(&d->def);
}

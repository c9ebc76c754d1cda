/* The functions and constants of godlpack._godlpack (built by module). */
#include "exchange.h"
#include "module.h"

/* Reads a shape: a sequence of non-negative ints, at most GDL_MAX_NDIM. */
static int parse_shape(PyObject* shape, int64_t* dims, int* ndim) {
  if (PyLong_Check(shape) && !PyBool_Check(shape)) {
    PyErr_SetString(PyExc_TypeError, "internal: shape must be a tuple");
    return -1;
  }
  /* A list is read from a tuple copy: PySequence_Fast gives the caller's list
   * itself, whose items another thread may replace (and free) meanwhile. */
  PyObject* seq = PyList_Check(shape) ? PyList_AsTuple(shape)
                                      : PySequence_Fast(shape, "shape must be an int or a sequence of ints");
  if (seq == NULL) return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  if (n > GDL_MAX_NDIM) {
    Py_DECREF(seq);
    PyErr_Format(PyExc_ValueError, "at most %d dimensions are supported", GDL_MAX_NDIM);
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject* x = PySequence_Fast_GET_ITEM(seq, i);
    if (!PyLong_Check(x) || PyBool_Check(x)) {
      Py_DECREF(seq);
      PyErr_Format(PyExc_TypeError, "shape entries must be ints, got %.200s", Py_TYPE(x)->tp_name);
      return -1;
    }
    dims[i] = PyLong_AsLongLong(x);
    if (dims[i] == -1 && PyErr_Occurred()) {
      Py_DECREF(seq);
      return -1;
    }
    if (dims[i] < 0) {
      Py_DECREF(seq);
      PyErr_Format(PyExc_ValueError, "negative dimension %lld", (long long)dims[i]);
      return -1;
    }
  }
  Py_DECREF(seq);
  *ndim = (int)n;
  return 0;
}

/* Runs a Go allocation without the GIL and wraps its managed tensor. */
#define GO_CREATE(call)                                        \
  do {                                                         \
    char err[512];                                             \
    void* managed = NULL;                                      \
    int kind;                                                  \
    if (!gdl_go_ready()) return NULL;                          \
    Py_BEGIN_ALLOW_THREADS kind = (call);                      \
    Py_END_ALLOW_THREADS if (kind != 0) {                      \
      gdl_raise_go(kind, err);                                 \
      return NULL;                                             \
    }                                                          \
    return gdl_tensor_from_managed(managed, 1);                \
  } while (0)

/* _empty(shape, dtype, zeroed) */
static PyObject* mod_empty(PyObject* m, PyObject* args) {
  PyObject* shape;
  const char* dtype;
  int zeroed, n;
  int64_t dims[GDL_MAX_NDIM];
  if (!PyArg_ParseTuple(args, "Osp", &shape, &dtype, &zeroed) || parse_shape(shape, dims, &n) < 0) return NULL;
  GO_CREATE(gdlEmpty((char*)dtype, n, dims, zeroed, &managed, err, sizeof err));
}

/* _full(shape, dtype, real, imag) */
static PyObject* mod_full(PyObject* m, PyObject* args) {
  PyObject* shape;
  const char* dtype;
  double re, im;
  int n;
  int64_t dims[GDL_MAX_NDIM];
  if (!PyArg_ParseTuple(args, "Osdd", &shape, &dtype, &re, &im) || parse_shape(shape, dims, &n) < 0) return NULL;
  GO_CREATE(gdlFull((char*)dtype, n, dims, re, im, &managed, err, sizeof err));
}

/* _full_int(shape, dtype, int64 bits) */
static PyObject* mod_full_int(PyObject* m, PyObject* args) {
  PyObject* shape;
  const char* dtype;
  long long v;
  int n;
  int64_t dims[GDL_MAX_NDIM];
  if (!PyArg_ParseTuple(args, "OsL", &shape, &dtype, &v) || parse_shape(shape, dims, &n) < 0) return NULL;
  GO_CREATE(gdlFullInt((char*)dtype, n, dims, v, &managed, err, sizeof err));
}

/* _arange(dtype, start, stop, step) */
static PyObject* mod_arange(PyObject* m, PyObject* args) {
  const char* dtype;
  double a, b, c;
  if (!PyArg_ParseTuple(args, "sddd", &dtype, &a, &b, &c)) return NULL;
  GO_CREATE(gdlArange((char*)dtype, a, b, c, &managed, err, sizeof err));
}

/* _arange_int(dtype, start, stop, step) */
static PyObject* mod_arange_int(PyObject* m, PyObject* args) {
  const char* dtype;
  long long a, b, c;
  if (!PyArg_ParseTuple(args, "sLLL", &dtype, &a, &b, &c)) return NULL;
  GO_CREATE(gdlArangeInt((char*)dtype, a, b, c, &managed, err, sizeof err));
}

static PyObject* mod_cuda_trim(PyObject* m, PyObject* unused) {
  gdl_cuda_trim();
  Py_RETURN_NONE;
}

static PyObject* mod_live(PyObject* m, PyObject* unused) {
  return Py_BuildValue("(LL)", (long long)gdl_live_owners(), (long long)gdl_live_exports());
}

static PyObject* mod_go_stats(PyObject* m, PyObject* unused) {
  uint64_t b, o, g;
  if (!gdl_go_ready()) return NULL;
  Py_BEGIN_ALLOW_THREADS gdlGoStats(&b, &o, &g);
  Py_END_ALLOW_THREADS
  return Py_BuildValue("{s:K,s:K,s:K}", "heap_bytes", (unsigned long long)b, "heap_objects",
                       (unsigned long long)o, "num_gc", (unsigned long long)g);
}

static PyObject* mod_is_cpu_accessible(PyObject* m, PyObject* arg) {
  long long t; /* not long: 32 bits on Windows, where 2**31 would raise instead of answering False */
  if (PyTuple_Check(arg)) {
    DLDevice d;
    if (gdl_parse_device(arg, &d) != 0) return NULL;
    t = d.device_type;
  } else {
    t = PyLong_AsLongLong(arg);
    if (t == -1 && PyErr_Occurred()) return NULL;
  }
  return PyBool_FromLong(t >= INT32_MIN && t <= INT32_MAX && gdl_cpu_accessible((int32_t)t));
}

static PyMethodDef module_methods[] = {
    {"from_dlpack", (PyCFunction)(void (*)(void))gdl_from_dlpack, METH_FASTCALL | METH_KEYWORDS,
     "from_dlpack(obj, /, *, device=None, copy=None, stream=None)\n--\n\n"
     "Import obj (an object with __dlpack__ or a DLPack PyCapsule) as a godlpack.Tensor, zero-copy.\n"
     "device: (device_type, device_id) to import onto; copy: True always copies, False never, None when\n"
     "needed; stream: the consumer's stream for GPU producers (array API numbering)."},
    {"_empty", mod_empty, METH_VARARGS, "_empty(shape, dtype, zeroed): Go allocation (internal)."},
    {"_full", mod_full, METH_VARARGS, "_full(shape, dtype, real, imag): Go allocation (internal)."},
    {"_full_int", mod_full_int, METH_VARARGS, "_full_int(shape, dtype, int64): Go allocation (internal)."},
    {"_arange", mod_arange, METH_VARARGS, "_arange(dtype, start, stop, step): Go allocation (internal)."},
    {"_arange_int", mod_arange_int, METH_VARARGS, "_arange_int(dtype, start, stop, step) (internal)."},
    {"_live", mod_live, METH_NOARGS, "(live owners, live exported managed tensors), for leak checks."},
    {"_cuda_trim", mod_cuda_trim, METH_NOARGS, "Frees the pinned host and device blocks kept for GPU copies."},
    {"cuda_status", gdl_cuda_status, METH_NOARGS,
     "cuda_status() -> (available, reason): whether the CUDA driver could be loaded, and why not."},
    {"_go_stats", mod_go_stats, METH_NOARGS, "Live Go heap after a collection: bytes, objects, GC cycles."},
    {"is_cpu_accessible", mod_is_cpu_accessible, METH_O,
     "is_cpu_accessible(device_type | (device_type, device_id)) -> bool"},
    {"dlpack_info", gdl_dlpack_info, METH_NOARGS,
     "dlpack_info() -> dict: DLPack versions, dtypes and device types godlpack speaks."},
    {"_torch_keyset", gdl_torch_keyset_py, METH_NOARGS, "Whether PyTorch's key-set read is in use (internal)."},
    {"go_runtimes", gdl_go_runtimes, METH_NOARGS,
     "go_runtimes() -> [(path, is_this_module, go_version, chained), ...]: the Go runtimes loaded in this "
     "process; chained: it gets its preemption signal (docs/runtimes.md). Chains any loaded since."},
    {NULL, NULL, 0, NULL}};

/* Multi-phase init: exec runs in every interpreter that imports the
 * module, so a subinterpreter is refused there (gdl_layer_init). */
static int godlpack_exec(PyObject* m) {
  if (gdl_layer_init("godlpack") < 0 || gdl_layer_add_types(m) < 0 ||
      PyModule_AddObjectRef(m, "API_VERSION", GDL.max_version) < 0 ||
      PyModule_AddObject(m, "MAX_IMPORT_VERSION", Py_BuildValue("(ii)", GDL_MAX_IMPORT_MAJOR, 255)) < 0 ||
      PyModule_AddIntConstant(m, "ABI_VERSION", GODLPACK_CAPI_ABI_VERSION) < 0 ||
      PyModule_AddStringConstant(m, "VERSION", GODLPACK_VERSION_STRING) < 0 ||
      PyModule_AddObject(m, "_C_API", gdl_capi_capsule()) < 0 || gdl_join_runtimes("godlpack") < 0)
    return -1;
  return 0;
}

static PyModuleDef_Slot module_slots[] = {{Py_mod_exec, godlpack_exec},
#ifdef Py_mod_gil
                                          /* every piece of state this module's runtime keeps has its
                                           * own guard (docs/free-threading.md); it has no Go classes */
                                          {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
                                          {0, NULL}};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_godlpack",
                                        "DLPack for Go: the CPython extension module.", 0, module_methods,
                                        module_slots};

void* gdl_godlpack_module(void) { return PyModuleDef_Init(&module_def); }

/* Module definition and init of godlpack._godlpack. */
#include "gdl.h"

gdl_strings GDL;
extern PyMethodDef gdl_probe_methods[]; /* probe.c */
PyObject* gdl_torch_keyset_py(PyObject* m, PyObject* unused); /* torch_quirks.c */
static PyObject* device_cls; /* godlpack._types.Device, looked up on first use */

PyObject* gdl_device_obj(DLDevice d) {
  if (device_cls == NULL) {
    PyObject* m = PyImport_ImportModule("godlpack._types");
    if (m == NULL) return NULL;
    device_cls = PyObject_GetAttrString(m, "Device");
    Py_DECREF(m);
    if (device_cls == NULL) return NULL;
  }
  return PyObject_CallFunction(device_cls, "ii", (int)d.device_type, (int)d.device_id);
}

/* _create(kind, shape, dtype, real, imag, start, stop, step): Go allocation. */
static PyObject* mod_create(PyObject* m, PyObject* args) {
  (void)m;
  int kind;
  PyObject* shape;
  const char* dtype;
  double re, im, start, stop, step;
  long long i[3] = {0, 0, 0};
  if (!PyArg_ParseTuple(args, "iOsddddd|LLL", &kind, &shape, &dtype, &re, &im, &start, &stop, &step, &i[0], &i[1],
                        &i[2]))
    return NULL;
  PyObject* seq = PySequence_Fast(shape, "shape must be a sequence of ints");
  if (seq == NULL) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  if (n > 64) {
    Py_DECREF(seq);
    PyErr_SetString(PyExc_ValueError, "at most 64 dimensions are supported");
    return NULL;
  }
  int64_t dims[64];
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject* x = PySequence_Fast_GET_ITEM(seq, i);
    if (!PyLong_Check(x) || PyBool_Check(x)) {
      Py_DECREF(seq);
      PyErr_Format(PyExc_TypeError, "shape entries must be ints, got %.200s", Py_TYPE(x)->tp_name);
      return NULL;
    }
    dims[i] = PyLong_AsLongLong(x);
    if (dims[i] == -1 && PyErr_Occurred()) {
      Py_DECREF(seq);
      return NULL;
    }
    if (dims[i] < 0) {
      Py_DECREF(seq);
      PyErr_Format(PyExc_ValueError, "negative dimension %lld", (long long)dims[i]);
      return NULL;
    }
  }
  Py_DECREF(seq);
  char err[512];
  void* managed;
  if (!gdl_go_ready()) return NULL;
  Py_BEGIN_ALLOW_THREADS managed =
      gdlCreate(kind, (char*)dtype, (int)n, dims, re, im, start, stop, step, i[0], i[1], i[2], err, sizeof err);
  Py_END_ALLOW_THREADS if (managed == NULL) {
    PyErr_SetString(PyExc_ValueError, err);
    return NULL;
  }
  return gdl_tensor_from_managed(managed, 1);
}

static PyObject* mod_live(PyObject* m, PyObject* unused) {
  (void)m;
  (void)unused;
  return Py_BuildValue("(LL)", (long long)gdl_live_owners(), (long long)gdl_live_exports());
}

extern void gdlGoStats(uint64_t* heap_bytes, uint64_t* heap_objects, uint64_t* num_gc);
static PyObject* mod_go_stats(PyObject* m, PyObject* unused) {
  (void)m;
  (void)unused;
  uint64_t b, o, g;
  if (!gdl_go_ready()) return NULL;
  Py_BEGIN_ALLOW_THREADS gdlGoStats(&b, &o, &g);
  Py_END_ALLOW_THREADS
  return Py_BuildValue("{s:K,s:K,s:K}", "heap_bytes", (unsigned long long)b, "heap_objects",
                       (unsigned long long)o, "num_gc", (unsigned long long)g);
}

static PyObject* mod_is_cpu_accessible(PyObject* m, PyObject* arg) {
  (void)m;
  long t;
  if (PyTuple_Check(arg)) {
    DLDevice d;
    if (gdl_parse_device(arg, &d) != 0) return NULL;
    t = d.device_type;
  } else {
    t = PyLong_AsLong(arg);
    if (t == -1 && PyErr_Occurred()) return NULL;
  }
  return PyBool_FromLong(gdl_cpu_accessible((int32_t)t));
}

/* _strlist(which): Go's dtype names (0) or device names (1), in order. */
extern int gdlNames(int which, char* out, int outlen);
static PyObject* mod_names(PyObject* m, PyObject* arg) {
  (void)m;
  char buf[4096];
  long which = PyLong_AsLong(arg);
  if (which == -1 && PyErr_Occurred()) return NULL;
  if (!gdl_go_ready()) return NULL;
  if (gdlNames((int)which, buf, sizeof buf) != 0) {
    PyErr_SetString(PyExc_ValueError, "unknown name list");
    return NULL;
  }
  PyObject* s = PyUnicode_FromString(buf);
  if (s == NULL) return NULL;
  PyObject* sep = PyUnicode_FromString(",");
  PyObject* r = sep ? PyUnicode_Split(s, sep, -1) : NULL;
  Py_XDECREF(sep);
  Py_DECREF(s);
  return r;
}

static PyMethodDef module_methods[] = {
    {"from_dlpack", (PyCFunction)(void (*)(void))gdl_from_dlpack, METH_FASTCALL | METH_KEYWORDS,
     "from_dlpack(obj, /, *, device=None, copy=None)\n--\n\n"
     "Import obj (an object with __dlpack__ or a DLPack PyCapsule) as a godlpack.Tensor, zero-copy."},
    {"_create", mod_create, METH_VARARGS, "Allocate a Go-created tensor (internal)."},
    {"_live", mod_live, METH_NOARGS, "(live owners, live exported managed tensors), for leak checks."},
    {"cuda_status", gdl_cuda_status, METH_NOARGS,
     "cuda_status() -> (available, reason): whether the CUDA driver could be loaded, and why not."},
    {"_go_stats", mod_go_stats, METH_NOARGS, "Live Go heap after a collection: bytes, objects, GC cycles."},
    {"is_cpu_accessible", mod_is_cpu_accessible, METH_O,
     "is_cpu_accessible(device_type | (device_type, device_id)) -> bool"},
    {"_names", mod_names, METH_O, "Name lists from Go (internal)."},
    {"_torch_keyset", gdl_torch_keyset_py, METH_NOARGS, "Whether PyTorch's key-set read is in use (internal)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_godlpack",
                                        "DLPack for Go: the CPython extension module.", -1,
                                        module_methods};

static int intern(PyObject** slot, const char* s) {
  *slot = PyUnicode_InternFromString(s);
  return *slot == NULL ? -1 : 0;
}

PyMODINIT_FUNC PyInit__godlpack(void) {
  if (intern(&GDL.s_dlpack, "__dlpack__") || intern(&GDL.s_dlpack_device, "__dlpack_device__") ||
      intern(&GDL.s_max_version, "max_version") || intern(&GDL.s_dl_device, "dl_device") ||
      intern(&GDL.s_copy, "copy") || intern(&GDL.s_stream, "stream"))
    return NULL;
  GDL.kw_max_version = PyTuple_Pack(1, GDL.s_max_version);
  GDL.max_version = Py_BuildValue("(ii)", DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION);
  if (GDL.kw_max_version == NULL || GDL.max_version == NULL) return NULL;
  if (gdl_fork_init() < 0 || gdl_dtype_names_init() < 0) return NULL;
  if (PyType_Ready(&GdlTensor_Type) < 0 || gdl_exchange_init(&GdlTensor_Type) < 0) return NULL;
  PyObject* m = PyModule_Create(&module_def);
  if (m == NULL) return NULL;
  if (PyModule_AddFunctions(m, gdl_probe_methods) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  Py_INCREF(&GdlTensor_Type);
  if (PyModule_AddObject(m, "Tensor", (PyObject*)&GdlTensor_Type) < 0 ||
      PyModule_AddObject(m, "API_VERSION", Py_NewRef(GDL.max_version)) < 0 ||
      PyModule_AddObject(m, "MAX_IMPORT_VERSION", Py_BuildValue("(ii)", 1, 255)) < 0 ||
      PyModule_AddIntConstant(m, "ABI_VERSION", 1) < 0 ||
      PyModule_AddObject(m, "_C_API", gdl_capi_capsule()) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}

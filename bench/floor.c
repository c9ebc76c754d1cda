/* The bench's "floor" rows: the least work each DLPack path must do, in C,
 * with no validation. Built by bench/floor.py when the bench runs; never part
 * of godlpack.
 *
 *   import_table(t)    the producer type's C exchange table call, plus one
 *                      Python object holding the managed tensor (dropping it
 *                      runs the deleter): the floor of importing a torch tensor.
 *   import_capsule(x)  x.__dlpack__(max_version=(1, 3)), take the capsule
 *                      (legacy or versioned), one holder object: the floor of
 *                      importing from NumPy or JAX.
 *   Producer(arr)      a minimal producer of arr's memory (any DLPack CPU
 *                      array, 1-D float32 at most 2**31 elements): __dlpack__
 *                      makes one malloc-ed managed tensor and its capsule, the
 *                      floor of every export path (np/torch.from_dlpack(X),
 *                      X.__dlpack__()). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include "godlpack/godlpack.h" /* dlpack.h and the exchange API capsule name */

/* --- the holder: one object per import, the deleter runs in its dealloc --- */
typedef struct {
  PyObject_HEAD
  void* managed;
  int versioned;
} Held;

static void release(void* managed, int versioned) {
  if (versioned) {
    DLManagedTensorVersioned* m = managed;
    if (m->deleter) m->deleter(m);
  } else {
    DLManagedTensor* m = managed;
    if (m->deleter) m->deleter(m);
  }
}

static void held_dealloc(Held* self) {
  release(self->managed, self->versioned);
  PyObject_Free(self);
}

static PyTypeObject Held_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "_floor.Held",
    .tp_basicsize = sizeof(Held),
    .tp_dealloc = (destructor)held_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
};

static PyObject* hold(void* managed, int versioned) {
  Held* h = PyObject_New(Held, &Held_Type);
  if (h == NULL) {
    release(managed, versioned);
    return NULL;
  }
  h->managed = managed;
  h->versioned = versioned;
  return (PyObject*)h;
}

/* --- import_table ------------------------------------------------------------ */
static PyTypeObject* table_type;
static const DLPackExchangeAPI* table;

static PyObject* import_table(PyObject* mod, PyObject* obj) {
  (void)mod;
  if (Py_TYPE(obj) != table_type) { /* once per type: the lookup is not the floor */
    PyObject* cap = PyObject_GetAttrString((PyObject*)Py_TYPE(obj), "__dlpack_c_exchange_api__");
    if (cap == NULL) return NULL;
    table = PyCapsule_GetPointer(cap, DLPACK_EXCHANGE_API_CAPSULE_NAME);
    Py_DECREF(cap);
    if (table == NULL) return NULL;
    table_type = Py_TYPE(obj);
  }
  DLManagedTensorVersioned* m = NULL;
  if (table->managed_tensor_from_py_object_no_sync(obj, &m) != 0) return NULL;
  return hold(m, 1);
}

/* --- import_capsule ---------------------------------------------------------- */
static PyObject *s_dlpack, *kw_max_version, *max_version;

static PyObject* import_capsule(PyObject* mod, PyObject* obj) {
  (void)mod;
  PyObject* argv[2] = {obj, max_version};
  PyObject* cap = PyObject_VectorcallMethod(s_dlpack, argv, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, kw_max_version);
  if (cap == NULL) return NULL;
  int versioned = PyCapsule_IsValid(cap, "dltensor_versioned");
  void* m = PyCapsule_GetPointer(cap, versioned ? "dltensor_versioned" : "dltensor");
  if (m == NULL || PyCapsule_SetName(cap, versioned ? "used_dltensor_versioned" : "used_dltensor") != 0) {
    Py_DECREF(cap);
    return NULL;
  }
  Py_DECREF(cap);
  return hold(m, versioned);
}

/* --- Producer -------------------------------------------------------------- */
typedef struct {
  PyObject_HEAD
  PyObject* source; /* keeps the memory alive */
  void* data;
  int64_t n;
} Producer;

typedef struct {
  DLManagedTensorVersioned m;
  int64_t shape, stride;
  PyObject* source;
} ProducerExport;

typedef struct {
  DLManagedTensor m;
  int64_t shape, stride;
  PyObject* source;
} ProducerExportLegacy;

/* Consumers may call deleters without the GIL (PyTorch does). */
static void drop_source(PyObject* source) {
  PyGILState_STATE g = PyGILState_Ensure();
  Py_DECREF(source);
  PyGILState_Release(g);
}

static void export_deleter(DLManagedTensorVersioned* m) {
  ProducerExport* e = (ProducerExport*)m;
  drop_source(e->source);
  free(e);
}

static void export_deleter_legacy(DLManagedTensor* m) {
  ProducerExportLegacy* e = (ProducerExportLegacy*)m;
  drop_source(e->source);
  free(e);
}

static void capsule_destructor(PyObject* cap) {
  if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
    DLManagedTensorVersioned* m = PyCapsule_GetPointer(cap, "dltensor_versioned");
    if (m->deleter) m->deleter(m);
  } else if (PyCapsule_IsValid(cap, "dltensor")) {
    DLManagedTensor* m = PyCapsule_GetPointer(cap, "dltensor");
    if (m->deleter) m->deleter(m);
  }
}

static void fill(DLTensor* t, Producer* p, int64_t* shape, int64_t* stride) {
  *shape = p->n;
  *stride = 1;
  t->data = p->data;
  t->device = (DLDevice){kDLCPU, 0};
  t->ndim = 1;
  t->dtype = (DLDataType){kDLFloat, 32, 1};
  t->shape = shape;
  t->strides = stride;
  t->byte_offset = 0;
}

static PyObject* producer_dlpack(Producer* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  int versioned = 0;
  Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t i = 0; i < nk; i++) {
    if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, i), "max_version") == 0) {
      PyObject* v = args[nargs + i];
      if (v != Py_None) {
        long major = PyLong_AsLong(PyTuple_GetItem(v, 0));
        if (major == -1 && PyErr_Occurred()) return NULL;
        versioned = major >= 1;
      }
    }
  }
  if (versioned) {
    ProducerExport* e = malloc(sizeof *e);
    if (e == NULL) return PyErr_NoMemory();
    e->m.version = (DLPackVersion){1, 3};
    e->m.manager_ctx = NULL;
    e->m.deleter = export_deleter;
    e->m.flags = 0;
    fill(&e->m.dl_tensor, self, &e->shape, &e->stride);
    e->source = Py_NewRef(self->source);
    PyObject* cap = PyCapsule_New(e, "dltensor_versioned", capsule_destructor);
    if (cap == NULL) export_deleter(&e->m);
    return cap;
  }
  ProducerExportLegacy* e = malloc(sizeof *e);
  if (e == NULL) return PyErr_NoMemory();
  e->m.manager_ctx = NULL;
  e->m.deleter = export_deleter_legacy;
  fill(&e->m.dl_tensor, self, &e->shape, &e->stride);
  e->source = Py_NewRef(self->source);
  PyObject* cap = PyCapsule_New(e, "dltensor", capsule_destructor);
  if (cap == NULL) export_deleter_legacy(&e->m);
  return cap;
}

static PyObject* producer_device(Producer* self, PyObject* unused) {
  (void)self;
  (void)unused;
  return Py_BuildValue("(ii)", kDLCPU, 0);
}

static PyObject* producer_new(PyTypeObject* type, PyObject* args, PyObject* kwds) {
  (void)kwds;
  PyObject* arr;
  if (!PyArg_ParseTuple(args, "O:Producer", &arr)) return NULL;
  /* One import of arr gives its pointer and size (kept alive by arr). */
  PyObject* held = import_capsule(NULL, arr);
  if (held == NULL) return NULL;
  Held* h = (Held*)held;
  DLTensor* t = h->versioned ? &((DLManagedTensorVersioned*)h->managed)->dl_tensor
                             : &((DLManagedTensor*)h->managed)->dl_tensor;
  if (t->ndim != 1 || t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->device.device_type != kDLCPU ||
      (t->strides != NULL && t->strides[0] != 1 && t->shape[0] > 1)) {
    Py_DECREF(held);
    PyErr_SetString(PyExc_ValueError, "Producer wants a compact 1-D float32 CPU array");
    return NULL;
  }
  Producer* p = (Producer*)type->tp_alloc(type, 0);
  if (p == NULL) {
    Py_DECREF(held);
    return NULL;
  }
  p->source = Py_NewRef(arr);
  p->data = (char*)t->data + t->byte_offset;
  p->n = t->shape[0];
  Py_DECREF(held);
  return (PyObject*)p;
}

static void producer_dealloc(Producer* self) {
  Py_XDECREF(self->source);
  Py_TYPE(self)->tp_free(self);
}

static PyObject* producer_data_ptr(Producer* self, void* unused) {
  (void)unused;
  return PyLong_FromVoidPtr(self->data);
}

static PyMethodDef producer_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))producer_dlpack, METH_FASTCALL | METH_KEYWORDS, NULL},
    {"__dlpack_device__", (PyCFunction)producer_device, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef producer_getset[] = {
    {"data_ptr", (getter)producer_data_ptr, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject Producer_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "_floor.Producer",
    .tp_basicsize = sizeof(Producer),
    .tp_dealloc = (destructor)producer_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_methods = producer_methods,
    .tp_getset = producer_getset,
    .tp_new = producer_new,
};

/* The data pointer a holder's tensor points at (for the bench's zero-copy check). */
static PyObject* held_data_ptr(PyObject* mod, PyObject* obj) {
  (void)mod;
  if (!PyObject_TypeCheck(obj, &Held_Type)) {
    PyErr_SetString(PyExc_TypeError, "not a Held");
    return NULL;
  }
  Held* h = (Held*)obj;
  DLTensor* t = h->versioned ? &((DLManagedTensorVersioned*)h->managed)->dl_tensor
                             : &((DLManagedTensor*)h->managed)->dl_tensor;
  return PyLong_FromVoidPtr((char*)t->data + t->byte_offset);
}

static PyMethodDef methods[] = {
    {"import_table", import_table, METH_O, NULL},
    {"import_capsule", import_capsule, METH_O, NULL},
    {"held_data_ptr", held_data_ptr, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "_floor", NULL, -1, methods};

PyMODINIT_FUNC PyInit__floor(void) {
  if (PyType_Ready(&Held_Type) < 0 || PyType_Ready(&Producer_Type) < 0) return NULL;
  s_dlpack = PyUnicode_InternFromString("__dlpack__");
  kw_max_version = Py_BuildValue("(s)", "max_version");
  max_version = Py_BuildValue("(ii)", 1, 3);
  if (!s_dlpack || !kw_max_version || !max_version) return NULL;
  PyObject* m = PyModule_Create(&moduledef);
  if (m == NULL) return NULL;
  if (PyModule_AddObjectRef(m, "Producer", (PyObject*)&Producer_Type) < 0 ||
      PyModule_AddObjectRef(m, "Held", (PyObject*)&Held_Type) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}

/* The consumer side: godlpack.from_dlpack(obj, /, *, device=None, copy=None). */
#include "gdl.h"

/* Calls obj.__dlpack__ asking for our version, falling back to the legacy
 * signature for producers that predate max_version (they raise TypeError). */
static PyObject* call_dlpack(PyObject* obj, PyObject* dl_device, PyObject* copy, int* legacy_call) {
  PyObject* argv[4];
  PyObject* names[3];
  Py_ssize_t nk = 0;
  argv[0] = obj;
  argv[1 + nk] = GDL.max_version;
  names[nk++] = GDL.s_max_version;
  if (dl_device != Py_None) {
    argv[1 + nk] = dl_device;
    names[nk++] = GDL.s_dl_device;
  }
  if (copy != Py_None) {
    argv[1 + nk] = copy;
    names[nk++] = GDL.s_copy;
  }
  PyObject* kwnames = GDL.kw_max_version;
  Py_INCREF(kwnames);
  if (nk > 1) {
    Py_DECREF(kwnames);
    kwnames = PyTuple_New(nk);
    if (kwnames == NULL) return NULL;
    for (Py_ssize_t i = 0; i < nk; i++) {
      Py_INCREF(names[i]);
      PyTuple_SET_ITEM(kwnames, i, names[i]);
    }
  }
  PyObject* r = PyObject_VectorcallMethod(GDL.s_dlpack, argv, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, kwnames);
  Py_DECREF(kwnames);
  *legacy_call = 0;
  if (r != NULL) return r;
  if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%.200s object does not support the DLPack protocol (no __dlpack__)",
                 Py_TYPE(obj)->tp_name);
    return NULL;
  }
  if (!PyErr_ExceptionMatches(PyExc_TypeError)) return NULL;
  /* An old producer: it does not know max_version (nor dl_device/copy). */
  PyErr_Clear();
  *legacy_call = 1;
  return PyObject_VectorcallMethod(GDL.s_dlpack, argv, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
}

static int same_device(DLDevice a, DLDevice b) {
  return a.device_type == b.device_type && a.device_id == b.device_id;
}

PyObject* gdl_from_dlpack(PyObject* mod, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  (void)mod;
  PyObject *device = Py_None, *copy = Py_None;
  if (nargs != 1) {
    PyErr_Format(PyExc_TypeError, "from_dlpack() takes exactly one positional argument (%zd given)", nargs);
    return NULL;
  }
  PyObject* obj = args[0];
  Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t i = 0; i < nk; i++) {
    PyObject* k = PyTuple_GET_ITEM(kwnames, i);
    if (PyUnicode_Compare(k, GDL.s_dl_device) == 0 || PyUnicode_CompareWithASCIIString(k, "device") == 0) {
      device = args[1 + i];
    } else if (PyUnicode_Compare(k, GDL.s_copy) == 0) {
      copy = args[1 + i];
    } else {
      PyErr_Format(PyExc_TypeError, "from_dlpack() got an unexpected keyword argument '%U'", k);
      return NULL;
    }
  }
  if (copy != Py_None && !PyBool_Check(copy)) {
    PyErr_Format(PyExc_TypeError, "copy must be None, True or False, got %.200s", Py_TYPE(copy)->tp_name);
    return NULL;
  }
  DLDevice want = {kDLCPU, 0};
  if (device != Py_None && gdl_parse_device(device, &want) != 0) return NULL;

  PyObject* result;
  int legacy_call = 0;
  if (GdlTensor_Check(obj)) {
    /* Our own tensor: share its owner, no capsule needed. */
    GdlTensor* t = (GdlTensor*)obj;
    if (device != Py_None && !same_device(want, t->view.device) &&
        !(want.device_type == kDLCPU && gdl_cpu_accessible(t->view.device.device_type))) {
      PyErr_SetString(PyExc_BufferError, "godlpack cannot move a tensor between devices");
      return NULL;
    }
    if (copy == Py_True) return gdl_tensor_copy(t, DLPACK_FLAG_BITMASK_IS_COPIED);
    gdl_owner_incref(t->owner);
    result = gdl_tensor_new(t->owner, &t->view, t->flags & DLPACK_FLAG_BITMASK_READ_ONLY);
    if (result && device != Py_None) ((GdlTensor*)result)->view.device = want;
    return result;
  }
  PyObject* capsule;
  if (PyCapsule_CheckExact(obj)) {
    capsule = obj;
    Py_INCREF(capsule);
  } else {
    capsule = call_dlpack(obj, device == Py_None ? Py_None : device, copy, &legacy_call);
    if (capsule == NULL) return NULL;
    if (!PyCapsule_CheckExact(capsule)) {
      PyErr_Format(PyExc_BufferError, "%.200s.__dlpack__() returned %.200s, not a PyCapsule",
                   Py_TYPE(obj)->tp_name, Py_TYPE(capsule)->tp_name);
      Py_DECREF(capsule);
      return NULL;
    }
  }
  int versioned;
  void* managed = gdl_capsule_take(capsule, &versioned);
  Py_DECREF(capsule);
  if (managed == NULL) {
    if (PyErr_ExceptionMatches(PyExc_TypeError) && capsule != obj) {
      /* keep TypeError only for objects that speak no DLPack at all */
      PyObject *t, *v, *tb;
      PyErr_Fetch(&t, &v, &tb);
      PyErr_SetObject(PyExc_BufferError, v);
      Py_XDECREF(t);
      Py_XDECREF(v);
      Py_XDECREF(tb);
    }
    return NULL;
  }
  result = gdl_tensor_from_managed(managed, versioned);
  if (result == NULL) return NULL;
  GdlTensor* t = (GdlTensor*)result;
  if (device != Py_None && !same_device(want, t->view.device)) {
    if (want.device_type == kDLCPU && gdl_cpu_accessible(t->view.device.device_type)) {
      t->view.device = want;
    } else {
      Py_DECREF(result);
      PyErr_Format(PyExc_BufferError, "producer returned a tensor on device (%d, %d), not the requested (%d, %d)",
                   (int)t->view.device.device_type, (int)t->view.device.device_id, (int)want.device_type,
                   (int)want.device_id);
      return NULL;
    }
  }
  int copied = (t->flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0;
  if (copy == Py_True && !copied) {
    /* The producer could not copy for us (legacy, or it ignored copy=True). */
    PyObject* c = gdl_tensor_copy(t, DLPACK_FLAG_BITMASK_IS_COPIED);
    Py_DECREF(result);
    return c;
  }
  if (copy == Py_False && copied) {
    Py_DECREF(result);
    PyErr_SetString(PyExc_BufferError, "producer copied the data although copy=False was requested");
    return NULL;
  }
  (void)legacy_call;
  return result;
}

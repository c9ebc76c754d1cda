/* The producer side of the Python protocol: Tensor.__dlpack__ and
 * Tensor.__dlpack_device__. Every call makes a fresh managed tensor and a
 * fresh capsule that share the tensor's owner. */
#include "gdl.h"

int gdl_cpu_accessible(int32_t t) {
  return t == kDLCPU || t == kDLCUDAHost || t == kDLROCMHost || t == kDLCUDAManaged;
}

PyObject* gdl_device_tuple(DLDevice d) {
  return Py_BuildValue("(ii)", (int)d.device_type, (int)d.device_id);
}

int gdl_parse_device(PyObject* obj, DLDevice* out) {
  if (!PyTuple_Check(obj) || PyTuple_GET_SIZE(obj) != 2 || !PyLong_Check(PyTuple_GET_ITEM(obj, 0)) ||
      !PyLong_Check(PyTuple_GET_ITEM(obj, 1))) {
    PyErr_Format(PyExc_TypeError, "a DLPack device must be a (device_type, device_id) tuple of ints, got %.200R",
                 obj);
    return -1;
  }
  long t = PyLong_AsLong(PyTuple_GET_ITEM(obj, 0));
  long id = PyLong_AsLong(PyTuple_GET_ITEM(obj, 1));
  if (PyErr_Occurred()) return -1;
  if (t < INT32_MIN || t > INT32_MAX || id < INT32_MIN || id > INT32_MAX) {
    PyErr_SetString(PyExc_ValueError, "device type or id out of int32 range");
    return -1;
  }
  out->device_type = (DLDeviceType)t;
  out->device_id = (int32_t)id;
  return 0;
}

/* Matches a keyword name: interned pointer first, then by value. */
static int kw_is(PyObject* name, PyObject* interned) {
  return name == interned || PyUnicode_Compare(name, interned) == 0;
}

typedef struct {
  PyObject *stream, *max_version, *dl_device, *copy;
} dlpack_args;

static int parse_args(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, dlpack_args* a) {
  a->stream = a->max_version = a->dl_device = a->copy = Py_None;
  if (nargs != 0) {
    PyErr_SetString(PyExc_TypeError, "__dlpack__() takes keyword arguments only");
    return -1;
  }
  Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t i = 0; i < nk; i++) {
    PyObject* k = PyTuple_GET_ITEM(kwnames, i);
    PyObject* v = args[i];
    if (kw_is(k, GDL.s_max_version)) a->max_version = v;
    else if (kw_is(k, GDL.s_stream)) a->stream = v;
    else if (kw_is(k, GDL.s_dl_device)) a->dl_device = v;
    else if (kw_is(k, GDL.s_copy)) a->copy = v;
    else {
      PyErr_Format(PyExc_TypeError, "__dlpack__() got an unexpected keyword argument '%U'", k);
      return -1;
    }
  }
  return 0;
}

/* Reads max_version: 1 for versioned, 0 for legacy, -1 on error. */
static int wants_versioned(PyObject* mv) {
  if (mv == Py_None) return 0;
  if (!PyTuple_Check(mv) || PyTuple_GET_SIZE(mv) != 2 || !PyLong_Check(PyTuple_GET_ITEM(mv, 0)) ||
      !PyLong_Check(PyTuple_GET_ITEM(mv, 1))) {
    PyErr_Format(PyExc_TypeError, "max_version must be None or a (major, minor) tuple of ints, got %.200R", mv);
    return -1;
  }
  int overflow;
  long long major = PyLong_AsLongLongAndOverflow(PyTuple_GET_ITEM(mv, 0), &overflow);
  if (major == -1 && PyErr_Occurred()) return -1;
  return overflow > 0 || major >= 1;
}

/* Checks the stream argument for our device (CPU-only until CUDA support is
 * loaded): None or -1 (no synchronisation) are the only valid CPU values. */
static int check_stream(PyObject* stream, DLDevice dev) {
  if (stream == Py_None) return 0;
  if (!PyLong_Check(stream) || PyBool_Check(stream)) {
    PyErr_Format(PyExc_TypeError, "stream must be None or an int, got %.200s", Py_TYPE(stream)->tp_name);
    return -1;
  }
  int overflow;
  long long s = PyLong_AsLongLongAndOverflow(stream, &overflow);
  if (s == -1 && PyErr_Occurred()) return -1;
  if (dev.device_type == kDLCPU) {
    if (s == -1 && !overflow) return 0;
    PyErr_Format(PyExc_BufferError, "stream=%R is invalid for a CPU tensor: use None or -1", stream);
    return -1;
  }
  if (s == 0 && !overflow) {
    PyErr_SetString(PyExc_BufferError, "stream=0 is ambiguous and disallowed by the array API; use 1 or 2");
    return -1;
  }
  return 0;
}

PyObject* gdl_dlpack(PyObject* obj, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  GdlTensor* self = (GdlTensor*)obj;
  dlpack_args a;
  if (parse_args(args, nargs, kwnames, &a) != 0) return NULL;
  int versioned = wants_versioned(a.max_version);
  if (versioned < 0) return NULL;
  if (a.copy != Py_None && !PyBool_Check(a.copy)) {
    PyErr_Format(PyExc_TypeError, "copy must be None, True or False, got %.200s", Py_TYPE(a.copy)->tp_name);
    return NULL;
  }
  int copy = a.copy == Py_True;
  DLDevice dev = self->view.device;
  if (a.dl_device != Py_None) {
    DLDevice want;
    if (gdl_parse_device(a.dl_device, &want) != 0) return NULL;
    if (want.device_type != dev.device_type || want.device_id != dev.device_id) {
      /* Host-visible memory can be handed to a CPU consumer as is. */
      int host_ok = want.device_type == kDLCPU && want.device_id == 0 && gdl_cpu_accessible(dev.device_type);
      if (!host_ok) {
        PyErr_Format(PyExc_BufferError, "cannot export a tensor on device (%d, %d) to device (%d, %d)",
                     (int)dev.device_type, (int)dev.device_id, (int)want.device_type, (int)want.device_id);
        return NULL;
      }
      dev = want;
    }
  }
  if (check_stream(a.stream, self->view.device) != 0) return NULL;

  if (copy) {
    PyObject* c = gdl_tensor_copy(self, 0);
    if (c == NULL) return NULL;
    GdlTensor* ct = (GdlTensor*)c;
    PyObject* cap = NULL;
    if (versioned) {
      DLManagedTensorVersioned* m = gdl_export_versioned(&ct->view, DLPACK_FLAG_BITMASK_IS_COPIED, ct->owner);
      cap = m ? gdl_capsule_versioned(m) : PyErr_NoMemory();
    } else {
      DLManagedTensor* m = gdl_export_legacy(&ct->view, ct->owner);
      cap = m ? gdl_capsule_legacy(m) : PyErr_NoMemory();
    }
    Py_DECREF(c);
    return cap;
  }
  int readonly = (self->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
  DLTensor view = self->view;
  view.device = dev;
  if (versioned) {
    DLManagedTensorVersioned* m =
        gdl_export_versioned(&view, readonly ? DLPACK_FLAG_BITMASK_READ_ONLY : 0, self->owner);
    return m ? gdl_capsule_versioned(m) : PyErr_NoMemory();
  }
  if (readonly) {
    PyErr_SetString(PyExc_BufferError,
                    "a read-only tensor cannot be exported as a legacy (unversioned) DLPack capsule; "
                    "ask for max_version=(1, 0) or copy=True");
    return NULL;
  }
  DLManagedTensor* m = gdl_export_legacy(&view, self->owner);
  return m ? gdl_capsule_legacy(m) : PyErr_NoMemory();
}

PyObject* gdl_dlpack_device(PyObject* self, PyObject* unused) {
  (void)unused;
  return gdl_device_tuple(((GdlTensor*)self)->view.device);
}

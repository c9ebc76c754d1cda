/* The consumer side: godlpack.from_dlpack(obj, /, *, device=None, copy=None,
 * stream=None), and the capsule-taking entry points that the C API and Go
 * extension arguments use (gdl_managed_from_object, _checked). */
#include "exchange.h"

/* Calls obj.__dlpack__ with the given keywords (NULL: left out); meth is the
 * type's method when it can be called directly (see gdl_dlpack_method), else
 * NULL: called by name. A producer that predates max_version (and
 * dl_device/copy) raises TypeError: it is called again without them. */
static PyObject* gdl_call_dlpack(PyObject* obj, PyObject* meth, PyObject* stream, PyObject* max_version,
                                 PyObject* dl_device, PyObject* copy) {
  PyObject* argv[5];
  PyObject* names[4];
  Py_ssize_t nk = 0;
  argv[0] = obj;
  if (max_version) { argv[1 + nk] = max_version; names[nk++] = GDL.s_max_version; }
  if (stream) { argv[1 + nk] = stream; names[nk++] = GDL.s_stream; }
  if (dl_device) { argv[1 + nk] = dl_device; names[nk++] = GDL.s_dl_device; }
  if (copy) { argv[1 + nk] = copy; names[nk++] = GDL.s_copy; }
  PyObject* kwnames = NULL;
  if (nk == 1 && max_version) {
    kwnames = Py_NewRef(GDL.kw_max_version);
  } else if (nk == 2 && max_version && stream) {
    kwnames = Py_NewRef(GDL.kw_max_version_stream);
  } else if (nk > 0) {
    kwnames = PyTuple_New(nk);
    if (kwnames == NULL) return NULL;
    for (Py_ssize_t i = 0; i < nk; i++) PyTuple_SET_ITEM(kwnames, i, Py_NewRef(names[i]));
  }
  PyObject* r = meth != NULL ? PyObject_Vectorcall(meth, argv, 1, kwnames) /* argv[-1] is not ours */
                             : PyObject_VectorcallMethod(GDL.s_dlpack, argv, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, kwnames);
  Py_XDECREF(kwnames);
  if (r != NULL) return r;
  if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
    /* Only a missing __dlpack__ means "no DLPack": an AttributeError raised
     * inside the producer's own __dlpack__ is its error and propagates. */
    PyObject *et, *ev, *etb;
    PyErr_Fetch(&et, &ev, &etb);
    PyObject* meth = PyObject_GetAttr(obj, GDL.s_dlpack);
    if (meth != NULL) {
      Py_DECREF(meth);
      PyErr_Restore(et, ev, etb);
      return NULL;
    }
    Py_XDECREF(et);
    Py_XDECREF(ev);
    Py_XDECREF(etb);
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return NULL;
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%.200s object does not support the DLPack protocol (no __dlpack__)",
                 GDL_TP_NAME(Py_TYPE(obj)));
    return NULL;
  }
  if (!max_version || !PyErr_ExceptionMatches(PyExc_TypeError)) return NULL;
  /* A producer that predates max_version. The retry keeps every other
   * argument, stream=None included (a missing stream may mean something else
   * to a producer: PyTorch's default is -1, no synchronisation). dl_device
   * and copy came with max_version, so an old producer refuses them too: the
   * last try is the legacy signature, __dlpack__(stream=...). */
  PyErr_Clear();
  if (dl_device || copy) {
    r = gdl_call_dlpack(obj, NULL, stream, NULL, dl_device, copy);
    if (r != NULL || !PyErr_ExceptionMatches(PyExc_TypeError)) return r;
    PyErr_Clear();
  }
  return gdl_call_dlpack(obj, NULL, stream, NULL, NULL, NULL);
}

/* gdl_managed_from_object with obj's __dlpack__ already looked up (meth). */
static void* managed_from(PyObject* obj, PyObject* meth, PyObject* stream, PyObject* max_version,
                          PyObject* dl_device, PyObject* copy, int* versioned) {
  PyObject* capsule;
  if (PyCapsule_CheckExact(obj)) {
    capsule = Py_NewRef(obj);
  } else {
    capsule = gdl_call_dlpack(obj, meth, stream, max_version, dl_device, copy);
    if (capsule == NULL) return NULL;
    if (!PyCapsule_CheckExact(capsule)) {
      PyErr_Format(PyExc_BufferError, "%.200s.__dlpack__() returned %.200s, not a PyCapsule",
                   GDL_TP_NAME(Py_TYPE(obj)), GDL_TP_NAME(Py_TYPE(capsule)));
      Py_DECREF(capsule);
      return NULL;
    }
  }
  void* managed = gdl_capsule_take(capsule, versioned);
  Py_DECREF(capsule);
  return managed;
}

void* gdl_managed_from_object(PyObject* obj, PyObject* stream, PyObject* max_version, PyObject* dl_device,
                              PyObject* copy, int* versioned) {
  PyObject* meth = PyCapsule_CheckExact(obj) ? NULL : gdl_dlpack_method(obj);
  void* managed = managed_from(obj, meth, stream ? stream : Py_None, max_version, dl_device, copy, versioned);
  Py_XDECREF(meth);
  return managed;
}

void* gdl_managed_from_object_checked(PyObject* obj, PyObject* max_version, int* versioned) {
  PyObject* meth = NULL;
  if (!PyCapsule_CheckExact(obj) && gdl_exchange_check_dlpack(obj, &meth) < 0) return NULL;
  void* managed = managed_from(obj, meth, Py_None, max_version, NULL, NULL, versioned);
  Py_XDECREF(meth);
  return managed;
}

/* from_dlpack(..., stream=S): S is the stream the caller will use the data
 * on (*id), on the device the data ends up on (want, when given). It is
 * passed to producers on devices with streams (after asking
 * __dlpack_device__, as the array API prescribes) and left out (None) for
 * CPU ones. A raw capsule's data is ready on S: its maker says so. */
static int stream_for_producer(PyObject* obj, PyObject* stream, const DLDevice* want, PyObject** arg,
                               intptr_t* id) {
  long long s;
  int r = gdl_stream_arg(stream, &s);
  if (r < 0) return -1;
  if (r > 0 || s == 0) {
    PyErr_SetString(PyExc_ValueError, "stream=0, below -1 or beyond int64 is not a stream; use 1, 2, -1 or a stream handle");
    return -1;
  }
  DLDevice dev = {kDLCPU, 0};
  if (PyCapsule_CheckExact(obj)) {
    *id = (intptr_t)s;
    return 0;
  }
  if (GdlTensor_Check(obj)) {
    dev = GDL_AS(GdlTensor, obj)->view.device;
  } else {
    PyObject* d = PyObject_CallMethodNoArgs(obj, GDL.s_dlpack_device);
    if (d == NULL) {
      if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%.200s has no __dlpack_device__, needed to pass a stream",
                     GDL_TP_NAME(Py_TYPE(obj)));
      }
      return -1;
    }
    int r = gdl_parse_device(d, &dev);
    Py_DECREF(d);
    if (r != 0) return -1;
  }
  if (gdl_cuda_stream_device(dev.device_type)) {
    *arg = stream;
    *id = (intptr_t)s;
  } else if (want != NULL && gdl_cuda_stream_device(want->device_type)) {
    *id = (intptr_t)s; /* godlpack's copy onto that device is made ready on S */
  }
  return 0;
}

/* r (a new Tensor, stolen) handed to a caller that uses it on stream id:
 * device data is made ready there. NULL with the error set. */
static PyObject* on_stream(PyObject* r, int given, intptr_t id) {
  if (r == NULL || !given) return r;
  GdlTensor* t = GDL_AS(GdlTensor, r);
  if (!gdl_cuda_stream_device(t->view.device.device_type)) return r;
  if (gdl_stream_sync(t->view.device, t->stream, id) != 0) {
    Py_DECREF(r);
    return NULL;
  }
  t->stream = id;
  return r;
}

PyObject* gdl_from_dlpack(PyObject* mod, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  (void)mod;
  PyObject *device = Py_None, *copy = Py_None, *stream = Py_None;
  if (nargs != 1) {
    PyErr_Format(PyExc_TypeError, "from_dlpack() takes exactly one positional argument (%zd given)", nargs);
    return NULL;
  }
  PyObject* obj = args[0];
  Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t i = 0; i < nk; i++) {
    PyObject* k = PyTuple_GET_ITEM(kwnames, i);
    if (PyUnicode_CompareWithASCIIString(k, "device") == 0) {
      device = args[1 + i];
    } else if (PyUnicode_Compare(k, GDL.s_copy) == 0) {
      copy = args[1 + i];
    } else if (PyUnicode_Compare(k, GDL.s_stream) == 0) {
      stream = args[1 + i];
    } else {
      PyErr_Format(PyExc_TypeError, "from_dlpack() got an unexpected keyword argument '%U'", k);
      return NULL;
    }
  }
  if (copy != Py_None && !PyBool_Check(copy)) {
    PyErr_Format(PyExc_TypeError, "copy must be None, True or False, got %.200s", GDL_TP_NAME(Py_TYPE(copy)));
    return NULL;
  }
  DLDevice want = {kDLCPU, 0};
  if (device != Py_None && gdl_parse_device(device, &want) != 0) return NULL;
  /* Without a stream the producer is asked for stream=None: its data is then
   * ready on the legacy default stream (1). */
  intptr_t stream_id = 1;
  PyObject* stream_arg = Py_None;
  int given = stream != Py_None;
  if (given && stream_for_producer(obj, stream, device == Py_None ? NULL : &want, &stream_arg, &stream_id) != 0)
    return NULL;

  if (GdlTensor_Check(obj)) { /* our own tensor: share its owner, no capsule needed */
    GdlTensor* t = GDL_AS(GdlTensor, obj);
    return on_stream(gdl_tensor_on(t, device == Py_None ? t->view.device : want, copy), given, stream_id);
  }
  int versioned = 1;
  void* managed = NULL;
  PyObject* meth = NULL; /* one type lookup gives the table and the method */
  intptr_t ready = stream_id;
  if (device == Py_None && copy == Py_None && !given) {
    /* The producer's C exchange API (PyTorch), when its type has one. */
    int r = gdl_exchange_managed_from_object(obj, (DLManagedTensorVersioned**)&managed, &meth, &ready);
    if (r < 0) return NULL;
  } else if (gdl_exchange_check_dlpack(obj, &meth) != 0) { /* what torch's __dlpack__ gets wrong */
    return NULL;
  }
  if (managed == NULL) {
    ready = stream_id;
    managed = managed_from(obj, meth, stream_arg, GDL.max_version, device == Py_None ? NULL : device,
                           copy == Py_None ? NULL : copy, &versioned);
    if (managed == NULL && device != Py_None && copy != Py_False && !PyCapsule_CheckExact(obj) &&
        PyErr_ExceptionMatches(PyExc_BufferError)) {
      /* The producer cannot put its data there (NumPy and a GPU): take it
       * where it is, and godlpack moves it below. */
      PyErr_Clear();
      managed = managed_from(obj, meth, stream_arg, GDL.max_version, NULL, NULL, &versioned);
    }
    Py_XDECREF(meth);
    if (managed == NULL) return NULL;
  }
  PyObject* result = gdl_tensor_from_managed(managed, versioned);
  if (result == NULL) return NULL;
  GdlTensor* t = GDL_AS(GdlTensor, result);
  t->stream = ready;
  int copied = (t->flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0;
  if (device != Py_None || (copy == Py_True && !copied)) {
    /* Moved or copied by godlpack: the producer could not (legacy, or it
     * ignored dl_device or copy=True). */
    DLDevice to = device == Py_None ? t->view.device : want;
    gdl_place how;
    if (gdl_placement(t->view.device, to, copy, &how) != 0) {
      Py_DECREF(result); /* may run the producer's deleter: the error is kept (tensor_dealloc saves it) */
      return NULL;
    }
    if (how != GDL_PLACE_SHARE || (copy == Py_True && !copied)) {
      PyObject* moved = gdl_tensor_on(t, to, copied ? Py_None : copy);
      Py_DECREF(result);
      return on_stream(moved, given, stream_id);
    }
  }
  if (copy == Py_False && copied) {
    Py_DECREF(result);
    PyErr_SetString(PyExc_BufferError, "producer copied the data although copy=False was requested");
    return NULL;
  }
  return result;
}

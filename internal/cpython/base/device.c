/* Devices on the Python side: parsing (type, id) tuples and stream
 * arguments, and the Device named tuple that Tensor.device returns. The
 * class is made by each module that links this layer (no import of the
 * godlpack package, which would load a second Go runtime into a user's
 * extension). */
#include "base.h"

static PyObject* device_cls; /* the Device class, made at init */

PyObject* gdl_device_tuple(DLDevice d) { return Py_BuildValue("(ii)", (int)d.device_type, (int)d.device_id); }

PyObject* gdl_device_obj(DLDevice d) {
  return PyObject_CallFunction(device_cls, "ii", (int)d.device_type, (int)d.device_id);
}

int gdl_parse_device(PyObject* obj, DLDevice* out) {
  if (!PyTuple_Check(obj) || PyTuple_GET_SIZE(obj) != 2 || !PyLong_Check(PyTuple_GET_ITEM(obj, 0)) ||
      !PyLong_Check(PyTuple_GET_ITEM(obj, 1))) {
    PyErr_Format(PyExc_TypeError, "a DLPack device must be a (device_type, device_id) tuple of ints, got %.200R",
                 obj);
    return -1;
  }
  int over_t, over_id;
  long t = PyLong_AsLongAndOverflow(PyTuple_GET_ITEM(obj, 0), &over_t);
  if (t == -1 && PyErr_Occurred()) return -1;
  long id = PyLong_AsLongAndOverflow(PyTuple_GET_ITEM(obj, 1), &over_id);
  if (id == -1 && PyErr_Occurred()) return -1;
  if (over_t || over_id || t < INT32_MIN || t > INT32_MAX || id < INT32_MIN || id > INT32_MAX) {
    PyErr_SetString(PyExc_ValueError, "device type or id out of int32 range");
    return -1;
  }
  out->device_type = (DLDeviceType)t;
  out->device_id = (int32_t)id;
  return 0;
}

static const char device_src[] =
    "from typing import NamedTuple\n"
    "class Device(NamedTuple):\n"
    "    \"\"\"A DLPack device: (device_type, device_id). Compares equal to a plain tuple.\"\"\"\n"
    "    device_type: int\n"
    "    device_id: int\n"
    "    def __str__(self):\n"
    "        name = _names.get(self.device_type, f'device_type({self.device_type})')\n"
    "        return f'{name}:{self.device_id}'\n";

/* {device_type: name} from the generated table. */
static PyObject* device_names(void) {
  PyObject* names = PyDict_New();
  for (int i = 0; names != NULL && i < GDL_NUM_DEVICES; i++) {
    PyObject* k = PyLong_FromLong(gdl_devices[i].type);
    PyObject* v = PyUnicode_FromString(gdl_devices[i].name);
    if (k == NULL || v == NULL || PyDict_SetItem(names, k, v) < 0) Py_CLEAR(names);
    Py_XDECREF(k);
    Py_XDECREF(v);
  }
  return names;
}

int gdl_device_init(const char* module_name) {
  if (device_cls != NULL) return 0;
  PyObject* ns = PyDict_New();
  PyObject* names = device_names();
  PyObject* mod = PyUnicode_FromString(module_name);
  int ok = ns && names && mod && PyDict_SetItemString(ns, "__builtins__", PyEval_GetBuiltins()) == 0 &&
           PyDict_SetItemString(ns, "__name__", mod) == 0 && PyDict_SetItemString(ns, "_names", names) == 0;
  if (ok) {
    PyObject* r = PyRun_String(device_src, Py_file_input, ns, ns);
    ok = r != NULL;
    Py_XDECREF(r);
  }
  if (ok) device_cls = Py_XNewRef(PyDict_GetItemString(ns, "Device"));
  Py_XDECREF(ns);
  Py_XDECREF(names);
  Py_XDECREF(mod);
  return device_cls ? 0 : -1;
}

PyObject* gdl_device_class(void) { return device_cls; }

int gdl_stream_arg(PyObject* obj, long long* s) {
  if (!PyLong_Check(obj) || PyBool_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "stream must be None or an int, got %.200s", GDL_TP_NAME(Py_TYPE(obj)));
    return -1;
  }
  int overflow;
  *s = PyLong_AsLongLongAndOverflow(obj, &overflow);
  if (*s == -1 && PyErr_Occurred()) return -1;
  return overflow || *s < -1 ? 1 : 0;
}

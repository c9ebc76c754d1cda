/* The godlpack.Tensor type's assembly and the start-up shared by every module
 * that links the runtime (godlpack._godlpack and users' Go extensions): the
 * method table points down into every layer (as NumPy's methods.c points
 * into dlpack.c), so no lower file points up. Also the fork and
 * subinterpreter guards and the Device type. */
#include "exchange.h"

/* Tensor(obj) is from_dlpack(obj). */
static PyObject* tensor_new(PyTypeObject* type, PyObject* args, PyObject* kwds) {
  (void)type;
  PyObject* obj;
  static char* kwlist[] = {"obj", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O:Tensor", kwlist, &obj)) return NULL;
  PyObject* a[1] = {obj};
  return gdl_from_dlpack(NULL, a, 1, NULL);
}

static PyMethodDef tensor_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))gdl_dlpack, METH_FASTCALL | METH_KEYWORDS,
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)\n"
     "Export as a new DLPack capsule (a fresh managed tensor every call)."},
    {"__dlpack_device__", (PyCFunction)gdl_dlpack_device, METH_NOARGS,
     "Return (device_type, device_id)."},
    {"__dlpack_info__", (PyCFunction)gdl_dlpack_info, METH_NOARGS,
     "Return the DLPack versions, dtypes and devices godlpack supports."},
    {"tolist", (PyCFunction)gdl_tolist, METH_NOARGS, "Nested Python lists of the elements."},
    {"__complex__", gdl_number_complex, METH_NOARGS, "complex(t) of a 0-d tensor."},
    {"__array__", (PyCFunction)(void (*)(void))gdl_tensor_array, METH_FASTCALL | METH_KEYWORDS,
     "__array__(dtype=None, copy=None)\n"
     "For np.asarray(): bfloat16/float8/float6/float4 as ml_dtypes arrays, bit for bit."},
    {"copy", gdl_tensor_copy_method, METH_NOARGS,
     "A compact copy in new 64-byte-aligned memory owned by godlpack."},
    {"__reduce_ex__", gdl_tensor_reduce_ex, METH_O,
     "Pickling: protocol 5 passes the data out-of-band, as a PickleBuffer over the tensor's memory."},
    {"__copy__", gdl_tensor_copy_dunder, METH_NOARGS, "copy.copy(t): the data in new memory, flags kept."},
    {"__deepcopy__", gdl_tensor_copy_dunder, METH_O, "copy.deepcopy(t): as copy.copy(t)."},
    {NULL, NULL, 0, NULL}};

static int ready;

int gdl_layer_init(const char* module_name) {
  /* Single-phase init with process-wide state (types, caches): objects of
   * one interpreter must never reach another, so subinterpreters are refused. */
#ifdef Py_LIMITED_API
  if (!gdl_is_main_interpreter()) {
#else
  if (PyInterpreterState_Get() != PyInterpreterState_Main()) {
#endif
    PyErr_Format(PyExc_ImportError, "%s cannot be imported in a subinterpreter (it keeps process-wide state); "
                 "import it in the main interpreter", module_name);
    return -1;
  }
  if (ready) return 0;
  if (gdl_strings_init() < 0 || gdl_fork_init(module_name) < 0 || gdl_dtype_init() < 0 ||
      gdl_device_init(module_name) < 0 || gdl_pickle_init(module_name) < 0 || gdl_import_table_init() < 0)
    return -1;
  /* The type's name says which module made it ("godlpack.Tensor", "vecmath.Tensor"). */
  static char type_name[256];
  snprintf(type_name, sizeof type_name, "%s.Tensor", module_name);
#ifdef Py_LIMITED_API
  /* A heap type: the tensor layer's slots, then this layer's. */
  PyType_Slot slots[32];
  int n = 0;
  while (gdl_tensor_slots[n].slot != 0) slots[n] = gdl_tensor_slots[n], n++;
  slots[n++] = (PyType_Slot){Py_tp_methods, tensor_methods};
  slots[n++] = (PyType_Slot){Py_tp_new, (void*)tensor_new};
  slots[n] = (PyType_Slot){0, NULL};
  PyType_Spec spec = {type_name, GDL_BASICSIZE(GdlTensor), 0, Py_TPFLAGS_DEFAULT, slots};
  gdl_tensor_type = (PyTypeObject*)PyType_FromSpec(&spec);
  if (gdl_tensor_type == NULL || gdl_export_table_add(gdl_tensor_type) < 0) return -1;
#else
  GdlTensor_Type.tp_name = type_name;
  GdlTensor_Type.tp_methods = tensor_methods;
  GdlTensor_Type.tp_new = tensor_new;
  if (PyType_Ready(&GdlTensor_Type) < 0 || gdl_export_table_add(&GdlTensor_Type) < 0) return -1;
#endif
  ready = 1;
  return 0;
}

int gdl_layer_add_types(PyObject* m) {
  if (PyModule_AddObjectRef(m, "Tensor", (PyObject*)GDL_TENSOR_TYPE) < 0 ||
      PyModule_AddObjectRef(m, "Device", gdl_device_class()) < 0 || gdl_pickle_add(m) < 0)
    return -1;
  return 0;
}

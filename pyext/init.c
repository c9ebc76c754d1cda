/* Start-up of the CPython layer, shared by every module that links it
 * (godlpack._godlpack and users' Go extensions): interned strings, the
 * Tensor and Device types, the Tensor's reconstructor for pickle, fork and
 * subinterpreter guards. */
#include "gdl.h"

gdl_strings GDL;
static int ready;

static int intern(PyObject** slot, const char* s) {
  *slot = PyUnicode_InternFromString(s);
  return *slot == NULL ? -1 : 0;
}

int gdl_layer_init(const char* module_name) {
  /* Single-phase init with process-wide state (types, caches): objects of
   * one interpreter must never reach another, so subinterpreters are refused. */
  if (PyInterpreterState_Get() != PyInterpreterState_Main()) {
    PyErr_Format(PyExc_ImportError, "%s cannot be imported in a subinterpreter (it keeps process-wide state); "
                 "import it in the main interpreter", module_name);
    return -1;
  }
  if (ready) return 0;
  if (intern(&GDL.s_dlpack, "__dlpack__") || intern(&GDL.s_dlpack_device, "__dlpack_device__") ||
      intern(&GDL.s_max_version, "max_version") || intern(&GDL.s_dl_device, "dl_device") ||
      intern(&GDL.s_copy, "copy") || intern(&GDL.s_stream, "stream"))
    return -1;
  GDL.kw_max_version = PyTuple_Pack(1, GDL.s_max_version);
  GDL.kw_max_version_stream = PyTuple_Pack(2, GDL.s_max_version, GDL.s_stream);
  GDL.max_version = Py_BuildValue("(ii)", DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION);
  if (GDL.kw_max_version == NULL || GDL.kw_max_version_stream == NULL || GDL.max_version == NULL) return -1;
  if (gdl_fork_init(module_name) < 0 || gdl_dtype_init() < 0 || gdl_device_init(module_name) < 0 ||
      gdl_pickle_init(module_name) < 0)
    return -1;
  /* The type's name says which module made it ("godlpack.Tensor", "vecmath.Tensor"). */
  static char type_name[256];
  snprintf(type_name, sizeof type_name, "%s.Tensor", module_name);
  GdlTensor_Type.tp_name = type_name;
  if (PyType_Ready(&GdlTensor_Type) < 0 || gdl_exchange_init(&GdlTensor_Type) < 0) return -1;
  ready = 1;
  return 0;
}

int gdl_layer_add_types(PyObject* m) {
  if (PyModule_AddObjectRef(m, "Tensor", (PyObject*)&GdlTensor_Type) < 0 ||
      PyModule_AddObjectRef(m, "Device", gdl_device_class()) < 0 || gdl_pickle_add(m) < 0)
    return -1;
  return 0;
}

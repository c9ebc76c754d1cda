/* Interned strings and cached objects used on the exchange paths, made once
 * per process (NumPy keeps the same in npy_static_data.c). */
#include "base.h"

gdl_strings GDL;
static PyObject* mro_getter; /* type.__dict__['__mro__'] */

static int intern(PyObject** slot, const char* s) {
  *slot = PyUnicode_InternFromString(s);
  return *slot == NULL ? -1 : 0;
}

int gdl_strings_init(void) {
  if (GDL.max_version != NULL) return 0;
  if (intern(&GDL.s_dlpack, "__dlpack__") || intern(&GDL.s_dlpack_device, "__dlpack_device__") ||
      intern(&GDL.s_max_version, "max_version") || intern(&GDL.s_dl_device, "dl_device") ||
      intern(&GDL.s_copy, "copy") || intern(&GDL.s_stream, "stream"))
    return -1;
  GDL.kw_max_version = PyTuple_Pack(1, GDL.s_max_version);
  GDL.kw_max_version_stream = PyTuple_Pack(2, GDL.s_max_version, GDL.s_stream);
  if (GDL.kw_max_version == NULL || GDL.kw_max_version_stream == NULL) return -1;
  /* type.__dict__['__mro__'], a getset descriptor (gdl_type_mro); tp_dict of
   * a static builtin type is NULL from 3.12, so through the mapping proxy. */
  PyObject* type_dict = PyObject_GetAttrString((PyObject*)&PyType_Type, "__dict__");
  mro_getter = type_dict ? PyMapping_GetItemString(type_dict, "__mro__") : NULL;
  Py_XDECREF(type_dict);
  if (mro_getter == NULL) return -1;
  if (GDL_SLOT(Py_TYPE(mro_getter), tp_descr_get, descrgetfunc) == NULL) {
    PyErr_SetString(PyExc_ImportError, "type.__mro__ is not a descriptor");
    Py_CLEAR(mro_getter);
    return -1;
  }
  GDL.max_version = Py_BuildValue("(ii)", DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION); /* last: init done */
  return GDL.max_version == NULL ? -1 : 0;
}

PyObject* gdl_type_mro(PyTypeObject* tp) {
  /* type's own getter, called directly: a metaclass cannot redirect it */
  PyObject* mro = GDL_SLOT(Py_TYPE(mro_getter), tp_descr_get, descrgetfunc)(mro_getter, (PyObject*)tp, (PyObject*)Py_TYPE((PyObject*)tp));
  if (mro != NULL && !PyTuple_Check(mro)) Py_CLEAR(mro); /* None: not ready */
  return mro;
}

/* Interned strings and cached objects used on the exchange paths, made once
 * per process (NumPy keeps the same in npy_static_data.c). */
#include "base.h"

gdl_strings GDL;

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
  GDL.max_version = Py_BuildValue("(ii)", DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION);
  return GDL.max_version == NULL ? -1 : 0;
}

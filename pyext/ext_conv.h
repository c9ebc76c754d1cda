/* ext_conv.c: the Python values of Go types beyond scalars, strings and
 * arrays, both ways: complex, int of any size (*big.Int), aware datetime
 * (time.Time), timedelta (time.Duration), os.PathLike (pyext.Path) and
 * bytearray results (pyext.ByteArray). ext.c calls it for these kinds.
 * Without Python.h, as ext_pyobj.h (bytesresult.go includes it). */
#ifndef GODLPACK_EXT_CONV_H_
#define GODLPACK_EXT_CONV_H_

#include <stdint.h>
#include "ext.h"

/* gdl_conv_drop frees what Go malloc'd for a result of kind not made an
 * object (gdl_conv_result below). */
void gdl_conv_drop(char kind, gdl_value* v);

/* A bytearray of n bytes copied from data (Go's memory, held for the call),
 * for a pyext.ByteArray result while the GIL is held; NULL (the error
 * cleared) when out of memory. */
void* gdl_bytearray_new(const char* data, int64_t n);

#ifdef Py_PYTHON_H /* the C layer (ext.c): Go calls none of these */
/* obj as a value of kind (GDL_V_COMPLEX...) for parameter pos (from 1) of
 * fn, whose Go type is e: 0, or -1 with the exception naming the argument.
 * *held (NULL before) is a new reference the value points into, which the
 * caller drops after the call. */
int gdl_conv_arg(char kind, gdl_elem e, PyObject* obj, gdl_value* v, PyObject** held, const char* fn, int pos);

/* The Python object of a result of kind, which consumes what Go malloc'd. */
PyObject* gdl_conv_result(char kind, gdl_value* v);
#endif /* Py_PYTHON_H */

#endif

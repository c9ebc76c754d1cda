package pyext

/*
#include <Python.h>
PyObject* gdl_godlpack_module(void);
*/
import "C"

import "unsafe"

// GodlpackModule creates the godlpack._godlpack module (the body of its
// PyInit function, pyext/module); nil with a Python exception on failure.
func GodlpackModule() unsafe.Pointer { return unsafe.Pointer(C.gdl_godlpack_module()) }

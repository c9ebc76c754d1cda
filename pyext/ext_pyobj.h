/* ext_pyobj.c: Python values to and from gdl_value (scalars, lists, dicts),
 * and calls of Python callables from Go (callback.go). ext.c uses it; it
 * uses ext_obj.c and nothing else of pyext's C. Without Python.h: Go's
 * preambles include it (callback.go, callable.go, bytesresult.go), and cgo
 * compiles a preamble dozens of times; what names Python's types is the C
 * layer's, below. */
#ifndef GODLPACK_EXT_PYOBJ_H_
#define GODLPACK_EXT_PYOBJ_H_

#include <stdint.h>
#include "ext.h"

/* A bytes object of n bytes copied from data (Go's memory, held for the
 * call), for a []byte result while the GIL is held; NULL (the error
 * cleared) when out of memory. */
void* gdl_bytes_new(const char* data, int64_t n);

/* Calls callable (a PyObject*) with the GIL taken: nin arguments of kinds
 * sig, results of kinds rsig (Go types relem) converted into out (a string
 * result malloc'd, for Go to free; an object result's class in out[i].n, a
 * reference to it in p, for Go to release). 0; GDL_ERR_PYEXC with *exc a new
 * reference to what was raised (by the callable or converting a result),
 * err "message" and type its type's name; GDL_ERR_RUNTIME when Python is
 * finalizing (err says so). */
int gdl_cb_call(uintptr_t callable, const char* fn, const char* sig, int nin, const gdl_value* in, const char* rsig,
                const gdl_elem* relem, int nout, gdl_value* out, uintptr_t* exc, char* type, int typelen, char* err,
                int errlen);
/* Drops a reference Go held (a callable, an exception), taking the GIL;
 * nothing once Python is finalizing. */
void gdl_py_release(uintptr_t obj);
/* Drops a reference Go held, with the GIL the caller holds. */
void gdl_py_decref(uintptr_t obj);
/* A new reference to obj, taking the GIL (0 once Python is finalizing). */
uintptr_t gdl_py_newref(uintptr_t obj);
/* Go (callback.go): runs Go's collector and drops the references Go no
 * longer holds; with the GIL. */
extern void gdlpyCollect(void);

#ifdef Py_PYTHON_H /* the C layer (ext.c, ext_class.c): Go calls none of these */

/* Who a value is, for messages: "f() argument 2", "f() argument 2 item 3",
 * "f() argument 2 value for key 'k'", "f() callback result 1". */
typedef struct {
  const char* fn; /* the Go function's Python name */
  int pos;        /* argument or result, from 1 */
  int result;     /* 1: a callback's result */
  Py_ssize_t item; /* >= 0: a list item */
  PyObject* key;   /* a dict value's key (borrowed), or NULL */
  int is_key;      /* a dict's key */
} gdl_where;

/* obj as a value of kind (GDL_V_FLOAT, INT, UINT, BOOL, STR) and Go type e
 * (range checks): -1 with TypeError or OverflowError naming w. A string is
 * borrowed from obj. */
int gdl_value_from(char kind, gdl_elem e, PyObject* obj, gdl_value* v, const gdl_where* w);

/* A list[str] (list or tuple) or dict[str, T] argument: v->s points to a
 * malloc'd array of its values (2n for a dict: key, value), v->n counts
 * items; *held is the private copy that holds the items (strings point into
 * it). The caller frees v->s and drops *held after the call. */
int gdl_list_arg(gdl_elem e, PyObject* obj, gdl_value* v, PyObject** held, const gdl_where* w);
int gdl_dict_arg(gdl_elem e, PyObject* obj, gdl_value* v, PyObject** held, const gdl_where* w);

/* A list or dict result (kind GDL_V_LIST or GDL_V_DICT) from Go's block,
 * which it frees; gdl_container_drop frees one not made an object. */
PyObject* gdl_container_result(char kind, gdl_value* v);
void gdl_container_drop(gdl_value* v);

/* Raises exc (a reference, stolen) again, its traceback kept. */
void gdl_py_reraise(uintptr_t exc);
/* Starts watching for interpreter shutdown (atexit), and for Python's full
 * collections (gc.callbacks: Go drops the references it no longer holds,
 * callback.go's gdlpyCollect), once; with the GIL. */
int gdl_py_watch_exit(void);

#endif /* Py_PYTHON_H */

#endif

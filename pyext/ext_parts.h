/* The parts of the Go extension layer and what each offers the others
 * (internal to pyext). Calls go one way: ext_module.c (the module) uses
 * ext.c (functions: the call path) and ext_class.c (classes); ext_class.c
 * uses ext.c, ext_buffer.c (the buffer protocol) and ext_pyobj.c (the
 * value of a Contains); ext.c uses
 * ext_arrays.c (array requirements) and ext_pyobj.c (scalar, list and dict
 * values; calls of Python callables from Go, for callback.go and
 * containers.go; declared in ext_pyobj.h); ext.c and ext_class.c use
 * ext_iter.c (Go sequences as iterators); all use ext_obj.c (objects of Go
 * classes) and the runtime's layers below
 * (exchange.h and what it includes; docs/architecture.md). The Go side of
 * each is declared here once. */
#ifndef GODLPACK_EXT_PARTS_H_
#define GODLPACK_EXT_PARTS_H_

#include "ext_class.h"

/* ext_obj.c */
/* An object of a Go class: the Go value is held by a cgo.Handle (a number,
 * not a Go pointer), deleted when the object dies. */
typedef struct {
  GDL_HEAD
  uintptr_t handle;
  int cls;
  int fresh;          /* made by Cls(...) and not yet past its __init__ */
  PyObject* weaklist; /* weak references (pyext's WeakRef) */
} gdl_obj;

/* Go (module.go, call.go, class.go), each returning an errkind.h code with a message in err. */
extern int gdlpyCall(gdl_call* c);
extern int gdlpyExec(int module_id, void* m, char* err, int errlen); /* void*: as cgo declares the export */
extern void gdlpyDropHandle(uintptr_t h);
/* Marshal, Unmarshal, GetBuffer: GDL_ERR_PYEXC with *exc a new reference to
 * a Python callable's exception, to raise again (gdl_raise_kind). */
extern int gdlpyMarshal(uintptr_t h, char** data, int64_t* n, char* err, int errlen, uintptr_t* exc);
extern int gdlpyUnmarshal(int cls, char* data, int64_t n, uintptr_t* h, char* err, int errlen, uintptr_t* exc);
extern int gdlpyGetBuffer(int cls, uintptr_t h, gdl_buffer* b, char* err, int errlen, uintptr_t* exc);
extern void gdlpyReleaseBuffer(uintptr_t pin);

/* The type of each Go class id, set by the newest module that added it
 * (borrowed; NULL before any module added it); set keeps every type it is
 * given alive for the process. Inline: a method call reads it. */
extern PyTypeObject* gdl_class_types[GDL_MAX_CLASSES];
static inline PyTypeObject* gdl_class_type(int cls) { return __atomic_load_n(&gdl_class_types[cls], __ATOMIC_ACQUIRE); }
void gdl_set_class_type(int cls, PyTypeObject* type);
/* A method's short name: fn names are Class.name. */
const char* gdl_short_name(const char* name);
/* The class's type name, for messages. */
const char* gdl_class_name(int cls);
/* A new object of class cls holding handle h (deleted on failure). */
PyObject* gdl_obj_new(int cls, uintptr_t h);
/* Raises the Python exception of a Go error kind: errkind.h's, pyext's
 * (IndexError, KeyError, StopIteration) and custom exceptions. */
void gdl_ext_raise(int kind, const char* err);
/* The custom exception types of this process, by id (the newest module's), as for classes. */
PyObject* gdl_exc_type(int id);
void gdl_set_exc_type(int id, PyObject* type);
/* Whether obj is an object of class cls (or of a subclass), of this
 * module's type for it or of an earlier import's. */
int gdl_is_obj(int cls, PyObject* obj);
/* tp_dealloc of every Go class's type (not of Python subclasses, which
 * CPython gives subtype_dealloc): drops the object's handle. */
void gdl_obj_dealloc(PyObject* self);
/* The Go class's own type that type is or derives from (tp_base chain), or NULL. */
PyTypeObject* gdl_go_type(PyTypeObject* type);
/* Moves the Go value of r (consumed) into a new object of type, a subclass. */
PyObject* gdl_obj_retype(PyObject* r, PyTypeObject* type);
/* Argument i of fn, a class parameter: exactly an object of that class. */
int gdl_obj_arg(const gdl_fn* fn, int i, PyObject* obj, gdl_value* v);
/* gdl_obj_arg inline for its common case, an object of the class's own type
 * holding a Go value; the others (subclasses, an earlier import's type,
 * refusals) through gdl_obj_arg. */
static inline int gdl_obj_arg_fast(const gdl_fn* fn, int i, PyObject* obj, gdl_value* v) {
  if (Py_TYPE(obj) == gdl_class_type(fn->cls[i]) && GDL_AS(gdl_obj, obj)->handle != 0) {
    v->i = (int64_t)GDL_AS(gdl_obj, obj)->handle;
    return 0;
  }
  return gdl_obj_arg(fn, i, obj, v);
}

/* ext.c */
/* Calls fn: self is the receiver of a method (NULL for a function). */
PyObject* gdl_call_fn(const gdl_fn* fn, PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames);
int gdl_fn_intern_names(gdl_fn* fn);
/* Calls fn (no Python arguments) with in[0] = h (a Go handle, kind 'i'). */
PyObject* gdl_call_handle(const gdl_fn* fn, uintptr_t h);
/* Sets RuntimeError for a Go panic (err: the message, then the Go stack, a note). */
void gdl_raise_panic(const char* err);
/* Raises what Go reported: a panic, a Python callable's exception (exc, a
 * reference this takes), or the exception of an error kind. */
void gdl_raise_kind(int kind, const char* err, uintptr_t exc);
/* ext_iter.c: a Python iterator over a Go sequence: its pull state's
 * handle (dropped when the sequence ends or the iterator dies, and on
 * failure here), the next function, called through call, and the object
 * iterated, kept alive (NULL: none). */
typedef PyObject* (*gdl_next_call)(const gdl_fn* next, uintptr_t handle);
PyObject* gdl_iter_new(uintptr_t handle, const gdl_fn* next, gdl_next_call call, PyObject* owner);
/* Readies the iterator type: once, in each module's exec (-1 with an exception). */
int gdl_iter_ready(void);

/* ext_buffer.c: the buffer protocol of a class with pyext's Buffer (tp_as_buffer's two slots). */
int gdl_obj_getbuffer(PyObject* self, Py_buffer* view, int flags);
void gdl_obj_releasebuffer(PyObject* self, Py_buffer* view);

/* ext_class.c */
int gdl_add_class(PyObject* m, gdl_class* c);
PyObject* gdl_rebuild_object(PyObject* module, PyObject* const* args, Py_ssize_t nargs);

#endif

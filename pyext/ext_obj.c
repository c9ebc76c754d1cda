/* Objects of Go classes on the C side: the registry of their types, a new
 * object for a Go handle (a function's result), and an object as a Go
 * argument. Below the call path (ext.c) and the class types (ext_class.c). */
#include "exchange.h"
#include "ext.h"
#include "ext_parts.h"

/* The Go classes of this process, by id: each module that adds a class makes
 * its type (a heap type) and puts it here, for arguments and results of that
 * class (subinterpreters are refused: one interpreter's types). Readers hold
 * a type borrowed, with no lock (on a free-threaded build, while another
 * module's exec may replace it), so a replaced type is never released: it
 * lives for the process, like the module that made it in the common case.
 * Stores and loads are atomic, release and acquire. The custom exception
 * types (gdl_exc_type) follow the same rules. */
PyTypeObject* gdl_class_types[GDL_MAX_CLASSES];
static PyObject* exc_types[GDL_MAX_EXCEPTIONS];

void gdl_set_class_type(int cls, PyTypeObject* type) {
  __atomic_store_n(&gdl_class_types[cls], (PyTypeObject*)Py_NewRef((PyObject*)type), __ATOMIC_RELEASE);
}

PyObject* gdl_exc_type(int id) { return __atomic_load_n(&exc_types[id], __ATOMIC_ACQUIRE); }

void gdl_set_exc_type(int id, PyObject* type) { __atomic_store_n(&exc_types[id], Py_NewRef(type), __ATOMIC_RELEASE); }

/* A method's name: fn's name is Class.name, for messages. */
const char* gdl_short_name(const char* name) {
  const char* dot = strrchr(name, '.');
  return dot ? dot + 1 : name;
}

const char* gdl_class_name(int cls) {
  PyTypeObject* tp = gdl_class_type(cls);
  return tp ? GDL_TP_NAME(tp) : "a Go class";
}

/* A new object of class cls holding handle h (deleted on failure). */
PyObject* gdl_obj_new(int cls, uintptr_t h) {
  PyTypeObject* tp = gdl_class_type(cls);
  if (tp == NULL) {
    gdlpyDropHandle(h);
    PyErr_Format(PyExc_TypeError, "godlpack: class %d was added to no module", cls);
    return NULL;
  }
  gdl_obj* o = GDL_AS(gdl_obj, GDL_SLOT(tp, tp_alloc, allocfunc)(tp, 0));
  if (o == NULL) {
    gdlpyDropHandle(h);
    return NULL;
  }
  o->handle = h;
  o->cls = cls;
  return GDL_OBJ(o);
}

void gdl_obj_dealloc(PyObject* self) {
  PyTypeObject* tp = Py_TYPE(self);
  if (GDL_AS(gdl_obj, self)->weaklist != NULL) PyObject_ClearWeakRefs(self);
  uintptr_t h = GDL_AS(gdl_obj, self)->handle;
  if (h != 0 && !gdl_forked()) gdlpyDropHandle(h); /* a forked child leaks it: Go is gone there */
  GDL_SLOT(tp, tp_free, freefunc)(self);
  Py_DECREF(tp);
}

PyTypeObject* gdl_go_type(PyTypeObject* type) {
  while (type != NULL && GDL_SLOT(type, tp_dealloc, destructor) != gdl_obj_dealloc) type = GDL_SLOT(type, tp_base, PyTypeObject*); /* Python subclasses: subtype_dealloc */
  return type;
}

int gdl_is_obj(int cls, PyObject* obj) {
  PyTypeObject* tp = gdl_class_type(cls);
  if (tp == NULL) return 0;
  if (Py_TYPE(obj) == tp) return 1;
  if (PyType_HasFeature(tp, Py_TPFLAGS_BASETYPE) && PyType_IsSubtype(Py_TYPE(obj), tp)) return 1; /* a Python subclass */
  /* an object of the class's type made by an earlier import of the module
   * (or of a subclass of it): every Go class's object says its class */
  return gdl_go_type(Py_TYPE(obj)) != NULL && GDL_AS(gdl_obj, obj)->cls == cls;
}

/* An argument of a class parameter: exactly an object of that class. */
int gdl_obj_arg(const gdl_fn* fn, int i, PyObject* obj, gdl_value* v) {
  int cls = fn->cls[i];
  if (!gdl_is_obj(cls, obj)) {
    PyErr_Format(PyExc_TypeError, "%s() argument %d must be %s, not %.200s", fn->name, i + 1, gdl_class_name(cls),
                 GDL_TP_NAME(Py_TYPE(obj)));
    return -1;
  }
  if (GDL_AS(gdl_obj, obj)->handle == 0) { /* a subclass's __init__ that did not call the base's */
    PyErr_Format(PyExc_TypeError, "%s() argument %d: the %.200s object holds no Go value: its __init__ must call %s.__init__",
                 fn->name, i + 1, GDL_TP_NAME(Py_TYPE(obj)), gdl_class_name(cls));
    return -1;
  }
  v->i = (int64_t)GDL_AS(gdl_obj, obj)->handle;
  return 0;
}

/* Moves the Go value of r (a new object of a Go class, consumed) into a
 * new object of type, a subclass of r's: NULL with an exception. */
PyObject* gdl_obj_retype(PyObject* r, PyTypeObject* type) {
  if (r == NULL || Py_TYPE(r) == type) return r;
  gdl_obj* o = GDL_AS(gdl_obj, GDL_SLOT(type, tp_alloc, allocfunc)(type, 0));
  if (o != NULL) {
    o->handle = GDL_AS(gdl_obj, r)->handle;
    o->cls = GDL_AS(gdl_obj, r)->cls;
    GDL_AS(gdl_obj, r)->handle = 0; /* r dies without its value */
  }
  Py_DECREF(r);
  return GDL_OBJ(o);
}

void gdl_ext_raise(int kind, const char* err) {
  PyObject* exc = kind >= GDL_ERR_EXC && kind < GDL_ERR_EXC + GDL_MAX_EXCEPTIONS ? gdl_exc_type(kind - GDL_ERR_EXC) : NULL;
  if (exc != NULL) {
    PyErr_SetString(exc, err);
    return;
  }
  switch (kind) {
    case GDL_ERR_INDEX: PyErr_SetString(PyExc_IndexError, err); return;
    case GDL_ERR_KEY: PyErr_SetString(PyExc_KeyError, err); return;
    case GDL_ERR_STOP: PyErr_SetNone(PyExc_StopIteration); return;
  }
  gdl_raise_go(kind >= GDL_ERR_INDEX ? GDL_ERR_RUNTIME : kind, err);
}

/* Go classes as Python types: each module that adds a class makes its heap
 * type, with the methods (descriptors calling the call path, ext.c), the
 * properties, construction, and pickling through the Go value's
 * MarshalBinary/UnmarshalBinary. */
#include <stdlib.h>
#include <string.h>
#include "exchange.h"
#include <structmember.h>
#include "ext.h"
#include "ext_parts.h"
#include "ext_pyobj.h"

/* A method of a Go class: a callable that is also a method descriptor (as
 * CPython's own methods are): obj.add(x) calls it with obj first, without
 * making a bound method. */
typedef struct {
  GDL_HEAD
  vectorcallfunc vectorcall;
  const gdl_fn* fn;
  PyObject* owner; /* the class */
  const gdl_special* sp; /* a special method (GDL_M_*), or NULL */
} gdl_method;

/* The value v in obj asks about, as parameter 1 of fn (Contains) takes
 * it: a number converted here once (an array float() refuses, an int too
 * big for the Go type: NULL with no exception, not in obj, as a list of
 * floats says), anything else v itself. A new reference; NULL with an
 * exception for v's own errors (its __float__ raising ValueError). */
static PyObject* contains_value(const gdl_fn* fn, PyObject* v) {
  char kind = fn->sig[1];
  if (kind != GDL_V_FLOAT && kind != GDL_V_INT && kind != GDL_V_UINT) return Py_NewRef(v);
  gdl_where w = {fn->name, 1, 0, -1, NULL, 0};
  gdl_value x;
  if (gdl_value_from(kind, fn->elem[1], v, &x, &w) < 0) {
    if (PyErr_ExceptionMatches(PyExc_TypeError) || PyErr_ExceptionMatches(PyExc_OverflowError)) PyErr_Clear();
    return NULL;
  }
  if (kind == GDL_V_FLOAT) return PyFloat_FromDouble(x.f);
  return kind == GDL_V_INT ? PyLong_FromLongLong(x.i) : PyLong_FromUnsignedLongLong((unsigned long long)x.i);
}

static PyObject* special_call(PyObject* callable, PyObject* const* args, size_t nargsf, PyObject* kwnames);

static PyObject* method_call(PyObject* callable, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  const gdl_method* m = GDL_AS(const gdl_method, callable);
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (nargs < 1) {
    PyErr_Format(PyExc_TypeError, "unbound method %s() needs an argument", m->fn->name);
    return NULL;
  }
  return gdl_call_fn(m->fn, args[0], args + 1, nargs - 1, kwnames);
}

#ifdef Py_LIMITED_API
static PyTypeObject* method_type; /* a heap type, made once by gdl_add_class */
static PyObject* bound_method; /* types.MethodType: PyMethod_New is not in the limited API */
#define METHOD_TYPE method_type
#define PyMethod_New(f, self) PyObject_CallFunctionObjArgs(bound_method, (f), (self), NULL)
#else
#define METHOD_TYPE (&method_type)
#endif

static PyObject* method_get(PyObject* self, PyObject* obj, PyObject* type) {
  if (obj == NULL || obj == Py_None) return Py_NewRef(self);
  return PyMethod_New(self, obj);
}

static void method_dealloc(PyObject* self) {
  Py_XDECREF(GDL_AS(gdl_method, self)->owner);
  PyObject_Free(self);
#ifdef Py_LIMITED_API
  Py_DECREF(method_type); /* a heap type's instances hold a reference to it */
#endif
}

/* A docstring "name(args)\n--\n\nbody" (CPython's convention): the body
 * is __doc__, "($self, args)" __text_signature__ (for inspect.signature). */
static PyObject* method_doc(PyObject* self, void* closure) {
  const gdl_fn* fn = GDL_AS(gdl_method, self)->fn;
  if (fn->doc == NULL || fn->doc[0] == '\0') Py_RETURN_NONE;
  const char* body = strstr(fn->doc, ")\n--\n\n");
  return PyUnicode_FromString(body ? body + 6 : fn->doc);
}

static PyObject* method_text_signature(PyObject* self, void* closure) {
  const gdl_fn* fn = GDL_AS(gdl_method, self)->fn;
  const char* open = fn->doc ? strchr(fn->doc, '(') : NULL;
  const char* end = fn->doc ? strstr(fn->doc, ")\n--\n\n") : NULL;
  if (open == NULL || end == NULL || end < open) Py_RETURN_NONE;
  const gdl_special* sp = GDL_AS(gdl_method, self)->sp;
  const char* first = sp && sp->kind == GDL_M_STATIC ? "" : sp && sp->kind == GDL_M_CLASS ? "$cls" : "$self";
  if (end == open + 1) return PyUnicode_FromFormat("(%s)", first);
  PyObject* args = PyUnicode_FromStringAndSize(open + 1, end - open - 1);
  PyObject* sig = args ? PyUnicode_FromFormat(*first ? "(%s, %U)" : "(%s%U)", first, args) : NULL;
  Py_XDECREF(args);
  return sig;
}

static PyObject* method_name(PyObject* self, void* closure) {
  return PyUnicode_FromString(gdl_short_name(GDL_AS(gdl_method, self)->fn->name));
}

static PyObject* method_qualname(PyObject* self, void* closure) {
  const gdl_method* m = GDL_AS(const gdl_method, self);
  return PyUnicode_FromString(m->fn->name);
}

static PyObject* method_repr(PyObject* self) {
  const gdl_method* m = GDL_AS(const gdl_method, self);
  return PyUnicode_FromFormat("<method '%s' of '%s' objects>", gdl_short_name(m->fn->name),
                              GDL_TP_NAME((PyTypeObject*)m->owner));
}

static PyObject* method_objclass(PyObject* self, void* closure) { return Py_NewRef(GDL_AS(gdl_method, self)->owner); }

/* Pickling by reference, as CPython's method descriptors (list.append):
 * getattr(Class, name). Bound methods (types.MethodType) pickle as
 * getattr(obj, name) themselves. */
static PyObject* method_reduce(PyObject* self, PyObject* unused) {
  const gdl_method* m = GDL_AS(const gdl_method, self);
  PyObject* getattr = NULL; /* strong: builtins is a dict any thread may change */
  if (PyDict_GetItemStringRef(PyEval_GetBuiltins(), "getattr", &getattr) < 0) return NULL;
  if (getattr == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "godlpack: no builtin getattr");
    return NULL;
  }
  /* the attribute's name: a special method's fn may serve several (__lt__, __gt__) */
  return Py_BuildValue("N(Os)", getattr, m->owner, m->sp ? m->sp->name : gdl_short_name(m->fn->name));
}

static PyMethodDef method_methods[] = {{"__reduce__", method_reduce, METH_NOARGS, NULL}, {NULL}};

static PyGetSetDef method_getset[] = {{"__objclass__", method_objclass, NULL, NULL, NULL},
                                      {"__doc__", method_doc, NULL, NULL, NULL},
                                      {"__name__", method_name, NULL, NULL, NULL},
                                      {"__text_signature__", method_text_signature, NULL, NULL, NULL},
                                      {"__qualname__", method_qualname, NULL, NULL, NULL},
                                      {NULL}};

#ifdef Py_LIMITED_API
static PyMemberDef method_members[] = {
    {"__vectorcalloffset__", Py_T_PYSSIZET, offsetof(gdl_method, vectorcall), GDL_MEMBER_FLAGS, NULL}, {NULL}};

static int method_type_ready(void) {
  if (method_type != NULL) return 0;
  PyType_Slot slots[] = {{Py_tp_dealloc, (void*)method_dealloc}, {Py_tp_call, (void*)PyVectorcall_Call},
                         {Py_tp_repr, (void*)method_repr},       {Py_tp_descr_get, (void*)method_get},
                         {Py_tp_getset, method_getset},          {Py_tp_methods, method_methods},
                         {Py_tp_members, method_members},        {0, NULL}};
  PyType_Spec spec = {"godlpack.go_method", GDL_BASICSIZE(gdl_method), 0,
                      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR, slots};
  bound_method = gdl_module_attr("types", "MethodType");
  if (bound_method == NULL) return -1;
  method_type = (PyTypeObject*)PyType_FromSpec(&spec);
  return method_type ? 0 : -1;
}
#else
static PyTypeObject method_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "godlpack.go_method",
    .tp_basicsize = sizeof(gdl_method),
    .tp_dealloc = method_dealloc,
    .tp_vectorcall_offset = offsetof(gdl_method, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_repr = method_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_descr_get = method_get,
    .tp_getset = method_getset,
    .tp_methods = method_methods,
};

static int method_type_ready(void) { return PyType_Ready(&method_type); }
#endif

/* The Go class of each type made for one (every import of every module
 * adds its own), for tp_new, __init__, pickling: a list, newest first,
 * prepended under types_lock (two modules' execs may run at once on a
 * free-threaded build) and read with no lock; entries never change or go
 * (the types live for the process: gdl_set_class_type). */
typedef struct class_type {
  PyTypeObject* type;
  const gdl_class* c;
  struct class_type* next;
} class_type;
static class_type* types_head;
static gdl_mutex types_lock;

/* The Go class of type: its own, or its nearest Go base's for a Python
 * subclass; NULL for none. */
static const gdl_class* class_of_type(PyTypeObject* type) {
  PyTypeObject* go = gdl_go_type(type);
  for (class_type* e = __atomic_load_n(&types_head, __ATOMIC_ACQUIRE); go != NULL && e != NULL; e = e->next) {
    if (e->type == go) return e->c;
  }
  return NULL;
}

static int add_class_type(PyTypeObject* type, const gdl_class* c) {
  class_type* e = malloc(sizeof *e); /* kept for the process, as the type is */
  if (e == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  e->type = type;
  e->c = c;
  gdl_mutex_lock(&types_lock);
  e->next = types_head;
  __atomic_store_n(&types_head, e, __ATOMIC_RELEASE); /* after the entry's fields: readers take no lock */
  gdl_mutex_unlock(&types_lock);
  return 0;
}

/* ---- special methods (class.go's builders) ---------------------------------- */

/* len(self) by the class's Len (an item method's aux function); -1 with an exception. */
static Py_ssize_t item_len(const gdl_special* sp, PyObject* self) {
  PyObject* n = gdl_call_fn(sp->aux, self, NULL, 0, NULL);
  if (n == NULL) return -1;
  Py_ssize_t len = PyLong_AsSsize_t(n);
  Py_DECREF(n);
  return len;
}

/* The int index key of an item method, from the end when negative, checked
 * against len (the aux function): a new int, or NULL with TypeError or IndexError. */
static PyObject* item_index(const gdl_special* sp, PyObject* self, PyObject* key) {
  if (!PyIndex_Check(key)) { /* the names only for messages: a limited build's are dear (gdl_tp_name) */
    PyErr_Format(PyExc_TypeError, "%.200s indices must be integers%s, not %.200s", GDL_TP_NAME(Py_TYPE(self)),
                 sp->slice ? " or slices" : "", GDL_TP_NAME(Py_TYPE(key)));
    return NULL;
  }
  Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
  if (i == -1 && PyErr_Occurred()) return NULL;
  Py_ssize_t len = item_len(sp, self);
  if (len == -1 && PyErr_Occurred()) return NULL;
  if (i < 0) i += len;
  if (i < 0 || i >= len) {
    PyErr_Format(PyExc_IndexError, "%.200s index out of range", GDL_TP_NAME(Py_TYPE(self)));
    return NULL;
  }
  return PyLong_FromSsize_t(i);
}

/* An item method's slice key: sp->slice(self, start, stop, step[, value]),
 * the indices clipped to len as slice.indices(len) clips them, and step to
 * within +-max(len, 2): the same items (past len, a step only ends the
 * range, whose start lies in [-1, len]), still an extended slice (never 1,
 * which a SetSlice takes as a plain slice that may resize), and Go's
 * `for i := start; ...; i += step` cannot overflow (|i| stays below
 * 2*len+2; sys.maxsize would). */
static PyObject* slice_call(const gdl_special* sp, PyObject* self, PyObject* key, PyObject* value) {
  Py_ssize_t start, stop, step;
  if (PySlice_Unpack(key, &start, &stop, &step) < 0) return NULL; /* ValueError for step 0 */
  Py_ssize_t len = item_len(sp, self);
  if (len == -1 && PyErr_Occurred()) return NULL;
  PySlice_AdjustIndices(len, &start, &stop, step);
  Py_ssize_t most = len > 2 ? len : 2;
  if (step > most) step = most;
  if (step < -most) step = -most;
  PyObject* argv[4] = {PyLong_FromSsize_t(start), PyLong_FromSsize_t(stop), PyLong_FromSsize_t(step), value};
  PyObject* r = argv[0] && argv[1] && argv[2] ? gdl_call_fn(sp->slice, self, argv, value ? 4 : 3, NULL) : NULL;
  for (int i = 0; i < 3; i++) Py_XDECREF(argv[i]);
  return r;
}

/* Whether parameter i of fn takes obj (1, 0, or -1 with an exception), by
 * its type alone. strict (binary operators): CPython's own numbers' rule, a
 * float takes a float or an int and an int an int (anything else, an array
 * with __float__ included, gives NotImplemented, so Python asks the other
 * operand); otherwise what the conversion takes (__contains__: a value of
 * no such type is not in the object, while the Go function's own TypeError
 * still propagates). */
static int arg_takes(const gdl_fn* fn, int i, PyObject* obj, int strict) {
#ifndef Py_LIMITED_API
  PyNumberMethods* nb = Py_TYPE(obj)->tp_as_number;
#endif
  switch (fn->sig[i]) {
    case GDL_V_FLOAT:
#ifdef Py_LIMITED_API
      return PyFloat_Check(obj) || PyLong_Check(obj) ||
             (!strict && (PyType_GetSlot(Py_TYPE(obj), Py_nb_float) != NULL ||
                          PyType_GetSlot(Py_TYPE(obj), Py_nb_index) != NULL));
#else
      return PyFloat_Check(obj) || PyLong_Check(obj) ||
             (!strict && nb != NULL && (nb->nb_float != NULL || nb->nb_index != NULL));
#endif
    case GDL_V_INT:
    case GDL_V_UINT:
      return !PyBool_Check(obj) && (strict ? PyLong_Check(obj) : PyIndex_Check(obj));
    case GDL_V_BOOL:
      return PyBool_Check(obj);
    case GDL_V_STR:
      return PyUnicode_Check(obj);
    case GDL_V_OBJ:
      return gdl_is_obj(fn->cls[i], obj);
    case GDL_V_LIST:
      return PyList_Check(obj) || PyTuple_Check(obj);
    case GDL_V_DICT:
      return PyDict_Check(obj);
    case GDL_V_CALLABLE:
      return PyCallable_Check(obj);
    case GDL_V_ARRAY: {
      if (PyObject_CheckBuffer(obj)) return 1;
      PyObject* dl = PyObject_GetAttrString(obj, "__dlpack__");
      if (dl != NULL) {
        Py_DECREF(dl);
        return 1;
      }
      if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1; /* not a missing attribute: raised */
      PyErr_Clear();
      return 0;
    }
  }
  return 1; /* other kinds: the conversion decides */
}

static PyObject* special_call(PyObject* callable, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  const gdl_method* m = GDL_AS(const gdl_method, callable);
  const gdl_special* sp = m->sp;
  const gdl_fn* fn = m->fn;
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (sp->kind == GDL_M_STATIC) return gdl_call_fn(fn, NULL, args, nargs, kwnames);
  if (nargs < 1) {
    PyErr_Format(PyExc_TypeError, "unbound method %s() needs an argument", fn->name);
    return NULL;
  }
  PyObject* self = args[0];
  if (sp->kind == GDL_M_CLASS) {
    PyObject* r = gdl_call_fn(fn, NULL, args + 1, nargs - 1, kwnames);
    int cls = fn->nresults == 1 && fn->kinds[0] == GDL_V_OBJ ? fn->rcls[0] : -1;
    /* a *T for Sub.m(...), Sub a Python subclass or an earlier import's type of the class: an object of Sub */
    if (r != NULL && cls >= 0 && PyType_Check(self) && Py_TYPE(r) != (PyTypeObject*)self &&
        Py_TYPE(r) == gdl_class_type(cls)) {
      const gdl_class* c = class_of_type((PyTypeObject*)self);
      if (c != NULL && c->id == cls) return gdl_obj_retype(r, (PyTypeObject*)self);
    }
    return r;
  }
  if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
    PyErr_Format(PyExc_TypeError, "%s() takes no keyword arguments", sp->name);
    return NULL;
  }
  int want = sp->kind == GDL_M_SETITEM ? 3 : sp->kind == GDL_M_EXIT ? 4 : sp->kind == GDL_M_ITER || sp->kind == GDL_M_ENTER ? 1 : 2;
  if (nargs != want) {
    PyErr_Format(PyExc_TypeError, "%s() takes %d arguments (%zd given)", sp->name, (int)want - 1, nargs - 1);
    return NULL;
  }
  if (!gdl_is_obj(fn->cls[0], self)) return gdl_call_fn(fn, self, args + 1, nargs - 1, NULL); /* words the refusal */
  switch (sp->kind) {
    case GDL_M_GETITEM:
    case GDL_M_SETITEM:
    case GDL_M_DELITEM: {
      if (sp->slice != NULL && PySlice_Check(args[1])) return slice_call(sp, self, args[1], nargs > 2 ? args[2] : NULL);
      PyObject* argv[2] = {item_index(sp, self, args[1]), nargs > 2 ? args[2] : NULL};
      if (argv[0] == NULL) return NULL;
      PyObject* r = gdl_call_fn(fn, self, argv, nargs - 1, NULL);
      Py_DECREF(argv[0]);
      return r;
    }
    case GDL_M_CMP: {
      if (!gdl_is_obj(fn->cls[1], args[1])) Py_RETURN_NOTIMPLEMENTED;
      PyObject* r = (sp->flags & GDL_CMP_SWAP) ? gdl_call_fn(fn, args[1], &self, 1, NULL) : gdl_call_fn(fn, self, args + 1, 1, NULL);
      if (r == NULL || !(sp->flags & GDL_CMP_NEGATE)) return r;
      int t = PyObject_IsTrue(r);
      Py_DECREF(r);
      return t < 0 ? NULL : PyBool_FromLong(!t);
    }
    case GDL_M_BINOP: {
      int takes = arg_takes(fn, 1, args[1], 1);
      if (takes < 0) return NULL;
      if (!takes) Py_RETURN_NOTIMPLEMENTED;
      PyObject* r = gdl_call_fn(fn, self, args + 1, 1, NULL);
      if (r == NULL || !(sp->flags & GDL_OP_INPLACE) || r != Py_None) return r;
      Py_DECREF(r); /* None: fn changed self, which is the result */
      return Py_NewRef(self);
    }
    case GDL_M_CONTAINS: {
      int takes = arg_takes(fn, 1, args[1], 0);
      if (takes < 0) return NULL;
      if (!takes) Py_RETURN_FALSE; /* not of the element type: not in it */
      PyObject* v = contains_value(fn, args[1]);
      if (v == NULL) return PyErr_Occurred() ? NULL : Py_NewRef(Py_False);
      PyObject* r = gdl_call_fn(fn, self, &v, 1, NULL);
      Py_DECREF(v);
      return r;
    }
    case GDL_M_ITER: {
      PyObject* h = gdl_call_fn(fn, self, NULL, 0, NULL); /* the pull state's handle */
      if (h == NULL) return NULL;
      uintptr_t handle = (uintptr_t)PyLong_AsUnsignedLongLong(h);
      Py_DECREF(h);
      if (PyErr_Occurred()) return NULL;
      return gdl_iter_new(handle, sp->aux, gdl_call_handle, self);
    }
    case GDL_M_ENTER: {
      PyObject* r = gdl_call_fn(fn, self, NULL, 0, NULL);
      if (r != Py_None || fn->nresults > 0) return r;
      Py_DECREF(r);
      return Py_NewRef(self);
    }
    case GDL_M_EXIT: {
      PyObject* raised = PyBool_FromLong(args[1] != Py_None);
      PyObject* r = gdl_call_fn(fn, self, &raised, fn->nparams - 1, NULL);
      Py_DECREF(raised);
      if (r == NULL) return NULL;
      Py_DECREF(r);
      Py_RETURN_FALSE; /* the exception, if any, goes on */
    }
  }
  PyErr_SetString(PyExc_SystemError, "godlpack: unknown special method");
  return NULL;
}

/* Adds class c's special method sp to type. */
static int add_special(PyObject* type, const gdl_special* sp) {
  if (gdl_fn_intern_names(sp->fn) < 0) return -1;
  gdl_method* meth = GDL_NEW(gdl_method, METHOD_TYPE);
  if (meth == NULL) return -1;
  meth->vectorcall = special_call;
  meth->fn = sp->fn;
  meth->owner = Py_NewRef(type);
  meth->sp = sp;
  PyObject* attr = GDL_OBJ(meth);
#ifdef Py_LIMITED_API /* the builtins staticmethod, classmethod */
  if (sp->kind == GDL_M_STATIC || sp->kind == GDL_M_CLASS) {
    PyObject* wrap = PyDict_GetItemString(PyEval_GetBuiltins(), sp->kind == GDL_M_STATIC ? "staticmethod" : "classmethod");
    attr = wrap ? PyObject_CallOneArg(wrap, attr) : NULL;
    if (wrap == NULL) PyErr_SetString(PyExc_RuntimeError, "godlpack: no builtin staticmethod/classmethod");
  }
#else
  if (sp->kind == GDL_M_STATIC) attr = PyStaticMethod_New(attr);
  else if (sp->kind == GDL_M_CLASS) attr = PyClassMethod_New(attr);
#endif
  else Py_INCREF(attr);
  Py_DECREF(GDL_OBJ(meth));
  if (attr == NULL) return -1;
  int r = PyObject_SetAttrString(type, sp->name, attr); /* updates the type's slots */
  Py_DECREF(attr);
  return r;
}

/* An assignment obj.name = v is no call: its refusal "C.name() argument 1
 * must be str, not int" becomes "C.name: the value must be str, not int"
 * (the same exception class, when it is one of Python's plain ones). */
static void value_not_argument(const char* setter) {
  if (!PyErr_ExceptionMatches(PyExc_TypeError) && !PyErr_ExceptionMatches(PyExc_OverflowError) &&
      !PyErr_ExceptionMatches(PyExc_ValueError))
    return;
  PyObject *et, *ev, *etb;
  PyErr_Fetch(&et, &ev, &etb);
  PyErr_NormalizeException(&et, &ev, &etb);
  PyObject* msg = ev ? PyObject_Str(ev) : NULL;
  PyObject* prefix = msg ? PyUnicode_FromFormat("%s() argument 1", setter) : NULL;
  PyObject* repl = NULL;
  if (prefix != NULL && (et == PyExc_TypeError || et == PyExc_OverflowError || et == PyExc_ValueError) &&
      PyUnicode_Tailmatch(msg, prefix, 0, PyUnicode_GET_LENGTH(prefix), -1) == 1) {
    PyObject* rest = PyUnicode_Substring(msg, PyUnicode_GET_LENGTH(prefix), PyUnicode_GET_LENGTH(msg));
    if (rest != NULL) repl = PyUnicode_FromFormat("%s: the value%U", setter, rest);
    Py_XDECREF(rest);
  }
  Py_XDECREF(prefix);
  Py_XDECREF(msg);
  if (repl == NULL) {
    PyErr_Clear();
    PyErr_Restore(et, ev, etb);
    return;
  }
  Py_XDECREF(ev);
  Py_XDECREF(etb);
  PyErr_SetObject(et, repl);
  Py_DECREF(et);
  Py_DECREF(repl);
}

static PyObject* prop_get(PyObject* self, void* closure) { return gdl_call_fn(((gdl_prop*)closure)->get, self, NULL, 0, NULL); }

static int prop_set(PyObject* self, PyObject* value, void* closure) {
  const gdl_prop* p = closure;
  if (value == NULL) {
    PyErr_Format(PyExc_AttributeError, "cannot delete attribute '%s'", p->name);
    return -1;
  }
  if (p->set == NULL) {
    PyErr_Format(PyExc_AttributeError, "property '%s' of '%s' object has no setter", p->name, GDL_TP_NAME(Py_TYPE(self)));
    return -1;
  }
  PyObject* r = gdl_call_fn(p->set, self, &value, 1, NULL);
  if (r == NULL) value_not_argument(p->set->name);
  Py_XDECREF(r);
  return r == NULL ? -1 : 0;
}

/* Calls class c's constructor with a call's args and kwds: a new object. */
static PyObject* call_ctor(const gdl_class* c, PyObject* args, PyObject* kwds) {
  Py_ssize_t nargs = PyTuple_GET_SIZE(args), nkw = kwds ? PyDict_GET_SIZE(kwds) : 0;
#ifndef Py_LIMITED_API
  if (nkw == 0) return gdl_call_fn(c->ctor, NULL, &PyTuple_GET_ITEM(args, 0), nargs, NULL);
#endif
  PyObject* argv[2 * GDL_MAX_PARAMS + 1];
  if (nargs + nkw > 2 * GDL_MAX_PARAMS) {
    PyErr_Format(PyExc_TypeError, "%s() takes at most %d arguments", c->ctor->name, c->ctor->nparams);
    return NULL;
  }
#ifdef Py_LIMITED_API /* the tuple's items array is not readable: copied */
  if (nkw == 0) {
    for (Py_ssize_t i = 0; i < nargs; i++) argv[i] = PyTuple_GET_ITEM(args, i);
    return gdl_call_fn(c->ctor, NULL, argv, nargs, NULL);
  }
#endif
  PyObject* kwnames = PyTuple_New(nkw);
  if (kwnames == NULL) return NULL;
  for (Py_ssize_t i = 0; i < nargs; i++) argv[i] = PyTuple_GET_ITEM(args, i);
  Py_ssize_t pos = 0, k = 0;
  PyObject *key, *value;
  /* strong references, read in a critical section: no other thread's
   * change of kwds can free them (free-threaded builds) */
  GDL_BEGIN_CRITICAL_SECTION(kwds);
  while (k < nkw && PyDict_Next(kwds, &pos, &key, &value)) {
    PyTuple_SET_ITEM(kwnames, k, Py_NewRef(key));
    argv[nargs + k++] = Py_NewRef(value);
  }
  GDL_END_CRITICAL_SECTION();
  PyObject* r = k == nkw ? gdl_call_fn(c->ctor, NULL, argv, nargs, kwnames) : NULL;
  if (k != nkw) PyErr_SetString(PyExc_RuntimeError, "keyword arguments changed during the call");
  for (Py_ssize_t j = 0; j < k; j++) Py_DECREF(argv[nargs + j]);
  Py_DECREF(kwnames);
  return r;
}

/* Cls(...) makes the Go value; a Python subclass's object starts empty and
 * gets it from the Go class's __init__ (obj_tp_init), as super().__init__(...)
 * calls it. paired: called by Cls(...) (type_call), which calls __init__
 * next with the same arguments: that __init__ is a no-op. */
static PyObject* obj_new(PyTypeObject* type, PyObject* args, PyObject* kwds, int paired) {
  const gdl_class* c = class_of_type(type);
  if (c == NULL || c->ctor == NULL) {
    PyErr_Format(PyExc_TypeError, "cannot create '%s' instances", GDL_TP_NAME(type));
    return NULL;
  }
  if (GDL_SLOT(type, tp_dealloc, destructor) == gdl_obj_dealloc) { /* the Go class's type, of this import or an earlier one */
    PyObject* r = call_ctor(c, args, kwds);
    if (r != NULL && Py_TYPE(r) != type && gdl_is_obj(c->id, r)) r = gdl_obj_retype(r, type); /* an earlier import's */
    if (r != NULL && Py_TYPE(r) == type) GDL_AS(gdl_obj, r)->fresh = paired;
    return r;
  }
  gdl_obj* o = GDL_AS(gdl_obj, GDL_SLOT(type, tp_alloc, allocfunc)(type, 0)); /* handle 0 until __init__ */
  if (o != NULL) o->cls = c->id;
  return GDL_OBJ(o);
}

static PyObject* obj_tp_new(PyTypeObject* type, PyObject* args, PyObject* kwds) { return obj_new(type, args, kwds, 1); }

/* Cls.__new__(type, ...), in the class's dict in place of CPython's
 * wrapper of tp_new (whose call cannot be told from Cls(...)'s): the
 * object it makes has no __init__ to skip, so a later __init__ is refused.
 * Its checks are the wrapper's. Python subclasses reach it too (their
 * tp_new looks __new__ up). */
static PyObject* obj_new_method(PyObject* self, PyObject* args, PyObject* kwds) {
  PyTypeObject* type = (PyTypeObject*)self; /* the Go class's type */
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  if (n < 1) {
    PyErr_Format(PyExc_TypeError, "%s.__new__(): not enough arguments", GDL_TP_NAME(type));
    return NULL;
  }
  PyObject* sub = PyTuple_GET_ITEM(args, 0);
  if (!PyType_Check(sub)) {
    PyErr_Format(PyExc_TypeError, "%s.__new__(X): X is not a type object (%s)", GDL_TP_NAME(type), GDL_TP_NAME(Py_TYPE(sub)));
    return NULL;
  }
  if (!PyType_IsSubtype((PyTypeObject*)sub, type)) {
    PyErr_Format(PyExc_TypeError, "%s.__new__(%s): %s is not a subtype of %s", GDL_TP_NAME(type),
                 GDL_TP_NAME((PyTypeObject*)sub), GDL_TP_NAME((PyTypeObject*)sub), GDL_TP_NAME(type));
    return NULL;
  }
  PyObject* rest = PyTuple_GetSlice(args, 1, n);
  if (rest == NULL) return NULL;
  PyObject* r = obj_new((PyTypeObject*)sub, rest, kwds, 0);
  Py_DECREF(rest);
  return r;
}

static PyMethodDef new_def = {"__new__", (PyCFunction)(void (*)(void))obj_new_method, METH_VARARGS | METH_KEYWORDS,
                              "Create and return a new object.  See help(type) for accurate signature."};

/* Puts obj_new_method in type's dict as __new__: into the dict, not by
 * setattr, which would make tp_new look __new__ up (slower Cls(...)). */
static int add_new_method(PyTypeObject* type) {
  PyObject* f = PyCFunction_NewEx(&new_def, (PyObject*)type, NULL);
  if (f == NULL) return -1;
#ifdef Py_LIMITED_API
  PyObject* dict = gdl_type_dict(type);
  int r = dict ? PyDict_SetItemString(dict, "__new__", f) : -1;
  Py_XDECREF(dict);
#else
  int r = PyDict_SetItemString(type->tp_dict, "__new__", f);
#endif
  Py_DECREF(f);
  if (r == 0) PyType_Modified(type);
  return r;
}

/* __init__ of a Go class runs once per object: for its own objects it is
 * the no-op that follows Cls(...) (the constructor made the value); for an
 * object of a Python subclass, it calls the constructor. Any later call, on
 * an object that holds its Go value, is a TypeError: it would otherwise do
 * nothing, silently. */
static int obj_tp_init(PyObject* self, PyObject* args, PyObject* kwds) {
  gdl_obj* o = GDL_AS(gdl_obj, self);
  const gdl_class* c = class_of_type(Py_TYPE(self));
  if (c == NULL) return 0;
  if (o->fresh) {
    o->fresh = 0;
    return 0;
  }
  if (o->handle != 0 || GDL_SLOT(Py_TYPE(self), tp_dealloc, destructor) == gdl_obj_dealloc) {
    PyErr_Format(PyExc_TypeError,
                 "%s.__init__: the %.200s object holds its Go value already (__init__ runs once, when the object "
                 "is made: make a new one)",
                 c->name, GDL_TP_NAME(Py_TYPE(self)));
    return -1;
  }
  PyObject* r = call_ctor(c, args, kwds);
  if (r == NULL) return -1;
  o->handle = GDL_AS(gdl_obj, r)->handle;
  GDL_AS(gdl_obj, r)->handle = 0;
  Py_DECREF(r);
  return 0;
}

static PyObject* obj_reduce(PyObject* self, PyObject* unused) {
  gdl_obj* o = GDL_AS(gdl_obj, self);
  if (GDL_SLOT(Py_TYPE(self), tp_dealloc, destructor) != gdl_obj_dealloc) { /* a Python subclass's object: its state is not Go's alone */
    PyTypeObject* base = gdl_go_type(Py_TYPE(self));
    PyErr_Format(PyExc_TypeError,
                 "cannot pickle '%.200s' object: objects of a Python subclass of the Go class %.200s do not pickle: "
                 "define __reduce__ in the subclass",
                 GDL_TP_NAME(Py_TYPE(self)), base ? GDL_TP_NAME(base) : "?");
    return NULL;
  }
  const gdl_class* c = class_of_type(Py_TYPE(self));
  if (c == NULL || !c->pickle) {
    PyErr_Format(PyExc_TypeError,
                 "cannot pickle '%.200s' object: its Go type is no encoding.BinaryMarshaler and BinaryUnmarshaler",
                 GDL_TP_NAME(Py_TYPE(self)));
    return NULL;
  }
  if (o->handle == 0) {
    PyErr_Format(PyExc_TypeError, "cannot pickle '%.200s' object: it holds no Go value (its __init__ did not call %s.__init__)",
                 GDL_TP_NAME(Py_TYPE(self)), c->name);
    return NULL;
  }
  if (!gdl_go_ready()) return NULL;
  char err[1024];
  char* data = NULL;
  int64_t n = 0;
  uintptr_t exc = 0;
  int kind = gdlpyMarshal(o->handle, &data, &n, err, sizeof err, &exc);
  if (kind != GDL_ERR_NONE) {
    gdl_raise_kind(kind, err, exc);
    return NULL;
  }
  PyObject* bytes = PyBytes_FromStringAndSize(data, (Py_ssize_t)n);
  free(data);
  if (bytes == NULL) return NULL;
  PyObject* mod = PyType_GetModule(Py_TYPE(self));
  PyObject* rebuild = mod ? PyObject_GetAttrString(mod, "_rebuild_object") : NULL;
  if (rebuild == NULL) {
    Py_DECREF(bytes);
    return NULL;
  }
  return Py_BuildValue("N(ON)", rebuild, (PyObject*)Py_TYPE(self), bytes);
}

/* _rebuild_object(cls, data): unpickles an object of a Go class. */
PyObject* gdl_rebuild_object(PyObject* module, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2 || !PyType_Check(args[0]) || !PyBytes_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "_rebuild_object(cls, data: bytes)");
    return NULL;
  }
  PyTypeObject* type = (PyTypeObject*)args[0];
  const gdl_class* c = GDL_SLOT(type, tp_dealloc, destructor) == gdl_obj_dealloc ? class_of_type(type) : NULL; /* a Go class's own type */
  if (c == NULL || !c->pickle) {
    PyErr_Format(PyExc_TypeError, "_rebuild_object: %R is no picklable Go class", args[0]);
    return NULL;
  }
  if (!gdl_go_ready()) return NULL;
  char err[1024];
  uintptr_t h = 0, exc = 0;
  int kind =
      gdlpyUnmarshal(c->id, PyBytes_AS_STRING(args[1]), (int64_t)PyBytes_GET_SIZE(args[1]), &h, err, sizeof err, &exc);
  if (kind != GDL_ERR_NONE) {
    gdl_raise_kind(kind, err, exc);
    return NULL;
  }
  return gdl_obj_retype(gdl_obj_new(c->id, h), type); /* type: an earlier import's, maybe */
}

static PyMethodDef reduce_def = {"__reduce__", obj_reduce, METH_NOARGS, "Pickling: the Go value's MarshalBinary."};

/* Makes class c's type in module m and adds it as m.<name>. */
/* ---- plain methods as CPython's method descriptors ----------------------------- */

/* A plain method (no special) is a method_descriptor, as list.append: CPython's
 * call specialisation calls its C function directly (a go_method goes
 * through the generic vectorcall, about 75 instructions more a call), and
 * it checks the receiver's type as ext.c words it. Which Go method a call
 * is for cannot come from self, so each gets a C function of its own:
 * method trampoline k calls meth_slots[k]. A slot is taken once per gdl_fn,
 * for the process; past GDL_MAX_METHODS the method is a go_method. */
#define GDL_MAX_METHODS 1024
static const gdl_fn* meth_slots[GDL_MAX_METHODS];
static int nmeth_slots;
static gdl_mutex meth_slots_lock;

#define M1(k)                                                                                                    \
  static PyObject* meth_trampoline_##k(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) { \
    return gdl_call_fn(meth_slots[0##k], self, args, nargs, kwnames);                                              \
  }
#define M8(k) M1(k##0) M1(k##1) M1(k##2) M1(k##3) M1(k##4) M1(k##5) M1(k##6) M1(k##7)
#define M64(k) M8(k##0) M8(k##1) M8(k##2) M8(k##3) M8(k##4) M8(k##5) M8(k##6) M8(k##7)
#define M512(k) M64(k##0) M64(k##1) M64(k##2) M64(k##3) M64(k##4) M64(k##5) M64(k##6) M64(k##7)
M512(0)
M512(1)
#define MP1(k) (PyCFunction)(void (*)(void))meth_trampoline_##k,
#define MP8(k) MP1(k##0) MP1(k##1) MP1(k##2) MP1(k##3) MP1(k##4) MP1(k##5) MP1(k##6) MP1(k##7)
#define MP64(k) MP8(k##0) MP8(k##1) MP8(k##2) MP8(k##3) MP8(k##4) MP8(k##5) MP8(k##6) MP8(k##7)
#define MP512(k) MP64(k##0) MP64(k##1) MP64(k##2) MP64(k##3) MP64(k##4) MP64(k##5) MP64(k##6) MP64(k##7)
static const PyCFunction meth_trampolines[GDL_MAX_METHODS] = {MP512(0) MP512(1)};

/* fn's method trampoline (its slot taken on first use), or NULL when all are taken. */
static PyCFunction meth_trampoline_of(const gdl_fn* fn) {
  gdl_mutex_lock(&meth_slots_lock); /* two modules' execs may run at once on a free-threaded build */
  int k = 0;
  while (k < nmeth_slots && meth_slots[k] != fn) k++;
  if (k == nmeth_slots && k < GDL_MAX_METHODS) meth_slots[nmeth_slots++] = fn;
  gdl_mutex_unlock(&meth_slots_lock);
  return k < GDL_MAX_METHODS ? meth_trampolines[k] : NULL;
}

/* fn as a method descriptor of type (a new reference); NULL with no
 * exception when no trampoline is left, with one on failure. Its doc
 * "name($self, args)\n--\n\nbody" where fn's doc has a signature line
 * (what a go_method's __text_signature__ and __doc__ give). */
static PyObject* method_descriptor(PyObject* type, const gdl_fn* fn) {
  PyCFunction meth = meth_trampoline_of(fn);
  if (meth == NULL) return NULL;
  const char* name = gdl_short_name(fn->name);
  const char* doc = fn->doc;
  const char* open = doc ? strchr(doc, '(') : NULL;
  const char* end = doc ? strstr(doc, ")\n--\n\n") : NULL;
  char* made = NULL; /* kept for the process, as the descriptor keeps its PyMethodDef */
  if (open != NULL && end != NULL && end > open) {
    size_t len = strlen(name) + strlen("($self, ") + (size_t)(end - open - 1) + strlen(end) + 1;
    made = malloc(len);
    if (made == NULL) {
      PyErr_NoMemory();
      return NULL;
    }
    snprintf(made, len, end == open + 1 ? "%s($self%.*s%s" : "%s($self, %.*s%s", name, (int)(end - open - 1), open + 1, end);
    doc = made;
  }
  PyMethodDef* def = calloc(1, sizeof *def); /* kept for the process */
  if (def == NULL) {
    free(made);
    PyErr_NoMemory();
    return NULL;
  }
  def->ml_name = name;
  def->ml_meth = meth;
  def->ml_flags = METH_FASTCALL | METH_KEYWORDS;
  def->ml_doc = doc;
  PyObject* d = PyDescr_NewMethod((PyTypeObject*)type, def);
  if (d == NULL && !PyErr_Occurred()) PyErr_NoMemory();
  return d;
}

int gdl_add_class(PyObject* m, gdl_class* c) {
  if (method_type_ready() < 0) return -1;
  const char* modname = PyModule_GetName(m);
  if (modname == NULL) return -1;
  size_t len = strlen(modname) + strlen(c->name) + 2;
  char* qual = malloc(len); /* tp_name points at it: kept for the process */
  if (qual == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  snprintf(qual, len, "%s.%s", modname, c->name);
  static PyMemberDef weak_members[] = {{"__weaklistoffset__", T_PYSSIZET, offsetof(gdl_obj, weaklist), GDL_MEMBER_FLAGS, NULL},
                                       {NULL}};
  PyType_Slot slots[8] = {{Py_tp_new, obj_tp_new}, {Py_tp_init, obj_tp_init}, {Py_tp_dealloc, gdl_obj_dealloc},
                         {Py_tp_doc, (void*)c->doc}};
  int nslots = 4;
  if (c->weakref) slots[nslots++] = (PyType_Slot){Py_tp_members, weak_members};
  if (c->buffer) {
    slots[nslots++] = (PyType_Slot){Py_bf_getbuffer, gdl_obj_getbuffer};
    slots[nslots++] = (PyType_Slot){Py_bf_releasebuffer, gdl_obj_releasebuffer};
  }
  slots[nslots] = (PyType_Slot){0, NULL};
  PyType_Spec spec = {qual, GDL_BASICSIZE(gdl_obj), 0, Py_TPFLAGS_DEFAULT | (c->basetype ? Py_TPFLAGS_BASETYPE : 0), slots};
  PyObject* type = PyType_FromModuleAndSpec(m, &spec, NULL);
  if (type == NULL) return -1;
  if (c->ctor != NULL && gdl_fn_intern_names(c->ctor) < 0) goto fail;
  for (int i = 0; i < c->nmethods; i++) {
    gdl_fn* fn = c->methods[i];
    if (gdl_fn_intern_names(fn) < 0) goto fail;
    PyObject* d = method_descriptor(type, fn);
    if (d == NULL && PyErr_Occurred()) goto fail;
    if (d == NULL) { /* no trampoline left: a go_method */
      gdl_method* meth = GDL_NEW(gdl_method, METHOD_TYPE);
      if (meth == NULL) goto fail;
      meth->vectorcall = method_call;
      meth->fn = fn;
      meth->owner = Py_NewRef(type);
      meth->sp = NULL;
      d = GDL_OBJ(meth);
    }
    int r = PyObject_SetAttrString(type, gdl_short_name(fn->name), d); /* updates slots: __repr__ */
    Py_DECREF(d);
    if (r < 0) goto fail;
  }
  for (int i = 0; i < c->nspecials; i++) {
    if (add_special(type, &c->specials[i]) < 0) goto fail;
  }
  if (c->unhashable && PyObject_SetAttrString(type, "__hash__", Py_None) < 0) goto fail;
  if (add_new_method((PyTypeObject*)type) < 0) goto fail;
  for (int i = 0; i < c->nprops; i++) {
    gdl_prop* p = &c->props[i];
    PyGetSetDef* def = calloc(1, sizeof *def); /* kept for the process, as the descriptor keeps it */
    if (def == NULL) {
      PyErr_NoMemory();
      goto fail;
    }
    def->name = p->name;
    def->get = prop_get;
    def->set = prop_set;
    def->doc = p->doc;
    def->closure = p;
    PyObject* d = PyDescr_NewGetSet((PyTypeObject*)type, def);
    int r = d ? PyObject_SetAttrString(type, p->name, d) : -1;
    Py_XDECREF(d);
    if (r < 0) goto fail;
  }
  {
    PyObject* d = PyDescr_NewMethod((PyTypeObject*)type, &reduce_def);
    int r = d ? PyObject_SetAttrString(type, "__reduce__", d) : -1;
    Py_XDECREF(d);
    if (r < 0) goto fail;
  }
  if (add_class_type((PyTypeObject*)type, c) < 0) goto fail;
  gdl_set_class_type(c->id, (PyTypeObject*)type); /* the newest module's type; kept for the process */
  if (PyModule_AddObjectRef(m, c->name, type) < 0) goto fail;
  Py_DECREF(type);
  return 0;
fail:
  Py_DECREF(type);
  return -1;
}

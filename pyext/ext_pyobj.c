/* Python values to and from gdl_value: the scalar checks every argument
 * takes (ext.c) and a callback's results take alike, list[str] and
 * dict[str, T] arguments and results, and calls of Python callables from Go
 * (callback.go), which take the GIL themselves: the Go function may run
 * without it (pyext.ReleaseGIL), or on a goroutine of its own. */
#include "exchange.h"
#include "ext.h"
#include "ext_parts.h"
#include "ext_pyobj.h"

#include <math.h>
#include <stdarg.h>

/* "f() argument 2", with the item, key or value it is about. */
static PyObject* where_str(const gdl_where* w) {
  PyObject* p = w->result ? PyUnicode_FromFormat("%s() callback result %d", w->fn, w->pos)
                          : PyUnicode_FromFormat("%s() argument %d", w->fn, w->pos);
  if (p == NULL) return NULL;
  PyObject* s;
  if (w->item >= 0) s = PyUnicode_FromFormat("%U item %zd", p, w->item);
  else if (w->is_key) s = PyUnicode_FromFormat("%U key", p);
  else if (w->key != NULL) s = PyUnicode_FromFormat("%U value for key %R", p, w->key);
  else return p;
  Py_DECREF(p);
  return s;
}

/* Raises type with w's words, then fmt's. */
static int raise_at(PyObject* type, const gdl_where* w, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  PyObject* tail = PyUnicode_FromFormatV(fmt, ap);
  va_end(ap);
  PyObject* head = tail ? where_str(w) : NULL;
  if (head != NULL) PyErr_Format(type, "%U%U", head, tail);
  Py_XDECREF(head);
  Py_XDECREF(tail);
  return -1;
}

/* Adds "in f() argument 2..." (w's words) as a note to the exception set:
 * a str that UTF-8 cannot encode (a lone surrogate) raises CPython's
 * UnicodeEncodeError, which says which character but not where. */
static void note_at(const gdl_where* w) {
  PyObject *t, *e, *tb;
  PyErr_Fetch(&t, &e, &tb);
  PyErr_NormalizeException(&t, &e, &tb);
  PyObject* where = where_str(w);
  PyObject* msg = where ? PyUnicode_FromFormat("in %U", where) : NULL;
  if (e != NULL && msg != NULL) Py_XDECREF(PyObject_CallMethod(e, "add_note", "O", msg));
  Py_XDECREF(where);
  Py_XDECREF(msg);
  PyErr_Clear(); /* a failed note leaves the first error */
  PyErr_Restore(t, e, tb);
}

static const char* kind_name(char k) {
  switch (k) {
    case GDL_V_FLOAT: return "float";
    case GDL_V_INT:
    case GDL_V_UINT: return "int";
    case GDL_V_BOOL: return "bool";
    case GDL_V_STR: return "str";
  }
  return "object";
}

/* NumPy's bool scalar (numpy.bool, numpy.bool_ before NumPy 2), by name:
 * it is no int (NumPy 2 gives it no __index__), but it is a bool. */
static int is_numpy_bool(PyObject* obj) {
  const char* n = GDL_TP_NAME(Py_TYPE(obj));
  return strcmp(n, "numpy.bool") == 0 || strcmp(n, "numpy.bool_") == 0;
}

static int out_of_range(gdl_elem e, PyObject* obj, const gdl_where* w) {
  return raise_at(PyExc_OverflowError, w, ": %R out of range for %s%d", obj,
                  e.code == kDLInt ? "int" : e.code == kDLUInt ? "uint" : "float", (int)e.bits);
}

/* An integer: an int or anything with __index__ (NumPy integer scalars), not
 * a bool (nor numpy.bool) and not a float; range-checked against the Go type. */
static int int_value(char kind, gdl_elem e, PyObject* obj, gdl_value* v, const gdl_where* w) {
  if (PyBool_Check(obj) || !PyIndex_Check(obj))
    return raise_at(PyExc_TypeError, w, " must be int, not %.200s", GDL_TP_NAME(Py_TYPE(obj)));
  PyObject* n = PyNumber_Index(obj);
  if (n == NULL) return -1;
  int bits = e.bits ? e.bits : 64, overflow = 0, r = 0;
  if (kind == GDL_V_UINT) {
    unsigned long long u = 0;
    long long x = PyLong_AsLongLongAndOverflow(n, &overflow);
    if (x == -1 && !overflow && PyErr_Occurred()) {
      r = -1;
    } else if (overflow < 0 || (!overflow && x < 0)) {
      overflow = 1; /* negative */
    } else if (!overflow) {
      u = (unsigned long long)x;
    } else { /* beyond int64: maybe a uint64 */
      u = PyLong_AsUnsignedLongLong(n);
      overflow = u == (unsigned long long)-1 && PyErr_Occurred();
      if (overflow) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError)) r = -1;
        else PyErr_Clear();
      }
    }
    if (!overflow && bits < 64 && u >> bits) overflow = 1;
    v->i = (int64_t)u;
  } else {
    long long x = PyLong_AsLongLongAndOverflow(n, &overflow);
    if (x == -1 && !overflow && PyErr_Occurred()) r = -1;
    if (!overflow && bits < 64 && (x < -(1LL << (bits - 1)) || x >= (1LL << (bits - 1)))) overflow = 1;
    v->i = x;
  }
  if (r == 0 && overflow) r = out_of_range(e.bits ? e : (gdl_elem){kind == GDL_V_UINT ? kDLUInt : kDLInt, 64}, n, w);
  Py_DECREF(n);
  return r;
}

/* A float: what float() takes from numbers (float, int, NumPy scalars:
 * __float__ or __index__), not a str; float32 refuses finite values beyond
 * its range (they would become inf), as struct.pack("f", ...) does. */
static int float_value(gdl_elem e, PyObject* obj, gdl_value* v, const gdl_where* w) {
  v->f = PyFloat_AsDouble(obj);
  if (v->f == -1.0 && PyErr_Occurred()) {
    if (PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();
      raise_at(PyExc_TypeError, w, " must be float, not %.200s", GDL_TP_NAME(Py_TYPE(obj)));
    } else if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
      PyErr_Clear();
      out_of_range(e.bits ? e : (gdl_elem){kDLFloat, 64}, obj, w);
    }
    return -1;
  }
  if (e.bits == 32 && isfinite(v->f) && isinf((float)v->f)) return out_of_range(e, obj, w);
  return 0;
}

int gdl_value_from(char kind, gdl_elem e, PyObject* obj, gdl_value* v, const gdl_where* w) {
  switch (kind) {
    case GDL_V_FLOAT:
      return float_value(e, obj, v, w);
    case GDL_V_INT:
    case GDL_V_UINT:
      return int_value(kind, e, obj, v, w);
    case GDL_V_BOOL:
      if (!PyBool_Check(obj) && !is_numpy_bool(obj))
        return raise_at(PyExc_TypeError, w, " must be bool, not %.200s", GDL_TP_NAME(Py_TYPE(obj)));
      v->i = PyObject_IsTrue(obj);
      return v->i < 0 ? -1 : 0;
    case GDL_V_STR: {
      if (!PyUnicode_Check(obj)) return raise_at(PyExc_TypeError, w, " must be str, not %.200s", GDL_TP_NAME(Py_TYPE(obj)));
      Py_ssize_t n;
      v->s = PyUnicode_AsUTF8AndSize(obj, &n); /* borrowed: the caller holds obj */
      v->n = n;
      if (v->s != NULL) return 0;
      note_at(w);
      return -1;
    }
  }
  PyErr_SetString(PyExc_SystemError, "godlpack: unknown value kind");
  return -1;
}

/* A value made a Python object (an object's v->n is its class). */
static PyObject* value_obj(char kind, const gdl_value* v) {
  switch (kind) {
    case GDL_V_FLOAT: return PyFloat_FromDouble(v->f);
    case GDL_V_INT: return PyLong_FromLongLong(v->i);
    case GDL_V_UINT: return PyLong_FromUnsignedLongLong((unsigned long long)v->i);
    case GDL_V_BOOL: return PyBool_FromLong((long)v->i);
    case GDL_V_STR: return PyUnicode_FromStringAndSize(v->s, (Py_ssize_t)v->n);
    case GDL_V_OBJ: return gdl_obj_new((int)v->n, (uintptr_t)v->i);
  }
  PyErr_SetString(PyExc_SystemError, "godlpack: unknown value kind");
  return NULL;
}

/* The values of a container's items, freed with it (and the handles of
 * objects not made, from index from on). */
static void drop_items(char kind, gdl_value* items, int64_t from, int64_t n) {
  for (int64_t k = from; kind == GDL_V_OBJ && k < n; k++) gdlpyDropHandle((uintptr_t)items[k].i);
}

int gdl_list_arg(gdl_elem e, PyObject* obj, gdl_value* v, PyObject** held, const gdl_where* w) {
  if (!PyList_Check(obj) && !PyTuple_Check(obj))
    return raise_at(PyExc_TypeError, w, " must be list[%s], not %.200s", kind_name((char)e.kind), GDL_TP_NAME(Py_TYPE(obj)));
  /* A private copy: its strong references keep the items (and their UTF-8)
   * alive while the caller's list may change, from any thread. */
  PyObject* t = PySequence_Tuple(obj);
  if (t == NULL) return -1;
  Py_ssize_t n = PyTuple_GET_SIZE(t);
  gdl_value* items = calloc(n ? (size_t)n : 1, sizeof *items);
  if (items == NULL) {
    Py_DECREF(t);
    PyErr_NoMemory();
    return -1;
  }
  gdl_where iw = *w;
  for (Py_ssize_t k = 0; k < n; k++) {
    iw.item = k;
    if (gdl_value_from((char)e.kind, e, PyTuple_GET_ITEM(t, k), &items[k], &iw) < 0) {
      free(items);
      Py_DECREF(t);
      return -1;
    }
  }
  v->s = (const char*)items;
  v->n = n;
  *held = t;
  return 0;
}

int gdl_dict_arg(gdl_elem e, PyObject* obj, gdl_value* v, PyObject** held, const gdl_where* w) {
  if (!PyDict_Check(obj))
    return raise_at(PyExc_TypeError, w, " must be dict[str, %s], not %.200s", kind_name((char)e.kind),
                    GDL_TP_NAME(Py_TYPE(obj)));
  PyObject* pairs = PyDict_Items(obj); /* a private list of (key, value) tuples, as above */
  if (pairs == NULL) return -1;
  Py_ssize_t n = PyList_GET_SIZE(pairs);
  gdl_value* items = calloc(n ? 2 * (size_t)n : 1, sizeof *items);
  if (items == NULL) {
    Py_DECREF(pairs);
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t k = 0; k < n; k++) {
    PyObject* kv = PyList_GET_ITEM(pairs, k);
    PyObject* key = PyTuple_GET_ITEM(kv, 0);
    gdl_where kw = *w, vw = *w;
    kw.is_key = 1;
    vw.key = key;
    if (gdl_value_from(GDL_V_STR, (gdl_elem){0}, key, &items[2 * k], &kw) < 0 ||
        gdl_value_from((char)e.kind, e, PyTuple_GET_ITEM(kv, 1), &items[2 * k + 1], &vw) < 0) {
      free(items);
      Py_DECREF(pairs);
      return -1;
    }
  }
  v->s = (const char*)items;
  v->n = n;
  *held = pairs;
  return 0;
}

PyObject* gdl_container_result(char kind, gdl_value* v) {
  gdl_value* items = (gdl_value*)v->s;
  char ik = (char)v->versioned;
  int64_t n = v->n;
  v->s = NULL;
  PyObject* r = kind == GDL_V_LIST ? PyList_New((Py_ssize_t)n) : PyDict_New();
  int64_t k = 0;
  for (; r != NULL && k < n; k++) {
    if (kind == GDL_V_LIST) {
      PyObject* o = value_obj(ik, &items[k]);
      if (o == NULL) break;
      PyList_SET_ITEM(r, (Py_ssize_t)k, o);
      continue;
    }
    PyObject* key = value_obj(GDL_V_STR, &items[2 * k]);
    PyObject* val = key ? value_obj(ik, &items[2 * k + 1]) : NULL;
    int rc = val ? PyDict_SetItem(r, key, val) : -1;
    Py_XDECREF(key);
    Py_XDECREF(val);
    if (rc < 0) break;
  }
  if (k < n) { /* failed at item k, whose handle value_obj has dropped */
    drop_items(ik, items, k + 1, n);
    Py_CLEAR(r);
  } else if (r == NULL) {
    drop_items(ik, items, 0, n);
  }
  free(items);
  return r;
}

void gdl_container_drop(gdl_value* v) {
  drop_items((char)v->versioned, (gdl_value*)v->s, 0, v->n);
  free((void*)v->s);
  v->s = NULL;
}

/* Set by an atexit hook: Python is shutting down, and a thread that does not
 * hold the GIL must not take it any more (a thread that waits for it then
 * hangs or, before 3.14, exits: a Go thread must not). */
static int exiting;

static PyObject* python_exits(PyObject* self, PyObject* unused) {
  __atomic_store_n(&exiting, 1, __ATOMIC_SEQ_CST);
  Py_RETURN_NONE;
}

static PyMethodDef on_exit_def = {"_pyext_callbacks_exit", python_exits, METH_NOARGS, NULL};

static int finalizing(void) {
#if defined(Py_LIMITED_API)
  return gdl_is_finalizing();
#elif PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

/* gc.callbacks' hook: at the start of a full collection, Go drops what it
 * no longer holds (callback.go), so that Python collects it now. */
static PyObject* python_collects(PyObject* self, PyObject* args) {
  PyObject *phase, *info;
  if (!PyArg_ParseTuple(args, "UO", &phase, &info)) return NULL;
  PyObject* gen = PyDict_Check(info) ? PyDict_GetItemString(info, "generation") : NULL; /* borrowed */
  if (PyUnicode_CompareWithASCIIString(phase, "start") == 0 && gen != NULL && PyLong_Check(gen) &&
      PyLong_AsLong(gen) == 2 && !gdl_forked()) /* a forked child has no Go to ask: it keeps what it holds */
    gdlpyCollect();
  Py_RETURN_NONE;
}

static PyMethodDef on_gc_def = {"_pyext_collect", python_collects, METH_VARARGS, NULL};

/* Appends def's function to the list name of module mod (atexit.register's
 * argument: a call; gc.callbacks: an attribute). */
static int hook(const char* mod, const char* name, PyMethodDef* def, int call) {
  PyObject* m = PyImport_ImportModule(mod);
  PyObject* f = m ? PyCFunction_New(def, NULL) : NULL;
  PyObject* r = NULL;
  if (f != NULL && call) {
    r = PyObject_CallMethod(m, name, "O", f);
  } else if (f != NULL) {
    PyObject* list = PyObject_GetAttrString(m, name);
    r = list && PyList_Check(list) && PyList_Append(list, f) == 0 ? Py_NewRef(Py_None) : NULL;
    if (list != NULL && r == NULL && !PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "gc.callbacks is not a list");
    Py_XDECREF(list);
  }
  Py_XDECREF(m);
  Py_XDECREF(f);
  if (r == NULL) return -1;
  Py_DECREF(r);
  return 0;
}

int gdl_py_watch_exit(void) {
  static int watching; /* with the GIL (a second registration would be harmless) */
  if (__atomic_load_n(&watching, __ATOMIC_ACQUIRE)) return 0;
  if (finalizing()) { /* atexit hooks have run, and imports fail (sys.meta_path is None): what the hook says */
    __atomic_store_n(&exiting, 1, __ATOMIC_SEQ_CST);
    return 0;
  }
  if (hook("atexit", "register", &on_exit_def, 1) < 0 || hook("gc", "callbacks", &on_gc_def, 0) < 0) return -1;
  __atomic_store_n(&watching, 1, __ATOMIC_RELEASE);
  return 0;
}

/* Whether this thread may take the GIL now: until finalization, a Python
 * thread that released it (its thread state is there: ReleaseGIL) may take
 * it back, also during atexit; a thread of Go's own only before atexit. */
static int may_enter(void) {
#ifdef Py_LIMITED_API
  if (gdl_gilstate_check()) return 1;
#else
  if (PyGILState_Check()) return 1;
#endif /* holds it already */
  if (!Py_IsInitialized()) return 0;
  if (PyGILState_GetThisThreadState() == NULL && __atomic_load_n(&exiting, __ATOMIC_SEQ_CST)) return 0;
  return !finalizing();
}

void gdl_py_release(uintptr_t obj) {
  if (obj == 0 || !may_enter()) return; /* at exit: left to the process's end */
  PyGILState_STATE g = PyGILState_Ensure();
  Py_DECREF((PyObject*)obj);
  PyGILState_Release(g);
}

void gdl_py_decref(uintptr_t obj) { Py_DECREF((PyObject*)obj); }

uintptr_t gdl_py_newref(uintptr_t obj) {
  if (obj == 0 || !may_enter()) return 0;
  PyGILState_STATE g = PyGILState_Ensure();
  Py_INCREF((PyObject*)obj);
  PyGILState_Release(g);
  return obj;
}

/* The raised exception, taken (3.11 has no PyErr_GetRaisedException). */
static PyObject* take_exception(void) {
#if PY_VERSION_HEX >= 0x030C0000
  return PyErr_GetRaisedException();
#else
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  PyErr_NormalizeException(&t, &v, &tb);
  if (v != NULL && tb != NULL) PyException_SetTraceback(v, tb);
  Py_XDECREF(t);
  Py_XDECREF(tb);
  return v;
#endif
}

void gdl_py_reraise(uintptr_t exc) {
  PyObject* e = (PyObject*)exc;
#if PY_VERSION_HEX >= 0x030C0000
  PyErr_SetRaisedException(e);
#else
  PyErr_Restore(Py_NewRef((PyObject*)Py_TYPE(e)), e, PyException_GetTraceback(e));
#endif
}

/* The pending exception handed to Go: *exc, its type's name and message. */
static int hand_over(uintptr_t* exc, char* type, int typelen, char* err, int errlen) {
  PyObject* e = take_exception();
  if (e == NULL) { /* not reached: every failure above sets one */
    PyErr_SetString(PyExc_SystemError, "godlpack: a callback failed without an exception");
    e = take_exception();
  }
  snprintf(type, (size_t)typelen, "%s", e ? GDL_TP_NAME(Py_TYPE(e)) : "SystemError");
  PyObject* s = e ? PyObject_Str(e) : NULL;
  const char* m = s ? PyUnicode_AsUTF8(s) : NULL;
  if (m == NULL) PyErr_Clear();
  snprintf(err, (size_t)errlen, "%s", m ? m : "<exception str() failed>");
  Py_XDECREF(s);
  *exc = (uintptr_t)e;
  return GDL_ERR_PYEXC;
}

/* A callback's result as Go's value of kind k (a string copied, for Go). */
static int result_value(char k, gdl_elem e, int cls, PyObject* obj, gdl_value* v, const gdl_where* w) {
  if (k == GDL_V_OBJ) {
    if (!gdl_is_obj(cls, obj))
      return raise_at(PyExc_TypeError, w, " must be %s, not %.200s", gdl_class_name(cls), GDL_TP_NAME(Py_TYPE(obj)));
    v->i = (int64_t)GDL_AS(gdl_obj, obj)->handle;
    if (v->i == 0) return raise_at(PyExc_TypeError, w, ": a %.200s that holds no Go value", GDL_TP_NAME(Py_TYPE(obj)));
    v->p = Py_NewRef(obj); /* keeps the handle until Go has read it (and drops this) */
    return 0;
  }
  if (gdl_value_from(k, e, obj, v, w) < 0) return -1;
  if (k != GDL_V_STR) return 0;
  char* s = malloc((size_t)v->n + 1);
  if (s == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  memcpy(s, v->s, (size_t)v->n + 1);
  v->s = s;
  return 0;
}

int gdl_cb_call(uintptr_t callable, const char* fn, const char* sig, int nin, const gdl_value* in, const char* rsig,
                const gdl_elem* relem, int nout, gdl_value* out, uintptr_t* exc, char* type, int typelen, char* err,
                int errlen) {
  *exc = 0;
  for (int i = 0; i < nout; i++) out[i].s = NULL;
  if (!may_enter()) {
    for (int i = 0; i < nin; i++) { /* objects not made: their handles */
      if (sig[i] == GDL_V_OBJ) gdlpyDropHandle((uintptr_t)in[i].i);
    }
    snprintf(err, (size_t)errlen, "%s(): Python is shutting down: a Go func cannot call its Python callable", fn);
    return GDL_ERR_RUNTIME;
  }
  PyGILState_STATE g = PyGILState_Ensure();
  PyObject* args[GDL_MAX_PARAMS + 1] = {NULL}; /* [0] free: PY_VECTORCALL_ARGUMENTS_OFFSET */
  PyObject* res = NULL;
  int made = 0;
  for (; made < nin; made++) {
    args[made + 1] = value_obj(sig[made], &in[made]);
    if (args[made + 1] == NULL) break;
  }
  if (made == nin) res = PyObject_Vectorcall((PyObject*)callable, args + 1, (size_t)nin | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
  for (int i = made + 1; i < nin; i++) { /* after a failure: objects not made */
    if (sig[i] == GDL_V_OBJ) gdlpyDropHandle((uintptr_t)in[i].i);
  }
  for (int i = 0; i < made; i++) Py_DECREF(args[i + 1]);
  int r = 0;
  if (res == NULL) {
    r = hand_over(exc, type, typelen, err, errlen);
  } else if (nout > 1 && (!PyTuple_Check(res) || PyTuple_GET_SIZE(res) != nout)) {
    PyErr_Format(PyExc_TypeError, "%s() callback must return a tuple of %d values, not %.200s", fn, nout,
                 GDL_TP_NAME(Py_TYPE(res)));
    r = hand_over(exc, type, typelen, err, errlen);
  } else {
    for (int i = 0; i < nout && r == 0; i++) {
      gdl_where w = {fn, i + 1, 1, -1, NULL, 0};
      PyObject* o = nout == 1 ? res : PyTuple_GET_ITEM(res, i);
      if (result_value(rsig[i], relem[i], (int)out[i].n, o, &out[i], &w) < 0) {
        for (int j = 0; j < i; j++) {
          if (rsig[j] == GDL_V_STR) free((void*)out[j].s);
          if (rsig[j] == GDL_V_OBJ) Py_DECREF((PyObject*)out[j].p);
        }
        r = hand_over(exc, type, typelen, err, errlen);
      }
    }
  }
  Py_XDECREF(res);
  PyGILState_Release(g);
  return r;
}

void* gdl_bytes_new(const char* data, int64_t n) {
  PyObject* b = PyBytes_FromStringAndSize(data, (Py_ssize_t)n);
  if (b == NULL) PyErr_Clear(); /* Go reports it as the function's error */
  return b;
}

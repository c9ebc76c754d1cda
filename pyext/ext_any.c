/* Python value trees for Go's any, []any and map[string]any (ext_any.h,
 * anyconv.go). Why one flat block: an argument is walked once, here, with
 * the GIL, into nodes in prefix order and a copy of every string's bytes,
 * so that Go decodes it with no call back into C and no Python object kept
 * (Go may run without the GIL, the caller's containers may change); a result
 * is the same block built by Go, one malloc, turned into objects here. Each
 * list and dict is walked through a private copy of its items (a tuple, the
 * dict's items list), as gdl_list_arg does. Nesting is limited to
 * GDL_ANY_DEPTH containers, so a list that contains itself is a ValueError,
 * never a crash or a hang. */
#include "ext_any.h"

#include <stdarg.h>
#include <string.h>

typedef struct {
  gdl_node* nodes;
  int64_t n, cap;
  char* text;
  int64_t tn, tcap;
  const char* fn;
  int pos;
} tree;

/* Where a value lies in the argument: an item of a list (item >= 0) or the
 * value of a dict's key, below up. */
typedef struct frame {
  const struct frame* up;
  Py_ssize_t item;
  PyObject* key;
} frame;

/* "f() argument 2 item 3 key 'x'": the argument and f's path. */
static PyObject* path_str(const tree* t, const frame* f) {
  const frame* fs[GDL_ANY_DEPTH + 2];
  int k = 0;
  for (; f != NULL && k < GDL_ANY_DEPTH + 2; f = f->up) fs[k++] = f;
  PyObject* s = PyUnicode_FromFormat("%s() argument %d", t->fn, t->pos);
  for (int j = k - 1; s != NULL && j >= 0; j--) {
    PyObject* next = fs[j]->key != NULL ? PyUnicode_FromFormat("%U key %R", s, fs[j]->key)
                                        : PyUnicode_FromFormat("%U item %zd", s, fs[j]->item);
    Py_DECREF(s);
    s = next;
  }
  return s;
}

/* Raises type as f's path, ": ", then fmt's words. */
static int fail(const tree* t, const frame* f, PyObject* type, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  PyObject* tail = PyUnicode_FromFormatV(fmt, ap);
  va_end(ap);
  PyObject* head = tail ? path_str(t, f) : NULL;
  if (head != NULL) PyErr_Format(type, "%U: %U", head, tail);
  Py_XDECREF(head);
  Py_XDECREF(tail);
  return -1;
}

/* A new node (zeroed): its index, or -1 with MemoryError. */
static int64_t add(tree* t) {
  if (t->n == t->cap) {
    int64_t cap = t->cap ? 2 * t->cap : 16;
    gdl_node* p = realloc(t->nodes, (size_t)cap * sizeof *p);
    if (p == NULL) {
      PyErr_NoMemory();
      return -1;
    }
    t->nodes = p;
    t->cap = cap;
  }
  memset(&t->nodes[t->n], 0, sizeof t->nodes[0]);
  return t->n++;
}

/* Copies len bytes (and a NUL when nul) into the text: node at's i, n. */
static int add_text(tree* t, int64_t at, const char* s, Py_ssize_t len, int nul) {
  int64_t need = t->tn + len + nul;
  if (need > t->tcap) {
    int64_t cap = t->tcap ? t->tcap : 256;
    while (cap < need) cap *= 2;
    char* p = realloc(t->text, (size_t)cap);
    if (p == NULL) {
      PyErr_NoMemory();
      return -1;
    }
    t->text = p;
    t->tcap = cap;
  }
  if (len > 0) memcpy(t->text + t->tn, s, (size_t)len);
  if (nul) t->text[t->tn + len] = '\0';
  t->nodes[at].i = t->tn;
  t->nodes[at].n = len;
  t->tn = need;
  return 0;
}

static int walk(tree* t, PyObject* obj, int depth, const frame* f, int strkeys);

/* A str's UTF-8 (a lone surrogate has none: ValueError). */
static int str_node(tree* t, int64_t at, PyObject* obj, const frame* f) {
  Py_ssize_t len;
  const char* s = PyUnicode_AsUTF8AndSize(obj, &len);
  if (s == NULL) {
    if (!PyErr_ExceptionMatches(PyExc_UnicodeError)) return -1;
    PyErr_Clear();
    return fail(t, f, PyExc_ValueError, "a str that is not valid Unicode (a lone surrogate) has no UTF-8 for Go");
  }
  t->nodes[at].kind = GDL_V_STR;
  return add_text(t, at, s, len, 0);
}

static int int_node(tree* t, int64_t at, PyObject* obj) {
  int overflow;
  long long x = PyLong_AsLongLongAndOverflow(obj, &overflow);
  if (x == -1 && !overflow && PyErr_Occurred()) return -1;
  if (!overflow) {
    t->nodes[at].kind = GDL_V_INT;
    t->nodes[at].i = x;
    return 0;
  }
  PyObject* hex = PyNumber_ToBase(obj, 16); /* "-0x1f": math/big reads it (base 0) */
  if (hex == NULL) return -1;
  Py_ssize_t len;
  const char* s = PyUnicode_AsUTF8AndSize(hex, &len);
  int r = s == NULL ? -1 : add_text(t, at, s, len, 1);
  Py_DECREF(hex);
  t->nodes[at].kind = GDL_V_BIGINT;
  return r;
}

static int too_deep(const tree* t) {
  PyErr_Format(PyExc_ValueError,
               "%s() argument %d: nested deeper than %d lists and dicts (does a container contain itself?)", t->fn,
               t->pos, GDL_ANY_DEPTH);
  return -1;
}

static int list_node(tree* t, int64_t at, PyObject* obj, int depth, const frame* f) {
  if (depth >= GDL_ANY_DEPTH) return too_deep(t);
  PyObject* items = PySequence_Tuple(obj); /* a private copy: it holds the items while they are walked */
  if (items == NULL) return -1;
  Py_ssize_t n = PyTuple_GET_SIZE(items);
  t->nodes[at].kind = GDL_V_LIST;
  t->nodes[at].i = n;
  for (Py_ssize_t k = 0; k < n; k++) {
    frame c = {f, k, NULL};
    if (walk(t, PyTuple_GET_ITEM(items, k), depth + 1, &c, 0) < 0) {
      Py_DECREF(items);
      return -1;
    }
  }
  Py_DECREF(items);
  return 0;
}

/* Whether a key can be a Go map key (any's dict keys): None, bool, int in
 * int64, float, str, bytes. */
static int key_ok(tree* t, PyObject* key, const frame* kf, int strkeys) {
  if (strkeys && !PyUnicode_Check(key))
    return fail(t, kf, PyExc_TypeError, "a key of type %.200s, where the parameter (map[string]any) takes str keys",
                GDL_TP_NAME(Py_TYPE(key)));
  if (key == Py_None || PyBool_Check(key) || PyFloat_Check(key) || PyUnicode_Check(key) || PyBytes_Check(key))
    return 0;
  if (PyLong_Check(key)) {
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(key, &overflow);
    if (x == -1 && !overflow && PyErr_Occurred()) return -1;
    if (!overflow) return 0;
    return fail(t, kf, PyExc_TypeError, "an int key beyond int64 cannot be a Go map key");
  }
  return fail(t, kf, PyExc_TypeError,
              "a key of type %.200s cannot be a Go map key (None, bool, int, float, str or bytes can)",
              GDL_TP_NAME(Py_TYPE(key)));
}

/* A bytes key and a str key of the same UTF-8 are one Go map key (a string):
 * refused, never one of them lost. */
static int same_keys(tree* t, PyObject* pairs, Py_ssize_t n, const frame* f) {
  PyObject* strs = PySet_New(NULL);
  if (strs == NULL) return -1;
  int r = 0;
  for (Py_ssize_t k = 0; r == 0 && k < n; k++) {
    PyObject* key = PyTuple_GET_ITEM(PyList_GET_ITEM(pairs, k), 0);
    if (PyUnicode_Check(key)) r = PySet_Add(strs, key);
  }
  for (Py_ssize_t k = 0; r == 0 && k < n; k++) {
    PyObject* key = PyTuple_GET_ITEM(PyList_GET_ITEM(pairs, k), 0);
    if (!PyBytes_Check(key)) continue;
    PyObject* u = PyUnicode_DecodeUTF8(PyBytes_AsString(key), PyBytes_Size(key), "strict");
    if (u == NULL) { /* not UTF-8: no str has its bytes */
      PyErr_Clear();
      continue;
    }
    int has = PySet_Contains(strs, u);
    if (has != 0) {
      frame kf = {f, -1, key};
      r = has < 0 ? -1 : fail(t, &kf, PyExc_ValueError, "the same Go map key (a string) as the key %R", u);
    }
    Py_DECREF(u);
  }
  Py_DECREF(strs);
  return r;
}

static int dict_node(tree* t, int64_t at, PyObject* obj, int depth, const frame* f, int strkeys) {
  if (depth >= GDL_ANY_DEPTH) return too_deep(t);
  PyObject* pairs = PyDict_Items(obj); /* a private list of (key, value) tuples */
  if (pairs == NULL) return -1;
  Py_ssize_t n = PyList_GET_SIZE(pairs);
  int allstr = 1, bytes = 0, r = 0;
  t->nodes[at].kind = GDL_V_DICT;
  t->nodes[at].i = n;
  for (Py_ssize_t k = 0; r == 0 && k < n; k++) {
    PyObject* kv = PyList_GET_ITEM(pairs, k);
    PyObject* key = PyTuple_GET_ITEM(kv, 0);
    frame kf = {f, -1, key};
    allstr = allstr && PyUnicode_Check(key);
    bytes = bytes || PyBytes_Check(key);
    r = key_ok(t, key, &kf, strkeys);
    if (r == 0) r = walk(t, key, depth + 1, &kf, 0);
    if (r == 0) r = walk(t, PyTuple_GET_ITEM(kv, 1), depth + 1, &kf, 0);
  }
  if (r == 0 && bytes && !allstr) r = same_keys(t, pairs, n, f);
  Py_DECREF(pairs);
  t->nodes[at].n = allstr;
  return r;
}

/* Appends obj's nodes: its own, then its items' (f: where it lies). */
static int walk(tree* t, PyObject* obj, int depth, const frame* f, int strkeys) {
  int64_t at = add(t);
  if (at < 0) return -1;
  gdl_node* nd = &t->nodes[at]; /* valid until the next add */
  if (obj == Py_None) {
    nd->kind = GDL_V_NONE;
  } else if (PyBool_Check(obj)) {
    nd->kind = GDL_V_BOOL;
    nd->i = obj == Py_True;
  } else if (PyLong_Check(obj)) {
    return int_node(t, at, obj);
  } else if (PyFloat_Check(obj)) {
    nd->kind = GDL_V_FLOAT;
    nd->f = PyFloat_AsDouble(obj);
  } else if (PyComplex_Check(obj)) {
    double im = PyComplex_ImagAsDouble(obj);
    nd->kind = GDL_V_COMPLEX;
    nd->f = PyComplex_RealAsDouble(obj);
    memcpy(&nd->n, &im, sizeof im);
  } else if (PyUnicode_Check(obj)) {
    return str_node(t, at, obj, f);
  } else if (PyBytes_Check(obj)) {
    nd->kind = GDL_V_BYTES;
    return add_text(t, at, PyBytes_AsString(obj), PyBytes_Size(obj), 0);
  } else if (PyByteArray_Check(obj)) {
    nd->kind = GDL_V_BYTES;
    return add_text(t, at, PyByteArray_AsString(obj), PyByteArray_Size(obj), 0);
  } else if (PyList_Check(obj) || PyTuple_Check(obj)) {
    return list_node(t, at, obj, depth, f);
  } else if (PyDict_Check(obj)) {
    return dict_node(t, at, obj, depth, f, strkeys);
  } else {
    return fail(t, f, PyExc_TypeError, "unsupported type %.200s", GDL_TP_NAME(Py_TYPE(obj)));
  }
  return 0;
}

static void free_block(PyObject* capsule) { free(PyCapsule_GetPointer(capsule, "godlpack.any")); }

int gdl_any_arg(gdl_elem e, PyObject* obj, gdl_value* v, PyObject** held, const char* fn, int pos) {
  if (e.kind == GDL_V_LIST && !PyList_Check(obj) && !PyTuple_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "%s() argument %d must be list or tuple, not %.200s", fn, pos,
                 GDL_TP_NAME(Py_TYPE(obj)));
    return -1;
  }
  if (e.kind == GDL_V_DICT && !PyDict_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "%s() argument %d must be dict, not %.200s", fn, pos, GDL_TP_NAME(Py_TYPE(obj)));
    return -1;
  }
  tree t = {NULL, 0, 0, NULL, 0, 0, fn, pos};
  int r = walk(&t, obj, 0, NULL, e.kind == GDL_V_DICT);
  size_t nodes = (size_t)t.n * sizeof(gdl_node);
  char* block = r < 0 ? NULL : malloc(nodes + (size_t)t.tn + 1);
  if (r == 0 && block == NULL) {
    PyErr_NoMemory();
    r = -1;
  }
  if (block != NULL) {
    memcpy(block, t.nodes, nodes);
    if (t.tn > 0) memcpy(block + nodes, t.text, (size_t)t.tn);
  }
  free(t.nodes);
  free(t.text);
  if (r < 0) {
    free(block);
    return -1;
  }
  PyObject* c = PyCapsule_New(block, "godlpack.any", free_block);
  if (c == NULL) {
    free(block);
    return -1;
  }
  v->s = block;
  v->n = t.n;
  *held = c;
  return 0;
}

/* The value of node *k of n and its items (*k moves past them). */
static PyObject* build(const gdl_node* nodes, int64_t n, const char* text, int64_t* k, int depth) {
  if (*k >= n || depth > GDL_ANY_DEPTH) {
    PyErr_SetString(PyExc_SystemError, "godlpack: a malformed any result");
    return NULL;
  }
  const gdl_node* nd = &nodes[(*k)++];
  switch (nd->kind) {
    case GDL_V_NONE: Py_RETURN_NONE;
    case GDL_V_BOOL: return PyBool_FromLong((long)nd->i);
    case GDL_V_INT: return PyLong_FromLongLong(nd->i);
    case GDL_V_UINT: return PyLong_FromUnsignedLongLong((unsigned long long)nd->i);
    case GDL_V_FLOAT: return PyFloat_FromDouble(nd->f);
    case GDL_V_COMPLEX: {
      double im;
      memcpy(&im, &nd->n, sizeof im);
      return PyComplex_FromDoubles(nd->f, im);
    }
    case GDL_V_STR: return PyUnicode_DecodeUTF8(text + nd->i, (Py_ssize_t)nd->n, "strict"); /* Go checked it */
    case GDL_V_BYTES: return PyBytes_FromStringAndSize(text + nd->i, (Py_ssize_t)nd->n);
    case GDL_V_BIGINT: return PyLong_FromString(text + nd->i, NULL, 16);
    case GDL_V_LIST: {
      PyObject* l = PyList_New((Py_ssize_t)nd->i);
      for (int64_t j = 0; l != NULL && j < nd->i; j++) {
        PyObject* x = build(nodes, n, text, k, depth + 1);
        if (x == NULL) Py_CLEAR(l);
        else PyList_SET_ITEM(l, (Py_ssize_t)j, x);
      }
      return l;
    }
    case GDL_V_DICT: {
      PyObject* d = PyDict_New();
      for (int64_t j = 0; d != NULL && j < nd->i; j++) {
        PyObject* key = build(nodes, n, text, k, depth + 1);
        PyObject* val = key ? build(nodes, n, text, k, depth + 1) : NULL;
        if (val == NULL || PyDict_SetItem(d, key, val) < 0) Py_CLEAR(d);
        Py_XDECREF(key);
        Py_XDECREF(val);
      }
      return d;
    }
  }
  PyErr_SetString(PyExc_SystemError, "godlpack: a malformed any result");
  return NULL;
}

PyObject* gdl_any_result(gdl_value* v) {
  const gdl_node* nodes = (const gdl_node*)v->s;
  int64_t k = 0;
  PyObject* r = build(nodes, v->n, (const char*)(nodes + v->n), &k, 0);
  gdl_any_drop(v);
  return r;
}

void gdl_any_drop(gdl_value* v) {
  free((void*)v->s);
  v->s = NULL;
}

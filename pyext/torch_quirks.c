/* PyTorch's DLPack export, and what godlpack checks around it.
 *
 * PyTorch's C exchange table (torch.Tensor.__dlpack_c_exchange_api__;
 * ManagedTensorFromPyObjectNoSync -> at::toDLPackImpl, as of PyTorch 2.10 to
 * 2.15) exports the tensor's storage as is: it does not refuse what
 * torch.Tensor.__dlpack__ refuses (torch/_tensor.py: requires_grad, the
 * conjugate bit, non-strided layouts), and both ignore the negative bit.
 * Measured with PyTorch 2.15.0:
 *   - conjugate bit (complex only; x.conj()): exported unconjugated, wrong values;
 *   - negative bit (any dtype but bool; x.conj().imag, torch._neg_view):
 *     exported with the wrong sign, by the table and by __dlpack__;
 *   - requires_grad: exported; __dlpack__ raises BufferError;
 *   - sparse, mkldnn, quantized, bit types, meta: RuntimeError from the table
 *     (BufferError from __dlpack__).
 * So after a table export godlpack asks is_neg() (not for bool),
 * requires_grad (not for integer types, which cannot require grad) and
 * is_conj() (complex only), calling torch's C functions directly; a failed
 * table call is retried through __dlpack__, whose error is the one raised. */
#include "torch_quirks.h"

static PyObject *s_is_neg, *s_is_conj, *s_requires_grad, *s_torch_function, *disabled_impl;

static int query_init(PyTypeObject* tp, PyObject* name, int call, gdl_query* q) {
  memset(q, 0, sizeof *q);
  q->name = name;
  q->call = call;
  PyObject* d = _PyType_Lookup(tp, name); /* borrowed */
  if (d == NULL) return PyErr_Occurred() ? -1 : 0;
  q->descr = Py_NewRef(d);
  if (call && Py_IS_TYPE(d, &PyMethodDescr_Type)) {
    PyMethodDef* ml = ((PyMethodDescrObject*)d)->d_method;
    if ((ml->ml_flags & ~METH_COEXIST) == METH_NOARGS) q->method = ml->ml_meth;
  } else if (!call && Py_IS_TYPE(d, &PyGetSetDescr_Type)) {
    PyGetSetDef* gs = ((PyGetSetDescrObject*)d)->d_getset;
    q->get = gs->get;
    q->closure = gs->closure;
  }
  return 0;
}

/* 1 true, 0 false, -1 error set. */
static int ask(PyObject* obj, const gdl_query* q) {
  PyObject* r;
  if (q->method != NULL) {
    r = q->method(obj, NULL);
  } else if (q->get != NULL) {
    r = q->get(obj, q->closure);
  } else if (q->call) {
    r = PyObject_CallMethodNoArgs(obj, q->name);
  } else {
    r = PyObject_GetAttr(obj, q->name);
  }
  if (r == NULL) return -1;
  int v = r == Py_True ? 1 : r == Py_False ? 0 : PyObject_IsTrue(r);
  Py_DECREF(r);
  return v;
}

void gdl_torch_quirks_clear(gdl_torch_quirks* q) {
  Py_CLEAR(q->is_neg.descr);
  Py_CLEAR(q->is_conj.descr);
  Py_CLEAR(q->requires_grad.descr);
  q->active = 0;
}

static int names_init(void) {
  if (s_is_neg != NULL) return 0;
  s_is_neg = PyUnicode_InternFromString("is_neg");
  s_is_conj = PyUnicode_InternFromString("is_conj");
  s_requires_grad = PyUnicode_InternFromString("requires_grad");
  s_torch_function = PyUnicode_InternFromString("__torch_function__");
  return s_is_neg && s_is_conj && s_requires_grad && s_torch_function ? 0 : -1;
}

int gdl_torch_quirks_init(PyTypeObject* tp, gdl_torch_quirks* q) {
  memset(q, 0, sizeof *q);
  if (names_init() != 0) return -1;
  if (query_init(tp, s_is_neg, 1, &q->is_neg) != 0 || query_init(tp, s_is_conj, 1, &q->is_conj) != 0 ||
      query_init(tp, s_requires_grad, 0, &q->requires_grad) != 0) {
    gdl_torch_quirks_clear(q);
    return -1;
  }
  /* Duck-typed: a tensor type that can carry PyTorch's negative and conjugate bits. */
  q->active = q->is_neg.descr != NULL && q->is_conj.descr != NULL;
  if (!q->active) gdl_torch_quirks_clear(q);
  return 0;
}

int gdl_torch_function_inherited(PyTypeObject* tp, Py_ssize_t table_at) {
  if (names_init() != 0) return -1;
  PyObject* mro = tp->tp_mro;
  if (mro == NULL) return 1;
  for (Py_ssize_t i = 0; i < table_at && i < PyTuple_GET_SIZE(mro); i++) {
    PyObject* dict = ((PyTypeObject*)PyTuple_GET_ITEM(mro, i))->tp_dict;
    PyObject* f = dict ? PyDict_GetItemWithError(dict, s_torch_function) : NULL; /* borrowed */
    if (f == NULL) {
      if (PyErr_Occurred()) return -1;
      continue;
    }
    /* torch._C._disabled_torch_function_impl turns the override machinery
     * off (wrapper subclasses, nn.Parameter): torch's own export runs. */
    if (disabled_impl == NULL) {
      PyObject* mod = PyImport_ImportModule("torch._C");
      disabled_impl = mod ? PyObject_GetAttrString(mod, "_disabled_torch_function_impl") : NULL;
      Py_XDECREF(mod);
      if (disabled_impl == NULL) {
        PyErr_Clear();
        return 0;
      }
    }
    return f == disabled_impl;
  }
  return 1;
}

static int refuse_neg(void) {
  PyErr_SetString(PyExc_BufferError,
                  "the tensor has PyTorch's negative bit set, which DLPack cannot carry (PyTorch would "
                  "export it with the wrong sign); call .resolve_neg() first");
  return -1;
}

int gdl_torch_table_check(PyObject* obj, const gdl_torch_quirks* q, DLDataType dt) {
  if (dt.code == kDLBool) return 1; /* no negative bit, no gradient, no conjugate */
  int neg = ask(obj, &q->is_neg);
  if (neg != 0) {
    if (neg > 0) return refuse_neg();
    PyErr_Clear(); /* an object that cannot answer: __dlpack__ decides */
    return 0;
  }
  if (dt.code == kDLInt || dt.code == kDLUInt) return 1; /* integers cannot require grad */
  if (q->requires_grad.descr != NULL) {
    int grad = ask(obj, &q->requires_grad);
    if (grad != 0) { /* __dlpack__ refuses it (BufferError) */
      if (grad < 0) PyErr_Clear();
      return 0;
    }
  }
  if (dt.code == kDLComplex) {
    int conj = ask(obj, &q->is_conj);
    if (conj != 0) {
      if (conj < 0) PyErr_Clear();
      return 0;
    }
  }
  return 1;
}

int gdl_torch_dlpack_check(PyObject* obj, const gdl_torch_quirks* q) {
  int neg = ask(obj, &q->is_neg);
  if (neg > 0) return refuse_neg();
  if (neg < 0) PyErr_Clear(); /* cannot answer: __dlpack__ decides */
  return 0;
}

/* PyTorch's DLPack export, and what godlpack checks around it.
 *
 * Upstream: the table is TorchDLPackExchangeAPI (torch._C._dlpack_exchange_api),
 * whose export is at::toDLPackImpl in aten/src/ATen/DLConvertor.cpp
 * (https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/DLConvertor.cpp);
 * __dlpack__'s refusals are in torch/_tensor.py
 * (https://github.com/pytorch/pytorch/blob/main/torch/_tensor.py).
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
 * So after a table export godlpack checks the negative bit (not for bool),
 * requires_grad (not for integer types, which cannot require grad) and the
 * conjugate bit (complex only); a failed table call is retried through
 * __dlpack__, whose error is the one raised.
 *
 * requires_grad is asked through torch's C getter (about 30 ns). is_neg() and
 * is_conj() cost 70-100 ns each (the binding releases the GIL), more than
 * the whole table call, so the two bits are read instead from the key set of
 * the tensor the export holds: at::toDLPackImpl's manager_ctx is
 * struct { at::Tensor handle; DLManagedTensorVersioned tensor; }, checked on
 * every call by manager_ctx + 8 == the managed tensor, and handle points at
 * the c10::TensorImpl whose key set has the Negative and Conjugate bits. Where
 * that word and those bits lie is not assumed: it is measured once per
 * process by toggling the bits of one tensor with torch._C._set_neg/_set_conj
 * (exactly one bit of one word must change each), then verified on ~30 probe
 * tensors (keyset_src below) against is_neg()/is_conj(). Any
 * doubt (no setters, another layout, a mismatch) and the methods are called. */
#include "torch_quirks.h" /* Python.h: the C library headers, __GLIBC__ */
#if defined(__GLIBC__)
#include <malloc.h> /* malloc_usable_size */
#endif

static PyObject *s_is_neg, *s_is_conj, *s_requires_grad, *s_torch_function, *disabled_impl;

static int query_init(PyTypeObject* tp, PyObject* name, int call, gdl_query* q) {
  memset(q, 0, sizeof *q);
  q->name = name;
  q->call = call;
#ifdef Py_LIMITED_API
  /* The class attribute (a descriptor of a C type returns itself on the
   * class); its C function is not readable: called through q->name. */
  PyObject* d = PyObject_GetAttr((PyObject*)tp, name);
  if (d == NULL) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
    PyErr_Clear();
    return 0;
  }
  q->descr = d;
  return 0;
#else
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
#endif
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

/* Made by the layer's init (gdl_import_table_init), before any thread can
 * call from_dlpack; idempotent. */
int gdl_torch_names_init(void) {
  if (s_is_neg != NULL) return 0;
  s_is_neg = PyUnicode_InternFromString("is_neg");
  s_is_conj = PyUnicode_InternFromString("is_conj");
  s_requires_grad = PyUnicode_InternFromString("requires_grad");
  s_torch_function = PyUnicode_InternFromString("__torch_function__");
  return s_is_neg && s_is_conj && s_requires_grad && s_torch_function ? 0 : -1;
}

int gdl_torch_quirks_init(PyTypeObject* tp, gdl_torch_quirks* q) {
  memset(q, 0, sizeof *q);
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

/* torch._C._disabled_torch_function_impl (borrowed, kept for the process),
 * or NULL when torch cannot give it (no exception set). Threads that look it
 * up at once publish one: the others drop theirs. */
static PyObject* disabled_torch_function(void) {
  PyObject* d = __atomic_load_n(&disabled_impl, __ATOMIC_ACQUIRE);
  if (d != NULL) return d;
  PyObject* mod = PyImport_ImportModule("torch._C");
  d = mod ? PyObject_GetAttrString(mod, "_disabled_torch_function_impl") : NULL;
  Py_XDECREF(mod);
  if (d == NULL) {
    PyErr_Clear();
    return NULL;
  }
  PyObject* none = NULL;
  if (__atomic_compare_exchange_n(&disabled_impl, &none, d, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return d;
  Py_DECREF(d); /* another thread's is kept (the same object) */
  return none;
}

int gdl_torch_function_inherited(PyTypeObject* tp, Py_ssize_t table_at) {
  PyObject* mro = gdl_type_mro(tp);
  if (mro == NULL) return PyErr_Occurred() ? -1 : 1;
  int r = 1;
  for (Py_ssize_t i = 0; i < table_at && i < PyTuple_GET_SIZE(mro); i++) {
    PyObject* f = NULL; /* strong: another thread may replace the class attribute */
#ifdef Py_LIMITED_API
    if (gdl_type_own_attr((PyTypeObject*)PyTuple_GET_ITEM(mro, i), s_torch_function, &f) < 0) {
#else
    PyObject* dict = ((PyTypeObject*)PyTuple_GET_ITEM(mro, i))->tp_dict;
    if (dict != NULL && PyDict_GetItemRef(dict, s_torch_function, &f) < 0) {
#endif
      r = -1;
      break;
    }
    if (f == NULL) continue;
    /* torch._C._disabled_torch_function_impl turns the override machinery
     * off (wrapper subclasses, nn.Parameter): torch's own export runs. */
    PyObject* disabled = disabled_torch_function();
    r = disabled != NULL && f == disabled;
    Py_DECREF(f);
    break;
  }
  Py_DECREF(mro);
  return r;
}

/* --- the key-set read ------------------------------------------------------ */
#define KEYSET_SCAN 64 /* words of a TensorImpl looked at (~23 in PyTorch 2.15) */

/* The calibration, measured once per process. state is read and written
 * with atomics: KEYSET_MEASURING is claimed by compare-and-swap from 0 by
 * the one thread that measures; the fields are stored before state becomes
 * 1 (release), and read only after it is seen 1 (acquire). Threads that find
 * the measurement under way call the methods meanwhile, so none waits on
 * another (the measurement runs Python code, which may release the GIL). */
enum { KEYSET_MEASURING = 2 };
typedef struct {
  int state; /* 0 not measured yet, 1 usable, -1 not usable, KEYSET_MEASURING */
  const DLPackExchangeAPI* api; /* the table it was measured with */
  size_t word;
  uint64_t neg, conj;
} keyset_t;
static keyset_t keyset;

/* The TensorImpl an export of PyTorch's table holds, NULL if the export is
 * not laid out as at::toDLPackImpl makes it. */
static const uint64_t* export_impl(const DLManagedTensorVersioned* m) {
  const char* ctx = m->manager_ctx;
  if (ctx == NULL || (const char*)m != ctx + sizeof(void*)) return NULL;
  return *(const uint64_t* const*)ctx;
}

/* Up to KEYSET_SCAN words of the heap block at impl (its usable size bounds the read). */
static size_t impl_words(const uint64_t* impl, uint64_t* w) {
#if defined(__GLIBC__)
  size_t n = malloc_usable_size((void*)impl) / sizeof(uint64_t);
#else
  size_t n = 0; /* the block size is unknown: no read, the methods are called */
#endif
  if (n > KEYSET_SCAN) n = KEYSET_SCAN;
  memcpy(w, impl, n * sizeof(uint64_t));
  return n;
}

/* The words of t's own TensorImpl (t._cdata is its address). */
static size_t source_words(PyObject* t, uint64_t* w) {
  PyObject* c = PyObject_GetAttrString(t, "_cdata");
  void* impl = c ? PyLong_AsVoidPtr(c) : NULL;
  Py_XDECREF(c);
  return impl ? impl_words(impl, w) : 0;
}

/* The one bit that differs between a and b, in *word; 0 unless exactly one does. */
static uint64_t one_bit(const uint64_t* a, size_t na, const uint64_t* b, size_t nb, size_t* word) {
  uint64_t bit = 0;
  if (na != nb) return 0;
  for (size_t i = 0; i < na; i++) {
    uint64_t d = a[i] ^ b[i];
    if (d == 0) continue;
    if (bit != 0 || (d & (d - 1)) != 0) return 0;
    bit = d;
    *word = i;
  }
  return bit;
}

/* Toggles a bit of t with setter (torch._C._set_neg or _set_conj) and
 * returns it (0: not exactly one bit of one word changed). */
static uint64_t toggled_bit(PyObject* t, PyObject* setter, size_t* word) {
  uint64_t a[KEYSET_SCAN], b[KEYSET_SCAN];
  size_t na = source_words(t, a);
  PyObject* r = PyObject_CallFunctionObjArgs(setter, t, Py_True, NULL);
  Py_XDECREF(r);
  size_t nb = r ? source_words(t, b) : 0;
  r = PyObject_CallFunctionObjArgs(setter, t, Py_False, NULL);
  Py_XDECREF(r);
  return r && na > 0 ? one_bit(a, na, b, nb, word) : 0;
}

/* Whether the read agrees with is_neg()/is_conj() on probe p (exported with api). */
static int probe_agrees(const keyset_t* ks, const DLPackExchangeAPI* api, PyObject* p) {
  DLManagedTensorVersioned* m = NULL;
  if (api->managed_tensor_from_py_object_no_sync(p, &m) != 0 || m == NULL) return 0;
  const uint64_t* impl = export_impl(m);
  uint64_t w[KEYSET_SCAN];
  size_t n = impl ? impl_words(impl, w) : 0;
  if (m->deleter) m->deleter(m);
  if (n <= ks->word) return 0;
  PyObject* neg = PyObject_CallMethod(p, "is_neg", NULL);
  PyObject* conj = PyObject_CallMethod(p, "is_conj", NULL);
  int ok = neg && conj && (neg == Py_True) == ((w[ks->word] & ks->neg) != 0) &&
           (conj == Py_True) == ((w[ks->word] & ks->conj) != 0);
  Py_XDECREF(neg);
  Py_XDECREF(conj);
  return ok;
}

/* Tensors for calibrating the read of PyTorch's negative/conjugate bits:
 * one tensor whose bits are toggled, and probes whose bits the read must
 * reproduce. Run once per process in a fresh namespace; kept in C so that an
 * extension built on pyext never imports the godlpack package (a second Go
 * runtime). */
static const char keyset_src[] =
    "\"\"\"Tensors for calibrating godlpack's read of PyTorch's negative/conjugate bits\n"
    "(internal/cpython/exchange/torch_quirks.c): one tensor whose bits are toggled, and probes whose\n"
    "bits the read must reproduce. Used once per process, from C.\"\"\"\n"
    "\n"
    "\n"
    "def toggle():\n"
    "    \"\"\"(tensor, set_neg, set_conj): a tensor and PyTorch's in-place bit setters.\"\"\"\n"
    "    import torch\n"
    "\n"
    "    return torch.ones(2, dtype=torch.complex64), torch._C._set_neg, torch._C._set_conj\n"
    "\n"
    "\n"
    "def probes() -> list:\n"
    "    \"\"\"Tensors with and without the bits, of many dtypes, shapes and kinds.\"\"\"\n"
    "    import torch\n"
    "\n"
    "    class Sub(torch.Tensor):\n"
    "        pass\n"
    "\n"
    "    z = torch.tensor([1 + 2j, 3 - 4j, 5j])\n"
    "    f = torch.arange(6.0).reshape(2, 3)\n"
    "    out = [\n"
    "        f, f.t(), f[:, 1:], torch.zeros(0), torch.ones(()), torch.ones(4, dtype=torch.int64),\n"
    "        torch.ones(3, dtype=torch.uint8), torch.ones(3, dtype=torch.bfloat16), torch.ones(3, dtype=torch.float16),\n"
    "        z, z.conj(), z.conj().imag, z.conj().real, z.conj()[1:], torch._neg_view(z), torch._neg_view(z).conj(),\n"
    "        torch._neg_view(f), torch._neg_view(f).t(), torch._neg_view(f).detach(), torch._neg_view(f)[1],\n"
    "        torch._neg_view(torch.ones(3, dtype=torch.int32)), torch._neg_view(torch.ones(3, dtype=torch.uint8)),\n"
    "        torch._neg_view(torch.zeros(0)), torch._neg_view(torch.ones(())), torch._neg_view(f).as_subclass(Sub),\n"
    "        f.as_subclass(Sub), z.conj().as_subclass(Sub), torch.ones(3, requires_grad=True).detach(),\n"
    "        torch.ones(2, 2, dtype=torch.complex128).conj(),\n"
    "    ]\n"
    "    with torch.inference_mode():\n"
    "        out += [torch.ones(3), torch._neg_view(torch.ones(3)), torch.ones(2, dtype=torch.complex64).conj()]\n"
    "    return out\n"
    "\n";

/* Runs keyset_src; a new namespace dict, or NULL with an exception. */
static PyObject* keyset_namespace(void) {
  PyObject* ns = PyDict_New();
  if (ns == NULL || PyDict_SetItemString(ns, "__builtins__", PyEval_GetBuiltins()) < 0) {
    Py_XDECREF(ns);
    return NULL;
  }
  PyObject* r = PyRun_String(keyset_src, Py_file_input, ns, ns);
  if (r == NULL) Py_CLEAR(ns);
  Py_XDECREF(r);
  return ns;
}

/* Measures into ks (state 1 usable, else -1): run by the thread that claimed the measurement. */
static void keyset_measure(const DLPackExchangeAPI* api, keyset_t* ks) {
  memset(ks, 0, sizeof *ks);
  ks->state = -1;
  ks->api = api;
  PyObject *exc_type, *exc, *tb;
  PyErr_Fetch(&exc_type, &exc, &tb);
  PyObject* mod = keyset_namespace();
  PyObject *fn_t = NULL, *fn_p = NULL;
  if (mod != NULL && PyDict_GetItemStringRef(mod, "toggle", &fn_t) >= 0) PyDict_GetItemStringRef(mod, "probes", &fn_p);
  PyObject* tog = fn_t ? PyObject_CallNoArgs(fn_t) : NULL;
  PyObject* probes = fn_p ? PyObject_CallNoArgs(fn_p) : NULL;
  if (tog && probes && PyTuple_Check(tog) && PyTuple_GET_SIZE(tog) == 3 && PyList_Check(probes)) {
    size_t wn = 0, wc = 0;
    ks->neg = toggled_bit(PyTuple_GET_ITEM(tog, 0), PyTuple_GET_ITEM(tog, 1), &wn);
    ks->conj = toggled_bit(PyTuple_GET_ITEM(tog, 0), PyTuple_GET_ITEM(tog, 2), &wc);
    ks->word = wn;
    int ok = ks->neg != 0 && ks->conj != 0 && ks->neg != ks->conj && wn == wc;
    for (Py_ssize_t i = 0; ok && i < PyList_GET_SIZE(probes); i++) {
      PyObject* p = PyList_GetItemRef(probes, i); /* strong: the list is Python's to change */
      ok = p != NULL && probe_agrees(ks, api, p);
      Py_XDECREF(p);
    }
    if (ok) ks->state = 1;
  }
  Py_XDECREF(probes);
  Py_XDECREF(tog);
  Py_XDECREF(fn_p);
  Py_XDECREF(fn_t);
  Py_XDECREF(mod);
  PyErr_Clear(); /* measuring never raises: on any doubt the methods are called */
  PyErr_Restore(exc_type, exc, tb);
}

/* The calibration's state, measuring it first if no thread has claimed it yet. */
static int keyset_state(const DLPackExchangeAPI* api) {
  int st = __atomic_load_n(&keyset.state, __ATOMIC_ACQUIRE);
  int zero = 0;
  if (st != 0 || !__atomic_compare_exchange_n(&keyset.state, &zero, KEYSET_MEASURING, 0, __ATOMIC_ACQ_REL,
                                              __ATOMIC_ACQUIRE))
    return st != 0 ? st : zero; /* measured, under way, or just claimed by another thread */
  keyset_t ks;
  keyset_measure(api, &ks);
  keyset.api = ks.api;
  keyset.word = ks.word;
  keyset.neg = ks.neg;
  keyset.conj = ks.conj;
  __atomic_store_n(&keyset.state, ks.state, __ATOMIC_RELEASE); /* publishes the fields above */
  return ks.state;
}

/* The negative and conjugate bits of the tensor m was exported from: 1 read
 * (*neg, *conj set), 0 not readable. */
static int keyset_read(const DLPackExchangeAPI* api, const DLManagedTensorVersioned* m, int* neg, int* conj) {
  if (keyset_state(api) != 1 || keyset.api != api) return 0;
  const uint64_t* impl = export_impl(m);
  if (impl == NULL) return 0;
  uint64_t k = impl[keyset.word];
  *neg = (k & keyset.neg) != 0;
  *conj = (k & keyset.conj) != 0;
  return 1;
}

/* Under way reads as -1, as a measurement that failed: the methods are called meanwhile. */
static int keyset_public_state(void) {
  int st = __atomic_load_n(&keyset.state, __ATOMIC_ACQUIRE);
  return st == KEYSET_MEASURING ? -1 : st;
}

int gdl_torch_keyset_state(void) { return keyset_public_state(); }

/* godlpack._godlpack._torch_keyset() -> 1 in use, -1 not usable, 0 not measured yet. */
PyObject* gdl_torch_keyset_py(PyObject* m, PyObject* unused) {
  (void)m;
  (void)unused;
  return PyLong_FromLong(keyset_public_state());
}

static int refuse_neg(void) {
  PyErr_SetString(PyExc_BufferError,
                  "the tensor has PyTorch's negative bit set, which DLPack cannot carry (PyTorch would "
                  "export it with the wrong sign); call .resolve_neg() first");
  return -1;
}

int gdl_torch_table_check(PyObject* obj, const gdl_torch_quirks* q, const DLPackExchangeAPI* api,
                          const DLManagedTensorVersioned* m) {
  DLDataType dt = m->dl_tensor.dtype;
  if (dt.code == kDLBool) return 1; /* no negative bit, no gradient, no conjugate */
  int neg, conj = -1;
  if (!keyset_read(api, m, &neg, &conj)) neg = ask(obj, &q->is_neg);
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
    if (conj < 0) conj = ask(obj, &q->is_conj);
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

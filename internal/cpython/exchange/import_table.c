/* DLPack 1.3 C exchange API, consumer half: from_dlpack's use of the table
 * another type offers (type(obj).__dlpack_c_exchange_api__), with PyTorch's
 * quirks (torch_quirks.c) checked on its exports. */
#include <string.h>
#include "torch_quirks.h"

/* What from_dlpack does with a type, decided once per type and version tag
 * (which changes whenever the type's or a base's attributes do). A few types
 * are cached, so alternating NumPy and torch inputs do not evict each other.
 *
 * An entry is immutable once made and counted: the cache's slot holds one
 * reference, each from_dlpack using it another. The table and the checks
 * may run Python code (or release the GIL, as PyTorch's is_neg() does), so
 * from_dlpack may run again meanwhile, in this thread or another, and evict
 * or replace the entry: its user's reference keeps it alive. cache_lock
 * guards the slots and is held for pointer work only (ftlock.h's rule): an
 * evicted entry is released after unlocking. */
typedef struct {
  int refs; /* __atomic */
  PyTypeObject* type; /* borrowed: `gone` empties the slot before the type is freed */
  PyObject* gone;     /* a weak reference to a heap type (NULL: a static type, never freed) */
  unsigned int tag;
  const DLPackExchangeAPI* api; /* the table to use, or NULL: __dlpack__ */
  int torch_checks;             /* torch.Tensor's own __dlpack__: see torch_quirks.c */
  gdl_torch_quirks torch;
  PyObject* dlpack; /* __dlpack__, a C method of a type without instance dicts, or NULL */
} type_entry;

static void entry_decref(type_entry* e) {
  if (e == NULL || __atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
  gdl_torch_quirks_clear(&e->torch);
  Py_CLEAR(e->dlpack);
  Py_CLEAR(e->gone);
  PyMem_RawFree(e);
}

#define TYPE_CACHE 8
static gdl_mutex cache_lock;
static type_entry* type_cache[TYPE_CACHE];
#ifndef Py_LIMITED_API /* the limited build caches nothing (lookup) */
static int type_cache_next;
#endif
static PyObject *s_exchange_attr, *s_dlpack_attr;

/* The callback of an entry's weak reference: its type is being freed. The
 * type of an object in use is alive, so no entry in use is released here. */
static PyObject* type_gone(PyObject* unused, PyObject* ref) {
  (void)unused;
  type_entry* dead = NULL;
  gdl_mutex_lock(&cache_lock);
  for (int i = 0; i < TYPE_CACHE && dead == NULL; i++) {
    if (type_cache[i] != NULL && type_cache[i]->gone == ref) {
      dead = type_cache[i];
      type_cache[i] = NULL;
    }
  }
  gdl_mutex_unlock(&cache_lock);
  entry_decref(dead); /* dropping references may run code that calls from_dlpack */
  Py_RETURN_NONE;
}
static PyMethodDef type_gone_def = {"_godlpack_type_gone", type_gone, METH_O, NULL};
static PyObject* type_gone_cb;

/* MRO index of the first class whose own dict defines name; PY_SSIZE_T_MAX
 * if none; -1 on error. */
static Py_ssize_t defined_at(PyObject* mro, PyObject* name) {
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); i++) {
    PyObject* v;
#ifdef Py_LIMITED_API
    int r = gdl_type_own_attr((PyTypeObject*)PyTuple_GET_ITEM(mro, i), name, &v);
#else
    PyObject* dict = ((PyTypeObject*)PyTuple_GET_ITEM(mro, i))->tp_dict;
    if (dict == NULL) continue;
    int r = PyDict_GetItemRef(dict, name, &v);
#endif
    Py_XDECREF(v);
    if (r != 0) return r > 0 ? i : -1;
  }
  return PY_SSIZE_T_MAX;
}

static const DLPackExchangeAPI* table_of(PyTypeObject* tp, int* err) {
  const DLPackExchangeAPI* api = NULL;
  PyObject* cap = PyObject_GetAttr((PyObject*)tp, s_exchange_attr);
  if (cap == NULL) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
      *err = 1;
      return NULL;
    }
    PyErr_Clear();
    return NULL;
  }
  if (PyCapsule_IsValid(cap, DLPACK_EXCHANGE_API_CAPSULE_NAME)) {
    api = PyCapsule_GetPointer(cap, DLPACK_EXCHANGE_API_CAPSULE_NAME);
    /* Only a 1.x table has the layout we know; the function must exist. */
    if (api != NULL && (api->header.version.major != 1 || api->managed_tensor_from_py_object_no_sync == NULL))
      api = NULL;
  }
  Py_DECREF(cap);
  return api;
}

/* Fills e (zeroed) for tp. The table goes with the class that defines it: a
 * subclass overriding __dlpack__ (or, for torch, __torch_function__) below
 * that class is exported through its own __dlpack__. */
static int entry_init(PyTypeObject* tp, type_entry* e) {
  int err = 0;
  e->api = table_of(tp, &err);
  if (err) return -1;
  if (e->api == NULL) {
    /* No instance can shadow a C method of such a type (NumPy's ndarray)
     * whose attribute lookup is the generic one (no __getattribute__ or
     * __getattr__): calling it directly saves the method lookup per call. */
#ifdef Py_LIMITED_API
    return 0; /* tp_dictoffset is not readable: __dlpack__ is looked up on the object */
#else
    if (tp->tp_dictoffset != 0 || tp->tp_getattro != PyObject_GenericGetAttr) return 0;
#endif
    PyObject* m = PyObject_GetAttr((PyObject*)tp, s_dlpack_attr);
    if (m == NULL) {
      if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
      PyErr_Clear(); /* no __dlpack__: from_dlpack's call says so */
      return 0;
    }
    if (Py_IS_TYPE(m, &PyMethodDescr_Type)) e->dlpack = m;
    else Py_DECREF(m);
    return 0;
  }
  PyObject* mro = gdl_type_mro(tp); /* held: another thread may give tp new bases */
  if (mro == NULL) {
    if (PyErr_Occurred()) return -1;
    e->api = NULL; /* not ready: no table is trusted */
    return 0;
  }
  Py_ssize_t table_at = defined_at(mro, s_exchange_attr), dlpack_at = defined_at(mro, s_dlpack_attr);
  int r = -1;
  if (table_at >= 0 && dlpack_at >= 0) {
    /* __dlpack__ is the table's class's or inherited by it, and reached the
     * same way: no __getattribute__/__getattr__ added below that class. */
    PyTypeObject* table_cls = table_at < PyTuple_GET_SIZE(mro) ? (PyTypeObject*)PyTuple_GET_ITEM(mro, table_at) : tp;
    int own_dlpack = dlpack_at >= table_at && GDL_SLOT(tp, tp_getattro, getattrofunc) == GDL_SLOT(table_cls, tp_getattro, getattrofunc);
    r = gdl_torch_quirks_init(tp, &e->torch);
    if (r == 0) {
      e->torch_checks = own_dlpack && e->torch.active;
      if (!own_dlpack) {
        e->api = NULL;
      } else if (e->torch.active) {
        int inherited = gdl_torch_function_inherited(tp, table_at);
        if (inherited < 0) {
          gdl_torch_quirks_clear(&e->torch);
          r = -1;
        } else if (!inherited) {
          e->api = NULL;
        }
      }
    }
  }
  Py_DECREF(mro);
  return r;
}

/* The entry for tp, a new reference (entry_decref), NULL with an error set.
 * An entry that cannot be cached (no valid version tag) is its caller's alone. */
static type_entry* lookup(PyTypeObject* tp) {
#ifdef Py_LIMITED_API
  /* No version tag to read: no cache, the entry is made for each call. */
  type_entry* own = PyMem_RawCalloc(1, sizeof *own);
  if (own == NULL) {
    PyErr_NoMemory();
    return NULL;
  }
  own->refs = 1;
  if (entry_init(tp, own) != 0) {
    entry_decref(own);
    return NULL;
  }
  return own;
#else
  unsigned long flags = __atomic_load_n(&tp->tp_flags, __ATOMIC_ACQUIRE);
  unsigned int vtag = __atomic_load_n(&tp->tp_version_tag, __ATOMIC_ACQUIRE);
  type_entry* hit = NULL;
  gdl_mutex_lock(&cache_lock);
  for (int i = 0; i < TYPE_CACHE; i++) {
    type_entry* e = type_cache[i];
    if (e != NULL && e->type == tp) {
      if ((flags & Py_TPFLAGS_VALID_VERSION_TAG) && vtag == e->tag) {
        hit = e;
        __atomic_add_fetch(&e->refs, 1, __ATOMIC_RELAXED); /* before unlocking: eviction cannot free it */
      }
      break; /* else stale: refilled below */
    }
  }
  gdl_mutex_unlock(&cache_lock);
  if (hit != NULL) return hit;
  /* The version tag is read before the attributes: a change made while they
   * are read gives a new tag, and the entry is refilled on the next call. */
#if PY_VERSION_HEX >= 0x030C0000
  PyUnstable_Type_AssignVersionTag(tp);
#else
  (void)_PyType_Lookup(tp, s_exchange_attr);
#endif
  flags = __atomic_load_n(&tp->tp_flags, __ATOMIC_ACQUIRE);
  int cacheable = (flags & Py_TPFLAGS_VALID_VERSION_TAG) != 0;
  unsigned int tag = __atomic_load_n(&tp->tp_version_tag, __ATOMIC_ACQUIRE);
  type_entry* fresh = PyMem_RawCalloc(1, sizeof *fresh);
  if (fresh == NULL) {
    PyErr_NoMemory();
    return NULL;
  }
  fresh->refs = 1; /* the caller's */
  if (entry_init(tp, fresh) != 0) {
    entry_decref(fresh);
    return NULL;
  }
  if (cacheable && (flags & Py_TPFLAGS_HEAPTYPE)) {
    fresh->gone = PyWeakref_NewRef((PyObject*)tp, type_gone_cb);
    if (fresh->gone == NULL) {
      PyErr_Clear(); /* a type without weak references: not cached */
      cacheable = 0;
    }
  }
  if (!cacheable) return fresh;
  fresh->type = tp;
  fresh->tag = tag;
  fresh->refs = 2; /* and the cache's */
  gdl_mutex_lock(&cache_lock);
  int slot = -1;
  for (int i = 0; i < TYPE_CACHE && slot < 0; i++)
    if (type_cache[i] != NULL && type_cache[i]->type == tp) slot = i;
  if (slot < 0) {
    slot = type_cache_next;
    type_cache_next = (type_cache_next + 1) % TYPE_CACHE;
  }
  type_entry* old = type_cache[slot];
  type_cache[slot] = fresh;
  gdl_mutex_unlock(&cache_lock);
  entry_decref(old); /* dropping references may run code that calls from_dlpack */
  return fresh;
#endif
}

static int skip_type(PyTypeObject* tp) { return tp == &PyCapsule_Type || tp == GDL_TENSOR_TYPE; }

/* The stream the table's export m is ready on: the producer's current work
 * stream for devices with streams (NULL there is the legacy stream, 1), else
 * 1. 0, or -1 when the table cannot say (no function, or it failed). */
static int table_stream(const type_entry* e, DLManagedTensorVersioned* m, intptr_t* stream) {
  *stream = 1;
  DLDevice d = m->dl_tensor.device;
  if (!gdl_cuda_stream_device(d.device_type)) return 0;
  void* s = NULL;
  if (e->api->current_work_stream == NULL || e->api->current_work_stream((DLDeviceType)d.device_type,
                                                                         d.device_id, &s) != 0)
    return -1;
  if (s != NULL) *stream = (intptr_t)s;
  return 0;
}

static int from_table(PyObject* obj, const type_entry* e, DLManagedTensorVersioned** out, intptr_t* stream) {
  DLManagedTensorVersioned* m = NULL;
  if (e->api->managed_tensor_from_py_object_no_sync(obj, &m) != 0) {
    /* PyTorch's table raises RuntimeError where its __dlpack__ raises
     * BufferError: __dlpack__ runs next and its error is the one seen. */
    if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_Exception)) return -1; /* KeyboardInterrupt... */
    PyErr_Clear();
    return 0;
  }
  if (m == NULL) {
    PyErr_SetString(PyExc_BufferError, "exchange API returned no tensor");
    return -1;
  }
  int ok = 1;
  if (m->version.major == 1) {
    if (e->torch_checks) ok = gdl_torch_table_check(obj, &e->torch, e->api, m);
    /* No sync was made: the data is ready on the producer's current stream.
     * A table that cannot say which gives the tensor back to __dlpack__. */
    if (ok > 0 && m->dl_tensor.device.device_type != kDLCPU && table_stream(e, m, stream) != 0) {
      ok = PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_Exception) ? -1 : 0; /* KeyboardInterrupt... */
      if (ok == 0) PyErr_Clear();
    }
    /* Other device memory (no stream we know how to wait on) goes through __dlpack__. */
    if (ok > 0 && !gdl_cpu_accessible(m->dl_tensor.device.device_type) &&
        !gdl_cuda_stream_device(m->dl_tensor.device.device_type))
      ok = 0;
  }
  if (ok <= 0) {
    if (m->deleter) m->deleter(m);
    return ok;
  }
  *out = m;
  return 1;
}

/* One type lookup for from_dlpack: with out, the type's exchange table is
 * tried (1 with *out set); either way torch's checks run where __dlpack__ is
 * torch's own. On 0, *dlpack is gdl_dlpack_method(obj). -1: error set. */
static int prepare(PyObject* obj, DLManagedTensorVersioned** out, PyObject** dlpack, intptr_t* stream) {
  *dlpack = NULL;
  PyTypeObject* tp = Py_TYPE(obj);
  if (skip_type(tp)) return 0;
  type_entry* e = lookup(tp);
  if (e == NULL) return -1;
  int r = 0;
  int table = out != NULL && e->api != NULL;
  if (table || e->torch_checks) r = table ? from_table(obj, e, out, stream) : gdl_torch_dlpack_check(obj, &e->torch);
  if (r == 0) *dlpack = Py_XNewRef(e->dlpack);
  entry_decref(e);
  return r;
}

int gdl_exchange_managed_from_object(PyObject* obj, DLManagedTensorVersioned** out, PyObject** dlpack,
                                     intptr_t* stream) {
  return prepare(obj, out, dlpack, stream);
}

int gdl_exchange_check_dlpack(PyObject* obj, PyObject** dlpack) { return prepare(obj, NULL, dlpack, NULL); }

PyObject* gdl_dlpack_method(PyObject* obj) {
  PyTypeObject* tp = Py_TYPE(obj);
  if (skip_type(tp)) return NULL;
  type_entry* e = lookup(tp);
  if (e == NULL) {
    PyErr_Clear(); /* the call by name reports it */
    return NULL;
  }
  PyObject* m = Py_XNewRef(e->dlpack);
  entry_decref(e);
  return m;
}

int gdl_import_table_init(void) {
  if (type_gone_cb != NULL) return 0;
  s_exchange_attr = PyUnicode_InternFromString("__dlpack_c_exchange_api__");
  s_dlpack_attr = PyUnicode_InternFromString("__dlpack__");
  if (s_exchange_attr == NULL || s_dlpack_attr == NULL || gdl_torch_names_init() != 0) return -1;
  type_gone_cb = PyCFunction_New(&type_gone_def, NULL); /* last: it marks the init done */
  return type_gone_cb ? 0 : -1;
}

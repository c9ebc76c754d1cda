/* Probes for the conformance checker (godlpack.conformance): a counting producer of
 * managed tensors with arbitrary field values, deleter interception for other
 * producers' tensors, capsule inspection, and deleter calls off the GIL. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "gdl.h"

/* A slot per probed managed tensor: its deleter calls are counted there. */
typedef struct {
  void* managed;
  void* orig_deleter; /* NULL for tensors we made ourselves */
  void* data;         /* our buffer, freed on the first deleter call */
  int versioned;
  int64_t calls;
} probe_slot;

#define NSLOTS 65536
static probe_slot slots[NSLOTS];
static int nslots;
static pthread_mutex_t slots_mu = PTHREAD_MUTEX_INITIALIZER;

static int slot_new(void* managed, void* orig, void* data, int versioned) {
  pthread_mutex_lock(&slots_mu);
  int i = nslots < NSLOTS ? nslots++ : -1;
  if (i >= 0) slots[i] = (probe_slot){managed, orig, data, versioned, 0};
  pthread_mutex_unlock(&slots_mu);
  return i;
}

/* Counts a call; returns the slot's state before it (calls, orig, data). */
static int64_t slot_hit(void* managed, void** orig, void** data) {
  int64_t before = -1;
  pthread_mutex_lock(&slots_mu);
  for (int i = nslots - 1; i >= 0; i--) {
    if (slots[i].managed == managed) {
      before = slots[i].calls++;
      *orig = slots[i].orig_deleter;
      *data = slots[i].data;
      break;
    }
  }
  pthread_mutex_unlock(&slots_mu);
  return before;
}

/* The deleter of our probe tensors and the trampoline for intercepted ones:
 * counts, and forwards or frees on the first call only, so a double call is
 * counted instead of crashing. No Python: safe on any thread. Both managed
 * kinds take the same path: the original deleter gets the pointer it owns. */
static void probe_delete_any(void* m) {
  void *orig, *data;
  if (slot_hit(m, &orig, &data) != 0) return;
  if (orig) {
    ((void (*)(void*))orig)(m);
  } else {
    free(data);
    free(m);
  }
}

static void probe_deleter_v(DLManagedTensorVersioned* m) { probe_delete_any(m); }
static void probe_deleter_l(DLManagedTensor* m) { probe_delete_any(m); }

static PyObject* probe_calls(PyObject* mod, PyObject* arg) {
  long i = PyLong_AsLong(arg);
  if (i == -1 && PyErr_Occurred()) return NULL;
  if (i < 0 || i >= nslots) {
    PyErr_SetString(PyExc_IndexError, "no such probe");
    return NULL;
  }
  pthread_mutex_lock(&slots_mu);
  int64_t c = slots[i].calls;
  pthread_mutex_unlock(&slots_mu);
  return PyLong_FromLongLong(c);
}

/* _probe_delete(token): calls the deleter of a probed tensor nobody deleted
 * (as the consumer that renamed its capsule must). */
static PyObject* probe_delete(PyObject* mod, PyObject* arg) {
  long i = PyLong_AsLong(arg);
  if (i == -1 && PyErr_Occurred()) return NULL;
  if (i < 0 || i >= nslots) {
    PyErr_SetString(PyExc_IndexError, "no such probe");
    return NULL;
  }
  pthread_mutex_lock(&slots_mu);
  probe_slot s = slots[i];
  pthread_mutex_unlock(&slots_mu);
  if (s.calls != 0) {
    PyErr_SetString(PyExc_RuntimeError, "the probed tensor was already deleted");
    return NULL;
  }
  if (s.versioned) probe_deleter_v(s.managed);
  else probe_deleter_l(s.managed);
  Py_RETURN_NONE;
}

static int64_t* int64s(PyObject* seq, int32_t* n) {
  PyObject* fast = PySequence_Fast(seq, "expected a sequence of ints");
  if (fast == NULL) return NULL;
  Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
  int64_t* out = calloc((size_t)len + 1, sizeof(int64_t));
  for (Py_ssize_t i = 0; out && i < len; i++) {
    out[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i));
  }
  Py_DECREF(fast);
  if (out == NULL) PyErr_NoMemory();
  if (PyErr_Occurred()) {
    free(out);
    return NULL;
  }
  *n = (int32_t)len;
  return out;
}

/* _probe_make(versioned, major, minor, ndim, shape, strides, code, bits, lanes,
 *             device_type, device_id, data, byte_offset, flags, name)
 * -> (capsule, token). shape/strides/data may be None (NULL pointers); ndim
 * may disagree with len(shape) on purpose; the dims arrays are padded to 64
 * entries so that a consumer trusting ndim reads valid memory. */
static PyObject* probe_make(PyObject* mod, PyObject* args) {
  int versioned, ndim, code, bits, lanes, dtype_, did;
  unsigned major, minor;
  PyObject *shape, *strides, *data, *name_obj;
  unsigned long long byte_offset, flags;
  if (!PyArg_ParseTuple(args, "pIIiOOiiiiiOKKO", &versioned, &major, &minor, &ndim, &shape, &strides, &code,
                        &bits, &lanes, &dtype_, &did, &data, &byte_offset, &flags, &name_obj))
    return NULL;
  int32_t ns = 0, nt = 0;
  int64_t *sh = NULL, *st = NULL;
  if (shape != Py_None && (sh = int64s(shape, &ns)) == NULL) return NULL;
  if (strides != Py_None && (st = int64s(strides, &nt)) == NULL) {
    free(sh);
    return NULL;
  }
  const char* name = versioned ? GDL_NAME_VERSIONED : GDL_NAME_LEGACY;
  if (name_obj != Py_None) {
    /* Capsules keep the name pointer: intern it for the process lifetime. */
    PyObject* interned = PyUnicode_FromObject(name_obj);
    if (interned != NULL) PyUnicode_InternInPlace(&interned);
    name = interned ? PyUnicode_AsUTF8(interned) : NULL; /* kept alive by the intern table */
    if (name == NULL) {
      free(sh), free(st);
      return NULL;
    }
  }
  size_t head = versioned ? sizeof(DLManagedTensorVersioned) : sizeof(DLManagedTensor);
  void* m = calloc(1, head + 2 * 65 * sizeof(int64_t));
  void* buf = NULL;
  char* bytes = NULL;
  Py_ssize_t len = 0;
  if (m != NULL && data != Py_None) {
    if (PyBytes_AsStringAndSize(data, &bytes, &len) != 0) {
      free(sh), free(st), free(m);
      return NULL;
    }
    buf = malloc(len > 0 ? (size_t)len : 1);
    if (buf != NULL) memcpy(buf, bytes, (size_t)len);
  }
  if (m == NULL || (data != Py_None && buf == NULL)) {
    free(sh), free(st), free(m), free(buf);
    return PyErr_NoMemory();
  }
  int64_t* dims = (int64_t*)((char*)m + head);
  if (sh) memcpy(dims, sh, (size_t)(ns < 64 ? ns : 64) * sizeof(int64_t));
  if (st) memcpy(dims + 65, st, (size_t)(nt < 64 ? nt : 64) * sizeof(int64_t));
  free(sh);
  free(st);
  DLTensor* t;
  if (versioned) {
    DLManagedTensorVersioned* v = m;
    v->version.major = major;
    v->version.minor = minor;
    v->deleter = probe_deleter_v;
    v->flags = flags;
    t = &v->dl_tensor;
  } else {
    DLManagedTensor* l = m;
    l->deleter = probe_deleter_l;
    t = &l->dl_tensor;
  }
  t->data = buf;
  t->device.device_type = (DLDeviceType)dtype_;
  t->device.device_id = did;
  t->ndim = ndim;
  t->dtype.code = (uint8_t)code;
  t->dtype.bits = (uint8_t)bits;
  t->dtype.lanes = (uint16_t)lanes;
  t->shape = shape == Py_None ? NULL : dims;
  t->strides = strides == Py_None ? NULL : dims + 65;
  t->byte_offset = byte_offset;
  int token = slot_new(m, NULL, buf, versioned);
  if (token < 0) {
    free(buf), free(m);
    PyErr_SetString(PyExc_RuntimeError, "too many probes");
    return NULL;
  }
  PyObject* cap = PyCapsule_New(m, name, gdl_capsule_destructor);
  if (cap == NULL) { /* nobody owns it: delete it through the probe (counted) */
    if (versioned) probe_deleter_v(m);
    else probe_deleter_l(m);
    return NULL;
  }
  return Py_BuildValue("(Ni)", cap, token);
}

/* The managed tensor of a DLPack capsule, used or not; anything else is
 * refused (other capsules point at other things). */
static void* capsule_pointer(PyObject* cap, int* versioned, int* used) {
  const char* names[4] = {GDL_NAME_VERSIONED, GDL_NAME_LEGACY, GDL_NAME_USED_VERSIONED, GDL_NAME_USED_LEGACY};
  if (PyCapsule_CheckExact(cap)) {
    const char* name = PyCapsule_GetName(cap);
    for (int i = 0; name != NULL && i < 4; i++) {
      if (strcmp(name, names[i]) == 0) {
        *versioned = i % 2 == 0;
        *used = i >= 2;
        return PyCapsule_GetPointer(cap, name);
      }
    }
  }
  PyErr_Clear();
  PyErr_SetString(PyExc_TypeError, "expected a DLPack capsule (dltensor, dltensor_versioned or used_...)");
  return NULL;
}

/* _probe_intercept(capsule) -> token: counts calls of its deleter from now on. */
static PyObject* probe_intercept(PyObject* mod, PyObject* cap) {
  int versioned, used;
  void* m = capsule_pointer(cap, &versioned, &used);
  if (m == NULL) return NULL;
  if (used) {
    PyErr_SetString(PyExc_ValueError, "a used capsule's tensor belongs to its consumer: not intercepted");
    return NULL;
  }
  void** slot = versioned ? (void**)&((DLManagedTensorVersioned*)m)->deleter : (void**)&((DLManagedTensor*)m)->deleter;
  if (*slot == NULL) {
    PyErr_SetString(PyExc_ValueError, "the managed tensor has no deleter to intercept");
    return NULL;
  }
  int token = slot_new(m, *slot, NULL, versioned);
  if (token < 0) {
    PyErr_SetString(PyExc_RuntimeError, "too many probes");
    return NULL;
  }
  *slot = versioned ? (void*)probe_deleter_v : (void*)probe_deleter_l;
  return PyLong_FromLong(token);
}

/* Sets d[key] = value, stealing value; remembers a failure in *ok. */
static void put(PyObject* d, const char* key, PyObject* value, int* ok) {
  if (value == NULL || PyDict_SetItemString(d, key, value) != 0) *ok = 0;
  Py_XDECREF(value);
}

/* _probe_inspect(capsule) -> dict of the managed tensor's fields (unowned). */
static PyObject* probe_inspect(PyObject* mod, PyObject* cap) {
  int versioned, used, ok = 1;
  void* m = capsule_pointer(cap, &versioned, &used);
  if (m == NULL) return NULL;
  PyObject* d = PyDict_New();
  if (d == NULL) return NULL;
  DLTensor* t;
  if (versioned) {
    DLManagedTensorVersioned* v = m;
    put(d, "version", Py_BuildValue("(II)", v->version.major, v->version.minor), &ok);
    put(d, "flags", PyLong_FromUnsignedLongLong(v->flags), &ok);
    if (v->version.major != 1) return ok ? d : (Py_DECREF(d), NULL); /* unknown layout past the header */
    t = &v->dl_tensor;
  } else {
    t = &((DLManagedTensor*)m)->dl_tensor;
  }
  put(d, "pointer", PyLong_FromVoidPtr(m), &ok);
  put(d, "versioned", PyBool_FromLong(versioned), &ok);
  put(d, "data", PyLong_FromVoidPtr(t->data), &ok);
  put(d, "ndim", PyLong_FromLong(t->ndim), &ok);
  put(d, "byte_offset", PyLong_FromUnsignedLongLong(t->byte_offset), &ok);
  put(d, "device", Py_BuildValue("(ii)", (int)t->device.device_type, t->device.device_id), &ok);
  put(d, "dtype", Py_BuildValue("(iii)", t->dtype.code, t->dtype.bits, t->dtype.lanes), &ok);
  put(d, "strides_null", PyBool_FromLong(t->strides == NULL), &ok);
  if (t->ndim >= 0 && t->ndim <= 64 && t->shape != NULL) {
    PyObject* sh = PyTuple_New(t->ndim);
    for (int i = 0; sh != NULL && i < t->ndim; i++) PyTuple_SET_ITEM(sh, i, PyLong_FromLongLong(t->shape[i]));
    put(d, "shape", sh, &ok);
  }
  if (!ok) {
    Py_DECREF(d);
    return NULL;
  }
  return d;
}

typedef struct {
  void* m;
  int versioned;
} nogil_job;

static void* run_deleter(void* arg) {
  nogil_job* j = arg;
  gdl_managed_free(j->m, j->versioned);
  return NULL;
}

/* _probe_free_nogil(capsule): takes the capsule and calls the deleter on a
 * new native thread that has never held the GIL, while we release ours. */
static PyObject* probe_free_nogil(PyObject* mod, PyObject* cap) {
  nogil_job j;
  j.m = gdl_capsule_take(cap, &j.versioned);
  if (j.m == NULL) return NULL;
  pthread_t th;
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = pthread_create(&th, NULL, run_deleter, &j);
  if (rc == 0) pthread_join(th, NULL);
  Py_END_ALLOW_THREADS if (rc != 0) {
    run_deleter(&j);
  }
  Py_RETURN_NONE;
}

PyMethodDef gdl_probe_methods[] = {
    {"_probe_make", probe_make, METH_VARARGS, "Counting producer of arbitrary managed tensors."},
    {"_probe_calls", probe_calls, METH_O, "Deleter calls counted for a probe token."},
    {"_probe_delete", probe_delete, METH_O, "Call a probed tensor's deleter."},
    {"_probe_intercept", probe_intercept, METH_O, "Count calls of a capsule's deleter."},
    {"_probe_inspect", probe_inspect, METH_O, "Fields of a capsule's managed tensor."},
    {"_probe_free_nogil", probe_free_nogil, METH_O, "Take a capsule; delete off the GIL."},
    {NULL, NULL, 0, NULL}};

//go:build linux

/* The Go runtimes loaded in the process, as Python sees them:
 * go_runtimes() (godlpack's and every extension's) and, at a module's
 * init, the SIGURG chain joined (sigchain.c) and a RuntimeWarning for any
 * runtime that is still left without its preemption signal. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include "base.h"

typedef struct {
  PyObject* list; /* [(path, is_self, go_version, chained), ...] */
  uintptr_t self_base;
  const void* leader; /* the SIGURG chain's, found once per listing */
  int failed;
} scan_state;

static int visit(struct dl_phdr_info* info, size_t size, void* arg) {
  scan_state* s = arg;
  if (!gdl_has_go_note(info)) return 0;
  const char* path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "(main program)";
  const char* version = NULL;
  int on_pyext = 0;
  int chained =
      gdl_sigchain_state(s->leader, info->dlpi_name ? info->dlpi_name : "", info->dlpi_addr, &version, &on_pyext);
  PyObject* item = Py_BuildValue("(sOzO)", path, info->dlpi_addr == s->self_base ? Py_True : Py_False, version,
                                 chained ? Py_True : Py_False);
  if (item == NULL || PyList_Append(s->list, item) < 0) s->failed = 1;
  Py_XDECREF(item);
  return s->failed;
}

static PyObject* go_objects(void) {
  Dl_info self;
  scan_state s = {PyList_New(0), 0, gdl_sigchain_leader(), 0};
  if (s.list == NULL) return NULL;
  if (dladdr((void*)&go_objects, &self) != 0) s.self_base = (uintptr_t)self.dli_fbase;
  dl_iterate_phdr(visit, &s);
  if (s.failed) Py_CLEAR(s.list);
  return s.list;
}

/* Chains any Go runtime loaded since the last look (a Go library loaded by
 * ctypes), then lists them all. */
PyObject* gdl_go_runtimes(PyObject* mod, PyObject* unused) {
  gdl_sigchain_repair();
  return go_objects();
}

int gdl_join_runtimes(const char* module_name) {
  if (gdl_sigchain_join() < 0) return -1;
  PyObject* list = go_objects();
  if (list == NULL) return -1;
  int r = 0;
  for (Py_ssize_t i = 0; r == 0 && i < PyList_GET_SIZE(list); i++) {
    PyObject* item = PyList_GET_ITEM(list, i);
    if (PyTuple_GET_ITEM(item, 3) == Py_True) continue;
    r = PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
                         "%s: the Go runtime in %S does not get its preemption signal (SIGURG): another "
                         "Go library, not built on godlpack's pyext, replaced its handler before this one could "
                         "chain it. That runtime's garbage collections can wait for a running loop to end. "
                         "godlpack.go_runtimes() lists every runtime (docs/runtimes.md).",
                         module_name, PyTuple_GET_ITEM(item, 0));
  }
  Py_DECREF(list);
  return r;
}

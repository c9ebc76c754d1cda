/* One Go runtime per process. Every Go c-shared library brings its own
 * runtime; the one loaded second takes over SIGURG and the first loses
 * asynchronous preemption (a GC can then stall for seconds). This finds the
 * Go runtimes loaded in the process: each Go binary carries a
 * ".note.go.buildid" ELF note (name "Go", type 4) in a loaded PT_NOTE
 * segment, so a scan of the loaded objects' notes in memory finds them
 * without reading any file. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include "base.h"

typedef struct {
  PyObject* list; /* [(path, is_self), ...] */
  uintptr_t self_base;
  int failed;
} scan_state;

static int has_go_note(struct dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr)* ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_NOTE) continue;
    const char* p = (const char*)(info->dlpi_addr + ph->p_vaddr);
    const char* end = p + ph->p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const ElfW(Nhdr)* n = (const ElfW(Nhdr)*)p;
      size_t name = (n->n_namesz + 3) & ~(size_t)3, desc = (n->n_descsz + 3) & ~(size_t)3;
      const char* nm = p + sizeof *n;
      if ((n->n_namesz == 3 || n->n_namesz == 4) && n->n_type == 4 && nm + 3 <= end && memcmp(nm, "Go", 3) == 0)
        return 1; /* the Go linker pads the name "Go" to 4 bytes */
      p = nm + name + desc;
    }
  }
  return 0;
}

static int visit(struct dl_phdr_info* info, size_t size, void* arg) {
  scan_state* s = arg;
  if (!has_go_note(info)) return 0;
  const char* path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "(main program)";
  PyObject* item = Py_BuildValue("(sO)", path, info->dlpi_addr == s->self_base ? Py_True : Py_False);
  if (item == NULL || PyList_Append(s->list, item) < 0) s->failed = 1;
  Py_XDECREF(item);
  return s->failed;
}

/* [(path, is_self), ...] for every loaded object holding a Go runtime. */
static PyObject* go_objects(void) {
  Dl_info self;
  scan_state s = {PyList_New(0), 0, 0};
  if (s.list == NULL) return NULL;
  if (dladdr((void*)&go_objects, &self) != 0) s.self_base = (uintptr_t)self.dli_fbase;
  dl_iterate_phdr(visit, &s);
  if (s.failed) Py_CLEAR(s.list);
  return s.list;
}

PyObject* gdl_go_runtimes(PyObject* mod, PyObject* unused) { return go_objects(); }

int gdl_warn_other_runtimes(const char* module_name) {
  PyObject* list = go_objects();
  if (list == NULL) return -1;
  int r = 0;
  for (Py_ssize_t i = 0; r == 0 && i < PyList_GET_SIZE(list); i++) {
    PyObject* item = PyList_GET_ITEM(list, i);
    if (PyTuple_GET_ITEM(item, 1) == Py_True) continue;
    r = PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
                         "%s is a Go extension, and this process already holds another Go runtime (%S). "
                         "Two Go runtimes in one process are unsupported: the one loaded last takes over "
                         "SIGURG, so the other loses asynchronous preemption and its garbage collections can "
                         "stall for seconds. Build your Go extension on godlpack's Go packages (one runtime) "
                         "instead of importing both.",
                         module_name, PyTuple_GET_ITEM(item, 0));
  }
  Py_DECREF(list);
  return r;
}

/* The Go runtimes loaded in the process on macOS (runtimes.c's job there),
 * found through dyld's image list by their build information (goimage.h,
 * section __DATA,__go_buildinfo). There is no SIGURG chain here (sigchain.c
 * relies on ELF constructor priorities, and it has not been run on a Mac),
 * so a module's init warns when it is not alone:
 * - darwin/amd64: every Go runtime keeps g at the same fixed TLS slot
 *   (0x30(GS), cmd/link "issue 23617"), so two runtimes in one process read
 *   each other's g: the reported crashes of two Go extensions together
 *   (golang/go#65050, go-python/gopy#370).
 * - darwin/arm64: each runtime has its own pthread key, as on Linux, but only
 *   the one holding SIGURG is preempted by signal; the others' garbage
 *   collections can wait for a running loop to end.
 * "chained" in the listing means: holds the SIGURG handler now. */
#include <dlfcn.h>
#include <mach-o/dyld.h>
#include <mach-o/getsect.h>
#include <signal.h>
#include "base.h"
#include "goimage.h"

static int go_image(const struct mach_header* h, char* version, size_t cap) {
  static const char* const segs[] = {"__DATA", "__DATA_CONST"};
  for (int i = 0; i < 2; i++) {
    unsigned long n = 0;
    const unsigned char* p = getsectiondata((const struct mach_header_64*)h, segs[i], "__go_buildinfo", &n);
    if (p != NULL && gdl_go_buildinfo(p, n, version, cap)) return 1;
  }
  return 0;
}

/* The image holding the SIGURG handler now, or NULL. */
static const void* sigurg_holder(void) {
  struct sigaction cur;
  Dl_info d;
  if (sigaction(SIGURG, NULL, &cur) != 0 || !(cur.sa_flags & SA_SIGINFO) || cur.sa_sigaction == NULL) return NULL;
  return dladdr((void*)cur.sa_sigaction, &d) != 0 ? d.dli_fbase : NULL;
}

static PyObject* go_objects(void) {
  Dl_info self;
  const void* self_base = dladdr((void*)&go_objects, &self) != 0 ? self.dli_fbase : NULL;
  const void* holder = sigurg_holder();
  PyObject* list = PyList_New(0);
  for (uint32_t i = 0, n = _dyld_image_count(); list != NULL && i < n; i++) {
    const struct mach_header* h = _dyld_get_image_header(i);
    const char* path = _dyld_get_image_name(i);
    char version[64];
    if (h == NULL || !go_image(h, version, sizeof version)) continue;
    if ((const void*)h == self_base && gdl_go_version[0]) snprintf(version, sizeof version, "%s", gdl_go_version);
    PyObject* item = Py_BuildValue("(sOzO)", path ? path : "(main program)", (const void*)h == self_base ? Py_True : Py_False,
                                   version[0] ? version : NULL, (const void*)h == holder ? Py_True : Py_False);
    if (item == NULL || PyList_Append(list, item) < 0) Py_CLEAR(list);
    Py_XDECREF(item);
  }
  return list;
}

PyObject* gdl_go_runtimes(PyObject* mod, PyObject* unused) { return go_objects(); }

int gdl_join_runtimes(const char* module_name) {
  PyObject* list = go_objects();
  if (list == NULL) return -1;
  int r = 0;
  Py_ssize_t n = PyList_GET_SIZE(list);
  for (Py_ssize_t i = 0; r == 0 && n > 1 && i < n; i++) {
    PyObject* item = PyList_GET_ITEM(list, i);
#if defined(__x86_64__)
    if (PyTuple_GET_ITEM(item, 1) == Py_True) continue; /* one warning per other runtime */
    r = PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
                         "%s: another Go runtime is loaded in this process (%S); on macOS x86-64 every Go runtime "
                         "keeps its goroutine pointer in the same thread-local slot, so two of them can crash each "
                         "other (golang/go#65050). Load one Go extension per process on an Intel Mac "
                         "(docs/runtimes.md).",
                         module_name, PyTuple_GET_ITEM(item, 0));
#else
    if (PyTuple_GET_ITEM(item, 3) == Py_True) continue;
    r = PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
                         "%s: the Go runtime in %S does not get its preemption signal (SIGURG): on macOS the Go "
                         "runtime loaded last keeps it, and godlpack chains it only on Linux. That runtime's garbage "
                         "collections can wait for a running loop to end. godlpack.go_runtimes() lists every "
                         "runtime (docs/runtimes.md).",
                         module_name, PyTuple_GET_ITEM(item, 0));
#endif
  }
  Py_DECREF(list);
  return r;
}

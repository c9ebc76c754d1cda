/* The Go runtimes loaded in the process on Windows (runtimes.c's job there).
 * Go preempts on Windows by suspending the thread (SuspendThread and
 * GetThreadContext in runtime/os_windows.go's preemptM), not with a signal,
 * and keeps each runtime's g in a TlsAlloc slot of its own: runtimes in one
 * process do not take anything from each other, so there is no chain to
 * join, and every runtime counts as preempted ("chained"). A Go module is
 * found by its build information (goimage.h) in a writable data section. */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <psapi.h>
#include "base.h"
#include "goimage.h"

#define MODULES_MAX 4096

/* Whether the module loaded at m holds a Go runtime; its Go version then. */
static int go_module(HMODULE m, char* version, size_t cap) {
  const unsigned char* base = (const unsigned char*)m;
  const IMAGE_DOS_HEADER* dos = (const IMAGE_DOS_HEADER*)base;
  if (dos->e_magic != IMAGE_DOS_SIGNATURE) return 0;
  const IMAGE_NT_HEADERS* nt = (const IMAGE_NT_HEADERS*)(base + dos->e_lfanew);
  if (nt->Signature != IMAGE_NT_SIGNATURE) return 0;
  const IMAGE_SECTION_HEADER* sec = IMAGE_FIRST_SECTION(nt);
  for (int i = 0; i < nt->FileHeader.NumberOfSections; i++) {
    DWORD want = IMAGE_SCN_CNT_INITIALIZED_DATA | IMAGE_SCN_MEM_WRITE;
    if ((sec[i].Characteristics & want) != want) continue;
    size_t n = sec[i].Misc.VirtualSize < sec[i].SizeOfRawData ? sec[i].Misc.VirtualSize : sec[i].SizeOfRawData;
    if (gdl_go_buildinfo(base + sec[i].VirtualAddress, n, version, cap)) return 1;
  }
  return 0;
}

static PyObject* go_objects(void) {
  HMODULE self = NULL;
  GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                     (LPCWSTR)(void*)&go_objects, &self);
  HMODULE* mods = calloc(MODULES_MAX, sizeof *mods);
  PyObject* list = mods != NULL ? PyList_New(0) : PyErr_NoMemory();
  DWORD need = 0;
  if (list != NULL && !K32EnumProcessModules(GetCurrentProcess(), mods, MODULES_MAX * sizeof *mods, &need)) {
    PyErr_SetFromWindowsErr(0);
    Py_CLEAR(list);
  }
  for (DWORD i = 0; list != NULL && i < need / sizeof *mods && i < MODULES_MAX; i++) {
    char version[64];
    wchar_t path[MAX_PATH * 4];
    if (!go_module(mods[i], version, sizeof version)) continue;
    DWORD len = GetModuleFileNameW(mods[i], path, sizeof path / sizeof path[0]);
    if (mods[i] == self && gdl_go_version[0]) snprintf(version, sizeof version, "%s", gdl_go_version);
    PyObject* item = Py_BuildValue("(NOzO)", PyUnicode_FromWideChar(path, len), mods[i] == self ? Py_True : Py_False,
                                   version[0] ? version : NULL, Py_True);
    if (item == NULL || PyList_Append(list, item) < 0) Py_CLEAR(list);
    Py_XDECREF(item);
  }
  free(mods);
  return list;
}

PyObject* gdl_go_runtimes(PyObject* mod, PyObject* unused) { return go_objects(); }

int gdl_join_runtimes(const char* module_name) { return 0; /* nothing to join: see above */ }

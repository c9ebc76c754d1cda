/* dynlib.h on Windows: no dlfcn.h or sysconf in the UCRT. The driver is
 * nvcuda.dll (in System32 wherever NVIDIA's driver is installed). */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>
#include "dynlib.h"

const char gdl_cuda_driver_name[] = "nvcuda.dll";

void* gdl_lib_open(const char* path, char* err, size_t errcap) {
  int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, NULL, 0);
  wchar_t* w = n > 0 ? malloc((size_t)n * sizeof *w) : NULL;
  if (w == NULL || MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, w, n) == 0) {
    free(w);
    snprintf(err, errcap, "%s: not a UTF-8 path", path);
    return NULL;
  }
  HMODULE lib = LoadLibraryW(w);
  DWORD code = GetLastError();
  free(w);
  if (lib == NULL) snprintf(err, errcap, "%s: LoadLibraryW failed with Windows error %lu", path, (unsigned long)code);
  return (void*)lib;
}

void* gdl_lib_sym(void* lib, const char* name) { return (void*)GetProcAddress((HMODULE)lib, name); }

long long gdl_cpu_count(void) {
  SYSTEM_INFO si;
  GetSystemInfo(&si);
  return si.dwNumberOfProcessors;
}

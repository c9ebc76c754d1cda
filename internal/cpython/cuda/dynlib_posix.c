//go:build !windows

/* dynlib.h on Linux and macOS: dlopen/dlsym, sysconf. */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>
#include "dynlib.h"

#ifdef __APPLE__
const char gdl_cuda_driver_name[] = "libcuda.dylib"; /* no CUDA driver exists for macOS: loading fails, clearly */
#else
const char gdl_cuda_driver_name[] = "libcuda.so.1";
#endif

void* gdl_lib_open(const char* path, char* err, size_t errcap) {
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) snprintf(err, errcap, "%s", dlerror());
  return lib;
}

void* gdl_lib_sym(void* lib, const char* name) { return dlsym(lib, name); }

long long gdl_cpu_count(void) { return sysconf(_SC_NPROCESSORS_ONLN); }

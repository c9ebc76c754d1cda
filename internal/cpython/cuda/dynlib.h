/* The OS services layer cuda needs, one file per OS behind them:
 * dynlib_posix.c (dlopen, sysconf) and dynlib_windows.c (LoadLibraryW,
 * GetSystemInfo). */
#ifndef GODLPACK_DYNLIB_H_
#define GODLPACK_DYNLIB_H_

#include <stddef.h>

extern const char gdl_cuda_driver_name[]; /* the CUDA driver library's file name on this OS */

/* A library loaded by path (UTF-8), or NULL with the reason in err. */
void* gdl_lib_open(const char* path, char* err, size_t errcap);
void* gdl_lib_sym(void* lib, const char* name); /* NULL when absent */
long long gdl_cpu_count(void);                  /* online CPUs, < 1 when unknown */

#endif

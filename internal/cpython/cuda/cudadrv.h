/* The CUDA driver table shared by cuda.c (loading, streams) and cudamem.c
 * (memory and copies): the entry points godlpack uses, dlopen-ed on first
 * use. Private to this directory: other layers use cuda.h. */
#ifndef GODLPACK_CUDADRV_H_
#define GODLPACK_CUDADRV_H_

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
typedef void* CUcontext;
typedef void* CUstream;
typedef void* CUevent;
typedef unsigned long long CUdeviceptr;
#define CU_EVENT_DISABLE_TIMING 0x2
#define CU_MEM_ATTACH_GLOBAL 0x1
#define CU_MEMHOSTALLOC_PORTABLE 0x1

typedef struct {
  int ok;
  char err[300];
  CUresult (*Init)(unsigned);
  CUresult (*DeviceGet)(CUdevice*, int);
  CUresult (*PrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*PrimaryCtxRelease)(CUdevice);
  CUresult (*CtxPush)(CUcontext);
  CUresult (*CtxPop)(CUcontext*);
  CUresult (*EventCreate)(CUevent*, unsigned);
  CUresult (*EventRecord)(CUevent, CUstream);
  CUresult (*StreamWaitEvent)(CUstream, CUevent, unsigned);
  CUresult (*EventDestroy)(CUevent);
  CUresult (*MemAlloc)(CUdeviceptr*, size_t);
  CUresult (*MemFree)(CUdeviceptr);
  CUresult (*MemAllocManaged)(CUdeviceptr*, size_t, unsigned);
  CUresult (*MemHostAlloc)(void**, size_t, unsigned);
  CUresult (*MemFreeHost)(void*);
  CUresult (*MemcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream);
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void*, size_t);
  CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*StreamSynchronize)(CUstream);
  CUresult (*EventSynchronize)(CUevent);
  CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream);
  CUresult (*GetErrorString)(CUresult, const char**);
  CUresult (*CtxSynchronize)(void);
} gdl_cu_table;
extern gdl_cu_table gdl_cu;

/* Sets BufferError for a failed driver call; returns -1. */
int gdl_cu_fail(const char* what, CUresult r);
/* Makes device_id's primary context current, holding a reference to it
 * until gdl_cu_leave(*dev). */
CUresult gdl_cu_enter(int32_t device_id, CUdevice* dev);
void gdl_cu_leave(CUdevice dev);
/* Streams in the array API numbering are CUDA's own handles: 1 legacy, 2 per-thread. */
static inline CUstream gdl_cu_stream(intptr_t s) { return (CUstream)s; }

#endif

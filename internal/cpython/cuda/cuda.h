/* Layer cuda: the only code that talks to the CUDA driver (dlopen-ed on
 * first use; tests/runtime/fakecuda is its stand-in): streams, memory godlpack
 * allocates through the driver, and the byte copies across the bus. It
 * returns owners (core/owner.h) and never makes Tensors: the tensor layer
 * wraps what it returns. Streams use the array API numbering: 1 legacy
 * default, 2 per-thread default, -1 no sync, else a handle. */
#ifndef GODLPACK_CUDA_H_
#define GODLPACK_CUDA_H_

#include "base.h"

/* cuda.c */
int gdl_cu_ready(void); /* 0 once the driver is loaded and initialised, else -1 with BufferError */
int gdl_cuda_stream_device(int32_t device_type); /* device types with streams */
int gdl_stream_sync(DLDevice dev, intptr_t from, intptr_t to); /* 0, or -1 + BufferError */
int gdl_host_sync(DLDevice dev, intptr_t stream); /* host waits for stream (CUDA only) */
PyObject* gdl_cuda_status(PyObject* mod, PyObject* unused);

/* cudamem.c */
enum { GDL_MEM_DEVICE, GDL_MEM_MANAGED, GDL_MEM_HOST }; /* cuMemAlloc, cuMemAllocManaged, cuMemHostAlloc */
/* n bytes of the given kind on CUDA device device_id in a new owner; 0, or
 * -1 with BufferError. */
int gdl_cuda_alloc(int kind, size_t n, int32_t device_id, gdl_owner** owner, void** ptr);
/* The n bytes at first (CUDA memory of device from_id when from is kDLCUDA,
 * else host-visible memory) copied into new memory on to (kDLCUDA or
 * kDLCPU): 0 with *owner and *base, or -1 with BufferError. Device reads are
 * queued on stream on (a device copy is ready there, a host copy is waited
 * for); a host source is read before the call returns. Copies of a MiB or
 * more release the GIL, which the caller holds. */
int gdl_cuda_span_copy(int32_t from, int32_t from_id, DLDevice to, const char* first, size_t n, intptr_t on,
                       gdl_owner** owner, void** base);
void gdl_cuda_trim(void); /* frees the pinned and device blocks kept for reuse */

/* parcopy.c: memcpy on several threads (large host copies). */
void gdl_par_memcpy(void* dst, const void* src, size_t n);

#endif

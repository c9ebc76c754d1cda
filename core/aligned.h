/* Aligned allocation on every OS. The UCRT (Windows) has no aligned_alloc,
 * and a block from its _aligned_malloc must go back through _aligned_free,
 * never free(): each allocation here is paired with gdl_aligned_free. */
#ifndef GODLPACK_ALIGNED_H_
#define GODLPACK_ALIGNED_H_

#include <stddef.h>
#include <stdlib.h>
#ifdef _WIN32
#include <malloc.h>
static inline void* gdl_aligned_alloc(size_t align, size_t n) { return _aligned_malloc(n, align); }
static inline void gdl_aligned_free(void* p) { _aligned_free(p); }
#else
/* n must be a multiple of align (C11). */
static inline void* gdl_aligned_alloc(size_t align, size_t n) { return aligned_alloc(align, n); }
static inline void gdl_aligned_free(void* p) { free(p); }
#endif

#endif

/* gdl_par_memcpy: a large memcpy split over a few worker threads, because
 * one CPU thread fills pinned staging memory far slower than the bus drains
 * it (docs/gpu.md has the figures). The workers are started on first use
 * and then wait for work; one copy uses them at a time (a second caller
 * copies alone rather than wait). Callable without the GIL. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include "cuda.h"
#include "dynlib.h"
#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#endif

#define PAR_MAX 8                   /* threads, the caller's included */
#define PAR_PART ((size_t)256 << 10) /* smallest share worth a thread */

/* One thread's share. The destination (staging memory the bus reads next) is
 * written with non-temporal stores where x86-64 has them: glibc's memcpy
 * uses them only for copies larger than most of the cache, and otherwise
 * reads each destination line before writing it, a third more memory traffic. */
static void share_copy(char* dst, const char* src, size_t n) {
#if defined(__x86_64__) && defined(__SSE2__)
  size_t head = (16 - ((uintptr_t)dst & 15)) & 15;
  if (n >= 4096 + head) {
    memcpy(dst, src, head);
    dst += head, src += head, n -= head;
    size_t blocks = n / 64;
    for (size_t i = 0; i < blocks; i++, dst += 64, src += 64) {
      __m128i a = _mm_loadu_si128((const __m128i*)src), b = _mm_loadu_si128((const __m128i*)(src + 16)),
              c = _mm_loadu_si128((const __m128i*)(src + 32)), d = _mm_loadu_si128((const __m128i*)(src + 48));
      _mm_stream_si128((__m128i*)dst, a);
      _mm_stream_si128((__m128i*)(dst + 16), b);
      _mm_stream_si128((__m128i*)(dst + 32), c);
      _mm_stream_si128((__m128i*)(dst + 48), d);
    }
    _mm_sfence(); /* the stores are visible before the caller hands the memory on */
    n -= blocks * 64;
  }
#endif
  memcpy(dst, src, n);
}

static pthread_mutex_t busy = PTHREAD_MUTEX_INITIALIZER; /* held by the copy using the workers */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER, done = PTHREAD_COND_INITIALIZER;
static int nworkers = -1; /* -1: not started yet */
static struct {
  char* dst;
  const char* src;
  size_t part, len;
  int parts, next, left; /* shares: in all, the next one to take, not yet copied */
} job;

static void* worker(void* unused) {
  (void)unused;
  pthread_mutex_lock(&mu);
  for (;;) {
    while (job.next >= job.parts) pthread_cond_wait(&work, &mu);
    int i = job.next++;
    size_t off = (size_t)i * job.part, n = off + job.part < job.len ? job.part : job.len - off;
    char* dst = job.dst + off;
    const char* src = job.src + off;
    pthread_mutex_unlock(&mu);
    share_copy(dst, src, n);
    pthread_mutex_lock(&mu);
    if (--job.left == 0) pthread_cond_signal(&done);
  }
  return NULL;
}

/* After fork only the forking thread exists in the child: start again. */
/* unused on Windows, where MinGW's pthread_atfork is a macro that drops it (no fork there) */
__attribute__((unused)) static void forget_workers(void) {
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t c = PTHREAD_COND_INITIALIZER;
  busy = m;
  mu = m;
  work = c;
  done = c;
  nworkers = -1;
  memset(&job, 0, sizeof job);
}

/* Called with mu held. */
static void start_workers(void) {
  long long cpus = gdl_cpu_count();
  int want = (int)(cpus < 1 ? 0 : cpus > PAR_MAX ? PAR_MAX - 1 : cpus - 1);
  static int atfork;
  if (!atfork) atfork = pthread_atfork(NULL, NULL, forget_workers) == 0;
  nworkers = 0;
  for (int i = 0; i < want; i++) {
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 64 << 10);
    if (pthread_create(&t, &a, worker, NULL) == 0) nworkers++;
    pthread_attr_destroy(&a);
  }
}

void gdl_par_memcpy(void* dst, const void* src, size_t n) {
  if (n < 2 * PAR_PART || pthread_mutex_trylock(&busy) != 0) {
    share_copy(dst, src, n);
    return;
  }
  pthread_mutex_lock(&mu);
  if (nworkers < 0) start_workers();
  int threads = nworkers + 1;
  if ((size_t)threads > n / PAR_PART) threads = (int)(n / PAR_PART);
  if (threads < 2) {
    pthread_mutex_unlock(&mu);
    pthread_mutex_unlock(&busy);
    share_copy(dst, src, n);
    return;
  }
  size_t part = (n / (size_t)threads + 63) & ~(size_t)63; /* cache-line aligned shares */
  job.dst = dst;
  job.src = src;
  job.len = n;
  job.part = part;
  job.parts = (int)((n + part - 1) / part);
  job.next = 0;
  job.left = job.parts;
  pthread_cond_broadcast(&work);
  /* The caller copies shares too, then waits for the rest. */
  while (job.next < job.parts) {
    int i = job.next++;
    size_t off = (size_t)i * part, len = off + part < n ? part : n - off;
    pthread_mutex_unlock(&mu);
    share_copy((char*)dst + off, (const char*)src + off, len);
    pthread_mutex_lock(&mu);
    job.left--;
  }
  while (job.left > 0) pthread_cond_wait(&done, &mu);
  pthread_mutex_unlock(&mu);
  pthread_mutex_unlock(&busy);
}

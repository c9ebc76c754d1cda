//go:build linux

/* SIGURG for every Go runtime in the process (docs/runtimes.md).
 *
 * Each Go c-shared library brings its own runtime, and each installs its
 * own SIGURG handler (asynchronous preemption) while the library is loaded;
 * the one loaded last keeps the signal. A Go runtime drops a SIGURG that
 * arrives on a thread it does not own, and forwards only synchronous
 * signals to the handler it replaced, so every earlier runtime loses
 * preemption and a stop-the-world can wait for a tight loop to end.
 *
 * The chain: every module built on pyext links this file, so every such
 * library exports one table, gdl_sigchain_v1. The first library to join
 * leads: its dispatcher is the process's SIGURG handler and calls each
 * joined runtime's own handler in turn. A runtime that does not own the
 * thread returns at once (no g in its TLS), so calling all of them is safe.
 * Python loads extensions RTLD_LOCAL, so a later library finds the leader
 * with dlopen(RTLD_NOLOAD) + dlsym on each loaded Go object, not through a
 * global symbol. A constructor that runs before this library's Go runtime
 * starts records the handler in place before it, so the runtime's own
 * handler is known exactly, and a Go library loaded earlier without the
 * chain (ctypes) is adopted rather than lost. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include "base.h"

#define CHAIN_MAX 64
#define GDL_SIGCHAIN_ABI 1

typedef void (*sa_fn)(int, siginfo_t*, void*);

/* The layout other libraries read. Fields are only ever appended; a reader
 * checks abi and size before using one. */
typedef struct {
  uint32_t abi, size;
  int (*add)(sa_fn handler, const char* go_version); /* 1 added, 0 already there, -1 full */
  int (*count)(void);
  sa_fn (*handler)(int i);
  const char* (*go_version)(int i);
  sa_fn dispatch;
} gdl_sigchain_table;

/* This library's own registry: used only while this library leads. */
static _Atomic(sa_fn) chain[CHAIN_MAX];
static char versions[CHAIN_MAX][32];
static _Atomic int chain_n;
static pthread_mutex_t chain_mu = PTHREAD_MUTEX_INITIALIZER;

/* Whether this thread is inside dispatch. Initial-exec TLS: reading it is
 * a load, safe in a signal handler (no __tls_get_addr, no allocation). */
static __thread int dispatching __attribute__((tls_model("initial-exec")));

/* The process's SIGURG handler while this library leads. errno is kept for
 * the interrupted code. A Go runtime forwards SIGURG to the handler it
 * replaced (often this dispatcher) while its signal set-up is unfinished;
 * called from here, that would call it again without end and overflow the
 * signal stack ("fatal: morestack on gsignal"): a nested call returns, as
 * the outer loop calls every handler anyway. */
static void dispatch(int sig, siginfo_t* info, void* ctx) {
  if (dispatching) return;
  dispatching = 1;
  int saved = errno;
  int n = atomic_load_explicit(&chain_n, memory_order_acquire);
  for (int i = 0; i < n; i++) {
    sa_fn h = atomic_load_explicit(&chain[i], memory_order_relaxed);
    if (h != NULL) h(sig, info, ctx);
  }
  errno = saved;
  dispatching = 0;
}

static int chain_add(sa_fn h, const char* go_version) {
  int r = -1;
  pthread_mutex_lock(&chain_mu);
  int n = atomic_load_explicit(&chain_n, memory_order_relaxed);
  for (int i = 0; i < n; i++)
    if (atomic_load_explicit(&chain[i], memory_order_relaxed) == h) {
      r = 0;
      goto out;
    }
  if (n < CHAIN_MAX) {
    snprintf(versions[n], sizeof versions[n], "%s", go_version ? go_version : "");
    atomic_store_explicit(&chain[n], h, memory_order_relaxed);
    atomic_store_explicit(&chain_n, n + 1, memory_order_release);
    r = 1;
  }
out:
  pthread_mutex_unlock(&chain_mu);
  return r;
}

static int chain_count(void) { return atomic_load_explicit(&chain_n, memory_order_acquire); }
static sa_fn chain_handler(int i) { return i >= 0 && i < chain_count() ? atomic_load(&chain[i]) : NULL; }
static const char* chain_version(int i) { return i >= 0 && i < chain_count() ? versions[i] : ""; }

__attribute__((visibility("default"))) const gdl_sigchain_table gdl_sigchain_v1 = {
    GDL_SIGCHAIN_ABI, sizeof(gdl_sigchain_table), chain_add, chain_count, chain_handler, chain_version, dispatch};

/* The SIGURG action in place before this library's Go runtime installed its
 * own: priority 101 runs before the unprioritised .init_array entry that
 * starts the runtime. */
static struct sigaction before_go;
static int before_go_ok;
__attribute__((constructor(101))) static void record_before_go(void) {
  before_go_ok = sigaction(SIGURG, NULL, &before_go) == 0;
}

const char* gdl_go_version = ""; /* set by cgo.go's init: runtime.Version() */

/* Whether a loaded object holds a Go runtime: each Go binary carries a
 * ".note.go.buildid" ELF note (name "Go", type 4) in a loaded PT_NOTE
 * segment, so the notes are read in memory, without opening any file. */
int gdl_has_go_note(struct dl_phdr_info* info) {
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

/* The loaded objects that hold a Go runtime. */
typedef struct {
  char path[CHAIN_MAX][4096];
  uintptr_t base[CHAIN_MAX];
  int n;
} go_objects;

static int collect(struct dl_phdr_info* info, size_t size, void* arg) {
  go_objects* g = arg;
  if (g->n < CHAIN_MAX && gdl_has_go_note(info)) {
    snprintf(g->path[g->n], sizeof g->path[g->n], "%s", info->dlpi_name ? info->dlpi_name : "");
    g->base[g->n++] = info->dlpi_addr;
  }
  return 0;
}

static uintptr_t self_base(void) {
  Dl_info self;
  return dladdr((void*)&gdl_sigchain_v1, &self) != 0 ? (uintptr_t)self.dli_fbase : 0;
}

static uintptr_t base_of(const void* fn) {
  Dl_info d;
  return fn != NULL && dladdr(fn, &d) != 0 ? (uintptr_t)d.dli_fbase : 0;
}

/* A loaded library's table, or NULL (not built on pyext, or an ABI this
 * code does not read). The handle is closed again: NOLOAD only counted. */
static const gdl_sigchain_table* table_of(const char* path, uintptr_t base) {
  if (base == self_base()) return &gdl_sigchain_v1;
  if (path[0] == 0) return NULL; /* the main program */
  void* h = dlopen(path, RTLD_NOLOAD | RTLD_LAZY);
  if (h == NULL) return NULL;
  const gdl_sigchain_table* t = dlsym(h, "gdl_sigchain_v1");
  dlclose(h);
  if (t == NULL || t->abi != GDL_SIGCHAIN_ABI || t->size < sizeof(gdl_sigchain_table)) return NULL;
  return t;
}

/* The leading table: the first loaded library whose registry has entries;
 * with none, this library's. */
static const gdl_sigchain_table* leader(go_objects* g) {
  for (int i = 0; i < g->n; i++) {
    const gdl_sigchain_table* t = table_of(g->path[i], g->base[i]);
    if (t != NULL && t->count() > 0) return t;
  }
  return &gdl_sigchain_v1;
}

static int is_go_object(go_objects* g, uintptr_t base) {
  for (int i = 0; i < g->n; i++)
    if (g->base[i] == base) return 1;
  return 0;
}

static int is_handler(const struct sigaction* sa) {
  return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction != NULL && (void*)sa->sa_sigaction != (void*)SIG_IGN &&
         (void*)sa->sa_sigaction != (void*)SIG_DFL;
}

/* Whether a Go runtime's handler (h, in the object at base) is in the
 * leader's registry. */
static int chained(const gdl_sigchain_table* t, uintptr_t base) {
  for (int i = 0, n = t->count(); i < n; i++)
    if (base_of((void*)t->handler(i)) == base) return 1;
  return 0;
}

static pthread_mutex_t join_mu = PTHREAD_MUTEX_INITIALIZER;

/* Puts a Go runtime's handler (found in sa) in the chain if it belongs to a
 * loaded Go object. 1 when the chain changed. */
static int adopt(const gdl_sigchain_table* t, go_objects* g, const struct sigaction* sa, const char* version) {
  if (!is_handler(sa) || sa->sa_sigaction == t->dispatch) return 0;
  if (!is_go_object(g, base_of((void*)sa->sa_sigaction))) return 0;
  return t->add(sa->sa_sigaction, version) == 1; /* add keeps one entry per handler */
}

/* Makes the leader's dispatcher the SIGURG handler, with the flags Go uses
 * (SA_ONSTACK: Go's handlers run on the thread's signal stack) and every
 * signal blocked while it runs, as Go's own handler has it. */
static int install(const gdl_sigchain_table* t) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = t->dispatch;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  sigfillset(&sa.sa_mask);
  return sigaction(SIGURG, &sa, NULL);
}

int gdl_sigchain_join(void) {
  pthread_mutex_lock(&join_mu);
  go_objects* g = calloc(1, sizeof *g);
  if (g == NULL) {
    pthread_mutex_unlock(&join_mu);
    PyErr_NoMemory();
    return -1;
  }
  dl_iterate_phdr(collect, g);
  const gdl_sigchain_table* t = leader(g);
  struct sigaction cur;
  int ok = sigaction(SIGURG, NULL, &cur) == 0;
  uintptr_t self = self_base();
  int self_in = chained(t, self);
  if (ok && !self_in && is_handler(&cur) && base_of((void*)cur.sa_sigaction) == self &&
      (!before_go_ok || cur.sa_sigaction != before_go.sa_sigaction))
    self_in = t->add(cur.sa_sigaction, gdl_go_version) >= 0; /* this runtime's own handler */
  else if (ok)
    adopt(t, g, &cur, NULL); /* a runtime loaded after this one, without the chain */
  if (before_go_ok) adopt(t, g, &before_go, NULL); /* one loaded before, without the chain */
  if (ok && t->count() > 0) ok = install(t) == 0;
  free(g);
  pthread_mutex_unlock(&join_mu);
  if (!ok) {
    PyErr_SetFromErrno(PyExc_OSError);
    return -1;
  }
  return self_in != 0;
}

void gdl_sigchain_repair(void) {
  pthread_mutex_lock(&join_mu);
  go_objects* g = calloc(1, sizeof *g);
  if (g != NULL) {
    dl_iterate_phdr(collect, g);
    const gdl_sigchain_table* t = leader(g);
    struct sigaction cur;
    /* only a Go runtime's handler is put back behind the dispatcher; a
     * handler of the user's own stays */
    if (t->count() > 0 && sigaction(SIGURG, NULL, &cur) == 0 && cur.sa_sigaction != t->dispatch &&
        is_handler(&cur) && is_go_object(g, base_of((void*)cur.sa_sigaction))) {
      adopt(t, g, &cur, NULL);
      install(t);
    }
    free(g);
  }
  pthread_mutex_unlock(&join_mu);
}

const void* gdl_sigchain_leader(void) {
  go_objects* g = calloc(1, sizeof *g);
  if (g == NULL) return NULL;
  dl_iterate_phdr(collect, g);
  const gdl_sigchain_table* t = leader(g);
  free(g);
  return t;
}

int gdl_sigchain_state(const void* lead, const char* path, uintptr_t base, const char** go_version, int* built_on_pyext) {
  const gdl_sigchain_table* t = lead;
  *built_on_pyext = table_of(path, base) != NULL;
  *go_version = NULL;
  if (t == NULL) return 0;
  struct sigaction cur;
  if (sigaction(SIGURG, NULL, &cur) != 0 || cur.sa_sigaction != t->dispatch) {
    /* no chain in place: only the runtime holding the signal gets it */
    return is_handler(&cur) && base_of((void*)cur.sa_sigaction) == base;
  }
  for (int i = 0, n = t->count(); i < n; i++)
    if (base_of((void*)t->handler(i)) == base) {
      const char* v = t->go_version(i);
      *go_version = v && v[0] ? v : NULL;
      return 1;
    }
  return 0;
}

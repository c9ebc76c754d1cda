/* Go classes (class.go, protocols.go, hashing.go, exceptions.go, ext_class.c): what
 * Go tells C about a class, its properties, special methods and the
 * module's custom exceptions. */
#ifndef GODLPACK_EXT_CLASS_H_
#define GODLPACK_EXT_CLASS_H_

#include "ext.h"

/* A property of a Go class: get takes the receiver; set (NULL: read-only)
 * the receiver and the value. */
typedef struct {
  const char* name;
  const char* doc;
  gdl_fn* get;
  gdl_fn* set;
} gdl_prop;

/* A special method of a Go class (class.go's builders): what the C
 * wrapper does around fn before and after the call. */
enum {
  GDL_M_STATIC = 1, /* staticmethod: fn has no receiver */
  GDL_M_CLASS,      /* classmethod: fn has no receiver; a returned object takes the class called */
  GDL_M_GETITEM,    /* __getitem__(i): i an int, negative from the end, checked against aux (len) */
  GDL_M_SETITEM,    /* __setitem__(i, v), the same */
  GDL_M_DELITEM,    /* __delitem__(i), the same */
  GDL_M_CMP,        /* a rich comparison: NotImplemented for other types; flags GDL_CMP_* */
  GDL_M_CONTAINS,   /* __contains__(v): False for a v fn's parameter refuses with TypeError */
  GDL_M_ITER,       /* __iter__: fn returns a Go iterator's handle, aux is its next */
  GDL_M_ENTER,      /* __enter__: fn(self); self when fn returns no value */
  GDL_M_EXIT,       /* __exit__(t, e, tb): fn(self) or fn(self, raised) */
  GDL_M_BINOP,      /* a binary operator fn(self, other): NotImplemented for an other fn refuses; flags GDL_OP_* */
};
#define GDL_CMP_SWAP 1   /* fn(other, self) */
#define GDL_CMP_NEGATE 2 /* not fn(...) */
#define GDL_OP_INPLACE 1 /* self is the result when fn has none */

typedef struct {
  const char* name; /* the Python name: "__getitem__" */
  int kind, flags;
  gdl_fn* fn;
  gdl_fn* aux;
  /* Item methods: fn(self, start, stop, step[, v]) for a slice key (the
   * class's GetSlice, SetSlice, DelSlice), NULL: slices are refused. */
  gdl_fn* slice;
} gdl_special;

/* A custom exception of a module (pyext.NewException): a subclass of the
 * builtin exception base, raised for Go errors that errors.As matches. */
typedef struct {
  int id;
  const char* name;
  const char* base;
  const char* doc;
} gdl_exc;

#define GDL_MAX_EXCEPTIONS 256
/* A Go class: a heap type made in each module that adds it. ctor (NULL:
 * Python cannot create one) returns the object; pickle: the Go type is an
 * encoding.BinaryMarshaler and BinaryUnmarshaler. */
typedef struct {
  int id;
  const char* name; /* "Index"; the type is <module>.Index */
  const char* doc;
  gdl_fn* ctor;
  int nmethods, nprops, pickle;
  gdl_fn** methods;
  gdl_prop* props;
  int nspecials;
  gdl_special* specials;
  int weakref;    /* objects take weak references */
  int unhashable; /* __eq__ without __hash__: __hash__ is None */
  int basetype;   /* Python classes may subclass it (pyext's Subclassable) */
  int buffer;     /* objects export memory by the buffer protocol (pyext's Buffer) */
} gdl_class;

/* A view of an object's Go memory (buffer.go's gdlpyGetBuffer): C-contiguous
 * items of a struct-module format, pinned by Go under pin until released. */
#define GDL_BUF_MAXDIM 8
typedef struct {
  void* buf; /* NULL when empty */
  int64_t nitems, itemsize;
  char format[4];
  int ndim, readonly;
  int64_t shape[GDL_BUF_MAXDIM];
  uintptr_t pin;
} gdl_buffer;

#endif

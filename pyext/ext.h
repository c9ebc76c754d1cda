/* Go extension functions (module.go, funcs.go, params.go, results.go, call.go, typed.go, ext.c): the values passed
 * between the C trampoline, which converts Python objects, and Go. */
#ifndef GODLPACK_EXT_H_
#define GODLPACK_EXT_H_

#include <stddef.h>
#include <stdint.h>

#define GDL_MAX_PARAMS 16
#define GDL_MAX_RESULTS 8

/* Kinds of value, as letters of a function's signature string. */
#define GDL_V_FLOAT 'f'  /* f */
#define GDL_V_INT 'i'    /* i (signed 64-bit) */
#define GDL_V_UINT 'u'   /* i (unsigned 64-bit) */
#define GDL_V_BOOL 'b'   /* i (0 or 1) */
#define GDL_V_STR 's'    /* s, n: UTF-8 (results: malloc'd, freed by C) */
#define GDL_V_ARRAY 'a'  /* see gdl_value */
#define GDL_V_OBJ 'o'    /* i: the cgo.Handle of an object of a Go class (pyext.Class) */
#define GDL_V_ITER 'I'   /* results: i the handle of a Go sequence's pull state, p its next function (a gdl_fn) */
#define GDL_V_CALLABLE 'c' /* a Go func parameter: i a new reference to the callable, which Go takes
                            * (and zeroes i); s the function's name (callback.go, ext_pyobj.c) */
#define GDL_V_LIST 'l'     /* []string, []*T: s points to n values; a result's s is one malloc'd
                            * block (values, then their strings), versioned the items' kind */
#define GDL_V_DICT 'd'     /* map[string]T: as a list of 2n values, key then value */
#define GDL_V_BYTES 'y'    /* results ([]byte): p a new bytes object Go made with the GIL held (one copy),
                            * else s, n a malloc'd copy that C makes bytes of and frees (ReleaseGIL) */
/* ext_conv.c's kinds (complexconv.go, bigint.go, timeconv.go, pathconv.go, bytesresult.go): */
#define GDL_V_COMPLEX 'z'   /* f the real part, i the imaginary part's bits */
#define GDL_V_BIGINT 'B'    /* *big.Int: versioned 0: i; 1: s, n its hex text (results: malloc'd) */
#define GDL_V_TIME 't'      /* time.Time: i YYYYMMDDhhmmss of the wall clock, n microseconds, ncap the
                             * UTC offset in seconds, versioned 1 for UTC */
#define GDL_V_DURATION 'D'  /* time.Duration: i nanoseconds */
#define GDL_V_PATH 'p'      /* pyext.Path: s, n the path's bytes (results: malloc'd) */
#define GDL_V_BYTEARRAY 'Y' /* results (pyext.ByteArray): as GDL_V_BYTES, a bytearray */
/* ext_any.c's kind (anyconv.go): any, []any, map[string]any (results also
 * map[any]any) as a tree of Python values: s one block of n gdl_nodes in
 * prefix order, then the bytes their strings point into (arguments: C frees
 * it after the call; results: malloc'd by Go, freed by C). */
#define GDL_V_ANY 'A'
#define GDL_ANY_DEPTH 512 /* the most containers nested in one value (deeper: ValueError) */

/* One value of a GDL_V_ANY tree: kind a GDL_V_* letter (GDL_V_NONE for
 * None); BOOL, INT: i; UINT (results): i's bits; FLOAT: f; COMPLEX: f the
 * real part, n the imaginary part's bits; STR, BYTES, BIGINT (hex text,
 * then a NUL): i the offset of its bytes after the last node, n their count;
 * LIST: i items follow (each a subtree); DICT: i pairs follow (key, then
 * value), n 1 when every key is a str. */
#define GDL_V_NONE 'N'
typedef struct {
  int64_t i;
  int64_t n;
  double f;
  int32_t kind;
  int32_t pad;
} gdl_node;

#define GDL_MAX_CLASSES 256 /* Go classes in a process, all modules together */

/* An argument or result. Arrays: a typed-slice argument is data (its first
 * element, NULL when empty), n elements and i bytes, which C has checked
 * against the wanted element type; a godlpack.Tensor argument and an array
 * result are p, a managed tensor, versioned or not. */
typedef struct {
  double f;
  int64_t i;
  const char* s;
  void* p;
  int versioned;
  /* Results: 1 when Go runs with the GIL held (C sets it before the call),
   * so that Go may make a bytes result itself (GDL_V_BYTES).
   * Arguments: 1: Go converts this argument while the GIL is held, which serializes
   * every conversion (arena.go takes shapes without atomics); 0 on a
   * free-threaded build, without the GIL (ReleaseGIL) and by default. */
  int serial;
  /* data, n and ncap (n again; ncap -1 with n 0: nil, None for a slice defaulting to None) of a typed slice: the slice's own header,
   * which Go passes to the function as it is (typed.go, restOf). */
  void* data;
  int64_t n;
  int64_t ncap;
  /* A parameter with requirements (ext_arrays.h): C's state for the
   * argument, a gdl_view first (for an NDArray, data is its lowest element
   * and i the bytes it spans). */
  void* st;
  /* A godlpack.Tensor argument: its gdl_tensor_image, or NULL (Go converts p). */
  void* img;
  /* 1: None, for a *T parameter (gdl_elem's opt) or result (pointers.go);
   * C clears it in results before the call. */
  int none;
} gdl_value;

/* A godlpack.Tensor argument as Go lays it out (tensorarg.go checks the
 * offsets), written by C from an exact NumPy array's fields while the GIL
 * serializes conversions: Go passes it to the function as it is. shape and
 * strides point into gdl_tensor_block, Go memory, which Go pinned. */
typedef struct {
  void* data;
  int64_t* shape;
  int64_t shape_len, shape_cap;
  int64_t* strides;
  int64_t strides_len, strides_cap;
  uint8_t code, bits;
  uint16_t lanes;
  int32_t device_type, device_id;
  uint8_t read_only;
  uint64_t byte_offset;
} gdl_tensor_image;

/* The most dimensions of a godlpack.Tensor argument ext.c reads from an
 * exact NumPy array's fields (more take the DLPack path). */
#define GDL_NP_TENSOR_NDIM 8

/* The Go block (a pinned [512]int64) that C copies Tensor arguments' shapes
 * and strides into, a slice at a time, under the GIL; Go replaces a full one
 * (tensorarg.go). base NULL: none yet. */
typedef struct {
  int64_t* base;
  int32_t used, cap;
} gdl_shape_block;
extern gdl_shape_block gdl_tensor_block;

/* One call of a Go function, passed to Go as one pointer (one cgo
 * argument: the export wrapper copies no more). Go sets nout and, on
 * failure, a message in err. */
typedef struct {
  int id;
  int nin;
  gdl_value* in; /* an array of GDL_MAX_PARAMS values, never NULL (call.go slices all of it), nin of them used */
  gdl_value* out;
  int nout;
  int errlen;
  char* err;
  uintptr_t exc; /* GDL_ERR_PYEXC: a new reference to the exception to raise again */
} gdl_call;

/* A typed-slice parameter's element type (DLPack code and bits); for a
 * numeric scalar parameter, its Go type (int8: {kDLInt, 8}), which C
 * range-checks arguments against; bits 0 for any other parameter. */
typedef struct {
  uint8_t code, bits;
  uint8_t nd;     /* 1: an N-d view parameter (pyext.NDArray) */
  uint8_t tensor; /* 1: a godlpack.Tensor parameter (ext.c reads an exact NumPy array's fields) */
  uint8_t kind;   /* a list or dict parameter: its items' (values') kind, code and bits theirs */
  uint8_t opt;    /* 1: a *T parameter, which takes None (nil) */
} gdl_elem;

/* A registered function: id into Go's table, its Python name and docstring,
 * the signature (one letter per parameter), and its flags. writes: bit i set
 * when the function may write array argument i (it must then be writable,
 * and not an array its producer treats as immutable). */
typedef struct {
  int id;
  int nparams;
  int nresults;
  int release_gil;
  uint32_t writes;
  char sig[GDL_MAX_PARAMS + 1];
  char kinds[GDL_MAX_RESULTS + 1]; /* result kinds, same letters */
  gdl_elem elem[GDL_MAX_PARAMS];
  const struct gdl_req* req[GDL_MAX_PARAMS]; /* requirements (ext_arrays.h), NULL: none */
  const char* name;
  const char* doc;
  /* Keyword arguments (pyext.Args): names[i] NULL when the function takes
   * positional arguments only; a parameter with has_default[i] set takes
   * defaults[i] when the call leaves it out. pynames: the names interned,
   * made when the function is added to a module. self: a method, whose
   * parameter 0 is the receiver (not named, never a keyword). posonly: the
   * parameters before it (the receiver counted) are positional-only (Args'
   * "/"); kwonly: those from it on keyword-only (Args' "*"; nparams: none). */
  int named;
  int self;
  /* 1: every parameter a number, bool or object of a Go class, no array
   * result: gdl_call_fn clears none of the arguments' other fields (set
   * where the names are interned). */
  int scalar;
  int posonly;
  int kwonly;
  const char* names[GDL_MAX_PARAMS];
  void* pynames[GDL_MAX_PARAMS];
  char has_default[GDL_MAX_PARAMS];
  gdl_value defaults[GDL_MAX_PARAMS];
  /* GDL_V_OBJ parameters and results: the class id (gdl_classes). */
  int16_t cls[GDL_MAX_PARAMS];
  int16_t rcls[GDL_MAX_RESULTS];
  /* 1: a result is GDL_V_BYTES (register, funcs.go): the others skip
   * go_call's loops for bytes made ahead. */
  int bytes_results;
  /* GDL_V_BYTES results: the last size << 1, | 1 when the one before had
   * that size too (ext.c's bytes_ahead; written by calls, relaxed atomics). */
  int64_t bytes_seen[GDL_MAX_RESULTS];
} gdl_fn;

/* Error kinds of pyext beyond errkind.h's (ext_obj.c raises them). */
#define GDL_ERR_INDEX 100 /* IndexError */
#define GDL_ERR_KEY 101   /* KeyError */
#define GDL_ERR_STOP 102  /* StopIteration: a Go iterator is done */
#define GDL_ERR_PYEXC 103 /* a Python exception a callback raised (gdl_call's exc), raised again */
#define GDL_ERR_EXC 1000  /* + id: a custom exception (gdl_exc) */

#endif

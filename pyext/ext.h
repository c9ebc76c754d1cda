/* Go extension functions (ext.go, typed.go, ext.c): the values passed
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

/* An argument or result. Arrays: a typed-slice argument is data (its first
 * element, NULL when empty), n elements and i bytes, which C has checked
 * against the wanted element type; a godlpack.Tensor argument and an array
 * result are p, a managed tensor, versioned or not. */
typedef struct {
  double f;
  int64_t i;
  const char* s;
  int64_t n;
  void* p;
  int versioned;
  void* data;
  /* A parameter with requirements (ext_arrays.h): C's state for the
   * argument, a gdl_view first (for an NDArray, data is its lowest element
   * and i the bytes it spans). */
  void* st;
} gdl_value;

/* A typed-slice parameter's element type (DLPack code and bits); for a
 * numeric scalar parameter, its Go type (int8: {kDLInt, 8}), which C
 * range-checks arguments against; bits 0 for any other parameter. */
typedef struct {
  uint8_t code, bits;
  uint8_t nd; /* 1: an N-d view parameter (pyext.NDArray) */
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
} gdl_fn;

#endif

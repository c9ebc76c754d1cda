/* ext_any.c: Python value trees to and from GDL_V_ANY's flat block of
 * gdl_nodes (anyconv.go). ext_conv.c calls it for that kind. */
#ifndef GODLPACK_EXT_ANY_H_
#define GODLPACK_EXT_ANY_H_

#include "exchange.h" /* Python.h first */
#include "ext.h"

/* obj as a tree for parameter pos (from 1) of fn: e.kind GDL_V_LIST ([]any)
 * or GDL_V_DICT (map[string]any) for the top value, 0 for any. v->s the
 * block, v->n its nodes; *held a capsule that frees the block when the
 * caller drops it. 0, or -1 with a TypeError or ValueError naming the
 * argument and the path inside it. */
int gdl_any_arg(gdl_elem e, PyObject* obj, gdl_value* v, PyObject** held, const char* fn, int pos);

/* The Python value of Go's block (a result), which it frees; gdl_any_drop
 * frees a block not made a value. */
PyObject* gdl_any_result(gdl_value* v);
void gdl_any_drop(gdl_value* v);

#endif

/* What from_dlpack must add to PyTorch's DLPack export to stay correct
 * (torch_quirks.c): private to the exchange layer, used by import_table.c. */
#ifndef GODLPACK_TORCH_QUIRKS_H_
#define GODLPACK_TORCH_QUIRKS_H_

#include "exchange.h"

/* One tensor query (is_neg(), is_conj(), requires_grad), resolved on the
 * type once: a C method or getter is called directly. */
typedef struct {
  PyObject* descr; /* strong reference; NULL: the type has no such attribute */
  PyCFunction method; /* METH_NOARGS C method, or NULL */
  getter get;         /* C getter, or NULL */
  void* closure;
  PyObject* name;     /* otherwise: looked up on the object */
  int call;           /* a method (call it) rather than a property */
} gdl_query;

/* Per type: set when the type is a torch.Tensor (or subclass) whose export
 * is torch's own (neither __dlpack__ nor __torch_function__ overridden). */
typedef struct {
  int active;
  gdl_query is_neg, is_conj, requires_grad;
} gdl_torch_quirks;

/* The interned names the checks use, made once by the layer's init. -1 on error. */
int gdl_torch_names_init(void);

/* Fills q for tp (q->active 0 when tp is not torch-like). -1 on error. */
int gdl_torch_quirks_init(PyTypeObject* tp, gdl_torch_quirks* q);
void gdl_torch_quirks_clear(gdl_torch_quirks* q);

/* Whether tp's __torch_function__ (if any) is the one of the class at MRO
 * index table_at or torch's disabled one: 1 yes, 0 no, -1 error. */
int gdl_torch_function_inherited(PyTypeObject* tp, Py_ssize_t table_at);

/* After PyTorch's table api exported obj as m: 1 the export is right, 0 use
 * __dlpack__ instead (it refuses what the table should have refused, or obj
 * cannot answer), -1 BufferError set (negative bit). */
int gdl_torch_table_check(PyObject* obj, const gdl_torch_quirks* q, const DLPackExchangeAPI* api,
                          const DLManagedTensorVersioned* m);

/* Whether the key-set read is in use: 1 yes, -1 no (the methods are
 * called), 0 not measured yet. */
int gdl_torch_keyset_state(void);

/* Before obj.__dlpack__(): 0 go on, -1 BufferError set (negative bit). */
int gdl_torch_dlpack_check(PyObject* obj, const gdl_torch_quirks* q);

#endif

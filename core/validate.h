/* Import validation: the one implementation of DLPack's import rules, used
 * by the CPython layer directly and by Go through core.Check* (a C->Go call
 * would cost more than the whole check). Refusal kinds (GDL_E_*), limits and
 * the dtype/device tables come from tables_gen.h. The fuzz target
 * (consumer/fuzz_test.go) checks it against an independent model. */
#ifndef GODLPACK_VALIDATE_H_
#define GODLPACK_VALIDATE_H_

#include <stddef.h>
#include <stdint.h>
#include "godlpack/dlpack.h"
#include "tables_gen.h"

/* Validates a bare DLTensor (what a versioned tensor of version minor
 * holds, or a legacy one when allow_null_strides): GDL_OK or a refusal. */
int gdl_check_tensor(const DLTensor* t, int allow_null_strides, char* msg, size_t n);

/* 0 if m may be read, else a GDL_E_* kind with a message in msg. Nothing but
 * m's own fields and its shape/strides arrays is read. */
int gdl_check_versioned(const DLManagedTensorVersioned* m, char* msg, size_t n);
int gdl_check_legacy(const DLManagedTensor* m, char* msg, size_t n);

#endif

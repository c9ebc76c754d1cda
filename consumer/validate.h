/* The import validation rules of validate.go, in C, for the CPython import
 * path: there a C->Go call costs more than the whole check. Go stays the
 * reference: consumer.CheckVersionedC/CheckLegacyC expose this code to Go,
 * and the fuzz target requires both to give the same verdict on every input.
 * The dtype and device tables come from Go at init (validate_c.go). */
#ifndef GODLPACK_VALIDATE_H_
#define GODLPACK_VALIDATE_H_

#include <stddef.h>
#include <stdint.h>
#include "godlpack/dlpack.h"

/* Refusal kinds, one per Go sentinel error (errors.go). */
enum {
  GDL_OK = 0,
  GDL_E_NIL_POINTER,
  GDL_E_VERSION,
  GDL_E_NDIM,
  GDL_E_SHAPE,
  GDL_E_STRIDES,
  GDL_E_OVERFLOW,
  GDL_E_DTYPE,
  GDL_E_LANES,
  GDL_E_DEVICE,
  GDL_E_NIL_DATA,
};

void gdl_validate_register_dtype(uint8_t code, uint8_t bits);
void gdl_validate_register_device(int32_t device_type);

/* 0 if m may be read, else a GDL_E_* kind with a message in msg. Nothing but
 * m's own fields and its shape/strides arrays is read. */
int gdl_check_versioned(const DLManagedTensorVersioned* m, char* msg, size_t n);
int gdl_check_legacy(const DLManagedTensor* m, char* msg, size_t n);

#endif

package godlpack

/*
#cgo CFLAGS: -I${SRCDIR}/include
#include <stddef.h>
#include "godlpack/dlpack.h"

enum {
  offsetof_DLTensor_device_gdl = offsetof(DLTensor, device),
  offsetof_DLTensor_ndim_gdl = offsetof(DLTensor, ndim),
  offsetof_DLTensor_dtype_gdl = offsetof(DLTensor, dtype),
  offsetof_DLTensor_shape_gdl = offsetof(DLTensor, shape),
  offsetof_DLTensor_strides_gdl = offsetof(DLTensor, strides),
  offsetof_DLTensor_byte_offset_gdl = offsetof(DLTensor, byte_offset),
  offsetof_Managed_manager_ctx_gdl = offsetof(DLManagedTensor, manager_ctx),
  offsetof_Managed_deleter_gdl = offsetof(DLManagedTensor, deleter),
  offsetof_Versioned_ctx_gdl = offsetof(DLManagedTensorVersioned, manager_ctx),
  offsetof_Versioned_deleter_gdl = offsetof(DLManagedTensorVersioned, deleter),
  offsetof_Versioned_flags_gdl = offsetof(DLManagedTensorVersioned, flags),
  offsetof_Versioned_dl_tensor_gdl = offsetof(DLManagedTensorVersioned, dl_tensor),
};

static void godlpack_call_deleter(void* fn, void* self) {
  ((void (*)(void*))fn)(self);
}
*/
import "C"

import "unsafe"

// CSizes reports sizeof of the C structs, for layout checks.
func CSizes() map[string]uintptr {
	return map[string]uintptr{
		"DLPackVersion":            C.sizeof_DLPackVersion,
		"DLDevice":                 C.sizeof_DLDevice,
		"DLDataType":               C.sizeof_DLDataType,
		"DLTensor":                 C.sizeof_DLTensor,
		"DLManagedTensor":          C.sizeof_DLManagedTensor,
		"DLManagedTensorVersioned": C.sizeof_DLManagedTensorVersioned,
	}
}

// COffsets reports offsetof for the fields whose order matters most.
func COffsets() map[string]uintptr {
	return map[string]uintptr{
		"DLTensor.device":      C.offsetof_DLTensor_device_gdl,
		"DLTensor.ndim":        C.offsetof_DLTensor_ndim_gdl,
		"DLTensor.dtype":       C.offsetof_DLTensor_dtype_gdl,
		"DLTensor.shape":       C.offsetof_DLTensor_shape_gdl,
		"DLTensor.strides":     C.offsetof_DLTensor_strides_gdl,
		"DLTensor.byte_offset": C.offsetof_DLTensor_byte_offset_gdl,
		"Managed.manager_ctx":  C.offsetof_Managed_manager_ctx_gdl,
		"Managed.deleter":      C.offsetof_Managed_deleter_gdl,
		"Versioned.ctx":        C.offsetof_Versioned_ctx_gdl,
		"Versioned.deleter":    C.offsetof_Versioned_deleter_gdl,
		"Versioned.flags":      C.offsetof_Versioned_flags_gdl,
		"Versioned.dl_tensor":  C.offsetof_Versioned_dl_tensor_gdl,
	}
}

// CallDeleter runs a C deleter function pointer on self. A nil deleter means
// the producer has nothing to free, so it is skipped.
func CallDeleter(deleter unsafe.Pointer, self unsafe.Pointer) {
	if deleter == nil {
		return
	}
	C.godlpack_call_deleter(deleter, self)
}

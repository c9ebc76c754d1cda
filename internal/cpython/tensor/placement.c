/* Where a tensor's data goes when a consumer asks for a device: the one
 * policy behind Tensor.__dlpack__(dl_device=...) and from_dlpack(device=...).
 * Memory already on the device is shared; host-visible memory (CUDAHost,
 * CUDAManaged, ROCMHost) is shared with a CPU consumer, relabelled; CUDA
 * memory wanted on the CPU, and CPU-accessible memory wanted on a CUDA
 * device, are copied through the driver unless copy=False. */
#include "tensor.h"

static int same(DLDevice a, DLDevice b) { return a.device_type == b.device_type && a.device_id == b.device_id; }

int gdl_placement(DLDevice have, DLDevice want, PyObject* copy, gdl_place* how) {
  if (same(have, want)) {
    *how = GDL_PLACE_SHARE;
    return 0;
  }
  if (want.device_type == kDLCPU && want.device_id == 0 && gdl_cpu_accessible(have.device_type)) {
    *how = GDL_PLACE_RELABEL;
    return 0;
  }
  int movable = (want.device_type == kDLCPU && want.device_id == 0 && have.device_type == kDLCUDA) ||
                (want.device_type == kDLCUDA && gdl_cpu_accessible(have.device_type));
  if (!movable || copy == Py_False) {
    PyErr_Format(PyExc_BufferError, "godlpack cannot move a tensor on device (%d, %d) to device (%d, %d)%s",
                 (int)have.device_type, (int)have.device_id, (int)want.device_type, (int)want.device_id,
                 movable ? " without a copy (copy=False)"
                         : ": it copies between host memory and CUDA devices only");
    return -1;
  }
  *how = GDL_PLACE_COPY;
  return 0;
}

PyObject* gdl_tensor_on(GdlTensor* t, DLDevice want, PyObject* copy) {
  gdl_place how;
  if (gdl_placement(t->view.device, want, copy, &how) != 0) return NULL;
  if (how == GDL_PLACE_COPY) return gdl_cuda_copy(t, want, t->stream);
  if (how == GDL_PLACE_RELABEL && gdl_host_sync(t->view.device, t->stream) != 0) return NULL; /* the CPU reads next */
  if (copy == Py_True)
    return how == GDL_PLACE_RELABEL ? gdl_tensor_copy(t, DLPACK_FLAG_BITMASK_IS_COPIED)
                                    : gdl_device_copy(t, DLPACK_FLAG_BITMASK_IS_COPIED);
  gdl_owner_incref(t->owner);
  PyObject* r = gdl_tensor_new(t->owner, &t->view, t->flags & DLPACK_FLAG_BITMASK_READ_ONLY);
  if (r == NULL) return NULL;
  GdlTensor* u = GDL_AS(GdlTensor, r);
  u->view.device = want;
  u->stream = how == GDL_PLACE_RELABEL ? 1 : t->stream;
  return r;
}

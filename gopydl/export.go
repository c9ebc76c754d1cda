package gopydl

import (
	"unsafe"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/producer"
)

// export pins data and returns a fresh DLManagedTensorVersioned* viewing it
// with shape (nil: one dimension of len(data)). The slice stays pinned until
// the tensor's deleter runs; the caller owns the tensor and must hand it to
// Python's from_go or to Free, and must not resize data meanwhile.
func export[T godlpack.Element](data []T, shape []int64, readOnly bool) (uintptr, error) {
	if shape == nil {
		shape = []int64{int64(len(data))}
	}
	src, err := producer.FromSlice(data, shape, nil, readOnly, nil)
	if err != nil {
		return 0, err
	}
	// The export holds its own reference to the memory.
	defer src.Close()
	m, err := src.ExportVersioned(0)
	if err != nil {
		return 0, err
	}
	return uintptr(unsafe.Pointer(m)), nil
}

// ExportSource exports a producer.Source (e.g. producer.Empty's 64-byte
// aligned C memory) as a fresh DLManagedTensorVersioned*. The Source may be
// closed afterwards; the export keeps the memory alive.
func ExportSource(src *producer.Source) (uintptr, error) {
	m, err := src.ExportVersioned(0)
	if err != nil {
		return 0, err
	}
	return uintptr(unsafe.Pointer(m)), nil
}

// Free calls the deleter of a tensor pointer that is still owned by the
// caller: an export never handed to Python, or a pointer from to_go that is
// not imported. 0 is ignored. The pointer must not be used afterwards.
func Free(ptr uintptr) {
	if ptr == 0 {
		return
	}
	p := toPointer(ptr &^ 1)
	if ptr&1 != 0 {
		(*godlpack.DLManagedTensor)(p).Free()
		return
	}
	(*godlpack.DLManagedTensorVersioned)(p).Free()
}

// LiveExports counts this process's exports whose deleter has not run yet
// (producer.LiveExports); tests use it to prove exactly-once deletion.
func LiveExports() int64 { return producer.LiveExports() }

// toPointer turns an address received from Python into a pointer. It holds
// C memory or pinned Go memory, never a movable Go object.
func toPointer(ptr uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&ptr))
}

package godlpack

import "unsafe"

// The Go forms of the DLPack helper C API (include/godlpack/godlpack.h), for
// Go programs with or without Python.

// Free calls the tensor's deleter (skipped when m or its deleter is nil).
// The caller must own m, and must not use it afterwards.
func (m *DLManagedTensor) Free() {
	if m != nil {
		CallDeleter(m.Deleter, unsafe.Pointer(m))
	}
}

// Free calls the tensor's deleter (skipped when m or its deleter is nil).
func (m *DLManagedTensorVersioned) Free() {
	if m != nil {
		CallDeleter(m.Deleter, unsafe.Pointer(m))
	}
}

// IsCPUAccessible reports whether the host may read the device's memory.
func IsCPUAccessible(d DLDevice) bool { return DeviceType(d.DeviceType).IsCPUAccessible() }

// VersionInfo is what __dlpack_info__ reports: the DLPack version we
// implement, the newest major we import, and our helper C API ABI number.
type VersionInfo struct {
	API            Version
	MaxImportMajor uint32
	ABI            int
}

// Info returns the version information of this build.
func Info() VersionInfo {
	return VersionInfo{API: APIVersion, MaxImportMajor: MaxImportMajor, ABI: ABIVersion}
}

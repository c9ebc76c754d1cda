package godlpack

import "fmt"

// DeviceType is DLDeviceType.
type DeviceType int32

// Device types of DLPack 1.3.
const (
	CPU         DeviceType = 1
	CUDA        DeviceType = 2
	CUDAHost    DeviceType = 3
	OpenCL      DeviceType = 4
	Vulkan      DeviceType = 7
	Metal       DeviceType = 8
	VPI         DeviceType = 9
	ROCM        DeviceType = 10
	ROCMHost    DeviceType = 11
	ExtDev      DeviceType = 12
	CUDAManaged DeviceType = 13
	OneAPI      DeviceType = 14
	WebGPU      DeviceType = 15
	Hexagon     DeviceType = 16
	MAIA        DeviceType = 17
	Trn         DeviceType = 18
)

var deviceNames = map[DeviceType]string{
	CPU: "cpu", CUDA: "cuda", CUDAHost: "cuda_host", OpenCL: "opencl",
	Vulkan: "vulkan", Metal: "metal", VPI: "vpi", ROCM: "rocm",
	ROCMHost: "rocm_host", ExtDev: "ext_dev", CUDAManaged: "cuda_managed",
	OneAPI: "oneapi", WebGPU: "webgpu", Hexagon: "hexagon", MAIA: "maia", Trn: "trn",
}

// DeviceTypes lists every device type we know, in ascending order.
func DeviceTypes() []DeviceType {
	out := make([]DeviceType, 0, len(deviceNames))
	for t := CPU; t <= Trn; t++ {
		if _, ok := deviceNames[t]; ok {
			out = append(out, t)
		}
	}
	return out
}

// Known reports whether t is a device type of the DLPack version we implement.
func (t DeviceType) Known() bool { return t >= CPU && t <= Trn && t != 5 && t != 6 }

func (t DeviceType) String() string {
	if n, ok := deviceNames[t]; ok {
		return n
	}
	return fmt.Sprintf("device_type(%d)", int32(t))
}

// IsCPUAccessible reports whether the host CPU may dereference memory of this
// device type: plain CPU, pinned host memory and managed (unified) memory.
func (t DeviceType) IsCPUAccessible() bool {
	switch t {
	case CPU, CUDAHost, ROCMHost, CUDAManaged:
		return true
	}
	return false
}

// Device is a device type and ordinal.
type Device struct {
	Type DeviceType
	ID   int32
}

// CPUDevice is the host.
var CPUDevice = Device{CPU, 0}

// IsCPUAccessible reports whether the host can read this device's memory.
func (d Device) IsCPUAccessible() bool { return d.Type.IsCPUAccessible() }

func (d Device) String() string { return fmt.Sprintf("%s:%d", d.Type, d.ID) }

// DLDevice converts to the C layout.
func (d Device) DLDevice() DLDevice { return DLDevice{int32(d.Type), d.ID} }

// DeviceOf converts from the C layout.
func DeviceOf(d DLDevice) Device { return Device{DeviceType(d.DeviceType), d.DeviceID} }

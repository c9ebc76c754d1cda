package godlpack

import "fmt"

// DeviceType is DLDeviceType.
type DeviceType int32

// deviceInfo is one row of the device table (tables_gen.go).
type deviceInfo struct {
	t    DeviceType
	name string
	cpu  bool
}

// lookupDevice finds t's row; the table is small and ordered.
func lookupDevice(t DeviceType) (deviceInfo, bool) {
	for _, d := range deviceTable {
		if d.t == t {
			return d, true
		}
	}
	return deviceInfo{}, false
}

// DeviceTypes lists every device type we know, in ascending order.
func DeviceTypes() []DeviceType {
	out := make([]DeviceType, len(deviceTable))
	for i, d := range deviceTable {
		out[i] = d.t
	}
	return out
}

// Known reports whether t is a device type of the DLPack version we implement.
func (t DeviceType) Known() bool {
	_, ok := lookupDevice(t)
	return ok
}

func (t DeviceType) String() string {
	if d, ok := lookupDevice(t); ok {
		return d.name
	}
	return fmt.Sprintf("device_type(%d)", int32(t))
}

// IsCPUAccessible reports whether the host CPU may dereference memory of this
// device type: plain CPU, pinned host memory and managed (unified) memory.
func (t DeviceType) IsCPUAccessible() bool {
	d, ok := lookupDevice(t)
	return ok && d.cpu
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

// Package godlpack holds the DLPack 1.x data model for Go: the C ABI structs
// (mirrored in Go with the same layout), data types, devices, versions and a
// Tensor description with overflow-checked size arithmetic.
//
// Subpackages do the work: producer exports Go memory as DLPack managed
// tensors, consumer imports and validates foreign ones, capsule implements the
// PyCapsule ownership rules, and pyext is the CPython extension module.
//go:generate go run ./internal/gen/tables

package godlpack

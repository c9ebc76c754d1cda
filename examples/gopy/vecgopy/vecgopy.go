// Package vecgopy is a gopy extension whose functions take NumPy (or any
// DLPack) arrays zero-copy through gopydl. From Python:
//
//	import gopydl, vecgopy
//	vecgopy.Scale(gopydl.to_go(x), 2.0)               # x *= 2 in place
//	y = np.from_dlpack(gopydl.from_go(vecgopy.Arange(5)))  # Go memory, no copy
package vecgopy

import (
	"github.com/godlpack/godlpack/gopydl"
	"github.com/godlpack/godlpack/gopydl/guard"
)

// Scale multiplies a float32 array (a pointer from gopydl.to_go) by a, in
// place. Go owns the pointer from here on: every path closes it.
func Scale(ptr uintptr, a float32) error {
	arr, err := gopydl.MutableFloat32(ptr)
	if err != nil {
		return err
	}
	defer arr.Close()
	x, err := arr.Float32s()
	if err != nil {
		return err
	}
	for i := range x {
		x[i] *= a
	}
	return nil
}

// Sum adds up a float64 array; read-only arrays are fine.
func Sum(ptr uintptr) (float64, error) {
	arr, err := gopydl.ViewFloat64(ptr)
	if err != nil {
		return 0, err
	}
	defer arr.Close()
	x, err := arr.Float64s()
	if err != nil {
		return 0, err
	}
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s, nil
}

// At returns x[i] of a float32 array. It indexes without checking i: the
// out-of-range panic becomes a Python RuntimeError through guard.Recover
// (without it, gopy lets a panic kill the interpreter).
func At(ptr uintptr, i int) (v float32, err error) {
	defer guard.Recover(&err)
	arr, err := gopydl.ViewFloat32(ptr)
	if err != nil {
		return 0, err
	}
	defer arr.Close()
	x, err := arr.Float32s()
	if err != nil {
		return 0, err
	}
	return x[i], nil
}

// Arange returns a new Go array 0, 1, ..., n-1 (float32) as a managed
// tensor pointer for gopydl.from_go; the slice stays pinned until the
// Python side drops it.
func Arange(n int) (uintptr, error) {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i)
	}
	return gopydl.ExportFloat32(x, nil)
}

// ScaleSlice is the same loop on gopy's own slice handle, for comparison:
// getting a NumPy array into and out of a go.Slice_float32 copies it
// element by element.
func ScaleSlice(x []float32, a float32) {
	for i := range x {
		x[i] *= a
	}
}

// LiveExports counts Go exports whose deleter has not run yet.
func LiveExports() int64 { return gopydl.LiveExports() }

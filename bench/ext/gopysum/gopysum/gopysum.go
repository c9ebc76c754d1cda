// Package gopysum is the gopy side of bench/ext_bench.py: the float64 sum
// through gopy's own slice type (SumSlice) and through a gopydl pointer (Sum).
package gopysum

import "github.com/godlpack/godlpack/gopydl"

// SumSlice adds up a gopy slice handle (go.Slice_float64(x) copies x into
// Go element by element on the Python side).
func SumSlice(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s
}

// Sum adds up a float64 array passed as a gopydl.to_go pointer, zero-copy.
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
	return SumSlice(x), nil
}

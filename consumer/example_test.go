package consumer_test

import (
	"fmt"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/consumer"
	"github.com/godlpack/godlpack/producer"
)

// A Go program without Python: export a pinned slice, import it as a
// consumer would, read it, and release both sides exactly once.
func Example() {
	src, _ := producer.FromSlice([]float32{1, 2, 3, 4, 5, 6}, []int64{2, 3}, nil, false, nil)
	m, _ := src.ExportVersioned(0) // a fresh *DLManagedTensorVersioned
	src.Close()                    // the export keeps the memory alive

	t, err := consumer.ImportVersioned(m)
	if err != nil {
		panic(err)
	}
	vals, _ := t.AsFloat32s()
	fmt.Println(t.Shape, t.DType, t.Device, godlpack.IsCPUAccessible(m.DLTensor.Device), vals)
	fmt.Println("live exports before Close:", producer.LiveExports() > 0)
	_ = t.Close() // calls the producer's deleter, once
	fmt.Println(godlpack.Info().API)
	// Output:
	// [2 3] float32 cpu:0 true [1 2 3 4 5 6]
	// live exports before Close: true
	// 1.3
}

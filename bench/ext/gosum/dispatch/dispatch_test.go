// Package dispatch times, in Go alone, the steps pyext's gdlpyCall takes per
// call of sum(x []float64) (pyext/funcs.go, params.go and call.go, copied here in miniature), next to
// cheaper equivalents, as evidence for the breakdown in bench/ext_bench.py:
//
//	go test -run='^$' -bench=. -benchmem ./dispatch   (in bench/ext/gosum)
package dispatch

import (
	"reflect"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/consumer"
	"github.com/godlpack/godlpack/producer"
)

func sum(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s
}

var sink float64

func export(b *testing.B, n int) *godlpack.DLManagedTensorVersioned {
	x := make([]float64, n)
	s, err := producer.FromPointer(unsafe.Pointer(&x[0]), x, godlpack.Float64, []int64{int64(n)})
	if err != nil {
		b.Fatal(err)
	}
	m, err := s.ExportVersioned(0)
	s.Close()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(m.Free)
	return m
}

// Validate: the Go-side check of an array C has already checked (a Go->C
// call, plus shape/strides copied into Go memory).
func BenchmarkValidateVersioned(b *testing.B) {
	m := export(b, 1000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := consumer.ValidateVersioned(m); err != nil {
			b.Fatal(err)
		}
	}
}

// SliceArrayOf is pyext's sliceOf: reflect.ArrayOf(n) per call (a type
// per distinct length, cached forever) then NewAt/Slice/Convert.
func BenchmarkSliceArrayOf(b *testing.B) {
	for _, n := range []int{1, 1000, 1000000} {
		x := make([]float64, n)
		t := reflect.TypeFor[[]float64]()
		b.Run(itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				v := reflect.NewAt(reflect.ArrayOf(n, t.Elem()), unsafe.Pointer(&x[0])).Elem().Slice(0, n).Convert(t)
				sink += float64(v.Len())
			}
		})
	}
}

// ArrayOfGrowth: the heap that stays after reflect.ArrayOf has made a type
// for each of b.N new lengths (they are cached for the process's lifetime).
func BenchmarkArrayOfGrowth(b *testing.B) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	elem := reflect.TypeFor[float64]()
	for i := range b.N {
		_ = reflect.ArrayOf(10_000_000+i, elem)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(b.N), "retained-B/length")
}

// SliceAt: reflect.SliceAt (Go 1.23), no array type made.
func BenchmarkSliceAt(b *testing.B) {
	x := make([]float64, 1000)
	t := reflect.TypeFor[float64]()
	b.ReportAllocs()
	for b.Loop() {
		v := reflect.SliceAt(t, unsafe.Pointer(&x[0]), len(x))
		sink += float64(v.Len())
	}
}

// ReflectCall: the generic call pyext makes (args slice, reflect.Call,
// results read back through reflect) against a direct call.
func BenchmarkReflectCall(b *testing.B) {
	x := make([]float64, 1)
	fn := reflect.ValueOf(sum)
	b.ReportAllocs()
	for b.Loop() {
		args := make([]reflect.Value, 1)
		args[0] = reflect.ValueOf(x)
		res := fn.Call(args)
		sink += res[0].Float()
	}
}

func BenchmarkDirectCall(b *testing.B) {
	x := make([]float64, 1)
	var f func([]float64) float64 = sum
	b.ReportAllocs()
	for b.Loop() {
		sink += f(x)
	}
}

// Fixed: registry RLock, defer/recover, the aliasing span of the argument.
func BenchmarkFixedSteps(b *testing.B) {
	var mu sync.RWMutex
	funcs := []int{1}
	x := reflect.ValueOf(make([]float64, 1000))
	type span struct{ lo, hi uintptr }
	b.ReportAllocs()
	for b.Loop() {
		func() {
			mu.RLock()
			_ = funcs[0]
			mu.RUnlock()
			defer func() { _ = recover() }()
			var spans []span
			lo := uintptr(x.Index(0).Addr().UnsafePointer())
			spans = append(spans, span{lo, lo + uintptr(x.Len())*x.Type().Elem().Size()})
			sink += float64(len(spans))
		}()
	}
}

func itoa(n int) string {
	switch n {
	case 1:
		return "n=1"
	case 1000:
		return "n=1K"
	}
	return "n=1M"
}

package consumer_test

// Benchmarks of the consumer's hot paths.
//
//	go test -run='^$' -bench=. -benchtime=200ms ./consumer

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/consumer"
	"github.com/godlpack/godlpack/producer"
)

// benchSource is a 1024-element float32 Go slice shaped ndim ways (the
// validation cost grows with ndim, not with the number of elements).
func benchSource(b *testing.B, ndim int) *producer.Source {
	b.Helper()
	shape := map[int][]int64{1: {1024}, 4: {4, 4, 8, 8}}[ndim]
	s, err := producer.FromSlice(make([]float32, 1024), shape, nil, false, nil)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkImportVersioned: export, import (validate + ownership + cleanup
// registration) and Close (the deleter), per call. ExportOnly is the same
// export and deleter without the import, to subtract.
func BenchmarkImportVersioned(b *testing.B) {
	for _, ndim := range []int{1, 4} {
		b.Run(fmt.Sprintf("ndim%d/ExportImportClose", ndim), func(b *testing.B) {
			s := benchSource(b, ndim)
			defer s.Close()
			b.ReportAllocs()
			for b.Loop() {
				m, err := s.ExportVersioned(0)
				if err != nil {
					b.Fatal(err)
				}
				t, err := consumer.ImportVersioned(m)
				if err != nil {
					b.Fatal(err)
				}
				if err := t.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("ndim%d/ExportOnly", ndim), func(b *testing.B) {
			s := benchSource(b, ndim)
			defer s.Close()
			b.ReportAllocs()
			for b.Loop() {
				m, err := s.ExportVersioned(0)
				if err != nil {
					b.Fatal(err)
				}
				m.Free()
			}
		})
	}
}

// BenchmarkValidateVersioned: the checks alone, on one export kept alive.
func BenchmarkValidateVersioned(b *testing.B) {
	for _, ndim := range []int{1, 4} {
		b.Run(fmt.Sprintf("ndim%d", ndim), func(b *testing.B) {
			s := benchSource(b, ndim)
			defer s.Close()
			m, err := s.ExportVersioned(0)
			if err != nil {
				b.Fatal(err)
			}
			defer m.Free()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := consumer.ValidateVersioned(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCopyCompact copies strided views of a 1024x1024 float32 matrix
// (4 MiB) into a compact buffer; SetBytes makes -bench report MB/s.
//   - Compact: the whole matrix (one memmove).
//   - RowStep2: every other row, shape [512 1024] strides [2048 1] (row copies).
//   - Transposed: shape [1024 1024] strides [1 1024] (element by element).
func BenchmarkCopyCompact(b *testing.B) {
	const n = 1024
	buf := make([]float32, n*n)
	views := []struct {
		name           string
		shape, strides []int64
	}{
		{"Compact", []int64{n, n}, nil},
		{"RowStep2", []int64{n / 2, n}, []int64{2 * n, 1}},
		{"Transposed", []int64{n, n}, []int64{1, n}},
	}
	for _, v := range views {
		b.Run(v.name, func(b *testing.B) {
			t := godlpack.Tensor{Data: unsafe.Pointer(&buf[0]), Shape: v.shape, Strides: v.strides,
				DType: godlpack.Float32, Device: godlpack.CPUDevice}
			size, err := consumer.CompactSize(&t)
			if err != nil {
				b.Fatal(err)
			}
			dst := make([]byte, size)
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if err := consumer.CopyCompact(dst, &t); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package producer_test

// Benchmarks of the producer's hot paths and of one cgo crossing.
//
//	go test -run='^$' -bench=. -benchtime=200ms ./producer
//
// Test files cannot use cgo, so crossings are measured through exported
// functions that already make them: LiveExports is one Go→C call doing a
// relaxed atomic load, and the release of a Go-memory owner is the only C→Go
// call (see BenchmarkReleaseLastExport).

import (
	"runtime"
	"runtime/cgo"
	"testing"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/producer"
)

var sinkInt int64

// benchShape is a 1024-element float32 tensor (4 KiB); export cost does not
// depend on the size, only on ndim (shape and strides are copied).
var benchShape = []int64{1024}

func newSliceSource(b *testing.B) *producer.Source {
	b.Helper()
	s, err := producer.FromSlice(make([]float32, 1024), benchShape, nil, false, nil)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func newEmptySource(b *testing.B) *producer.Source {
	b.Helper()
	s, err := producer.Empty(godlpack.Float32, benchShape...)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkExport: one fresh managed tensor and its deleter, per call. The
// deleter drops a reference that is not the last, so no release runs.
func BenchmarkExport(b *testing.B) {
	sources := []struct {
		name string
		make func(*testing.B) *producer.Source
	}{{"FromSlice", newSliceSource}, {"Empty", newEmptySource}}
	for _, src := range sources {
		b.Run("Versioned/"+src.name, func(b *testing.B) {
			s := src.make(b)
			defer s.Close()
			b.ReportAllocs()
			for b.Loop() {
				m, err := s.ExportVersioned(0)
				if err != nil {
					b.Fatal(err)
				}
				deleteVersioned(m)
			}
		})
		b.Run("Legacy/"+src.name, func(b *testing.B) {
			s := src.make(b)
			defer s.Close()
			b.ReportAllocs()
			for b.Loop() {
				m, err := s.ExportLegacy()
				if err != nil {
					b.Fatal(err)
				}
				deleteLegacy(m)
			}
		})
	}
}

// BenchmarkCreateClose: making a Source and closing it with no export alive.
// FromSlice pins the slice and makes a cgo.Handle, and Close releases them
// through the C owner, which calls back into Go (one C→Go crossing); Empty
// allocates and frees aligned C memory instead.
func BenchmarkCreateClose(b *testing.B) {
	b.Run("FromSlice", func(b *testing.B) {
		data := make([]float32, 1024)
		b.ReportAllocs()
		for b.Loop() {
			s, err := producer.FromSlice(data, benchShape, nil, false, nil)
			if err != nil {
				b.Fatal(err)
			}
			s.Close()
		}
	})
	b.Run("Empty", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s, err := producer.Empty(godlpack.Float32, benchShape...)
			if err != nil {
				b.Fatal(err)
			}
			s.Close()
		}
	})
}

// BenchmarkCgoGoToC: one Go→C call (gdl_live_exports is a relaxed atomic
// load, so this is almost all crossing).
func BenchmarkCgoGoToC(b *testing.B) {
	for b.Loop() {
		sinkInt += producer.LiveExports()
	}
}

// BenchmarkReleaseLastExport times deleting the last export of an owner: a
// Go→C call of the deleter, then the owner's release. For Go memory (GoOwner)
// the release calls back into Go (godlpackReleaseHandle: handle lookup and
// delete, Unpin); for C memory (COwner) it is a free. GoOwner minus COwner is
// an upper bound on one C→Go crossing; BenchmarkGoReleaseParts gives the Go
// work inside it to subtract. Exports are prepared in batches with the timer
// stopped.
func BenchmarkReleaseLastExport(b *testing.B) {
	data := make([]float32, 1024)
	b.Run("GoOwner", func(b *testing.B) {
		benchReleaseLast(b, func() (*producer.Source, error) {
			return producer.FromSlice(data, benchShape, nil, false, nil)
		})
	})
	b.Run("COwner", func(b *testing.B) {
		benchReleaseLast(b, func() (*producer.Source, error) {
			return producer.Empty(godlpack.Float32, benchShape...)
		})
	})
}

func benchReleaseLast(b *testing.B, newSource func() (*producer.Source, error)) {
	const batch = 4096
	ms := make([]*godlpack.DLManagedTensorVersioned, 0, batch)
	b.ResetTimer()
	for done := 0; done < b.N; done += len(ms) {
		b.StopTimer()
		ms = ms[:0]
		for i := 0; i < batch && done+i < b.N; i++ {
			s, err := newSource()
			if err != nil {
				b.Fatal(err)
			}
			m, err := s.ExportVersioned(0)
			if err != nil {
				b.Fatal(err)
			}
			s.Close() // the export now holds the owner's last reference
			ms = append(ms, m)
		}
		runtime.GC() // collect the batch's garbage now, not while timing
		b.StartTimer()
		for _, m := range ms {
			deleteVersioned(m)
		}
	}
}

// BenchmarkGoReleaseParts: the pure-Go work a Go-memory owner's life adds,
// without any crossing: a cgo.Handle made, looked up and deleted, and one
// object pinned and unpinned.
func BenchmarkGoReleaseParts(b *testing.B) {
	b.Run("Handle", func(b *testing.B) {
		v := &struct{ x int }{}
		for b.Loop() {
			h := cgo.NewHandle(v)
			_ = h.Value()
			h.Delete()
		}
	})
	b.Run("PinUnpin", func(b *testing.B) {
		data := make([]float32, 1024)
		for b.Loop() {
			var p runtime.Pinner
			p.Pin(&data[0])
			p.Unpin()
		}
	})
}

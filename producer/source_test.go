package producer_test

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/internal/testkit/testprod"
	"github.com/godlpack/godlpack/producer"
)

func TestExportCountsReturnToStart(t *testing.T) {
	c := snapshot()
	data := []float32{1, 2, 3, 4, 5, 6}
	s, err := producer.FromSlice(data, []int64{2, 3}, nil, false, nil)
	require.NoError(t, err)
	c.RequireDelta(t, 1, 0)

	v1, err := s.ExportVersioned(0)
	require.NoError(t, err)
	v2, err := s.ExportVersioned(godlpack.FlagIsCopied)
	require.NoError(t, err)
	l1, err := s.ExportLegacy()
	require.NoError(t, err)
	c.RequireDelta(t, 1, 3)
	assert.NotSame(t, v1, v2, "each export is a fresh struct")
	assert.NotSame(t, v1.DLTensor.Shape, v2.DLTensor.Shape, "each export owns its shape array")
	assert.NotSame(t, v1.DLTensor.Strides, v2.DLTensor.Strides, "each export owns its strides array")
	assert.Equal(t, godlpack.FlagIsCopied, v2.Flags)
	assert.Zero(t, v1.Flags)

	s.Close()
	c.RequireDelta(t, 1, 3, "exports keep the owner alive after Close")
	s.Close() // idempotent
	c.RequireDelta(t, 1, 3)

	want := []float32{1, 2, 3, 4, 5, 6}
	for _, dl := range []*godlpack.DLTensor{&v1.DLTensor, &v2.DLTensor, &l1.DLTensor} {
		assert.Equal(t, want, unsafe.Slice((*float32)(dl.Data), 6))
	}
	deleteVersioned(v1)
	c.RequireDelta(t, 1, 2)
	deleteLegacy(l1)
	c.RequireDelta(t, 1, 1)
	assert.Equal(t, want, unsafe.Slice((*float32)(v2.DLTensor.Data), 6))
	deleteVersioned(v2)
	c.RequireDelta(t, 0, 0)
	runtime.KeepAlive(data)
}

func TestExportAfterClose(t *testing.T) {
	c := snapshot()
	s, err := producer.Zeros(godlpack.Int32, 4)
	require.NoError(t, err)
	s.Close()
	c.RequireDelta(t, 0, 0)
	_, err = s.ExportVersioned(0)
	assert.ErrorIs(t, err, producer.ErrClosed)
	_, err = s.ExportLegacy()
	assert.ErrorIs(t, err, producer.ErrClosed)
	c.RequireDelta(t, 0, 0)
}

func TestExportedFields(t *testing.T) {
	c := snapshot()
	data := make([]int16, 12)
	for i := range data {
		data[i] = int16(i * 10)
	}
	cases := []struct {
		name           string
		shape, strides []int64
		offset         uint64
		first          int16
	}{
		{"compact", []int64{3, 4}, nil, 0, 0},
		{"explicit compact", []int64{3, 4}, []int64{4, 1}, 0, 0},
		{"transposed", []int64{4, 3}, []int64{1, 4}, 0, 0},
		{"reversed", []int64{12}, []int64{-1}, 22, 110},
		{"reversed rows", []int64{3, 4}, []int64{-4, 1}, 16, 80},
		{"every other", []int64{6}, []int64{2}, 0, 0},
		{"0-d", nil, nil, 0, 0},
		{"zero-size", []int64{0, 4}, nil, 0, 0},
	}
	for _, tc := range cases {
		s, err := producer.FromSlice(data, tc.shape, tc.strides, false, nil)
		require.NoError(t, err, tc.name)
		tt := s.Tensor()
		assert.Equal(t, unsafe.Pointer(&data[0]), tt.Data, tc.name)
		assert.Equal(t, tc.offset, tt.ByteOffset, tc.name)
		assert.Equal(t, godlpack.Int16, tt.DType)
		assert.Equal(t, godlpack.CPUDevice, tt.Device)
		assert.Equal(t, tc.strides, tt.Strides, tc.name)

		v, err := s.ExportVersioned(0)
		require.NoError(t, err)
		l, err := s.ExportLegacy()
		require.NoError(t, err)
		for _, dl := range []*godlpack.DLTensor{&v.DLTensor, &l.DLTensor} {
			checkExported(t, dl, tt)
			if n, _ := tt.NumElements(); n > 0 {
				assert.Equal(t, tc.first, *(*int16)(unsafe.Add(dl.Data, dl.ByteOffset)), tc.name)
			}
		}
		assert.Equal(t, godlpack.DLPackVersion{Major: 1, Minor: 3}, v.Version)
		// Scribbling over one export's dims does not change the source.
		if v.DLTensor.NDim > 0 {
			v.DLTensor.ShapeSlice()[0] = 99
			l2, err := s.ExportLegacy()
			require.NoError(t, err)
			assert.Equal(t, tt.Shape[0], l2.DLTensor.ShapeSlice()[0])
			deleteLegacy(l2)
		}
		s.Close()
		deleteVersioned(v)
		deleteLegacy(l)
	}
	c.RequireDelta(t, 0, 0)
	runtime.KeepAlive(data)
}

func TestReadOnlySource(t *testing.T) {
	c := snapshot()
	data := []uint8{1, 2, 3}
	s, err := producer.FromSlice(data, []int64{3}, nil, true, nil)
	require.NoError(t, err)
	assert.True(t, s.Tensor().ReadOnly)
	v, err := s.ExportVersioned(godlpack.FlagIsCopied)
	require.NoError(t, err)
	assert.Equal(t, godlpack.FlagReadOnly|godlpack.FlagIsCopied, v.Flags)
	_, err = s.ExportLegacy()
	assert.ErrorIs(t, err, producer.ErrReadOnlyLegacy)
	c.RequireDelta(t, 1, 1)
	s.Close()
	deleteVersioned(v)
	c.RequireDelta(t, 0, 0)
}

func TestOnFinal(t *testing.T) {
	// Steps: 'e' export, 'c' close, 'd' delete the oldest export.
	scenarios := []string{"c", "ecd", "edc", "eedecdd", "eccd", "ce", "eeeccddd", "eedcd"}
	for _, steps := range scenarios {
		c := snapshot()
		var calls atomic.Int32
		data := []int64{1, 2, 3}
		s, err := producer.FromSlice(data, []int64{3}, nil, false, func() { calls.Add(1) })
		require.NoError(t, err, steps)
		var ms []*godlpack.DLManagedTensorVersioned
		closed := false
		for i, st := range steps {
			switch st {
			case 'e':
				m, err := s.ExportVersioned(0)
				if closed {
					assert.ErrorIs(t, err, producer.ErrClosed)
				} else {
					require.NoError(t, err)
					ms = append(ms, m)
				}
			case 'c':
				s.Close()
				closed = true
			case 'd':
				deleteVersioned(ms[0])
				ms = ms[1:]
			}
			want := int32(0)
			if closed && len(ms) == 0 {
				want = 1 // closed and every export deleted
			}
			assert.Equal(t, want, calls.Load(), "%s: onFinal calls after step %d", steps, i)
			c.RequireDelta(t, int64(1-want), int64(len(ms)), "%s: after step %d", steps, i)
		}
		require.Empty(t, ms, steps)
		s.Close()
		assert.EqualValues(t, 1, calls.Load(), "%s: onFinal runs exactly once", steps)
		c.RequireDelta(t, 0, 0, steps)
		runtime.KeepAlive(data)
	}
}

func TestDeleterOnAnotherGoroutine(t *testing.T) {
	c := snapshot()
	var calls atomic.Int32
	data := make([]float64, 1000)
	s, err := producer.FromSlice(data, []int64{1000}, nil, false, func() { calls.Add(1) })
	require.NoError(t, err)
	ms := make(chan *godlpack.DLManagedTensor, 8)
	for i := 0; i < 8; i++ {
		m, err := s.ExportLegacy()
		require.NoError(t, err)
		ms <- m
	}
	close(ms)
	s.Close()
	done := make(chan struct{})
	for i := 0; i < 4; i++ {
		go func() {
			runtime.LockOSThread() // a foreign thread frees, as PyTorch does
			for m := range ms {
				deleteLegacy(m)
			}
			done <- struct{}{}
		}()
	}
	for i := 0; i < 4; i++ {
		<-done
	}
	assert.EqualValues(t, 1, calls.Load())
	c.RequireDelta(t, 0, 0)
}

// TestGCSafety exports pinned Go memory, drops every Go reference to it and
// churns the garbage collector: the data behind the exports must not change
// or be reused until the deleters run.
func TestGCSafety(t *testing.T) {
	c := snapshot()
	const rounds, n = 64, 2048
	var finals atomic.Int32
	exports := make([]*godlpack.DLManagedTensorVersioned, 0, rounds)
	legacies := make([]*godlpack.DLManagedTensor, 0, rounds)
	var garbage [][]int64
	for r := 0; r < rounds; r++ {
		func() {
			data := make([]int64, n)
			for i := range data {
				data[i] = int64(r*n + i)
			}
			s, err := producer.FromSlice(data, []int64{n}, nil, false, func() { finals.Add(1) })
			require.NoError(t, err)
			m, err := s.ExportVersioned(0)
			require.NoError(t, err)
			l, err := s.ExportLegacy()
			require.NoError(t, err)
			s.Close()
			exports = append(exports, m)
			legacies = append(legacies, l)
		}()
		runtime.GC()
		// Garbage of the same size class, to reuse any wrongly freed memory.
		for g := 0; g < 4; g++ {
			junk := make([]int64, n)
			for i := range junk {
				junk[i] = -1
			}
			garbage = append(garbage, junk)
		}
		if len(garbage) > 32 {
			garbage = garbage[:0]
		}
	}
	garbage = nil
	for i := 0; i < 5; i++ {
		runtime.GC()
		_ = make([]int64, n)
	}
	assert.Zero(t, finals.Load(), "no owner may be released while exports live")
	c.RequireDelta(t, rounds, 2*rounds)
	for r := range exports {
		got := unsafe.Slice((*int64)(unsafe.Add(exports[r].DLTensor.Data, exports[r].DLTensor.ByteOffset)), n)
		for i, v := range got {
			if v != int64(r*n+i) {
				t.Fatalf("round %d element %d = %d, want %d: the exported memory was freed or moved", r, i, v, r*n+i)
			}
		}
		assert.Equal(t, exports[r].DLTensor.Data, legacies[r].DLTensor.Data)
	}
	for r := range exports {
		deleteVersioned(exports[r])
		assert.EqualValues(t, r, finals.Load())
		deleteLegacy(legacies[r])
		assert.EqualValues(t, r+1, finals.Load())
	}
	c.RequireDelta(t, 0, 0)
}

// TestSourceCleanup: a Source dropped without Close releases its reference
// through runtime.AddCleanup.
func TestSourceCleanup(t *testing.T) {
	c := snapshot()
	var finals atomic.Int32
	var m *godlpack.DLManagedTensorVersioned
	func() {
		s, err := producer.FromSlice(make([]uint32, 16), []int64{16}, nil, false, func() { finals.Add(1) })
		require.NoError(t, err)
		m, err = s.ExportVersioned(0)
		require.NoError(t, err)
		_, err = producer.Empty(godlpack.Float32, 8) // dropped as well
		require.NoError(t, err)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for c.Delta() != (testprod.Counts{Owners: 1, Exports: 1}) && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	c.RequireDelta(t, 1, 1, "dropped sources release their owners; the export keeps one")
	assert.Zero(t, finals.Load())
	deleteVersioned(m)
	assert.EqualValues(t, 1, finals.Load())
	c.RequireDelta(t, 0, 0)
}

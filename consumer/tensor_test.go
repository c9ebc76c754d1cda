package consumer_test

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/consumer"
	"github.com/godlpack/godlpack/internal/testkit/invalid"
	"github.com/godlpack/godlpack/internal/testkit/testprod"
	"github.com/godlpack/godlpack/producer"
)

func TestCloseCallsDeleterExactlyOnce(t *testing.T) {
	c := snapshot()
	var finals atomic.Int32
	data := []float64{1, 2, 3, 4}
	s, err := producer.FromSlice(data, []int64{2, 2}, nil, false, func() { finals.Add(1) })
	require.NoError(t, err)
	m, err := s.ExportVersioned(0)
	require.NoError(t, err)
	s.Close()
	tt, err := consumer.ImportVersioned(m)
	require.NoError(t, err)
	c.RequireDelta(t, 1, 1)

	// Nothing is released before Close, whatever the GC does.
	for i := 0; i < 5; i++ {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	c.RequireDelta(t, 1, 1, "the deleter must not run before Close")
	assert.Zero(t, finals.Load())
	assert.False(t, tt.Closed())
	v, err := tt.AsFloat64s()
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2, 3, 4}, v)

	require.NoError(t, tt.Close())
	assert.True(t, tt.Closed())
	c.RequireDelta(t, 0, 0)
	assert.EqualValues(t, 1, finals.Load())

	assert.ErrorIs(t, tt.Close(), consumer.ErrClosed)
	assert.ErrorIs(t, tt.Close(), consumer.ErrClosed)
	c.RequireDelta(t, 0, 0)
	assert.EqualValues(t, 1, finals.Load())
	_, err = tt.AsFloat64s()
	assert.ErrorIs(t, err, consumer.ErrClosed)
	_, err = tt.Copy()
	assert.ErrorIs(t, err, consumer.ErrClosed)
	_, err = consumer.MutableView[float64](tt)
	assert.ErrorIs(t, err, consumer.ErrClosed)
	runtime.KeepAlive(data)
}

func TestCloseTwiceHandMade(t *testing.T) {
	v := testprod.NewVersioned()
	defer v.Free()
	goodTensor(t, &v.M.DLTensor)
	tt, err := consumer.ImportVersioned(v.M)
	require.NoError(t, err)
	assert.Zero(t, v.Calls())
	require.NoError(t, tt.Close())
	assert.EqualValues(t, 1, v.Calls())
	assert.ErrorIs(t, tt.Close(), consumer.ErrClosed)
	assert.EqualValues(t, 1, v.Calls())

	l := testprod.NewLegacy()
	defer l.Free()
	goodTensor(t, &l.M.DLTensor)
	tl, err := consumer.ImportLegacy(l.M)
	require.NoError(t, err)
	require.NoError(t, tl.Close())
	assert.ErrorIs(t, tl.Close(), consumer.ErrClosed)
	assert.EqualValues(t, 1, l.Calls())
}

// waitFor runs the GC until cond holds or the deadline passes.
func waitFor(cond func() bool) bool {
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	return true
}

// TestCleanupSafetyNet: a Tensor dropped without Close still has its deleter
// called, once, by the runtime.AddCleanup safety net.
func TestCleanupSafetyNet(t *testing.T) {
	v := testprod.NewVersioned()
	defer v.Free()
	goodTensor(t, &v.M.DLTensor)
	l := testprod.NewLegacy()
	defer l.Free()
	goodTensor(t, &l.M.DLTensor)
	func() {
		tv, err := consumer.ImportVersioned(v.M)
		require.NoError(t, err)
		tl, err := consumer.ImportLegacy(l.M)
		require.NoError(t, err)
		_, _ = tv.Copy() // no view: a view would make the cleanup leak instead
		_, _ = tl.Copy()
	}()
	require.True(t, waitFor(func() bool { return v.Calls() == 1 && l.Calls() == 1 }),
		"cleanup did not run: versioned %d, legacy %d calls", v.Calls(), l.Calls())
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
	time.Sleep(10 * time.Millisecond)
	assert.EqualValues(t, 1, v.Calls())
	assert.EqualValues(t, 1, l.Calls())

	// The same for a producer export: counters return to where they were.
	c := snapshot()
	var finals atomic.Int32
	func() {
		s, err := producer.FromSlice(make([]int16, 10), []int64{10}, nil, false, func() { finals.Add(1) })
		require.NoError(t, err)
		defer s.Close()
		m, err := s.ExportVersioned(0)
		require.NoError(t, err)
		_, err = consumer.ImportVersioned(m)
		require.NoError(t, err)
	}()
	require.True(t, waitFor(func() bool { return c.Delta() == testprod.Counts{} }), "counts stay at %+v", c.Delta())
	assert.EqualValues(t, 1, finals.Load())
}

// TestClosedTensorIsNotCleanedAgain: after Close, the cleanup must not call the
// deleter a second time.
func TestClosedTensorIsNotCleanedAgain(t *testing.T) {
	v := testprod.NewVersioned()
	defer v.Free()
	goodTensor(t, &v.M.DLTensor)
	func() {
		tt, err := consumer.ImportVersioned(v.M)
		require.NoError(t, err)
		require.NoError(t, tt.Close())
	}()
	for i := 0; i < 10; i++ {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	assert.EqualValues(t, 1, v.Calls())
}

func TestCopyCompactErrors(t *testing.T) {
	buf := make([]byte, 64)
	base := godlpack.Tensor{Data: unsafe.Pointer(&buf[0]), Shape: []int64{4}, DType: godlpack.Float32, Device: godlpack.CPUDevice}

	tt := base
	tt.Device = godlpack.Device{Type: godlpack.CUDA}
	invalid.Require(t, consumer.CopyCompact(make([]byte, 16), &tt), godlpack.ErrDevice)

	tt = base
	invalid.Require(t, consumer.CopyCompact(make([]byte, 15), &tt), godlpack.ErrShape)

	f4 := godlpack.DType{Code: godlpack.CodeFloat4E2M1FN, Bits: 4, Lanes: 1}
	tt = base
	tt.DType, tt.Strides = f4, []int64{2}
	invalid.Require(t, consumer.CopyCompact(make([]byte, 16), &tt), godlpack.ErrStrides)

	// Compact packed sub-byte data copies byte for byte.
	for i := range buf {
		buf[i] = byte(i + 1)
	}
	tt = base
	tt.DType, tt.Shape, tt.ByteOffset = f4, []int64{5}, 1
	n, err := consumer.CompactSize(&tt)
	require.NoError(t, err)
	assert.EqualValues(t, 3, n)
	dst := make([]byte, 3)
	require.NoError(t, consumer.CopyCompact(dst, &tt))
	assert.Equal(t, []byte{2, 3, 4}, dst)

	tt = base
	tt.Shape = []int64{-1}
	invalid.Require(t, consumer.CopyCompact(dst, &tt), godlpack.ErrShape)

	// Strided complex128 with an offset.
	c := make([]complex128, 6)
	for i := range c {
		c[i] = complex(float64(i), -float64(i))
	}
	tt = godlpack.Tensor{Data: unsafe.Pointer(&c[0]), ByteOffset: 16 * 5, Shape: []int64{3}, Strides: []int64{-2},
		DType: godlpack.Complex128, Device: godlpack.Device{Type: godlpack.CUDAHost}}
	out := make([]byte, 48)
	require.NoError(t, consumer.CopyCompact(out, &tt))
	got := unsafe.Slice((*complex128)(unsafe.Pointer(&out[0])), 3)
	assert.Equal(t, []complex128{5 - 5i, 3 - 3i, 1 - 1i}, got)
	runtime.KeepAlive(c)
}

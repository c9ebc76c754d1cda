package consumer_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/godlpack/godlpack/consumer"
	"github.com/godlpack/godlpack/internal/testkit/testprod"
)

// TestViewOutlivesDroppedTensor (issue 12 item 4): a slice from View must stay
// valid after its Tensor is dropped without Close. The cleanup used to call
// the deleter, freeing the memory the slice aliased.
func TestViewOutlivesDroppedTensor(t *testing.T) {
	v := testprod.NewVersioned()
	defer v.Free()
	goodTensor(t, &v.M.DLTensor)
	leaked := consumer.LeakedTensors()
	vals := func() []float32 {
		tt, err := consumer.ImportVersioned(v.M)
		require.NoError(t, err)
		s, err := tt.AsFloat32s()
		require.NoError(t, err)
		return s
	}()
	require.True(t, waitFor(func() bool { return consumer.LeakedTensors() == leaked+1 }),
		"the dropped Tensor's cleanup did not report a leak")
	for i := 0; i < 5; i++ {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	assert.Zero(t, v.Calls(), "the deleter ran while a view of its memory is reachable")
	vals[0] = 7 // still the producer's memory
	assert.Len(t, vals, 6)
	runtime.KeepAlive(vals)
}

// TestDroppedTensorWithoutViewIsFreed: with no view taken, the cleanup still
// calls the deleter (once).
func TestDroppedTensorWithoutViewIsFreed(t *testing.T) {
	v := testprod.NewVersioned()
	defer v.Free()
	goodTensor(t, &v.M.DLTensor)
	leaked := consumer.LeakedTensors()
	func() {
		tt, err := consumer.ImportVersioned(v.M)
		require.NoError(t, err)
		_, err = tt.Copy()
		require.NoError(t, err)
	}()
	require.True(t, waitFor(func() bool { return v.Calls() == 1 }), "cleanup did not run")
	assert.Equal(t, leaked, consumer.LeakedTensors())
}

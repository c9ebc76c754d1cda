package producer_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/producer"
)

// TestConcurrentExportClose exports from shared sources on many goroutines
// while another goroutine closes them; every export either succeeds or says
// ErrClosed, and every owner is released exactly once.
func TestConcurrentExportClose(t *testing.T) {
	c := snapshot()
	const sources, workers, perWorker = 8, 16, 200
	var finals atomic.Int32
	var srcs []*producer.Source
	for i := 0; i < sources; i++ {
		data := make([]uint64, 64)
		for j := range data {
			data[j] = uint64(i)
		}
		s, err := producer.FromSlice(data, []int64{8, 8}, nil, false, func() { finals.Add(1) })
		require.NoError(t, err)
		srcs = append(srcs, s)
	}
	var ok, refused atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			<-start
			for i := 0; i < perWorker; i++ {
				k := (w + i) % sources
				s := srcs[k]
				if i%2 == 0 {
					m, err := s.ExportVersioned(0)
					if errors.Is(err, producer.ErrClosed) {
						refused.Add(1)
						continue
					}
					if !assert.NoError(t, err) {
						return
					}
					if got := *(*uint64)(m.DLTensor.Data); got != uint64(k) {
						t.Errorf("source %d reads %d", k, got)
					}
					deleteVersioned(m)
				} else {
					m, err := s.ExportLegacy()
					if errors.Is(err, producer.ErrClosed) {
						refused.Add(1)
						continue
					}
					if !assert.NoError(t, err) {
						return
					}
					if got := unsafe.Slice((*uint64)(m.DLTensor.Data), 64)[63]; got != uint64(k) {
						t.Errorf("source %d reads %d", k, got)
					}
					deleteLegacy(m)
				}
				ok.Add(1)
			}
		}(w)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-start
		for i, s := range srcs {
			if i%2 == 0 {
				s.Close()
			}
		}
		for _, s := range srcs {
			s.Close() // twice for the even ones
		}
	}()
	close(start)
	wg.Wait()
	assert.Equal(t, int64(workers*perWorker), ok.Load()+refused.Load())
	assert.EqualValues(t, sources, finals.Load())
	c.RequireDelta(t, 0, 0)
	for _, s := range srcs {
		_, err := s.ExportVersioned(0)
		assert.ErrorIs(t, err, producer.ErrClosed)
	}
}

// TestConcurrentDeleteSharedOwner deletes many exports of one source from many
// goroutines at once: the owner's count must reach zero exactly once.
func TestConcurrentDeleteSharedOwner(t *testing.T) {
	for round := 0; round < 20; round++ {
		c := snapshot()
		var finals atomic.Int32
		s, err := producer.FromSlice(make([]float32, 32), []int64{32}, nil, false, func() { finals.Add(1) })
		require.NoError(t, err)
		const n = 64
		ms := make([]*godlpack.DLManagedTensorVersioned, n)
		for i := range ms {
			ms[i], err = s.ExportVersioned(0)
			require.NoError(t, err)
		}
		var wg sync.WaitGroup
		for i := range ms {
			wg.Add(1)
			go func(m *godlpack.DLManagedTensorVersioned) {
				defer wg.Done()
				deleteVersioned(m)
			}(ms[i])
		}
		wg.Add(1)
		go func() { defer wg.Done(); s.Close() }()
		wg.Wait()
		require.EqualValues(t, 1, finals.Load())
		c.RequireDelta(t, 0, 0)
	}
}

package consumer_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/consumer"
	"github.com/godlpack/godlpack/internal/testkit/testprod"
	"github.com/godlpack/godlpack/producer"
)

// TestConcurrentExportImportClose: many goroutines export from shared
// sources, import, read and close, while others race to close the same
// imported tensors and the sources themselves.
func TestConcurrentExportImportClose(t *testing.T) {
	c := snapshot()
	const nsrc, workers, iters = 4, 16, 150
	var finals atomic.Int32
	srcs := make([]*producer.Source, nsrc)
	for i := range srcs {
		data := make([]int64, 256)
		for j := range data {
			data[j] = int64(i*1000 + j)
		}
		var err error
		srcs[i], err = producer.FromSlice(data, []int64{16, 16}, nil, false, func() { finals.Add(1) })
		require.NoError(t, err)
	}
	imported := make(chan *consumer.Tensor, workers*iters)
	var closedOK, closedTwice atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < iters; i++ {
				k := (w*7 + i) % nsrc
				var tt *consumer.Tensor
				var err error
				if i%3 == 0 {
					var m *godlpack.DLManagedTensor
					if m, err = srcs[k].ExportLegacy(); err == nil {
						tt, err = consumer.ImportLegacy(m)
					}
				} else {
					var m *godlpack.DLManagedTensorVersioned
					if m, err = srcs[k].ExportVersioned(0); err == nil {
						tt, err = consumer.ImportVersioned(m)
					}
				}
				if errors.Is(err, producer.ErrClosed) {
					continue
				}
				if !assert.NoError(t, err) {
					return
				}
				v, err := tt.AsInt64s()
				if assert.NoError(t, err) {
					if v[0] != int64(k*1000) || v[255] != int64(k*1000+255) {
						t.Errorf("source %d reads %d..%d", k, v[0], v[255])
					}
				}
				if i%2 == 0 {
					imported <- tt // someone else closes it, maybe twice
				} else if assert.NoError(t, tt.Close()) {
					closedOK.Add(1)
				}
			}
		}(w)
	}
	// Closers: two goroutines race on every handed-over tensor.
	var cw sync.WaitGroup
	closers := make([]chan *consumer.Tensor, 2)
	for i := range closers {
		closers[i] = make(chan *consumer.Tensor, workers*iters)
		cw.Add(1)
		go func(in chan *consumer.Tensor) {
			defer cw.Done()
			for tt := range in {
				switch err := tt.Close(); {
				case err == nil:
					closedOK.Add(1)
				case errors.Is(err, consumer.ErrClosed):
					closedTwice.Add(1)
				default:
					t.Errorf("close: %v", err)
				}
			}
		}(closers[i])
	}
	var handed atomic.Int64
	var fw sync.WaitGroup
	fw.Add(1)
	go func() {
		defer fw.Done()
		for tt := range imported {
			handed.Add(1)
			closers[0] <- tt
			closers[1] <- tt
		}
	}()
	// Close the sources half-way through.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, s := range srcs[:nsrc/2] {
			s.Close()
		}
	}()
	wg.Wait()
	close(imported)
	fw.Wait()
	for _, ch := range closers {
		close(ch)
	}
	cw.Wait()
	assert.Equal(t, handed.Load(), closedTwice.Load(), "each handed-over tensor is closed once and refused once")
	for _, s := range srcs {
		s.Close()
	}
	assert.EqualValues(t, nsrc, finals.Load())
	c.RequireDelta(t, 0, 0)
}

// TestConcurrentCloseHandMade: racing Close calls on one tensor call the
// deleter exactly once.
func TestConcurrentCloseHandMade(t *testing.T) {
	for round := 0; round < 50; round++ {
		v := testprod.NewVersioned()
		goodTensor(t, &v.M.DLTensor)
		tt, err := consumer.ImportVersioned(v.M)
		require.NoError(t, err)
		var ok atomic.Int32
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if tt.Close() == nil {
					ok.Add(1)
				}
				_, _ = tt.AsFloat32s()
				_ = tt.Closed()
			}()
		}
		wg.Wait()
		require.EqualValues(t, 1, ok.Load())
		require.EqualValues(t, 1, v.Calls())
		v.Free()
	}
}

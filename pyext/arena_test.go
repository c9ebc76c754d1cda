package pyext

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An arena hands out disjoint, capacity-limited slices, from any number of
// goroutines at once (functions that release the GIL convert arguments
// concurrently).
func TestArenaSlicesAreDisjointAndCapacityLimited(t *testing.T) {
	const workers, each = 8, 2000
	got := make([][][]int64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				d := int64Arena.take(1+i%7, false)
				for k := range d {
					d[k] = int64(w*each + i)
				}
				got[w] = append(got[w], d)
			}
		}()
	}
	wg.Wait()
	for w := range workers {
		for i, d := range got[w] {
			require.Len(t, d, 1+i%7)
			assert.Equal(t, len(d), cap(d), "an append must copy, not write a neighbour")
			for _, x := range d {
				require.Equal(t, int64(w*each+i), x, "two slices share memory")
			}
		}
	}
	big := int64Arena.take(100, false)
	assert.Len(t, big, 100)
}

// The GIL's own cursor (serial takes, with no atomic) hands out disjoint,
// capacity-limited slices too, across block boundaries.
func TestArenaSerialSlicesAreDisjoint(t *testing.T) {
	var a arena[int64]
	var got [][]int64
	for i := range 3000 {
		d := a.take(1+i%9, true)
		for k := range d {
			d[k] = int64(i)
		}
		got = append(got, d)
	}
	for i, d := range got {
		require.Len(t, d, 1+i%9)
		assert.Equal(t, len(d), cap(d))
		for _, x := range d {
			require.Equal(t, int64(i), x, "two slices share memory")
		}
	}
}

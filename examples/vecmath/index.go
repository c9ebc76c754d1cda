package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/godlpack/godlpack/pyext"
)

// A nearest-neighbour index of float64 vectors of length dim (brute force,
// Euclidean). Its methods run without the GIL (nogil), so several Python
// threads may call them at once: a mutex guards the data.
//
//pyext:class
type Index struct {
	mu   sync.RWMutex
	dim  int
	name string
	data []float64 // size*dim values, row after row
}

//pyext:init (dim, name='')
func newIndex(dim int, name string) (*Index, error) {
	if dim <= 0 {
		return nil, &pyext.ValueError{Msg: fmt.Sprintf("Index: dim must be positive, got %d", dim)}
	}
	return &Index{dim: dim, name: name}, nil
}

// Appends the rows of x (a float64 array of n*dim values, any shape);
// returns how many rows were added.
//
//pyext:method nogil
func (ix *Index) Add(x []float64) (int, error) {
	if len(x)%ix.dim != 0 {
		return 0, &pyext.ValueError{Msg: fmt.Sprintf("add: %d values are not rows of %d", len(x), ix.dim)}
	}
	ix.mu.Lock()
	ix.data = append(ix.data, x...)
	ix.mu.Unlock()
	return len(x) / ix.dim, nil
}

// add(rows), converting rows of any layout or castable dtype, or a list, to
// compact float64 (convert: rows given as a list, as float32, strided or
// unaligned (Dask blocks) are copied into a compact float64 temporary first).
//
//pyext:method (rows) nogil convert(rows)
func (ix *Index) Extend(x []float64) (int, error) { return ix.Add(x) }

// The row nearest to q (dim float64 values), or -1 when the index is empty
// or no row is within max_dist.
//
//pyext:method (q, max_dist=1e308) nogil
func (ix *Index) Nearest(q []float64, maxDist float64) (int, error) {
	if len(q) != ix.dim {
		return 0, &pyext.ValueError{Msg: fmt.Sprintf("nearest: q has %d values, want %d", len(q), ix.dim)}
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	best, bestD := -1, maxDist*maxDist
	for r := 0; r*ix.dim < len(ix.data); r++ {
		if d := dist2(ix.data[r*ix.dim:(r+1)*ix.dim], q); d <= bestD {
			best, bestD = r, d
		}
	}
	return best, nil
}

// The distance from q to every row, as a new float64 array allocated by Go.
//
//pyext:method nogil
func (ix *Index) Distances(q []float64) ([]float64, error) {
	if len(q) != ix.dim {
		return nil, &pyext.ValueError{Msg: fmt.Sprintf("distances: q has %d values, want %d", len(q), ix.dim)}
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	out := make([]float64, len(ix.data)/ix.dim)
	for r := range out {
		out[r] = math.Sqrt(dist2(ix.data[r*ix.dim:(r+1)*ix.dim], q))
	}
	return out, nil
}

func dist2(a, b []float64) float64 {
	var s float64
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return s
}

// Raises: how is 'error' or 'panic' (for tests).
//
//pyext:method
func (ix *Index) Fail(how string) error {
	if how == "panic" {
		var rows []float64
		_ = rows[ix.dim] // a real runtime panic: index out of range
	}
	return &pyext.RuntimeError{Msg: "failed, as asked"}
}

// How many rows the index holds.
//
//pyext:property
func (ix *Index) Size() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.data) / ix.dim
}

// The length of a row.
//
//pyext:property
func (ix *Index) Dim() int { return ix.dim }

// A name, for repr (settable).
//
//pyext:property
func (ix *Index) Name() string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.name
}

// SetName renames the index.
//
//pyext:setter
func (ix *Index) SetName(name string) {
	ix.mu.Lock()
	ix.name = name
	ix.mu.Unlock()
}

// String is repr(index).
func (ix *Index) String() string {
	return fmt.Sprintf("vecmath.Index(dim=%d, size=%d, name=%q)", ix.dim, ix.Size(), ix.Name())
}

// MarshalBinary makes Index objects picklable (with UnmarshalBinary):
// dim, the name and the rows, little-endian.
func (ix *Index) MarshalBinary() ([]byte, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var b bytes.Buffer
	_ = binary.Write(&b, binary.LittleEndian, int64(ix.dim))
	_ = binary.Write(&b, binary.LittleEndian, int64(len(ix.name)))
	b.WriteString(ix.name)
	_ = binary.Write(&b, binary.LittleEndian, ix.data)
	return b.Bytes(), nil
}

// UnmarshalBinary is MarshalBinary's inverse, into a new Index.
func (ix *Index) UnmarshalBinary(data []byte) error {
	r := bytes.NewReader(data)
	var dim, n int64
	if binary.Read(r, binary.LittleEndian, &dim) != nil || binary.Read(r, binary.LittleEndian, &n) != nil ||
		dim <= 0 || n < 0 || n > int64(r.Len()) {
		return &pyext.ValueError{Msg: "Index: corrupt pickle"}
	}
	name := make([]byte, n)
	_, _ = r.Read(name)
	// Whole rows of dim float64s; no product of dim is formed, so a crafted
	// dim cannot overflow into a size that fits.
	if rest := int64(r.Len()); rest%8 != 0 || (rest/8)%dim != 0 {
		return &pyext.ValueError{Msg: "Index: corrupt pickle"}
	}
	ix.dim, ix.name = int(dim), string(name)
	ix.data = make([]float64, r.Len()/8)
	return binary.Read(r, binary.LittleEndian, ix.data)
}

// A thread-safe counter. Counter is a class with neither String nor
// MarshalBinary: Python's default repr, and pickling refused.
//
//pyext:class
type Counter struct{ n atomic.Int64 }

//pyext:init (start=0)
func newCounter(start int64) *Counter { c := &Counter{}; c.n.Store(start); return c }

// Adds by; returns the new value. It runs without the GIL: an atomic.
//
//pyext:method (by=1) nogil
func (c *Counter) Incr(by int64) int64 { return c.n.Add(by) }

// Adds another Counter's value (an object argument).
//
//pyext:method
func (c *Counter) Merge(other *Counter) int64 { return c.n.Add(other.n.Load()) }

// The current value.
//
//pyext:property
func (c *Counter) Value() int64 { return c.n.Load() }

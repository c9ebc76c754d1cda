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

// Index is a Go type offered to Python as the class vecmath.Index: a
// brute-force nearest-neighbour index of float64 vectors. Its methods run
// without the GIL (ReleaseGIL), so several Python threads may call them at
// once: a mutex guards the data.
type Index struct {
	mu   sync.RWMutex
	dim  int
	name string
	data []float64 // size*dim values, row after row
}

var indexClass = pyext.NewClass[Index]("Index", "Index(dim, name='')\n--\n\n"+
	"A nearest-neighbour index of float64 vectors of length dim (brute force, Euclidean).").
	Init(newIndex, pyext.Args("dim", "name=''")).
	Method("add", pyext.FuncE2((*Index).Add), "add(x)\n--\n\nAppends the rows of x (a float64 array of "+
		"n*dim values, any shape); returns how many rows were added.", pyext.ReadOnlyArgs, pyext.ReleaseGIL).
	// Convert: rows given as a list, as float32, strided or unaligned (Dask
	// blocks) are copied into a compact float64 temporary first (a method's
	// Convert and Require count the parameters after the receiver, as Writes).
	Method("extend", pyext.FuncE2((*Index).Add), "extend(rows)\n--\n\nadd(rows), converting rows of any "+
		"layout or castable dtype, or a list, to compact float64.", pyext.ReadOnlyArgs, pyext.ReleaseGIL,
		pyext.Convert(0), pyext.Args("rows")).
	Method("nearest", (*Index).Nearest, "nearest(q, max_dist=1e308)\n--\n\nThe row nearest to q (dim float64 "+
		"values), or -1 when the index is empty or no row is within max_dist.", pyext.ReadOnlyArgs, pyext.ReleaseGIL,
		pyext.Args("q", "max_dist=1e308")).
	Method("distances", (*Index).Distances, "distances(q)\n--\n\nThe distance from q to every row, as a new "+
		"float64 array allocated by Go.", pyext.ReadOnlyArgs, pyext.ReleaseGIL, pyext.Args("q")).
	Method("fail", (*Index).Fail, "fail(how)\n--\n\nRaises: how is 'error' or 'panic' (for tests).").
	Property("size", (*Index).Size, nil, "How many rows the index holds.").
	Property("dim", (*Index).Dim, nil, "The length of a row.").
	Property("name", (*Index).Name, (*Index).SetName, "A name, for repr (settable).")

func newIndex(dim int, name string) (*Index, error) {
	if dim <= 0 {
		return nil, &pyext.ValueError{Msg: fmt.Sprintf("Index: dim must be positive, got %d", dim)}
	}
	return &Index{dim: dim, name: name}, nil
}

// Add appends the rows of x.
func (ix *Index) Add(x []float64) (int, error) {
	if len(x)%ix.dim != 0 {
		return 0, &pyext.ValueError{Msg: fmt.Sprintf("add: %d values are not rows of %d", len(x), ix.dim)}
	}
	ix.mu.Lock()
	ix.data = append(ix.data, x...)
	ix.mu.Unlock()
	return len(x) / ix.dim, nil
}

// Nearest is the row nearest to q within maxDist, or -1.
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

// Distances is the distance from q to every row.
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

// Fail raises or panics, for tests.
func (ix *Index) Fail(how string) error {
	if how == "panic" {
		var rows []float64
		_ = rows[ix.dim] // a real runtime panic: index out of range
	}
	return &pyext.RuntimeError{Msg: "failed, as asked"}
}

// Size is how many rows the index holds.
func (ix *Index) Size() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.data) / ix.dim
}

// Dim is the length of a row.
func (ix *Index) Dim() int { return ix.dim }

// Name is the index's name.
func (ix *Index) Name() string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.name
}

// SetName renames the index.
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

// Counter is a class with neither String nor MarshalBinary: Python's
// default repr, and pickling refused. incr runs without the GIL: an atomic.
type Counter struct{ n atomic.Int64 }

var counterClass = pyext.NewClass[Counter]("Counter", "Counter(start=0)\n--\n\nA thread-safe counter.").
	Init(func(start int64) *Counter { c := &Counter{}; c.n.Store(start); return c }, pyext.Args("start=0")).
	Method("incr", pyext.Func2(func(c *Counter, by int64) int64 { return c.n.Add(by) }),
		"incr(by=1)\n--\n\nAdds by; returns the new value.", pyext.ReleaseGIL, pyext.Args("by=1")).
	Method("merge", func(c *Counter, other *Counter) int64 { return c.n.Add(other.n.Load()) },
		"merge(other)\n--\n\nAdds another Counter's value (an object argument).").
	Property("value", func(c *Counter) int64 { return c.n.Load() }, nil, "The current value.")

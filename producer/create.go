package producer

import (
	"unsafe"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/core"
)

// Empty allocates an uninitialised compact CPU tensor in C memory aligned to
// 64 bytes (JAX/XLA copies less-aligned buffers), owned by godlpack.
func Empty(dt godlpack.DType, shape ...int64) (*Source, error) { return alloc(dt, false, shape) }

func alloc(dt godlpack.DType, zeroed bool, shape []int64) (*Source, error) {
	if !dt.Known() || dt.Lanes != 1 {
		return nil, godlpack.Invalid(godlpack.ErrDType, "cannot allocate dtype %v", dt)
	}
	t := godlpack.Tensor{Shape: append([]int64(nil), shape...), DType: dt, Device: godlpack.CPUDevice}
	if len(shape) > godlpack.MaxNDim {
		return nil, godlpack.Invalid(godlpack.ErrNDim, "ndim %d > %d", len(shape), godlpack.MaxNDim)
	}
	_, nbytes, err := t.ByteSpan()
	if err != nil {
		return nil, err
	}
	owner, data := core.AllocOwner(uint64(nbytes), zeroed)
	if owner.Nil() {
		return nil, ErrOutOfMemory
	}
	t.Data = data
	return newSource(t, owner)
}

// Zeros is Empty filled with zero bits (0, false, +0.0 for every dtype but
// float8_e8m0fnu, which has no zero and is refused).
func Zeros(dt godlpack.DType, shape ...int64) (*Source, error) {
	if dt.Code == godlpack.CodeFloat8E8M0FNU {
		return nil, godlpack.Invalid(godlpack.ErrDType, "%v has no zero", dt)
	}
	return alloc(dt, true, shape)
}

// Full is Empty filled with value (a Go number or bool, converted to dt).
func Full(dt godlpack.DType, value complex128, shape ...int64) (*Source, error) {
	s, err := Empty(dt, shape...)
	if err != nil {
		return nil, err
	}
	n, _ := s.t.NumElements()
	if err := fillWith(s.t.Data, dt, n, func(int64) complex128 { return value }); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// fillWith writes f(i) converted to dt into n compact elements at p.
func fillWith(p unsafe.Pointer, dt godlpack.DType, n int64, f func(int64) complex128) error {
	enc, err := Encoder(dt)
	if err != nil {
		return err
	}
	size := dt.ItemSize()
	buf := unsafe.Slice((*byte)(p), n*size)
	for i := int64(0); i < n; i++ {
		enc(buf[i*size:(i+1)*size], f(i))
	}
	return nil
}

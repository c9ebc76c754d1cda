package producer

import (
	"encoding/binary"
	"errors"
	"math"
	"math/big"
	"unsafe"

	"github.com/godlpack/godlpack"
)

// FullInt is Full for an integer fill value, exact for every int64 (and,
// through the same bits, every uint64): integer dtypes take it like a C cast,
// float and complex dtypes get the nearest value.
func FullInt(dt godlpack.DType, value int64, shape ...int64) (*Source, error) {
	s, err := Empty(dt, shape...)
	if err != nil {
		return nil, err
	}
	n, _ := s.t.NumElements()
	if err := fillInts(s.t.Data, dt, n, func(int64) int64 { return value }); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// ArangeInt is Arange with exact integer arithmetic.
func ArangeInt(dt godlpack.DType, start, stop, step int64) (*Source, error) {
	if step == 0 {
		return nil, errors.New("producer: arange needs a non-zero step")
	}
	// count = ceil((stop - start) / step), computed without overflow.
	diff := new(big.Int).Sub(big.NewInt(stop), big.NewInt(start))
	st := big.NewInt(step)
	count, rem := new(big.Int).QuoRem(diff, st, new(big.Int))
	if rem.Sign() != 0 && (rem.Sign() > 0) == (st.Sign() > 0) {
		count.Add(count, big.NewInt(1))
	}
	if count.Sign() < 0 {
		count.SetInt64(0)
	}
	if !count.IsInt64() || count.Int64() > math.MaxInt64/16 {
		return nil, godlpack.Invalid(godlpack.ErrOverflow, "arange of %v elements", count)
	}
	s, err := Empty(dt, count.Int64())
	if err != nil {
		return nil, err
	}
	if err := fillInts(s.t.Data, dt, count.Int64(), func(i int64) int64 { return start + i*step }); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// fillInts writes f(i) into n compact elements of dt at p.
func fillInts(p unsafe.Pointer, dt godlpack.DType, n int64, f func(int64) int64) error {
	size := dt.ItemSize()
	put, err := intWriter(dt)
	if err != nil {
		return err
	}
	buf := unsafe.Slice((*byte)(p), n*size)
	for i := int64(0); i < n; i++ {
		put(buf[i*size:(i+1)*size], f(i))
	}
	return nil
}

func intWriter(dt godlpack.DType) (func([]byte, int64), error) {
	le := binary.LittleEndian
	switch {
	case dt == godlpack.Bool:
		return func(d []byte, v int64) { d[0] = b2u(v != 0) }, nil
	case dt.Code == godlpack.CodeInt || dt.Code == godlpack.CodeUInt:
		switch dt.Bits {
		case 8:
			return func(d []byte, v int64) { d[0] = byte(v) }, nil
		case 16:
			return func(d []byte, v int64) { le.PutUint16(d, uint16(v)) }, nil
		case 32:
			return func(d []byte, v int64) { le.PutUint32(d, uint32(v)) }, nil
		case 64:
			return func(d []byte, v int64) { le.PutUint64(d, uint64(v)) }, nil
		}
	}
	enc, err := Encoder(dt) // floats and complex: the nearest value
	if err != nil {
		return nil, err
	}
	return func(d []byte, v int64) { enc(d, complex(float64(v), 0)) }, nil
}

package gopydl

import (
	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/consumer"
)

// Array is a tensor imported from Python, owned by Go until Close, which
// calls the producer's deleter exactly once (a cleanup does it if Close is
// forgotten, at some later GC). Slices from its accessors alias the
// producer's memory: do not use them after Close.
type Array struct {
	t *consumer.Tensor
}

// Import takes ownership of the managed tensor at ptr (see the package
// documentation) and validates it. On a refusal the deleter has already run.
func Import(ptr uintptr) (*Array, error) {
	if ptr == 0 {
		return nil, bufferError(godlpack.Invalid(godlpack.ErrNilPointer, "tensor pointer is 0"))
	}
	t, err := consumer.Import(toPointer(ptr&^1), ptr&1 == 0)
	if err != nil {
		return nil, bufferError(err)
	}
	return &Array{t: t}, nil
}

// Close calls the producer's deleter; a second Close returns an error.
func (a *Array) Close() error { return a.t.Close() }

// Tensor is the validated import, for Go code that needs strides, device
// or flags (consumer.View, consumer.CopyCompact work on it).
func (a *Array) Tensor() *consumer.Tensor { return a.t }

// Shape returns a copy of the shape.
func (a *Array) Shape() []int64 { return append([]int64(nil), a.t.Shape...) }

// Len is the number of elements.
func (a *Array) Len() int {
	n, _ := a.t.NumElements() // validated at import
	return int(n)
}

// DType is the NumPy-style dtype name, e.g. "float32".
func (a *Array) DType() string { return a.t.DType.String() }

// ReadOnly reports the producer's READ_ONLY flag.
func (a *Array) ReadOnly() bool { return a.t.ReadOnly }

// view imports ptr and checks that it can be viewed as a []T (and written
// through, if writable), so the accessor for T cannot fail afterwards.
func view[T godlpack.Element](ptr uintptr, writable bool) (*Array, error) {
	a, err := Import(ptr)
	if err != nil {
		return nil, err
	}
	if writable {
		_, err = consumer.MutableView[T](a.t)
	} else {
		_, err = consumer.View[T](a.t)
	}
	if err != nil {
		a.t.Close()
		return nil, bufferError(err)
	}
	return a, nil
}

func data[T godlpack.Element](a *Array) ([]T, error) {
	v, err := consumer.View[T](a.t)
	if err != nil {
		return nil, bufferError(err)
	}
	return v, nil
}

// BufferError marks a DLPack refusal. Its message starts with
// "BufferError: ", which gopydl.py's call turns back into a Python
// BufferError (gopy raises RuntimeError for every Go error).
type BufferError struct{ Err error }

func (e *BufferError) Error() string { return "BufferError: " + e.Err.Error() }
func (e *BufferError) Unwrap() error { return e.Err }

func bufferError(err error) error {
	if _, ok := err.(*BufferError); ok {
		return err
	}
	return &BufferError{Err: err}
}

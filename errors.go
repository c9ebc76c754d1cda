package godlpack

import (
	"errors"
	"fmt"
)

// Kinds of refusal. Every validation error wraps exactly one of these, so
// callers can test with errors.Is and read the detail with errors.As.
var (
	ErrNilPointer = errors.New("NULL pointer")
	ErrVersion    = errors.New("unsupported DLPack version")
	ErrNDim       = errors.New("invalid ndim")
	ErrShape      = errors.New("invalid shape")
	ErrStrides    = errors.New("invalid strides")
	ErrOverflow   = errors.New("size overflows int64")
	ErrDType      = errors.New("unsupported dtype")
	ErrLanes      = errors.New("vector dtype (lanes != 1) not supported")
	ErrDevice     = errors.New("unsupported device")
	ErrNilData    = errors.New("NULL data with non-zero size")
	ErrFlags      = errors.New("invalid flags")
)

// InvalidTensorError says what was wrong with a tensor that was refused.
type InvalidTensorError struct {
	Kind   error  // one of the Err* sentinels above
	Detail string // what exactly was wrong
}

func (e *InvalidTensorError) Error() string {
	return fmt.Sprintf("godlpack: %v: %s", e.Kind, e.Detail)
}

func (e *InvalidTensorError) Unwrap() error { return e.Kind }

// Invalid builds an InvalidTensorError.
func Invalid(kind error, format string, args ...any) error {
	return &InvalidTensorError{Kind: kind, Detail: fmt.Sprintf(format, args...)}
}

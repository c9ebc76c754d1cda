package godlpack

import "fmt"

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

// Package guard turns panics of gopy-wrapped Go functions into errors. It is
// apart from gopydl because gopy cannot wrap a *error parameter, and gopydl
// itself stays wrappable.
package guard

import "fmt"

// PanicError is a panic caught by Recover.
type PanicError struct{ Value any }

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Recover turns a panic of the function that defers it into an error, so
// Python gets a RuntimeError instead of a dead interpreter (gopy does not
// recover panics). Use it with a named error result:
//
//	func F(ptr uintptr) (err error) {
//		defer guard.Recover(&err)
//		...
//	}
func Recover(err *error) {
	if r := recover(); r != nil {
		*err = &PanicError{Value: r}
	}
}

package guard

import (
	"errors"
	"testing"
)

func TestRecoverTurnsPanicsIntoErrors(t *testing.T) {
	f := func(i int) (err error) {
		defer Recover(&err)
		return []error{nil}[i]
	}
	if err := f(0); err != nil {
		t.Fatal(err)
	}
	var pe *PanicError
	if err := f(3); !errors.As(err, &pe) {
		t.Fatalf("panic not recovered as PanicError: %v", err)
	}
}

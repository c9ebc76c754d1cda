// Package invalid holds the one assertion the Go tests of godlpack, producer
// and consumer share: an error is a godlpack.InvalidTensorError of a given
// kind that says why.
package invalid

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/godlpack/godlpack"
)

// Require fails t unless err is a *godlpack.InvalidTensorError whose Kind is
// kind (errors.Is finds kind too) and whose Detail is not empty.
func Require(t *testing.T, err error, kind error, msgAndArgs ...any) {
	t.Helper()
	require.Error(t, err, msgAndArgs...)
	assert.ErrorIs(t, err, kind, msgAndArgs...)
	var inv *godlpack.InvalidTensorError
	if assert.ErrorAs(t, err, &inv, msgAndArgs...) {
		assert.Equal(t, kind, inv.Kind, msgAndArgs...)
		assert.NotEmpty(t, inv.Detail, msgAndArgs...)
	}
}

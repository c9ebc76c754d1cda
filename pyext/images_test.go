package pyext

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// C writes NDArray and Tensor arguments in Go's own layout (ext_arrays.h's
// gdl_view, ext.h's gdl_tensor_image), which Go then passes to the function
// as they are: the two layouts must agree field by field on a 64-bit
// platform (ndImaged, tensorImaged).
func TestCImagesHaveGoLayouts(t *testing.T) {
	assert.True(t, ndLayoutMatches(), "NDArray vs gdl_view")
	assert.True(t, tensorLayoutMatches(), "godlpack.Tensor vs gdl_tensor_image")
	assert.True(t, ndImaged)
	assert.True(t, tensorImaged)
}

package pyext

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every NewModule is in the registry the build reads, each under its name
// with its own stub.
func TestStubsJSONHoldsEveryModuleMadeByNewModule(t *testing.T) {
	a := NewModule("stubexp_a", "").Def("f", func(x int) int { return x }, "")
	b := NewModule("stubexp_b", "").Def("g", func(s string) string { return s }, "")
	var got map[string]string
	require.NoError(t, json.Unmarshal([]byte(stubsJSON()), &got))
	assert.Equal(t, a.Stub(), got["stubexp_a"])
	assert.Equal(t, b.Stub(), got["stubexp_b"])
	assert.Contains(t, got["stubexp_b"], "def g(")
}

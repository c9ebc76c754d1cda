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

// A definition that fails is reported under its module's name, with the
// error its import would raise; others are not.
func TestErrorsJSONHoldsTheFailedDefinitions(t *testing.T) {
	NewModule("errexp_ok", "").Def("f", func(x int) int { return x }, "")
	NewModule("errexp_bad", "").Def("g", func(x int) {}, "", Args("x='two'"))
	var got map[string]string
	require.NoError(t, json.Unmarshal([]byte(errorsJSON()), &got))
	assert.NotContains(t, got, "errexp_ok")
	assert.Equal(t, "errexp_bad.g: pyext.Args: default x='two': not an int64 literal", got["errexp_bad"])
}

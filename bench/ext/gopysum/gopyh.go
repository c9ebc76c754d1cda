//go:build tools

// gopy's generated code imports gopyh from this module: this keeps the
// requirement in go.mod when `go mod tidy` runs.
package tools

import _ "github.com/go-python/gopy/gopyh"

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The checked-in tables must be what the generator writes from data.go:
// a table edited by hand, or data.go edited without regenerating, fails.
func TestGeneratedFilesAreUpToDate(t *testing.T) {
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	out := t.TempDir()
	cmd := exec.Command("go", "run", ".", "-root", root, "-out", out)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Run())
	for name := range outputs {
		want, err := os.ReadFile(filepath.Join(out, name))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(root, name))
		require.NoError(t, err, "%s is missing: run `go generate ./...`", name)
		require.Equal(t, string(want), string(got), "%s is stale: run `go generate ./...`", name)
	}
}

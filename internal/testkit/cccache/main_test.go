package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tree writes a tree holding v.h (V defined as value) and v.c, and returns it.
func tree(t *testing.T, value string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "v.h"), []byte("#define V "+value+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "v.c"), []byte("#include \"v.h\"\nint v = V;\n"), 0o644))
	return dir
}

func cc(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler on PATH")
	}
	return path
}

// compileIn runs a go-command-like compile of v.c in dir through the cache.
func compileIn(t *testing.T, cache, dir string) (int, []byte) {
	t.Helper()
	out := filepath.Join(dir, "v.o")
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.NoError(t, os.Chdir(dir))
	defer func() { require.NoError(t, os.Chdir(wd)) }()
	status := run(cache, dir, cc(t), []string{"-I", dir, "-frandom-seed=" + filepath.Base(dir), "-o", out, "-c", "v.c"})
	obj, _ := os.ReadFile(out)
	return status, obj
}

func entries(t *testing.T, cache string) int {
	t.Helper()
	list, err := os.ReadDir(cache)
	require.NoError(t, err)
	return len(list)
}

func TestTheSameCompileInAnotherTreeIsAHitAndAChangedHeaderIsNot(t *testing.T) {
	cache := t.TempDir()
	status, first := compileIn(t, cache, tree(t, "1"))
	require.Equal(t, 0, status)
	require.NotEmpty(t, first)
	assert.Equal(t, 1, entries(t, cache))

	// Another tree (another path, another -frandom-seed), the same source: the cached object.
	status, again := compileIn(t, cache, tree(t, "1"))
	require.Equal(t, 0, status)
	assert.Equal(t, first, again)
	assert.Equal(t, 1, entries(t, cache), "a second entry: the tree's path reached the key")

	// A header that changes: a compile of its own, a different object.
	status, changed := compileIn(t, cache, tree(t, "2"))
	require.Equal(t, 0, status)
	assert.NotEqual(t, first, changed)
	assert.Equal(t, 2, entries(t, cache))
}

func TestAFailingCompileIsReplayedWithItsStatus(t *testing.T) {
	cache := t.TempDir()
	status, _ := compileIn(t, cache, tree(t, "undeclared_name"))
	assert.NotEqual(t, 0, status)
	assert.Equal(t, 1, entries(t, cache))
	dir := tree(t, "undeclared_name")
	status, obj := compileIn(t, cache, dir)
	assert.NotEqual(t, 0, status, "the cached failure must fail again")
	assert.Empty(t, obj)
	assert.Equal(t, 1, entries(t, cache))
}

func TestOnlyOneFilesCompileToAnObjectIsCached(t *testing.T) {
	for _, args := range [][]string{
		{"-E", "v.c"},
		{"-c", "v.c"}, // no -o
		{"-o", "v.o", "-c", "-"},
		{"-o", "v", "v.c"}, // a link
		{"-o", "v.o", "-c", "v.c", "w.c"},
	} {
		_, ok := parse(args)
		assert.False(t, ok, "%q", args)
	}
	c, ok := parse([]string{"-I", "/x", "-o/w/b001/_x1.o", "-c", "a.c", "-O0"})
	require.True(t, ok)
	assert.Equal(t, compile{out: "/w/b001/_x1.o", input: "a.c", rest: []string{"-I", "/x", "-O0"}}, c)
}

func TestTheKeyWritesOutTheTreeTheWorkFolderAndCgosInputName(t *testing.T) {
	assert.Equal(t, "-I<tree>/pyext /tmp/<work>/_cgo_export.h /tmp/<cgo-input>.c",
		normal("-I/tmp/m-1/pyext /tmp/go-build123/b068/_cgo_export.h /tmp/cgo-gcc-input-99.c", "/tmp/m-1"))
}

package capsule_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/capsule"
	"github.com/godlpack/godlpack/internal/testkit/pyembed"
	"github.com/godlpack/godlpack/internal/testkit/testprod"
)

func TestMain(m *testing.M) {
	pyembed.Init()
	m.Run()
}

// counting is a managed tensor of testprod's counting producer and its
// deleter call count. The memory lives until the test ends, so a second
// deleter call would be counted, not a use after free.
func counting(t *testing.T, versioned bool) (m unsafe.Pointer, deleted func() int64) {
	if versioned {
		v := testprod.NewVersioned()
		t.Cleanup(v.Free)
		return unsafe.Pointer(v.M), v.Calls
	}
	l := testprod.NewLegacy()
	t.Cleanup(l.Free)
	return unsafe.Pointer(l.M), l.Calls
}

func TestUnusedCapsuleDeletesOnce(t *testing.T) {
	cases := []struct {
		versioned bool
		name      string
		make      func(unsafe.Pointer) unsafe.Pointer
	}{
		{true, capsule.NameVersioned, capsule.NewVersioned},
		{false, capsule.NameLegacy, capsule.NewLegacy},
	}
	for _, tc := range cases {
		pyembed.WithGIL(func() {
			m, deleted := counting(t, tc.versioned)
			c := tc.make(m)
			require.NotNil(t, c)
			assert.Equal(t, tc.name, pyembed.CapsuleName(c))
			assert.Zero(t, deleted())
			pyembed.Decref(c)
			assert.Equal(t, int64(1), deleted(), "destructor of an unused capsule calls the deleter once")
		})
	}
}

func TestTakeRenamesAndTransfersOwnership(t *testing.T) {
	pyembed.WithGIL(func() {
		m, deleted := counting(t, true)
		c := capsule.NewVersioned(m)
		got, versioned, ok := capsule.Take(c)
		require.True(t, ok)
		assert.True(t, versioned)
		assert.Equal(t, m, got)
		assert.Equal(t, capsule.NameUsedVersioned, pyembed.CapsuleName(c))

		_, _, ok = capsule.Take(c)
		assert.False(t, ok, "a consumed capsule cannot be consumed again")
		assert.Equal(t, "BufferError", pyembed.ErrName())
		pyembed.ClearErr()

		pyembed.Decref(c)
		assert.Zero(t, deleted(), "the destructor of a used capsule must not delete")
		godlpack.CallDeleter((*godlpack.DLManagedTensorVersioned)(got).Deleter, got)
		assert.Equal(t, int64(1), deleted())
	})
}

func TestTakeLegacy(t *testing.T) {
	pyembed.WithGIL(func() {
		m, deleted := counting(t, false)
		c := capsule.NewLegacy(m)
		got, versioned, ok := capsule.Take(c)
		require.True(t, ok)
		assert.False(t, versioned)
		assert.Equal(t, capsule.NameUsedLegacy, pyembed.CapsuleName(c))
		pyembed.Decref(c)
		godlpack.CallDeleter((*godlpack.DLManagedTensor)(got).Deleter, got)
		assert.Equal(t, int64(1), deleted())
	})
}

var foreignName = []byte("not_a_tensor\x00")

func TestTakeRefusesWhatIsNotAnUnusedDLPackCapsule(t *testing.T) {
	pyembed.WithGIL(func() {
		i := pyembed.Int(7)
		_, _, ok := capsule.Take(i)
		assert.False(t, ok)
		assert.Equal(t, "TypeError", pyembed.ErrName())
		pyembed.ClearErr()
		pyembed.Decref(i)

		m, deleted := counting(t, true)
		c := pyembed.NamedCapsule(m, &foreignName[0])
		_, _, ok = capsule.Take(c)
		assert.False(t, ok)
		assert.Equal(t, "BufferError", pyembed.ErrName())
		pyembed.ClearErr()
		assert.Equal(t, "not_a_tensor", pyembed.CapsuleName(c), "a refused capsule is left untouched")
		pyembed.Decref(c)
		assert.Zero(t, deleted())
	})
}

func TestDestructorKeepsAPendingException(t *testing.T) {
	pyembed.WithGIL(func() {
		m, deleted := counting(t, true)
		c := capsule.NewVersioned(m)
		pyembed.SetRuntimeError()
		pyembed.Decref(c)
		assert.Equal(t, int64(1), deleted())
		assert.Equal(t, "RuntimeError", pyembed.ErrName(), "the pending exception survives the destructor")
		pyembed.ClearErr()
	})
}

package testprod_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/internal/testkit/testprod"
)

func TestCountingDeleters(t *testing.T) {
	total := testprod.TotalCalls()

	v := testprod.NewVersioned()
	defer v.Free()
	assert.Equal(t, godlpack.DLPackVersion{Major: 1, Minor: 3}, v.M.Version)
	assert.Zero(t, v.M.DLTensor.NDim)
	assert.Nil(t, v.M.DLTensor.Data)
	assert.Zero(t, v.Calls())
	godlpack.CallDeleter(v.M.Deleter, unsafe.Pointer(v.M))
	godlpack.CallDeleter(v.M.Deleter, unsafe.Pointer(v.M))
	assert.EqualValues(t, 2, v.Calls())

	l := testprod.NewLegacy()
	defer l.Free()
	godlpack.CallDeleter(l.M.Deleter, unsafe.Pointer(l.M))
	assert.EqualValues(t, 1, l.Calls())
	assert.EqualValues(t, 0, v.Calls()-2)

	assert.Equal(t, total+3, testprod.TotalCalls())
}

func TestGuardedVersionedKeepsStableFieldsReadable(t *testing.T) {
	v := testprod.NewGuardedVersioned(7, 9)
	defer v.Free()
	assert.Equal(t, godlpack.DLPackVersion{Major: 7, Minor: 9}, v.M.Version)
	require.NotNil(t, v.M.Deleter)
	godlpack.CallDeleter(v.M.Deleter, unsafe.Pointer(v.M))
	assert.EqualValues(t, 1, v.Calls())
}

func TestInt64sAndBytes(t *testing.T) {
	p := testprod.Int64s(3, -4, 5)
	defer testprod.Free(p)
	assert.Equal(t, []int64{3, -4, 5}, unsafe.Slice(p, 3))

	empty := testprod.Int64s()
	defer testprod.Free(empty)
	assert.NotNil(t, empty)

	b := testprod.Bytes(16)
	defer testprod.FreePtr(b)
	assert.Equal(t, make([]byte, 16), unsafe.Slice((*byte)(b), 16))

	u := testprod.NewUnreadable()
	defer u.Free()
	assert.NotNil(t, u.P)
}

func TestGuarded(t *testing.T) {
	g := testprod.NewGuarded(100)
	defer g.Free()
	b := g.Bytes()
	assert.Len(t, b, 100)
	assert.Equal(t, make([]byte, 100), b)
	b[99] = 7
	assert.Equal(t, byte(7), *(*byte)(unsafe.Add(g.P, 99)))
	assert.Panics(t, func() { testprod.NewGuarded(1 << 20) })
}

func TestSetAddr(t *testing.T) {
	v := testprod.NewVersioned()
	defer v.Free()
	buf := testprod.Bytes(8)
	defer testprod.FreePtr(buf)
	testprod.SetAddr(&v.M.DLTensor.Data, uintptr(buf))
	assert.Equal(t, buf, v.M.DLTensor.Data)
	p := testprod.Int64s(1)
	defer testprod.Free(p)
	testprod.SetInt64sAddr(&v.M.DLTensor.Shape, uintptr(unsafe.Pointer(p)))
	assert.Same(t, p, v.M.DLTensor.Shape)
}

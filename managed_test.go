package godlpack_test

import (
	"os"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/producer"
)

// live is (producer.LiveOwners, producer.LiveExports): process-wide counters,
// so these tests do not run in parallel.
func live() [2]int64 { return [2]int64{producer.LiveOwners(), producer.LiveExports()} }

func TestFreeNil(t *testing.T) {
	var m *godlpack.DLManagedTensor
	var v *godlpack.DLManagedTensorVersioned
	assert.NotPanics(t, m.Free)
	assert.NotPanics(t, v.Free)
	// A nil deleter means there is nothing to free.
	assert.NotPanics(t, (&godlpack.DLManagedTensor{}).Free)
	assert.NotPanics(t, (&godlpack.DLManagedTensorVersioned{}).Free)
}

func TestFreeProducerExports(t *testing.T) {
	base := live()
	s, err := producer.Arange(godlpack.Float64, 0, 10, 1)
	require.NoError(t, err)
	afterCreate := live()
	assert.Equal(t, base[0]+1, afterCreate[0], "one owner for the source")

	v, err := s.ExportVersioned(0)
	require.NoError(t, err)
	l, err := s.ExportLegacy()
	require.NoError(t, err)
	assert.Equal(t, afterCreate[1]+2, live()[1])
	assert.Equal(t, godlpack.Info().API.DL(), v.Version, "exports carry Info().API")
	assert.Equal(t, int32(1), v.DLTensor.NDim)
	assert.Equal(t, []int64{10}, v.DLTensor.ShapeSlice())

	v.Free()
	assert.Equal(t, afterCreate[1]+1, live()[1])
	l.Free()
	assert.Equal(t, afterCreate, live())

	// An export outlives Close of its source: Free releases the last reference.
	v, err = s.ExportVersioned(godlpack.FlagIsCopied)
	require.NoError(t, err)
	s.Close()
	assert.Equal(t, base[0]+1, live()[0], "the export keeps the owner alive")
	v.Free()
	assert.Equal(t, base, live())
}

func TestFreeGoMemoryRunsFinalizer(t *testing.T) {
	base := live()
	var final sync.WaitGroup
	final.Add(1)
	done := make(chan struct{})
	s, err := producer.FromSlice([]float32{1, 2, 3, 4}, []int64{2, 2}, nil, false, func() { final.Done() })
	require.NoError(t, err)
	m, err := s.ExportVersioned(0)
	require.NoError(t, err)
	s.Close()
	go func() { final.Wait(); close(done) }()
	select {
	case <-done:
		t.Fatal("the Go memory was released while an export was alive")
	case <-time.After(20 * time.Millisecond):
	}
	m.Free()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Free did not release the Go memory")
	}
	assert.Equal(t, base, live())
}

func TestFreeConcurrent(t *testing.T) {
	base := live()
	s, err := producer.Zeros(godlpack.Int32, 4, 4)
	require.NoError(t, err)
	const n = 64
	ms := make([]*godlpack.DLManagedTensorVersioned, n)
	ls := make([]*godlpack.DLManagedTensor, n)
	for i := range ms {
		ms[i], err = s.ExportVersioned(0)
		require.NoError(t, err)
		ls[i], err = s.ExportLegacy()
		require.NoError(t, err)
	}
	s.Close()
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(2)
		go func(m *godlpack.DLManagedTensorVersioned) { defer wg.Done(); m.Free() }(ms[i])
		go func(m *godlpack.DLManagedTensor) { defer wg.Done(); m.Free() }(ls[i])
	}
	wg.Wait()
	assert.Equal(t, base, live())
}

func TestIsCPUAccessible(t *testing.T) {
	want := map[godlpack.DeviceType]bool{
		godlpack.CPU: true, godlpack.CUDAHost: true, godlpack.ROCMHost: true, godlpack.CUDAManaged: true,
	}
	types := godlpack.DeviceTypes()
	require.Len(t, types, 16)
	for _, dt := range types {
		for _, id := range []int32{0, 3} {
			d := godlpack.DLDevice{DeviceType: int32(dt), DeviceID: id}
			assert.Equal(t, want[dt], godlpack.IsCPUAccessible(d), "%v:%d", dt, id)
			assert.Equal(t, dt.IsCPUAccessible(), godlpack.IsCPUAccessible(d), "%v", dt)
		}
	}
	for _, unknown := range []int32{-1, 0, 5, 6, 19, 1 << 20} {
		assert.False(t, godlpack.IsCPUAccessible(godlpack.DLDevice{DeviceType: unknown}), "type %d", unknown)
	}
}

// defineInt reads "#define NAME <int>" from a header of include/godlpack.
func defineInt(t *testing.T, header, name string) uint32 {
	t.Helper()
	src, err := os.ReadFile("include/godlpack/" + header)
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^#define\s+` + name + `\s+(\d+)\b`).FindSubmatch(src)
	require.NotNil(t, m, "%s has no #define %s", header, name)
	v, err := strconv.ParseUint(string(m[1]), 10, 32)
	require.NoError(t, err)
	return uint32(v)
}

func TestInfo(t *testing.T) {
	info := godlpack.Info()
	assert.Equal(t, godlpack.VersionInfo{API: godlpack.Version{Major: 1, Minor: 3}, MaxImportMajor: 1, ABI: 1}, info)
	assert.Equal(t, godlpack.APIVersion, info.API)
	assert.Equal(t, uint32(godlpack.MaxImportMajor), info.MaxImportMajor)
	assert.Equal(t, godlpack.ABIVersion, info.ABI)
	// The C headers say the same.
	assert.Equal(t, info.API.Major, defineInt(t, "dlpack.h", "DLPACK_MAJOR_VERSION"))
	assert.Equal(t, info.API.Minor, defineInt(t, "dlpack.h", "DLPACK_MINOR_VERSION"))
	assert.Equal(t, uint32(info.ABI), defineInt(t, "godlpack.h", "GODLPACK_CAPI_ABI_VERSION"))
	assert.False(t, info.API.Less(godlpack.Version{Major: info.MaxImportMajor}), "we import what we export")
}
